//! "Classes": the teacher's classes and "New class".

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;

use super::{ErrorLine, Failed};
use crate::{api::classes::get_classes, components::top_bar::TopBar};

#[component]
pub fn ClassListPage() -> impl IntoView {
    let classes = Resource::new(|| (), |_| get_classes());
    view! {
        <Title text="Classes · Margin"/>
        <TopBar/>
        <main class="page classes-page">
            <h1>"Classes"</h1>
            <ErrorLine/>
            <form method="post" action="/classes" class="inline-form">
                <label>"Class name " <input name="name" required maxlength="80"/></label>
                " "
                <button type="submit">"New class"</button>
            </form>
            <Suspense fallback=|| view! { <p class="muted">"Loading your classes…"</p> }>
                {move || Suspend::new(async move {
                    match classes.await {
                        Ok(list) => Either::Left(view! {
                            <ul class="class-list">
                                {list.is_empty().then(|| view! {
                                    <li class="muted">"No classes yet. Make one, add lessons to it, and invite your students."</li>
                                })}
                                {list.into_iter().map(|c| view! {
                                    <li>
                                        <a href=format!("/classes/{}", c.id)>{c.name}</a>
                                        " "
                                        <span class="muted">{format!("{} students · {} lessons", c.students, c.lessons)}</span>
                                    </li>
                                }).collect_view()}
                            </ul>
                        }),
                        Err(error) => Either::Right(view! { <Failed error/> }),
                    }
                })}
            </Suspense>
        </main>
    }
}
