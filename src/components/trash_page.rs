//! The Trash: deleted lessons, each with Restore and Delete forever, kept
//! for 30 days. Rendered on the server; both buttons are plain forms.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;

use super::top_bar::TopBar;
use crate::api::{error_text, lessons::list_trash};

#[component]
pub fn TrashPage() -> impl IntoView {
    let trash = Resource::new(|| (), |_| list_trash());
    view! {
        <Title text="Trash · Margin"/>
        <TopBar/>
        <main class="page">
            <div class="page-head">
                <h1>"Trash"</h1>
                <a href="/">"Back to your lessons"</a>
            </div>
            <p class="muted">"Deleted lessons stay here for 30 days, with their versions and chats, then they are gone for good."</p>
            <Suspense fallback=|| view! { <p class="muted">"Loading the Trash…"</p> }>
                {move || Suspend::new(async move {
                    match trash.await {
                        Ok(list) if list.is_empty() => Either::Left(Either::Left(view! { <p class="empty">"The Trash is empty."</p> })),
                        Ok(list) => Either::Left(Either::Right(view! {
                            <ul class="lesson-list">
                                {list.into_iter().map(|l| view! {
                                    <li>
                                        <span class="trashed-title">{l.title.clone()}</span>
                                        <span class="muted">"Deleted " {l.deleted_at.get(..10).unwrap_or_default().to_string()}</span>
                                        <span class="lesson-actions">
                                            <form method="post" action=format!("/lessons/{}/restore", l.id)>
                                                <button type="submit" class="quiet" aria-label=format!("Restore {}", l.title)>"Restore"</button>
                                            </form>
                                            <form method="post" action=format!("/trash/{}/delete", l.id)>
                                                <button type="submit" class="quiet danger" aria-label=format!("Delete {} forever", l.title)>"Delete forever"</button>
                                            </form>
                                        </span>
                                    </li>
                                }).collect_view()}
                            </ul>
                        })),
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Suspense>
        </main>
    }
}
