//! One lesson: the document on the left (rendered, as XML, or its history),
//! the assistant on the right.
//!
//! The page is rendered on the server; the workspace under the top bar is
//! one island (they share the lesson through context, so they hydrate as
//! one), and it receives the lesson as its props.

use leptos::{
    either::{Either, EitherOf3},
    prelude::*,
};
use leptos_router::hooks::use_params_map;

use crate::components::client_view::{ClientView, IntoClientView};
use super::{
    page_title::PageTitle,
    chat::sidebar::ChatSidebar,
    client_only::client_only,
    hydrated::mark_hydrated,
    history_panel::HistoryPanel,
    lesson_calls,
    lesson_state::LessonState,
    lesson_view::{changed_blocks_css, Audience, LessonView},
    material_section::MaterialSection,
    not_found::{NotFound, MISSING_LESSON},
    title_field::TitleField,
    top_bar::TopBar,
    xml_editor::XmlEditor,
};
use crate::{
    api::lessons::{get_lesson, get_lesson_owner, get_publication, get_sources},
    lesson::{self, LessonHtml},
    models::Lesson,
};

#[component]
pub fn LessonPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let lesson = Resource::new(id, get_lesson);
    let query = leptos_router::hooks::use_query_map();
    let refusal = move || query.read().get("material_error");
    let sources = Resource::new(move || (id(), refusal()), |(id, refusal)| get_sources(id, refusal));
    let publication = Resource::new(id, get_publication);
    let owner = Resource::new(id, get_lesson_owner);

    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted page">"Opening the lesson…"</p> }>
            {move || Suspend::new(async move {
                match lesson.await {
                    Ok(l) => Either::Left(view! {
                        <PageTitle text=l.title.clone()/>
                        // Plain links and a plain form, outside the island, in one
                        // row: the print pages and Word files are the server's, and so is publishing.
                        <div class="lesson-bar">
                            {match owner.await.ok().flatten() {
                                // A colleague's lesson: publishing and sharing are the owner's.
                                Some(owner) => Either::Left(view! {
                                    <p class="publish-state co-editing">{format!("You edit this lesson with {owner}. Publishing, sharing and versions are theirs.")}</p>
                                }),
                                None => Either::Right(view! { <PublishForm lesson_id=l.id.clone() publication=publication.await.unwrap_or_default()/> }),
                            }}
                            <nav class="lesson-tools" aria-label="Print and download">
                                <a href=format!("/lessons/{}/print", l.id) target="_blank">"Print worksheet"</a>
                                <a href=format!("/lessons/{}/print?key=1", l.id) target="_blank">"Print answer key"</a>
                                <a href=format!("/api/lessons/{}/docx", l.id) download>"Worksheet for Word"</a>
                                <a href=format!("/api/lessons/{}/docx?key=1", l.id) download>"Answer key for Word"</a>
                                <a href=format!("/api/lessons/{}/cartridge", l.id) download title="The lesson page and its quiz, for Canvas, Moodle or Schoology">"Common Cartridge"</a>
                                <a href=format!("/api/lessons/{}/qti", l.id) download title="The exercises as QTI 2.1 questions">"QTI package"</a>
                            </nav>
                        </div>
                        <LessonWorkspace html=lesson::render_both(&l.document_xml) lesson=l.clone()/>
                        <MaterialSection lesson_id=l.id.clone() material=sources.await.unwrap_or_default()/>
                        // "Ask about this", shown beside a selection in the lesson (`ask_selection`).
                        <button type="button" class="ask-selection" hidden>"Ask about this"</button>
                    }),
                    // A failed lookup was logged and answers 500; the page
                    // still only says the lesson cannot be opened.
                    Err(_) => Either::Right(view! { <NotFound heading="Lesson not found" text=MISSING_LESSON/> }),
                }
            })}
        </Suspense>
    }
}

