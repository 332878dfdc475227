//! A chat taken away: `GET /api/chats/{id}/export` as Markdown (to read,
//! keep with the lesson, or paste into a document) and
//! `?format=json` as JSON (every message as the sidebar's messages API
//! gives it, with the chat and its lesson). Its owner only, teacher or
//! student; the export holds nothing the messages API does not already give
//! them.
//!
//! The Markdown reads as the sidebar does: each message under its author
//! and time, a reply's text and its steps in the order they happened (each
//! step one line: what it did and how it ended, an edit's changes beneath
//! it, and what became of a change held for review). An automatic turn
//! shows what started it, not the app's message to the model.

use axum::{extract::State, response::Response};
use serde::{Deserialize, Serialize};

use crate::{
    chat::{
        events::ToolStatus,
        message::{ChatMessage, ChatSession, Role},
        proposal::ProposalStatus,
        turn::{MessageStatus, ToolCallRecord},
    },
    server::{
        accounts::current_user::Member,
        chats,
        http::download::download,
        error::{AppError, Result},
        http::extractors::{ApiPath, ApiQuery},
        state::AppState,
    },
};

#[derive(Deserialize)]
pub struct Format {
    #[serde(default)]
    format: Option<String>,
}

/// The JSON export.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Exported<'a> {
    chat: &'a ChatSession,
    lesson_title: &'a str,
    messages: &'a [ChatMessage],
}

/// `GET /api/chats/{id}/export[?format=md|json]`: the chat as a download.
pub async fn export(State(state): State<AppState>, Member(user): Member, ApiPath(id): ApiPath<String>, ApiQuery(q): ApiQuery<Format>) -> Result<Response> {
    let json = match q.format.as_deref() {
        None | Some("md" | "markdown") => false,
        Some("json") => true,
        Some(_) => return Err(AppError::BadRequest("The format is md (Markdown) or json.".into())),
    };
    let session = chats::get_session(&state.db, &user.id, &id).await?;
    let messages = chats::list_messages(&state.db, &user.id, &id).await?;
    let lesson_title: String =
        sqlx::query_scalar("SELECT title FROM lessons WHERE id = $1").bind(&session.lesson_id).fetch_optional(&state.db).await?.unwrap_or_default();
    let (body, kind, ext) = if json {
        let exported = Exported { chat: &session, lesson_title: &lesson_title, messages: &messages };
        (serde_json::to_string_pretty(&exported).map_err(|e| AppError::Internal(e.to_string()))?, "application/json", "json")
    } else {
        (markdown(&session, &lesson_title, &messages), "text/markdown; charset=utf-8", "md")
    };
    let stem = if session.title.trim().is_empty() { "chat" } else { session.title.as_str() };
    Ok(download(body, kind, stem, ext))
}

/// The chat as Markdown.
pub fn markdown(session: &ChatSession, lesson_title: &str, messages: &[ChatMessage]) -> String {
    let mut out = format!("# {}\n\n", one_line(&session.title));
    if !lesson_title.is_empty() {
        out.push_str(&format!("A chat about the lesson “{}”, started {}.\n\n", one_line(lesson_title), day_and_time(&session.created_at)));
    }
    for m in messages {
        match m.role {
            Role::User => user_message(m, &mut out),
            Role::Assistant => reply(m, &mut out),
        }
    }
    out
}

fn user_message(m: &ChatMessage, out: &mut String) {
    let attachments = m.attachments.as_ref();
    if let Some(trigger) = attachments.and_then(|a| a.trigger.as_deref()) {
        out.push_str(&format!("## Started by the app · {}\n\n{}\n\n", day_and_time(&m.created_at), one_line(trigger)));
        return;
    }
    out.push_str(&format!("## You · {}\n\n", day_and_time(&m.created_at)));
    if let Some(sel) = attachments.and_then(|a| a.selected_text.as_ref()) {
        for line in sel.text.lines() {
            out.push_str(&format!("> {}\n", literal(line)));
        }
        out.push('\n');
    }
    // What the teacher typed is text, not Markdown: it reads as typed.
    for line in m.content.trim().lines() {
        out.push_str(&literal(line));
        out.push('\n');
    }
    out.push('\n');
}

