//! Every saved version of the lesson: who saved it, why, when. Choosing one
//! shows it with what it changed from the version before (or from any other
//! version, with "Compare with"); Restore makes it the current document
//! again, as a new version.
//!
//! Loading is plain signals filled by browser calls (`lesson_calls`) rather
//! than resources: the panel is only ever shown after the page is
//! interactive, so there is nothing to render on the server or to hand over
//! at hydration. The panel is drawn as HTML strings (every piece of text
//! escaped; lessons arrive rendered and escaped by the server) with one
//! click and one change handler that read `data-` attributes: typed views
//! for each row, button and message cost the browser bundle several times
//! as much.

use leptos::{prelude::*, task::spawn_local, wasm_bindgen::JsCast, web_sys};

use super::{
    chat::review::change_list,
    lesson_calls,
    lesson_state::{short_time, LessonState},
};
use crate::{
    lesson::{escape_text, Change},
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
    let click = move |ev: leptos::ev::MouseEvent| {
        let target: web_sys::Element = event_target(&ev);
        let Ok(Some(button)) = target.closest("button[data-n]") else { return };
        let Some(n) = button.get_attribute("data-n").and_then(|n| n.parse::<i64>().ok()) else { return };
        if button.has_attribute("data-restore") {
            restore(n);
        } else {
            choose(n);
            // The list is drawn anew: the focus goes back to the version chosen.
            request_animation_frame(move || {
                let q = format!("button.revision[data-n=\"{n}\"]");
                if let Some(el) = document().query_selector(&q).ok().flatten() {
                    let _ = el.unchecked_into::<web_sys::HtmlElement>().focus();
                }
            });
        }
    };
    let change = move |ev: leptos::ev::Event| {
        let (Ok(from), Some(to)) = (event_target_value(&ev).parse::<i64>(), selected.get_untracked()) else { return };
        compare(from, to);
    };
    let html = move || {
        let mut out = String::new();
        if let Some((ok, text)) = message.get() {
            let (class, role) = if ok { ("form-ok", "status") } else { ("form-error", "alert") };
            out.push_str(&format!("<p class=\"{class}\" role=\"{role}\">{}</p>", escape_text(&text)));
        }
        let current = state.revision.get();
        let picked = selected.get();
        revisions.with(|r| match r {
            None => out.push_str("<p class=\"muted\">Loading the history…</p>"),
            Some(Err(e)) => out.push_str(&format!("<p class=\"form-error\" role=\"alert\">{}</p>", escape_text(e))),
            Some(Ok(list)) => out.push_str(&version_list(list, current, picked)),
        });
        match chosen.get() {
            Some(Ok(RevisionReply { revision, html })) => {
                let n = revision.number;
                let action = if current == n {
                    "<span class=\"muted\">This is the current version.</span>".to_string()
                } else {
                    let disabled = if restoring.get() { " disabled" } else { "" };
                    format!("<button type=\"button\" class=\"primary\" data-n=\"{n}\" data-restore{disabled}>Restore this version</button>")
                };
                let others = revisions.with(|r| r.iter().flatten().flatten().map(|r| r.number).filter(|&m| m != n).collect::<Vec<_>>());
                let from = compare_from.get();
                let choices: String = others
                    .iter()
                    .map(|&m| format!("<option value=\"{m}\"{}>Version {m}</option>", if from == Some(m) { " selected" } else { "" }))
                    .collect();
                let from = from.unwrap_or(n - 1);
                let changes = match compared.get() {
                    Some(Ok(changes)) if changes.is_empty() => format!("<p class=\"muted\">No changes from version {from}.</p>"),
                    Some(Ok(changes)) => {
                        format!("<p class=\"muted\">Changes from version {from}:</p>{}", change_list(&changes, "Changes between versions"))
                    }
                    Some(Err(e)) => format!("<p class=\"form-error\" role=\"alert\">{}</p>", escape_text(&e)),
                    None => String::new(),
                };
                out.push_str(&format!(
                    "<section class=\"revision-preview\" aria-label=\"Version {n}\"><div class=\"editor-actions\"><strong>Version {n}</strong>{action}</div>\
                     <div class=\"version-changes\"><label class=\"toggle\">Compare with <select><option value=\"\">—</option>{choices}</select></label>{changes}</div>\
                     <article class=\"lesson-view\">{}</article></section>",
                    html.teacher
                ));
            }
            Some(Err(e)) => out.push_str(&format!("<p class=\"form-error\" role=\"alert\">{}</p>", escape_text(&e))),
            None => {}
        }
        out
    };
    view! { <div class="history" on:click=click on:change=change inner_html=html></div> }
}

/// The versions, newest first, each a button that opens it.
fn version_list(list: &[RevisionSummary], current: i64, picked: Option<i64>) -> String {
    let mut out = String::from("<ol class=\"revision-list\" aria-label=\"Versions\">");
    for r in list {
        let n = r.number;
        let who = match (r.author, r.reviewed) {
            (Author::Teacher, _) => "You",
            (Author::Agent, false) => "Assistant",
            (Author::Agent, true) => "Assistant, applied by you",
        };
        let class = match (current == n, picked == Some(n)) {
            (true, true) => " class=\"current selected\"",
            (true, false) => " class=\"current\"",
            (false, true) => " class=\"selected\"",
            (false, false) => "",
        };
        out.push_str(&format!(
            "<li{class}><button type=\"button\" class=\"revision\" data-n=\"{n}\" aria-pressed=\"{}\">\
             <span class=\"revision-number\">Version {n}</span><span class=\"revision-summary\">{}</span>\
             <span class=\"muted\">{who} · {}</span></button></li>",
            picked == Some(n),
            escape_text(&r.summary),
            escape_text(&short_time(&r.created_at))
        ));
    }
    out.push_str("</ol>");
    out
}