/// "Publish" and "Unpublish": which version the lesson's classes see, a
/// class to hand it to, and its results. A plain form, outside the island.
#[component]
fn PublishForm(lesson_id: String, publication: crate::models::Publication) -> impl IntoView {
    let crate::models::Publication { published, classes, others, tutor } = publication;
    let state = match (published, classes.is_empty()) {
        (Some(v), true) => format!("Version {v} is published, but the lesson is in no class yet."),
        (Some(v), false) => format!("Students in {} see version {v}.", classes.join(", ")),
        (None, _) => "Not published: students do not see this lesson.".to_string(),
    };
    let pick = (!others.is_empty()).then(|| view! {
        <label>"Add to class "
            <select name="class">
                <option value="">"None"</option>
                {others.into_iter().map(|(id, name)| view! { <option value=id>{name}</option> }).collect_view()}
            </select>
        </label>
    });
    view! {
        <form method="post" action=format!("/lessons/{lesson_id}/publish") class="publish-form" aria-label="Publishing">
            <span class="publish-state">{state}</span>
            {pick}
            // How much the tutor helps students on this lesson.
            <label>"Tutor "
                <select name="tutor">
                    {crate::models::TutorPolicy::ALL.into_iter().map(|p| view! { <option value=p.as_str() selected=p == tutor>{p.label()}</option> }).collect_view()}
                </select>
            </label>
            {published.map(|_| view! { <button type="submit" name="action" value="tutor" class="quiet">"Set tutor"</button> })}
            <button type="submit" name="action" value="publish">{if published.is_some() { "Publish again" } else { "Publish" }}</button>
            {published.map(|_| view! { <button type="submit" name="action" value="unpublish" class="quiet">"Unpublish"</button> })}
            <a href=format!("/lessons/{lesson_id}/results")>"Results"</a>
            <a href=format!("/lessons/{lesson_id}/standards")>"Standards"</a>
            <a href=format!("/lessons/{lesson_id}/versions")>"Versions"</a>
            <a href=format!("/lessons/{lesson_id}/share")>"Share"</a>
            <a href="/classes">"Classes"</a>
        </form>
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tab {
    Lesson,
    Xml,
    History,
}

/// The workspace; or, for a student's page, only the tutor's sidebar: a
/// lesson with no revision (0) says so, and carries nothing but the
/// lesson's id and title (`learn_page`). One island for both keeps the
/// bundle to one island's start-up code.
#[island]
pub fn LessonWorkspace(lesson: Lesson, html: LessonHtml) -> impl IntoView {
    let tutor = lesson.revision == 0;
    let state = LessonState { tutor, ..LessonState::new(&lesson, html) };
    provide_context(state);
    Effect::new(move |_| {
        mark_hydrated();
        if tutor {
            super::answer_sheet::autosave(state.id.get_value());
        } else {
            super::ask_selection::offer(state.asking);
        }
    });
    // The lesson itself, its tabs and its head: the teacher's only.
    let pane = (!tutor).then(|| {
        let tab = RwSignal::new(Tab::Lesson);
        // What went wrong renaming the lesson or changing its review setting.
        let head_error = RwSignal::new(String::new());
        let student = state.student;
        let audience = Signal::derive(move || if student.get() { Audience::Student } else { Audience::Teacher });
        Effect::new(move |_| {
            let now = tab.get() == Tab::Lesson && !student.get() && state.preview.with(Option::is_none);
            // Set only when it changes: the editor is drawn anew (and the
            // caret lost) each time its readers hear of it.
            if state.editing.get_untracked() != now {
                state.editing.set(now);
            }
        });
        let tab_button = move |which: Tab, label: &'static str| {
            view! {
                <button type="button" role="tab" class="tab"
                    aria-selected=move || (tab.get() == which).to_string()
                    on:click=move |_| tab.maybe_update(|t| std::mem::replace(t, which) != which)>{label}</button>
            }
        };
        view! {
                <style inner_html=move || state.changed_blocks.with(|b| changed_blocks_css(b, state.show_changes.get()))></style>
                <section class="document-pane" aria-label="Lesson document">
                    <div class="doc-head">
                        <TitleField error=head_error/>
                        <div class="tabs" role="tablist" aria-label="Lesson views">
                            {tab_button(Tab::Lesson, "Lesson")}
                            {tab_button(Tab::Xml, "XML")}
                            {tab_button(Tab::History, "History")}
                        </div>
                        {move || (tab.get() == Tab::Lesson).then(|| view! {
                            <label class="toggle">
                                <input type="checkbox" prop:checked=student on:change=move |ev| student.set(event_target_checked(&ev))/>
                                " Student preview"
                            </label>
                            {move || state.changed_blocks.with(|b| !b.is_empty()).then(|| view! {
                                <button type="button" class="toggle-button" aria-pressed=move || state.show_changes.get().to_string()
                                    on:click=move |_| state.show_changes.update(|on| *on = !*on)>"Show changes"</button>
                            })}
                        })}
                        <ReviewToggle error=head_error/>
                    </div>
                    {move || (tab.get() == Tab::Lesson).then(|| view! {
                        {move || state.preview.with(Option::is_some).then(|| view! {
                            <div class="preview-banner" role="status">
                                <span>"Preview of the suggested change. It is not applied."</span>
                                <button type="button" on:click=move |_| state.preview.set(None)>"Back to the lesson"</button>
                            </div>
                        })}
                        // The server's drawing, until the editor takes its place.
                        {move || (!(state.editor_ready.get() && state.editing.get())).then(|| view! {
                            <LessonView html=state.html audience=audience preview=state.preview/>
                        })}
                    })}
                    // The editor, its code in a part of its own, loaded once the
                    // page is live; until then the server's drawing shows. It stays
                    // (with anything unsaved) while other tabs are open.
                    {client_only("editor-host", move || Suspend::new(editor_view()))}
                    // The page always opens on the lesson: the other tabs are built in the browser.
                    // Their code comes when a tab is first opened (`--split`).
                    {client_only("tab-panel", move || match tab.get() {
                        Tab::Lesson => EitherOf3::A(()),
                        Tab::Xml => EitherOf3::B(Suspend::new(xml_editor_view())),
                        Tab::History => EitherOf3::C(Suspend::new(history_view())),
                    })}
                </section>
        }
    });
    // One sidebar for both, so its code is built once.
    view! {
        <main class=if tutor { "tutor-layout" } else { "lesson-layout" }>
            {pane}
            <ChatSidebar/>
        </main>
    }
}

/// The lesson editor, its code in a part of the bundle of its own.
#[lazy]
fn editor_view() -> ClientView {
    view! { <super::editor::LessonEditor/> }.into_client_view()
}

/// The XML editor, its code in a part of the bundle of its own.
#[lazy]
fn xml_editor_view() -> ClientView {
    view! { <XmlEditor/> }.into_client_view()
}

/// The history, its code in a part of the bundle of its own.
#[lazy]
fn history_view() -> ClientView {
    view! { <HistoryPanel/> }.into_client_view()
}

/// How the assistant's edits reach the lesson: as they come, asking before
/// it removes anything (the default), or asking before every edit. When it
/// asks, its reply waits for the teacher's Apply or Discard and goes on from
/// it. Saved with the lesson at once; if that fails, the choice goes back
/// and says why.
#[component]
fn ReviewToggle(error: RwSignal<String>) -> impl IntoView {
    use crate::models::EditMode;
    let state = expect_context::<LessonState>();
    let change = move |ev| {
        let Some(mode) = EditMode::from_wire(&event_target_value(&ev)) else { return };
        let before = state.edit_mode.get_untracked();
        state.edit_mode.set(mode);
        leptos::task::spawn_local(async move {
            let failed = lesson_calls::set_review(&state.id.get_value(), mode).await.err();
            if failed.is_some() {
                state.edit_mode.set(before);
            }
            error.set(failed.map(|e| format!("Not saved: {e}")).unwrap_or_default());
        });
    };
    let option = move |mode: EditMode, label: &'static str| {
        view! { <option value=mode.as_str() selected=move || state.edit_mode.get() == mode>{label}</option> }
    };
    view! {
        <label class="toggle">
            "Assistant's edits: "
            <select prop:value=move || state.edit_mode.get().as_str() on:change=change>
                {option(EditMode::Auto, "Apply as they come")}
                {option(EditMode::Destructive, "Ask before removing anything")}
                {option(EditMode::Every, "Ask before every edit")}
            </select>
        </label>
        // Only when there is something to say: an empty message takes no room.
        {move || error.with(|e| (!e.is_empty()).then(|| view! { <span class="form-error" role="alert">{e.clone()}</span> }))}
    }
}
