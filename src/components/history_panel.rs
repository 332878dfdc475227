//! Every saved version of the lesson: who saved it, why, when. Choosing one
//! shows it with what it changed from the version before (or from any other
//! version, with "Compare with"); Restore makes it the current document
//! again, as a new version.
//!
//! Loading is plain signals filled by browser calls (`lesson_calls`) rather
//! than resources: the panel is only ever shown after the page is
//! interactive, so there is nothing to render on the server or to hand over
//! at hydration. The list is keyed by version number, so choosing one
//! redraws no button and the keyboard focus stays on it.

use leptos::{prelude::*, task::spawn_local};

use crate::components::client_view::IntoClientView;
use super::{
    chat::review::ChangeList,
    lesson_calls,
    lesson_state::{short_time, LessonState},
};
use crate::{
    lesson::Change,
    models::{Author, RevisionReply, RevisionSummary, SaveOutcome, SaveReply},
};

#[component]
pub fn HistoryPanel() -> impl IntoView {
    let state = expect_context::<LessonState>();
    // `None` while loading.
    let revisions = RwSignal::new(None::<Result<Vec<RevisionSummary>, String>>);
    let selected = RwSignal::new(None::<i64>);
    let chosen = RwSignal::new(None::<Result<RevisionReply, String>>);
    let message = RwSignal::new(None::<(bool, String)>);
    let restoring = RwSignal::new(false);
    let compared = RwSignal::new(None::<Result<Vec<Change>, String>>);
    let compare_from = RwSignal::new(None::<i64>);

    // (Re)load the list whenever a new version exists. Answers that arrive
    // after a newer request was made are dropped.
    Effect::new(move |_| {
        let version = state.history_version.get();
        spawn_local(async move {
            let list = lesson_calls::revisions(&state.id.get_value()).await;
            if state.history_version.get_untracked() == version {
                revisions.set(Some(list));
            }
        });
    });
    let compare = move |from: i64, to: i64| {
        compared.set(None);
        compare_from.set(Some(from));
        spawn_local(async move {
            let changes = lesson_calls::changes(&state.id.get_value(), from, to).await;
            // (`try_`: the panel may have been closed meanwhile.)
            if selected.try_get_untracked() == Some(Some(to)) {
                compared.set(Some(changes));
            }
        });
    };
    let choose = move |n: i64| {
        selected.set(Some(n));
        chosen.set(None);
        compared.set(None);
        if n > 1 {
            compare(n - 1, n);
        }
        spawn_local(async move {
            let rev = lesson_calls::revision(&state.id.get_value(), n).await;
            if selected.try_get_untracked() == Some(Some(n)) {
                chosen.set(Some(rev));
            }
        });
    };
    let restore = move |n: i64| {
        if restoring.get_untracked() {
            return;
        }
        message.set(None);
        restoring.set(true);
        spawn_local(async move {
            let result = lesson_calls::restore(&state.id.get_value(), n, state.revision.get_untracked()).await;
            restoring.set(false);
            message.set(Some(match result {
                Ok(SaveReply { outcome: SaveOutcome::Saved { revision, document_xml }, html, .. }) => {
                    state.apply_revision(revision, document_xml, html.unwrap_or_default());
                    selected.set(None);
                    chosen.set(None);
                    (true, format!("Restored version {n} as version {revision}."))
                }
                Ok(SaveReply { outcome: SaveOutcome::Conflict { current }, .. }) => (false, format!(
                    "Not restored: the lesson changed meanwhile (it is now version {current}). Reload the page and try again."
                )),
                Ok(SaveReply { outcome: SaveOutcome::Invalid { .. }, .. }) => (false, "Not restored: that version no longer passes the lesson checks.".into()),
                Err(e) => (false, format!("Not restored: {e}")),
            }));
        });
    };
    let on_compare = move |ev: leptos::ev::Event| {
        let (Ok(from), Some(to)) = (event_target_value(&ev).parse::<i64>(), selected.get_untracked()) else { return };
        compare(from, to);
    };
    let said = move || {
        message.get().map(|(ok, text)| {
            if ok {
                view! { <p class="form-ok" role="status">{text}</p> }.into_client_view()
            } else {
                view! { <p class="form-error" role="alert">{text}</p> }.into_client_view()
            }
        })
    };
    // Loading or why not; the list itself is drawn once it has loaded and
    // only its rows change after that.
    let waiting = move || {
        revisions.with(|r| match r {
            None => Some(view! { <p class="muted">"Loading the history…"</p> }.into_client_view()),
            Some(Err(e)) => Some(view! { <p class="form-error" role="alert">{e.clone()}</p> }.into_client_view()),
            Some(Ok(_)) => None,
        })
    };
    let loaded = Memo::new(move |_| revisions.with(|r| matches!(r, Some(Ok(_)))));
    let preview = move || {
        chosen.with(|c| match c {
            Some(Ok(RevisionReply { revision, html })) => {
                let n = revision.number;
                let html = html.teacher.clone();
                let others = move || revisions.with(|r| r.iter().flatten().flatten().map(|r| r.number).filter(|&m| m != n).collect::<Vec<_>>());
                let changes = move || {
                    let from = compare_from.get().unwrap_or(n - 1);
                    compared.with(|c| match c {
                        Some(Ok(changes)) if changes.is_empty() => view! { <p class="muted">"No changes from version "{from}"."</p> }.into_client_view(),
                        Some(Ok(changes)) => view! {
                            <p class="muted">"Changes from version "{from}":"</p>
                            <ChangeList changes=changes.clone() label="Changes between versions"/>
                        }
                        .into_client_view(),
                        Some(Err(e)) => view! { <p class="form-error" role="alert">{e.clone()}</p> }.into_client_view(),
                        None => ().into_client_view(),
                    })
                };
                Some(view! {
                    <section class="revision-preview" aria-label=format!("Version {n}")>
                        <div class="editor-actions">
                            <strong>"Version "{n}</strong>
                            <Show
                                when=move || state.revision.get() != n
                                fallback=|| view! { <span class="muted">"This is the current version."</span> }
                            >
                                <button type="button" class="primary" disabled=move || restoring.get() on:click=move |_| restore(n)>"Restore this version"</button>
                            </Show>
                        </div>
                        <div class="version-changes">
                            <label class="toggle">
                                "Compare with "
                                <select on:change=on_compare prop:value=move || compare_from.get().map(|m| m.to_string()).unwrap_or_default()>
                                    <option value="">"—"</option>
                                    <For each=others key=|m| *m children=move |m| view! { <option value=m.to_string()>"Version "{m}</option> }/>
                                </select>
                            </label>
                            {changes}
                        </div>
                        // The version as the server rendered it (escaped there).
                        <article class="lesson-view" inner_html=html></article>
                    </section>
                }
                .into_client_view())
            }
            Some(Err(e)) => Some(view! { <p class="form-error" role="alert">{e.clone()}</p> }.into_client_view()),
            None => None,
        })
    };
    view! {
        <div class="history">
            {said}
            {waiting}
            <Show when=move || loaded.get()><VersionList revisions selected choose/></Show>
            {preview}
        </div>
    }
}

