//! One lesson: the document on the left, the assistant on the right.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use super::top_bar::TopBar;
use crate::api::{error_text, lessons::get_lesson};

#[component]
pub fn LessonPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let lesson = Resource::new(id, get_lesson);

    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted page">"Opening the lesson…"</p> }>
            {move || Suspend::new(async move {
                match lesson.await {
                    Ok(l) => Either::Left(view! {
                        <Title text=format!("{} · Margin", l.title)/>
                        <main class="lesson-layout">
                            <section class="document-pane" aria-label="Lesson document">
                                <h1 class="lesson-title">{l.title.clone()}</h1>
                                <pre class="xml-source">{l.document_xml.clone()}</pre>
                            </section>
                            <aside class="chat-pane" aria-label="Assistant">
                                <h2>"Assistant"</h2>
                                <p class="muted">"The assistant will sit here."</p>
                            </aside>
                        </main>
                    }),
                    Err(e) => Either::Right(view! {
                        <main class="page narrow">
                            <h1>"Lesson not found"</h1>
                            <p>{error_text(&e)}</p>
                            <p><a href="/">"Back to your lessons"</a></p>
                        </main>
                    }),
                }
            })}
        </Suspense>
    }
}