fn reply(m: &ChatMessage, out: &mut String) {
    out.push_str(&format!("## Assistant · {}", day_and_time(&m.created_at)));
    match m.status {
        MessageStatus::Complete => {}
        MessageStatus::Running => out.push_str(" · still writing"),
        MessageStatus::Awaiting => out.push_str(" · waiting for your review"),
        MessageStatus::Cancelled => out.push_str(" · stopped"),
        MessageStatus::Interrupted => out.push_str(" · interrupted"),
        MessageStatus::Error => out.push_str(" · ended with an error"),
    }
    out.push_str("\n\n");
    // Text and steps in the order they happened: each step at the length
    // the text had when it was called.
    let text = m.content.as_str();
    // Where a step goes: its place, inside the text and on a letter's start.
    let place = |s: &ToolCallRecord| {
        let at = (s.at as usize).min(text.len());
        (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0)
    };
    let mut from = 0;
    let mut steps = m.tool_calls.iter().peekable();
    while let Some(first) = steps.peek() {
        let at = place(first).max(from);
        push_text(&text[from..at], out);
        from = at;
        while let Some(s) = steps.next_if(|s| place(s) <= at) {
            step(s, out);
        }
        out.push('\n');
    }
    push_text(&text[from..], out);
    if let Some(e) = &m.error {
        out.push_str(&format!("*{}*\n\n", one_line(&e.message)));
    }
}

fn push_text(t: &str, out: &mut String) {
    let t = t.trim();
    if !t.is_empty() {
        out.push_str(t);
        out.push_str("\n\n");
    }
}

/// One step as a line, with an edit's changes beneath it.
fn step(s: &ToolCallRecord, out: &mut String) {
    let how = match s.status {
        ToolStatus::Success => "done".to_string(),
        ToolStatus::Proposed => match &s.proposal {
            Some(p) => match (p.status, p.revision, p.reason.as_deref()) {
                (ProposalStatus::Pending, ..) => "waiting for your review".into(),
                (ProposalStatus::Applied, Some(n), _) => format!("applied as version {n}"),
                (ProposalStatus::Applied, None, _) => "applied".into(),
                (ProposalStatus::Discarded, _, Some(r)) => format!("discarded: “{}”", one_line(r)),
                (ProposalStatus::Discarded, _, None) => "discarded".into(),
                (ProposalStatus::Replaced, ..) => "replaced by a newer suggestion".into(),
            },
            None => "held for review".into(),
        },
        ToolStatus::Error => match &s.error {
            Some(e) => format!("failed: {}", one_line(e)),
            None => "failed".into(),
        },
    };
    out.push_str(&format!("- Step: {} ({how})", one_line(&s.display_text)));
    if let Some(summary) = &s.summary {
        out.push_str(&format!(". {}", one_line(summary)));
    }
    if let Some(n) = s.revision.filter(|_| s.status == ToolStatus::Success) {
        out.push_str(&format!(", saved as version {n}"));
    }
    out.push('\n');
    for c in &s.changes {
        out.push_str(&format!("  - {}\n", one_line(&c.text)));
    }
}

/// `s` on one line, as literal text (`literal`).
fn one_line(s: &str) -> String {
    literal(&s.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// One line of text written so that Markdown shows it as it is: the
/// characters Markdown reads as markup are escaped with a backslash
/// (CommonMark lets any ASCII punctuation be), and so is what would start
/// a heading, list, quote or rule at the line's start. The replies are the
/// model's Markdown and stay as they are; this is for what people typed
/// and what the app wrote about it. Written here: the Markdown crates in
/// the tree (pulldown-cmark) read Markdown and escape HTML, not this.
fn literal(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let body = line.trim_start();
    out.push_str(&line[..line.len() - body.len()]);
    let mut chars = body.char_indices().peekable();
    // What starts a block: `#`, `>`, `-`, `+`, `=`, or a number and `.` or `)`.
    if let Some(&(_, first)) = chars.peek() {
        if matches!(first, '#' | '+' | '-' | '=') {
            out.push('\\');
        } else if first.is_ascii_digit() {
            let digits = body.chars().take_while(char::is_ascii_digit).count();
            if body[digits..].starts_with(['.', ')']) {
                out.push_str(&body[..digits]);
                out.push('\\');
                for _ in 0..digits {
                    chars.next();
                }
            }
        }
    }
    for (_, c) in chars {
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' | '|') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// "2026-11-27 09:14" from a stored time (RFC 3339 or the database's own).
fn day_and_time(stamp: &str) -> String {
    let s = stamp.replace('T', " ");
    s.get(..16).map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests;
