//! The Audit page, for the school's admin: what the AI did in the school,
//! newest first (`server::audit`), narrowed by person, lesson and days with
//! a plain GET form, and downloaded as CSV or JSON with the same filter.
//! Rendered on the server; it sends no code to the browser.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use super::top_bar::TopBar;
use crate::{
    api::{audit::audit_log, error_text},
    chat::message::thousands,
    models::{AuditAction, AuditEntry, AuditFilter, AuditTool, AuditView},
};

#[component]
pub fn AuditPage() -> impl IntoView {
    let query = use_query_map();
    let filter = move || {
        let q = query.read();
        let get = |k: &str| q.get(k).unwrap_or_default();
        AuditFilter { person: get("person"), lesson: get("lesson"), from: get("from"), to: get("to") }
    };
    let log = Resource::new(filter, audit_log);
    view! {
        <Title text="Audit log · Margin"/>
        <TopBar/>
        <main class="page audit-page">
            <div class="page-head">
                <h1>"What the AI did"</h1>
                <a href="/school">"Back to the school"</a>
            </div>
            <p class="muted">
                "Every reply of the assistant and the tutor in your school: who it was for, the lesson, the model, the tokens, each tool it ran and what it changed (a revision, or a change held for the teacher and what they decided), and every refusal and flag. "
                "It never holds the words of a message."
            </p>
            <Suspense fallback=|| view! { <p class="muted">"Loading the log…"</p> }>
                {move || Suspend::new(async move {
                    match log.await {
                        Ok(view) => Either::Left(view! { <Log view filter=filter()/> }),
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Suspense>
        </main>
    }
}

/// The filter's query string, for the downloads.
fn query_of(f: &AuditFilter, format: &str) -> String {
    let (person, lesson, from, to) = (f.person.trim(), f.lesson.trim(), f.from.trim(), f.to.trim());
    crate::url::query(&[("format", format), ("person", person), ("lesson", lesson), ("from", from), ("to", to)])
}

#[component]
fn Log(view: AuditView, filter: AuditFilter) -> impl IntoView {
    let AuditView { entries, more, lessons, people, keep_days } = view;
    let csv = format!("/api/school/audit?{}", query_of(&filter, "csv"));
    let json = format!("/api/school/audit?{}", query_of(&filter, "json"));
    let chosen = filter.lesson.clone();
    let count = if more { format!("The newest {} entries; the downloads have them all.", entries.len()) } else { format!("{} entries.", entries.len()) };
    view! {
        <form method="get" action="/school/audit" class="audit-filter" aria-label="Narrow the log">
            <label>"Person (email)"<input name="person" list="audit-people" value=filter.person.clone()/></label>
            <datalist id="audit-people">{people.into_iter().map(|p| view! { <option value=p/> }).collect_view()}</datalist>
            <label>"Lesson"
                <select name="lesson">
                    <option value="">"Every lesson"</option>
                    {lessons.into_iter().map(|(id, title)| {
                        let selected = id == chosen;
                        view! { <option value=id selected=selected>{title}</option> }
                    }).collect_view()}
                </select>
            </label>
            <label>"From"<input type="date" name="from" value=filter.from.clone()/></label>
            <label>"To"<input type="date" name="to" value=filter.to.clone()/></label>
            <button type="submit">"Show"</button>
            <a href="/school/audit">"Clear"</a>
        </form>
        <p class="muted">
            {count}" Kept "{keep_days}" days (set on the School page). "
            <a href=csv download>"Download CSV"</a>" · "<a href=json download>"Download JSON"</a>
        </p>
        {if entries.is_empty() {
            Either::Left(view! { <p class="empty">"Nothing in the log for this filter."</p> })
        } else {
            Either::Right(view! {
                <table class="audit-table">
                    <thead><tr><th>"When (UTC)"</th><th>"Who"</th><th>"What"</th><th>"Lesson"</th><th>"Model"</th><th>"Tokens"</th><th>"Tools and changes"</th></tr></thead>
                    <tbody>{entries.into_iter().map(row).collect_view()}</tbody>
                </table>
            })
        }}
    }
}

fn row(e: AuditEntry) -> impl IntoView {
    let when = e.at.get(..16).unwrap_or_default().replace('T', " ");
    let who = format!("{}: {}", e.actor.label(), e.person_email.clone().unwrap_or_else(|| if e.person_id.is_some() { "(no email)".into() } else { "(deleted)".into() }));
    let what = match e.action {
        AuditAction::Reply => format!("Reply ({})", e.outcome),
        AuditAction::Refusal => format!("Refused: {}", refusal_text(&e.outcome)),
        AuditAction::Flag => format!("Flag: {}", crate::models::FlagCategory::from_wire(&e.outcome).map_or(e.outcome.clone(), |c| c.label().to_string())),
    };
    let lesson = e.lesson_title.clone().unwrap_or_else(|| if e.lesson_id.is_some() { "(deleted lesson)".into() } else { String::new() });
    let tokens = if e.tokens > 0 { thousands(e.tokens) } else { String::new() };
    view! {
        <tr class=format!("audit-{}", e.action.as_str())>
            <td>{when}</td>
            <td>{who}</td>
            <td>{what}</td>
            <td>{lesson}</td>
            <td>{e.model.clone()}</td>
            <td class="num">{tokens}</td>
            <td>{e.tools.iter().map(tool_item).collect::<Vec<_>>().join("; ")}</td>
        </tr>
    }
}

fn refusal_text(word: &str) -> &str {
    match word {
        "tutor_off" => "the tutor is off for this lesson",
        "budget" => "the school's or the person's tokens are used up",
        other => other,
    }
}

/// One tool as the table reads it.
fn tool_item(t: &AuditTool) -> String {
    if t.refused {
        return format!("{} (refused: not this assistant's tool)", t.tool);
    }
    let mut s = t.tool.clone();
    match (t.revision, &t.proposal) {
        (Some(r), _) => s.push_str(&format!(" → saved as revision {r}")),
        (None, Some(_)) => {
            let decided = match t.decision.as_deref() {
                Some("applied") => t.applied_revision.map_or("applied".to_string(), |r| format!("applied as revision {r}")),
                Some("discarded") => "discarded".into(),
                Some("replaced") => "replaced by a newer change".into(),
                Some("gone") => "gone with its lesson".into(),
                _ => "waiting for the teacher".into(),
            };
            s.push_str(&format!(" → held for review, {decided}"));
        }
        _ if t.status == "error" => s.push_str(" (failed)"),
        _ => {}
    }
    s
}
