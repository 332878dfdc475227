//! The Account page, for anyone signed in: how this account signs in (its
//! password, its linked school accounts) and a button to link each school
//! account the server trusts. Server-rendered; every change is a plain form
//! (`server::accounts::sso::routes`).

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use super::top_bar::TopBar;
use crate::{api::{error_text, session::get_account}, models::AccountView, refusals::AccountRefusal};

#[component]
pub fn AccountPage() -> impl IntoView {
    let account = Resource::new(|| (), |_| get_account());
    let query = use_query_map();
    let notice = move || match query.read().get("done").as_deref() {
        Some("linked") => Some("Linked. You can sign in with it from now on."),
        Some("unlinked") => Some("Unlinked."),
        _ => None,
    };
    let error = move || {
        query.read().get("error").map(|c| match c.as_str() {
            "last" => "This is the only way this account signs in, so it stays linked.".to_string(),
            code => AccountRefusal::from_code(code).message(),
        })
    };
    view! {
        <Title text="Account · Margin"/>
        <TopBar/>
        <main class="page narrow account">
            <h1>"Account"</h1>
            {move || notice().map(|n| view! { <p class="form-ok" role="status">{n}</p> })}
            {move || error().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match account.await {
                        Ok(a) => Either::Left(view! { <SignInWays a/> }),
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Suspense>
        </main>
    }
}

#[component]
fn SignInWays(a: AccountView) -> impl IntoView {
    let AccountView { user, has_password, identities, providers } = a;
    let linked: Vec<String> = identities.iter().map(|i| i.provider.clone()).collect();
    let to_link: Vec<_> = providers.into_iter().filter(|p| !linked.contains(&p.id)).collect();
    view! {
        <p>"Signed in as " <strong>{user.email}</strong></p>
        <section aria-labelledby="ways-head">
            <h2 id="ways-head">"How you sign in"</h2>
            <ul class="sign-in-ways">
                {has_password.then(|| view! { <li>"Email and password"</li> })}
                {identities.into_iter().map(|i| {
                    let text = match i.email {
                        Some(e) => format!("{} ({e})", i.label),
                        None => i.label.clone(),
                    };
                    view! {
                        <li>
                            <span>{text}</span>
                            <form method="post" action=format!("/account/sso/{}/unlink", crate::url::percent_encode(&i.provider))>
                                <button type="submit" class="quiet danger">"Unlink"</button>
                            </form>
                        </li>
                    }
                }).collect_view()}
            </ul>
            {(!to_link.is_empty()).then(|| view! {
                <p class="muted">"Link your school account to sign in with it instead of a password. A school's admin links their own first, then the school."</p>
                {to_link.into_iter().map(|p| view! {
                    <p><a class="button sso" href=format!("/auth/sso/{}/link", crate::url::percent_encode(&p.id))>{format!("Link {}", p.label)}</a></p>
                }).collect_view()}
            })}
        </section>
    }
}
