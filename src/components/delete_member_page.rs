//! Deleting a member's account, the admin's second look: the sentence of
//! what goes (for a teacher, a choice of what becomes of their lessons),
//! and the account's email typed again to confirm. A plain form
//! (`server::ops::deletion_routes`); rendered on the server.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::top_bar::TopBar;
use crate::{
    api::{error_text, school::deletion_preview},
    models::DeletionPreview,
};

#[component]
pub fn DeleteMemberPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let preview = Resource::new(id, deletion_preview);
    let error = move || match use_query_map().read().get("error").as_deref() {
        Some("confirm") => Some("Type the account's email exactly to delete it."),
        Some("running") => Some("A reply of theirs is still running. Try again in a minute."),
        _ => None,
    };
    view! {
        <Title text="Delete an account · Margin"/>
        <TopBar/>
        <main class="page delete-member">
            <div class="page-head">
                <h1>"Delete an account and its data"</h1>
                <a href="/school">"Back to the school"</a>
            </div>
            {move || error().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match preview.await {
                        Ok(p) => Either::Left(view! { <Confirm p/> }),
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Suspense>
        </main>
    }
}

#[component]
fn Confirm(p: DeletionPreview) -> impl IntoView {
    let DeletionPreview { id, email, student, to_admin, delete_all } = p;
    let choice = if student {
        Either::Left(view! { <p class="deletion-sentence">{to_admin}</p> })
    } else {
        Either::Right(view! {
            <fieldset>
                <legend>"Their lessons and classes"</legend>
                <label class="choice"><input type="radio" name="lessons" value="admin" checked/>" Keep them: " {to_admin}</label>
                <label class="choice"><input type="radio" name="lessons" value="delete"/>" Delete them: " {delete_all}</label>
            </fieldset>
        })
    };
    view! {
        <p class="muted">"Export their data first if they asked for it: the School page's \"Export data\"."</p>
        <form method="post" action=format!("/school/members/{id}/delete") class="stack">
            {choice}
            <label for="confirm-email">{format!("Type {email} to confirm")}</label>
            <input id="confirm-email" name="confirm" autocomplete="off" required/>
            <button type="submit" class="danger">"Delete this account for good"</button>
        </form>
    }
}
