//! Sign-in and sign-up pages. They are plain HTML forms posting to `/auth/*`,
//! so they work the moment the page arrives; errors come back as a short code
//! in the query string and are turned into a sentence here. Under the form,
//! a button for each school-account provider the server trusts
//! (`server::accounts::sso`), plain links too.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::{
    api::session::sso_buttons,
    models::SsoButton,
    refusals::{AccountRefusal, MIN_PASSWORD_LEN},
};

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

/// Where a school-account button goes: the provider, then back to `next`
/// (or into the class of `join`).
pub fn sso_href(provider: &str, next: &str, join: Option<&str>) -> String {
    let query = crate::url::query(&[("next", next), ("join", join.unwrap_or_default())]);
    let id = crate::url::percent_encode(provider);
    if query.is_empty() { format!("/auth/sso/{id}") } else { format!("/auth/sso/{id}?{query}") }
}

/// One link per provider: "{verb} with {label}".
#[component]
pub fn SsoButtons(buttons: Vec<SsoButton>, verb: &'static str, next: String, #[prop(optional)] join: Option<String>) -> impl IntoView {
    (!buttons.is_empty()).then(|| {
        let links = buttons
            .into_iter()
            .map(|b| {
                let href = sso_href(&b.id, &next, join.as_deref());
                view! { <a class="button sso" href=href>{format!("{verb} with {}", b.label)}</a> }
            })
            .collect_view();
        view! {
            <div class="sso-buttons">
                <p class="muted">"Or with your school's account:"</p>
                {links}
            </div>
        }
    })
}

/// The providers' buttons under a sign-in or sign-up form.
#[component]
fn SchoolAccounts(verb: &'static str) -> impl IntoView {
    let query = use_query_map();
    let buttons = Resource::new(|| (), |_| sso_buttons());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let buttons = buttons.await.unwrap_or_default();
                let next = query.read_untracked().get("next").unwrap_or_default();
                view! { <SsoButtons buttons verb next/> }
            })}
        </Suspense>
    }
}

#[component]
pub fn SignInPage() -> impl IntoView {
    view! {
        <Title text="Sign in · Margin"/>
        <AuthForm heading="Sign in" action="/auth/signin" button="Sign in" password_autocomplete="current-password">
            <SchoolAccounts verb="Sign in"/>
            <p class="muted">"New here? " <a href="/signup">"Create an account"</a></p>
        </AuthForm>
    }
}

#[component]
pub fn SignUpPage() -> impl IntoView {
    view! {
        <Title text="Create an account · Margin"/>
        <AuthForm heading="Create your account" action="/auth/signup" button="Sign up" password_autocomplete="new-password">
            <SchoolAccounts verb="Continue"/>
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
        assert!(auth_error_message("sso-school").contains("School page"));
    }

    #[test]
    fn school_account_links_carry_where_to_go() {
        assert_eq!(super::sso_href("example", "", None), "/auth/sso/example");
        assert_eq!(super::sso_href("example", "/lessons/a?b=1", None), "/auth/sso/example?next=%2Flessons%2Fa%3Fb%3D1");
        assert_eq!(super::sso_href("example", "/learn", Some("ABC123")), "/auth/sso/example?next=%2Flearn&join=ABC123");
    }
}
