//! Every saved version of the lesson: who saved it, why, when. Choosing one
//! shows it; Restore makes it the current document again, as a new version.

use leptos::{
    either::{Either, EitherOf3},
    prelude::*,
};

use super::{
    lesson_state::{short_time, LessonState},
    lesson_view::{Audience, LessonView},
};
use crate::{
    api::{
        error_text,
        lessons::{get_revision, list_revisions, restore_revision},
    },
    models::{Author, SaveOutcome},
};

#[component]
pub fn HistoryPanel() -> impl IntoView {
    let state = expect_context::<LessonState>();
    let revisions = Resource::new(
        move || state.history_version.get(),
        move |_| list_revisions(state.id.get_value()),
    );
    let selected = RwSignal::new(None::<i64>);
    let chosen = Resource::new(
        move || selected.get(),
        move |n| async move {
            match n {
                Some(n) => get_revision(state.id.get_value(), n).await.map(Some),
                None => Ok(None),
            }
        },
    );
    let message = RwSignal::new(None::<(bool, String)>);
    let restore = Action::new(move |n: &i64| {
        let n = *n;
        async move { (n, restore_revision(state.id.get_value(), n, state.revision.get_untracked()).await) }
    });
    Effect::new(move |_| {
        let Some((n, result)) = restore.value().get() else { return };
        message.set(Some(match result {
            Ok(SaveOutcome::Saved { revision, document_xml }) => {
                state.apply_revision(revision, document_xml);
                selected.set(None);
                (true, format!("Restored version {n} as version {revision}."))
            }
            Ok(SaveOutcome::Conflict { current }) => (false, format!(
                "Not restored: the lesson changed meanwhile (it is now version {current}). Reload the page and try again."
            )),
            Ok(SaveOutcome::Invalid { .. }) => (false, "Not restored: that version no longer passes the lesson checks.".into()),
            Err(e) => (false, format!("Not restored: {}", error_text(&e))),
        }));
    });

    view! {
        <div class="history">
            {move || message.get().map(|(ok, text)| view! {
                <p class=if ok { "form-ok" } else { "form-error" } role=if ok { "status" } else { "alert" }>{text}</p>
            })}
            <Transition fallback=|| view! { <p class="muted">"Loading the history…"</p> }>
                {move || Suspend::new(async move {
                    match revisions.await {
                        Ok(list) => Either::Left(view! {
                            <ol class="revision-list" aria-label="Versions">
                                {list.into_iter().map(|r| {
                                    let n = r.number;
                                    let who = match r.author { Author::Teacher => "You", Author::Agent => "Assistant" };
                                    view! {
                                        <li class:current=move || state.revision.get() == n class:selected=move || selected.get() == Some(n)>
                                            <button type="button" class="revision" on:click=move |_| selected.set(Some(n))
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
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Transition>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match chosen.await {
                        Ok(Some(rev)) => {
                            let n = rev.number;
                            let xml = rev.document_xml.clone();
                            EitherOf3::A(view! {
                                <section class="revision-preview" aria-label=format!("Version {n}")>
                                    <div class="editor-actions">
                                        <strong>"Version " {n}</strong>
                                        {move || if state.revision.get() == n {
                                            Either::Left(view! { <span class="muted">"This is the current version."</span> })
                                        } else {
                                            Either::Right(view! {
                                                <button type="button" class="primary" disabled=move || restore.pending().get()
                                                    on:click=move |_| { message.set(None); restore.dispatch(n); }>
                                                    "Restore this version"
                                                </button>
                                            })
                                        }}
                                    </div>
                                    <LessonView xml=Signal::stored(xml) audience=Signal::stored(Audience::Teacher)/>
                                </section>
                            })
                        }
                        Ok(None) => EitherOf3::B(()),
                        Err(e) => EitherOf3::C(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Transition>
        </div>
    }
}
