//! "My classes": a student's classes with their published lessons (and the
//! score of each they checked), and joining another with a code.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;

use super::{ErrorLine, Failed};
use crate::{api::classes::get_my_classes, components::top_bar::TopBar, models::StudentHome};

#[component]
pub fn MyClassesPage() -> impl IntoView {
    let home = Resource::new(|| (), |_| get_my_classes());
    view! {
        <Title text="My classes · Margin"/>
        <TopBar/>
        <main class="page classes-page">
            <h1>"My classes"</h1>
            <ErrorLine/>
            <Suspense fallback=|| view! { <p class="muted">"Loading your classes…"</p> }>
                {move || Suspend::new(async move {
                    match home.await {
                        Ok(h) => Either::Left(view! { <Classes h/> }),
                        Err(error) => Either::Right(view! { <Failed error/> }),
                    }
                })}
            </Suspense>
            <form method="post" action="/learn/join" class="inline-form">
                <label>"Class code " <input name="code" required maxlength="32" autocomplete="off"/></label>
                " "
                <button type="submit">"Join a class"</button>
            </form>
        </main>
    }
}

#[component]
fn Classes(h: StudentHome) -> impl IntoView {
    let StudentHome { classes, scores } = h;
    let empty = classes.is_empty();
    let score = move |id: &str| scores.iter().find(|(l, _)| l == id).map(|(_, s)| s.clone());
    let list = classes
        .into_iter()
        .map(|c| {
            let none = c.lessons.is_empty();
            let lessons = c
                .lessons
                .into_iter()
                .map(|l| {
                    let s = score(&l.id).map(|s| view! { " " <span class="muted">{s}</span> });
                    view! { <li><a href=format!("/learn/lessons/{}", l.id)>{l.title}</a>{s}</li> }
                })
                .collect_view();
            view! {
                <section class="student-class">
                    <h2>{c.name}</h2>
                    <ul>
                        {none.then(|| view! { <li class="muted">"No lessons yet."</li> })}
                        {lessons}
                    </ul>
                </section>
            }
        })
        .collect_view();
    view! {
        {empty.then(|| view! { <p class="muted">"You are not in a class yet. Enter the code your teacher gave you."</p> })}
        {list}
    }
}