/// The versions, newest first, each a button that opens it.
#[component]
fn VersionList(
    revisions: RwSignal<Option<Result<Vec<RevisionSummary>, String>>>,
    selected: RwSignal<Option<i64>>,
    choose: impl Fn(i64) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let state = expect_context::<LessonState>();
    let rows = move || revisions.with(|r| r.as_ref().and_then(|r| r.as_ref().ok()).cloned().unwrap_or_default());
    view! {
        <ol class="revision-list" aria-label="Versions">
            <For each=rows key=|r| (r.number, r.summary.clone()) children=move |r: RevisionSummary| {
                let n = r.number;
                let who = match (r.author, r.reviewed, r.by) {
                    (Author::Teacher, _, None) => "You".to_string(),
                    (Author::Teacher, _, Some(colleague)) => colleague,
                    (Author::Agent, false, None) => "Assistant".to_string(),
                    (Author::Agent, true, None) => "Assistant, applied by you".to_string(),
                    (Author::Agent, false, Some(colleague)) => format!("Assistant, for {colleague}"),
                    (Author::Agent, true, Some(colleague)) => format!("Assistant, applied by {colleague}"),
                };
                let picked = move || selected.get() == Some(n);
                view! {
                    <li class:current=move || state.revision.get() == n class:selected=picked>
                        <button type="button" class="revision" aria-pressed=move || picked().to_string() on:click=move |_| choose(n)>
                            <span class="revision-number">"Version "{n}</span>
                            <span class="revision-summary">{r.summary}</span>
                            <span class="muted">{who}" · "{short_time(&r.created_at)}</span>
                        </button>
                    </li>
                }
            }/>
        </ol>
    }
}
