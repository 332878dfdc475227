//! Sign-in and sign-up pages. They are plain HTML forms posting to `/auth/*`,
//! so they work the moment the page arrives; errors come back as a short code
//! in the query string and are turned into a sentence here.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::refusals::{AccountRefusal, MIN_PASSWORD_LEN};

/// The sentence for an error code set by the server's form handlers.
pub fn auth_error_message(code: &str) -> String {
    AccountRefusal::from_code(code).message()
}

#[component]
fn AuthForm(
    heading: &'static str,
    action: &'static str,
    button: &'static str,
    password_autocomplete: &'static str,
    children: Children,
) -> impl IntoView {
    let query = use_query_map();
    let error = move || query.read().get("error").map(|c| auth_error_message(&c));
    let email = move || query.read().get("email").unwrap_or_default();
    let next = move || query.read().get("next").unwrap_or_default();
    let invite = move || query.read().get("invite").unwrap_or_default();
    view! {
        <main class="page narrow auth">
            <p class="brand-large">"Margin"</p>
            <h1>{heading}</h1>
            {move || error().map(|msg| view! { <p class="form-error" role="alert">{msg}</p> })}
            <form method="post" action=action class="stack">
                <label for="email">"Email"</label>
                <input id="email" name="email" type="email" autocomplete="username" required value=email/>
                <label for="password">"Password"</label>
                <input id="password" name="password" type="password" autocomplete=password_autocomplete required/>
                <input type="hidden" name="next" value=next/>
                {move || (!invite().is_empty()).then(|| view! {
                    <p class="muted">"You were invited to join a school on Margin. Your account will belong to it."</p>
                    <input type="hidden" name="invite" value=invite/>
                })}
                <button type="submit" class="primary">{button}</button>
            </form>
            {children()}
        </main>
    }
}

#[component]
pub fn SignInPage() -> impl IntoView {
    view! {
        <Title text="Sign in · Margin"/>
        <AuthForm heading="Sign in" action="/auth/signin" button="Sign in" password_autocomplete="current-password">
            <p class="muted">"New here? " <a href="/signup">"Create an account"</a></p>
        </AuthForm>
    }
}

#[component]
pub fn SignUpPage() -> impl IntoView {
    view! {
        <Title text="Create an account · Margin"/>
        <AuthForm heading="Create your account" action="/auth/signup" button="Sign up" password_autocomplete="new-password">
            <p class="muted">{format!("At least {MIN_PASSWORD_LEN} characters for the password. ")} "Already have an account? " <a href="/signin">"Sign in instead"</a></p>
        </AuthForm>
    }
}

#[cfg(test)]
mod tests {
    use super::auth_error_message;

    #[test]
    fn codes_become_sentences() {
        assert!(auth_error_message("credentials").contains("do not match"));
        assert!(auth_error_message("rate-12").contains("Wait 12 seconds"));
        assert!(auth_error_message("<script>").contains("Something went wrong"));
    }
}
