//! "Join a class", the page a join link opens: the class's name, and how
//! to join it (a student's account, a new one, or a word to a teacher who
//! followed the link signed in as themselves).

use leptos::{
    either::{Either, EitherOf4},
    prelude::*,
};
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::Failed;
use crate::{api::classes::get_join, components::top_bar::TopBar, models::JoinView, refusals::AccountRefusal};

#[component]
pub fn JoinPage() -> impl IntoView {
    let params = use_params_map();
    let view = Resource::new(move || params.read().get("code").unwrap_or_default(), get_join);
    view! {
        <Title text="Join a class · Margin"/>
        <TopBar/>
        <main class="page classes-page">
            <Suspense fallback=|| view! { <p class="muted">"Looking up the class…"</p> }>
                {move || Suspend::new(async move {
                    match view.await {
                        Ok(v) => Either::Left(view! { <Join v/> }),
                        Err(error) => Either::Right(view! { <h1>"Join a class"</h1><Failed error/> }),
                    }
                })}
            </Suspense>
        </main>
    }
}

#[component]
fn Join(v: JoinView) -> impl IntoView {
    let query = use_query_map();
    // A refused sign-up comes back with its code (never its text) and the email typed.
    let error = query.read_untracked().get("error").map(|c| AccountRefusal::from_code(&c).message());
    let email = query.read_untracked().get("email").unwrap_or_default();
    let said = error.map(|e| view! { <p class="form-error" role="alert">{e}</p> });
    let JoinView { code, class_name, user, sso } = v;
    let Some(name) = class_name else {
        return EitherOf4::A(view! {
            <h1>"Join a class"</h1>
            {said}
            <p>"This class code does not work any more. Ask your teacher for the new one."</p>
        });
    };
    let head = view! { <h1>"Join " {name}</h1> };
    match user {
        Some(u) if u.is_student() => EitherOf4::B(view! {
            {head}
            {said}
            <form method="post" action="/learn/join">
                <input type="hidden" name="code" value=code/>
                <button type="submit">"Join the class"</button>
            </form>
        }),
        Some(_) => EitherOf4::C(view! {
            {head}
            {said}
            <p>"You are signed in as a teacher. Students join with an account of their own: sign out first, or open this link in another browser."</p>
        }),
        None => EitherOf4::D(view! {
            {head}
            {said}
            <p>"Make a student account to join, or sign in if you have one."</p>
            <form method="post" action="/auth/signup" class="auth-form">
                <input type="hidden" name="join" value=code.clone()/>
                <input type="hidden" name="next" value="/learn"/>
                <label>"Email " <input type="email" name="email" required autocomplete="email" value=email/></label>
                <label>"Password " <input type="password" name="password" required minlength="8" autocomplete="new-password"/></label>
                <button type="submit">"Create account and join"</button>
            </form>
            <crate::components::auth_pages::SsoButtons buttons=sso verb="Join" next="/learn".to_string() join=code.clone()/>
            <p><a href=format!("/signin?next=/join/{code}")>"I already have an account"</a></p>
        }),
    }
}
