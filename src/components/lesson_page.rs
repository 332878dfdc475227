//! One lesson: the document on the left (rendered, as XML, or its history),
//! the assistant on the right.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use super::{
    chat::sidebar::ChatSidebar,
    history_panel::HistoryPanel,
    lesson_state::LessonState,
    lesson_view::{Audience, LessonView},
    top_bar::TopBar,
    xml_editor::XmlEditor,
};
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
                    Ok(l) => {
                        let state = LessonState::new(&l);
                        provide_context(state);
                        Either::Left(view! {
                            <Title text=format!("{} · Margin", l.title)/>
                            <LessonWorkspace/>
                        })
                    }
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tab {
    Lesson,
    Xml,
    History,
}

#[component]
fn LessonWorkspace() -> impl IntoView {
    let state = expect_context::<LessonState>();
    let tab = RwSignal::new(Tab::Lesson);
    let student = RwSignal::new(false);
    let audience = Signal::derive(move || if student.get() { Audience::Student } else { Audience::Teacher });
    let tab_button = move |which: Tab, label: &'static str| {
        view! {
            <button type="button" role="tab" class="tab"
                aria-selected=move || (tab.get() == which).to_string()
                on:click=move |_| tab.set(which)>{label}</button>
        }
    };

    view! {
        <main class="lesson-layout">
            <section class="document-pane" aria-label="Lesson document">
                <div class="doc-head">
                    <p class="lesson-title">{state.title.get_value()}</p>
                    <div class="tabs" role="tablist" aria-label="Lesson views">
                        {tab_button(Tab::Lesson, "Lesson")}
                        {tab_button(Tab::Xml, "XML")}
                        {tab_button(Tab::History, "History")}
                    </div>
                    <Show when=move || tab.get() == Tab::Lesson>
                        <label class="toggle">
                            <input type="checkbox" prop:checked=student on:change=move |ev| student.set(event_target_checked(&ev))/>
                            " Student preview"
                        </label>
                    </Show>
                </div>
                {move || match tab.get() {
                    Tab::Lesson => view! { <LessonView xml=state.xml audience=audience/> }.into_any(),
                    Tab::Xml => view! { <XmlEditor/> }.into_any(),
                    Tab::History => view! { <HistoryPanel/> }.into_any(),
                }}
            </section>
            <ChatSidebar/>
        </main>
    }
}
