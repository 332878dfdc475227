//! The audit log's door for the school's admin: `GET /api/school/audit`
//! with the page's filter (`person`, `lesson`, `from`, `to`) and
//! `format=json` (the default) or `format=csv`, for a spreadsheet. A
//! teacher or a student is refused; an admin reads their own school only.

use axum::{
    extract::State,
    response::{IntoResponse, Response},
    routing::get,
    Json, Router,
};
use serde::Deserialize;

use crate::{
    models::{AuditEntry, AuditFilter},
    server::{
        accounts::{current_user::CurrentUser, schools},
        error::Result,
        http::{download::download, extractors::ApiQuery},
        state::AppState,
    },
};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/school/audit", get(api_audit))
}

#[derive(Deserialize)]
struct AuditQuery {
    #[serde(flatten)]
    filter: AuditFilter,
    #[serde(default)]
    format: String,
}

async fn api_audit(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiQuery(q): ApiQuery<AuditQuery>) -> Result<Response> {
    let school = schools::admin_school(&user)?;
    let entries = super::list::list(&state.db, school, &q.filter, None).await?;
    if q.format == "csv" {
        // Saved as a file, and never kept by a cache on the way.
        let name = format!("margin-audit-{}", state.clock.now().date());
        return Ok(download(csv(&entries), "text/csv; charset=utf-8", &name, "csv"));
    }
    Ok(Json(entries).into_response())
}

/// The entries as CSV (RFC 4180), one row each, its tools in one cell.
pub fn csv(entries: &[AuditEntry]) -> String {
    let mut out = String::from("at,action,actor,person,person_id,lesson,lesson_id,model,tokens,outcome,tools\r\n");
    for e in entries {
        let tools = e.tools.iter().map(tool_text).collect::<Vec<_>>().join("; ");
        let cells = [
            e.at.as_str(),
            e.action.as_str(),
            e.actor.as_str(),
            e.person_email.as_deref().unwrap_or(if e.person_id.is_some() { "" } else { "(deleted)" }),
            e.person_id.as_deref().unwrap_or_default(),
            e.lesson_title.as_deref().unwrap_or_default(),
            e.lesson_id.as_deref().unwrap_or_default(),
            e.model.as_str(),
            &e.tokens.to_string(),
            e.outcome.as_str(),
            &tools,
        ];
        out.push_str(&cells.iter().map(|c| cell(c)).collect::<Vec<_>>().join(","));
        out.push_str("\r\n");
    }
    out
}

/// One tool as a cell reads it: `edit_document success r4`,
/// `edit_document proposed p=<id> applied r5`, `open_answers refused`.
pub fn tool_text(t: &crate::models::AuditTool) -> String {
    let mut s = format!("{} {}", t.tool, if t.refused { "refused" } else { t.status.as_str() });
    if let Some(r) = t.revision {
        s.push_str(&format!(" r{r}"));
    }
    if let Some(p) = &t.proposal {
        s.push_str(&format!(" p={p}"));
        if let Some(d) = &t.decision {
            s.push_str(&format!(" {d}"));
        }
        if let Some(r) = t.applied_revision {
            s.push_str(&format!(" r{r}"));
        }
    }
    s
}

/// A cell, quoted when it must be. Written here rather than with the `csv`
/// crate: quoting is these few lines, and it is the only CSV we write. A
/// cell a spreadsheet would run as a formula (a lesson titled "=1+1") is
/// kept as text with a leading apostrophe.
fn cell(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{text}") } else { text.to_string() };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn cells_are_quoted_and_formulas_kept_as_text() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a, b"), "\"a, b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(cell("-3"), "'-3");
    }
}
