//! The teacher's home: their lessons, and "New lesson".

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;

use super::top_bar::TopBar;
use crate::api::{
    error_text,
    lessons::{list_lessons, CreateLesson},
};

#[component]
pub fn LessonsPage() -> impl IntoView {
    let create = ServerAction::<CreateLesson>::new();
    let lessons = Resource::new(move || create.version().get(), |_| list_lessons());
    let asking = RwSignal::new(false);
    let create_error = move || create.value().get().and_then(|r| r.err()).map(|e| error_text(&e));

    view! {
        <Title text="Your lessons · Margin"/>
        <TopBar/>
        <main class="page">
            <div class="page-head">
                <h1>"Your lessons"</h1>
                <button type="button" class="primary" on:click=move |_| asking.set(true)>"New lesson"</button>
            </div>
            <Show when=move || asking.get()>
                <ActionForm action=create>
                    <div class="new-lesson">
                        <label for="new-lesson-title">"Title"</label>
                        <input id="new-lesson-title" name="title" required maxlength="200" autofocus placeholder="e.g. French verbs: the present tense"/>
                        <button type="submit" class="primary" disabled=move || create.pending().get()>"Create lesson"</button>
                        <button type="button" class="quiet" on:click=move |_| asking.set(false)>"Cancel"</button>
                    </div>
                </ActionForm>
                {move || create_error().map(|msg| view! { <p class="form-error" role="alert">{msg}</p> })}
            </Show>
            <Transition fallback=|| view! { <p class="muted">"Loading your lessons…"</p> }>
                {move || Suspend::new(async move {
                    match lessons.await {
                        Ok(list) if list.is_empty() => Either::Left(view! {
                            <p class="empty">"No lessons yet. Press “New lesson” to start one."</p>
                        }.into_any()),
                        Ok(list) => Either::Left(view! {
                            <ul class="lesson-list">
                                {list.into_iter().map(|l| view! {
                                    <li>
                                        <a href=format!("/lessons/{}", l.id)>{l.title}</a>
                                        <span class="muted">"Changed " {l.updated_at.get(..10).unwrap_or_default().to_string()}</span>
                                    </li>
                                }).collect_view()}
                            </ul>
                        }.into_any()),
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Transition>
        </main>
    }
}
