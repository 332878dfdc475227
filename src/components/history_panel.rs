//! Every saved version of the lesson: who saved it, why, when. Choosing one
//! shows it with what it changed from the version before (or from any other
//! version, with "Compare with"); Restore makes it the current document
//! again, as a new version.
//!
//! Loading is plain signals filled by browser calls (`lesson_calls`) rather
//! than resources: the panel is only ever shown after the page is
//! interactive, so there is nothing to render on the server or to hand over
//! at hydration.

use leptos::{
    either::{Either, EitherOf3},
    prelude::*,
    task::spawn_local,
};

use super::{
    chat::review::ChangeList,
    lesson_calls,
    lesson_state::{short_time, LessonState},
    lesson_view::{Audience, LessonView},
};
use crate::models::{Author, ChangesReply, RevisionReply, RevisionSummary, SaveOutcome, SaveReply};

#[component]
pub fn HistoryPanel() -> impl IntoView {
    let state = expect_context::<LessonState>();
    // `None` while loading.
    let revisions = RwSignal::new(None::<Result<Vec<RevisionSummary>, String>>);
    let selected = RwSignal::new(None::<i64>);
    let chosen = RwSignal::new(None::<Result<RevisionReply, String>>);
    let message = RwSignal::new(None::<(bool, String)>);
    let restoring = RwSignal::new(false);
    // The version the chosen one is compared with, and what changed between.
    let compare_from = RwSignal::new(None::<i64>);
    let compared = RwSignal::new(None::<Result<ChangesReply, String>>);
    let compare = move |from: i64, to: i64| {
        compare_from.set(Some(from));
        compared.set(None);
        spawn_local(async move {
            let changes = lesson_calls::changes(&state.id.get_value(), from, to).await;
            if compare_from.try_get_untracked() == Some(Some(from)) && selected.try_get_untracked() == Some(Some(to)) {
                compared.set(Some(changes));
            }
        });
    };

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
    let choose = move |n: i64| {
        selected.set(Some(n));
        chosen.set(None);
        compare_from.set(None);
        compared.set(None);
        if n > 1 {
            compare(n - 1, n);
        }
        spawn_local(async move {
            let rev = lesson_calls::revision(&state.id.get_value(), n).await;
            // (`try_`: the panel may have been closed meanwhile.)
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
                Ok(SaveReply { outcome: SaveOutcome::Saved { revision, document_xml }, html }) => {
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

    view! {
        <div class="history">
            {move || message.get().map(|(ok, text)| view! {
                <p class=if ok { "form-ok" } else { "form-error" } role=if ok { "status" } else { "alert" }>{text}</p>
            })}
            {move || match revisions.get() {
                None => EitherOf3::A(view! { <p class="muted">"Loading the history…"</p> }),
                Some(Ok(list)) => EitherOf3::B(view! {
                    <ol class="revision-list" aria-label="Versions">
                        {list.into_iter().map(|r| {
                            let n = r.number;
                            let who = match (r.author, r.reviewed) {
                                (Author::Teacher, _) => "You",
                                (Author::Agent, false) => "Assistant",
                                (Author::Agent, true) => "Assistant, applied by you",
                            };
                            view! {
                                <li class:current=move || state.revision.get() == n class:selected=move || selected.get() == Some(n)>
                                    <button type="button" class="revision" on:click=move |_| choose(n)
                                        aria-pressed=move || (selected.get() == Some(n)).to_string()>
                                        <span class="revision-number">"Version " {n}</span>
                                        <span class="revision-summary">{r.summary.clone()}</span>
                                        <span class="muted">{who} " · " {short_time(&r.created_at)}</span>
                                    </button>
                                </li>
                            }
                        }).collect_view()}
                    </ol>
                }),
                Some(Err(e)) => EitherOf3::C(view! { <p class="form-error" role="alert">{e}</p> }),
            }}
            {move || match chosen.get() {
                Some(Ok(RevisionReply { revision, html })) => {
                    let n = revision.number;
                    Some(Either::Left(view! {
                        <section class="revision-preview" aria-label=format!("Version {n}")>
                            <div class="editor-actions">
                                <strong>"Version " {n}</strong>
                                {move || if state.revision.get() == n {
                                    Either::Left(view! { <span class="muted">"This is the current version."</span> })
                                } else {
                                    Either::Right(view! {
                                        <button type="button" class="primary" disabled=move || restoring.get()
                                            on:click=move |_| restore(n)>
                                            "Restore this version"
                                        </button>
                                    })
                                }}
                            </div>
                            <VersionChanges number=n revisions compare_from compared compare/>
                            <LessonView html=Signal::stored(html) audience=Signal::stored(Audience::Teacher)/>
                        </section>
                    }))
                }
                Some(Err(e)) => Some(Either::Right(view! { <p class="form-error" role="alert">{e}</p> })),
                None => None,
            }}
        </div>
    }
}

/// What version `number` changed: from the version before it, or from the one
/// chosen under "Compare with".
#[component]
fn VersionChanges(
    number: i64,
    revisions: RwSignal<Option<Result<Vec<RevisionSummary>, String>>>,
    compare_from: RwSignal<Option<i64>>,
    compared: RwSignal<Option<Result<ChangesReply, String>>>,
    compare: impl Fn(i64, i64) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let others = move || {
        revisions.with(|r| match r {
            Some(Ok(list)) => list.iter().map(|r| r.number).filter(|&m| m != number).collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    };
    view! {
        <div class="version-changes">
            <label class="toggle">"Compare with "
                <select on:change=move |ev| {
                    if let Ok(from) = event_target_value(&ev).parse::<i64>() {
                        compare(from, number);
                    }
                }>
                    <option value="" selected=move || compare_from.get().is_none()>"—"</option>
                    {move || others().into_iter().map(|m| view! {
                        <option value=m.to_string() selected=move || compare_from.get() == Some(m)>"Version " {m}</option>
                    }).collect_view()}
                </select>
            </label>
            {move || compared.get().map(|c| match c {
                Ok(ChangesReply { from, changes, .. }) if changes.is_empty() => {
                    EitherOf3::A(view! { <p class="muted">"No changes from version " {from} "."</p> })
                }
                Ok(ChangesReply { from, changes, .. }) => EitherOf3::B(view! {
                    <p class="muted">"Changes from version " {from} ":"</p>
                    <ChangeList changes label="Changes between versions"/>
                }),
                Err(e) => EitherOf3::C(view! { <p class="form-error" role="alert">{e}</p> }),
            })}
        </div>
    }
}
