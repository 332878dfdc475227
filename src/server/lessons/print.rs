//! "Print worksheet" and "Print answer key": `/lessons/{id}/print` and
//! `/lessons/{id}/print?key=1`, pages made for paper (`lesson::to_paper`):
//! a header with the title and lines for a name and a date, then the
//! lesson. Whole HTML documents drawn here with Leptos' `view!` (every value
//! escaped by its type; the lesson's paper form comes escaped from
//! `lesson::paper`), with no script: printing them needs no code in the
//! browser bundle. The owner's lessons only, like every
//! other door (another teacher's id is "not found").

use axum::{
    extract::State,
    http::{header, StatusCode},
    response::{Html, IntoResponse, Redirect, Response},
    routing::get,
    Router,
};
use serde::Deserialize;

use crate::server::{
    accounts::current_user::CurrentUser,
    error::AppError,
    http::extractors::{ApiPath, ApiQuery},
    lessons,
    state::AppState,
};
use leptos::prelude::*;

use crate::lesson::{self, Sheet};

pub fn router() -> Router<AppState> {
    Router::new().route("/lessons/{id}/print", get(print))
}

#[derive(Deserialize)]
struct PrintQuery {
    /// `1`: the answer key.
    #[serde(default)]
    key: Option<String>,
}

async fn print(
    State(state): State<AppState>,
    user: Result<Option<CurrentUser>, AppError>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<PrintQuery>,
) -> Response {
    let Ok(Some(CurrentUser(user))) = user else {
        return Redirect::to(&format!("/signin?next=/lessons/{id}/print")).into_response();
    };
    let sheet = if q.key.as_deref().is_some_and(|k| k == "1" || k == "true") { Sheet::Key } else { Sheet::Worksheet };
    match lessons::get_editable(&state.db, &user.id, &id).await {
        Ok(l) => match lesson::parse(&l.document_xml) {
            Ok(root) => ([(header::CACHE_CONTROL, "no-store")], Html(page(&l.title, lesson::to_paper(&root, sheet), sheet))).into_response(),
            Err(e) => (StatusCode::UNPROCESSABLE_ENTITY, Html(view! { <p>"This lesson cannot be printed: " {e.to_string()}</p> }.to_html())).into_response(),
        },
        Err(AppError::NotFound) => Redirect::to("/lessons/not-found").into_response(),
        Err(e) => e.into_response(),
    }
}

/// The whole page around the lesson (`body`, the lesson's paper form).
fn page(title: &str, body: String, sheet: Sheet) -> String {
    let (what, head) = match sheet {
        Sheet::Worksheet => (
            "Worksheet",
            view! { <p class="who"><span>"Name:"</span><span class="fill wide"></span><span>"Date:"</span><span class="fill"></span></p> }.into_any(),
        ),
        Sheet::Key => ("Answer key", view! { <p class="who"><strong>"Answer key"</strong>": for the teacher."</p> }.into_any()),
    };
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                // Set whole: a text node here would carry the marker Leptos puts
                // after dynamic text (`<!>`), which a title shows as written.
                <title inner_html=lesson::escape_text(&format!("{title} · {what} · Margin"))></title>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <style inner_html=PRINT_CSS></style>
            </head>
            <body class="sheet">
                <p class="screen-only">"Print this page with your browser's Print command (Ctrl+P, or ⌘P on a Mac)."</p>
                <header class="sheet-head"><h1 class="sheet-title">{title.to_string()}</h1>{head}</header>
                <main inner_html=body></main>
            </body>
        </html>
    }
    .to_html()
}

/// Paper first: A4 or Letter margins, black on white, and no question split
/// across two pages.
const PRINT_CSS: &str = "
@page { margin: 18mm 16mm; }
body.sheet { font: 12pt/1.5 Georgia, 'Times New Roman', serif; color: #000; background: #fff; max-width: 48rem; margin: 1.5rem auto; padding: 0 1rem; }
.sheet-head { border-bottom: 1.5pt solid #000; margin-bottom: 1rem; }
.sheet-title { font-size: 18pt; margin: 0 0 0.4rem; }
.who { display: flex; gap: 0.5rem; align-items: baseline; }
.fill { display: inline-block; min-width: 8ch; border-bottom: 1pt solid #000; line-height: 1.1; padding: 0 0.2em; text-align: center; }
.fill.wide { min-width: 22ch; }
.hint { font-size: 10pt; color: #333; }
.exercise { margin: 1.2rem 0; }
.exercise-head { font-size: 13pt; margin: 0 0 0.4rem; }
.question, .exercise p, .options li, .sequence li { break-inside: avoid; page-break-inside: avoid; }
.exercise-head { break-after: avoid; page-break-after: avoid; }
.instructions { font-style: italic; }
.options { list-style: none; padding-left: 0.5rem; }
.box { display: inline-block; min-width: 1.1em; height: 1.1em; border: 1pt solid #000; text-align: center; line-height: 1.1em; vertical-align: middle; }
.box.number { min-width: 1.6em; }
.sequence { list-style: none; padding-left: 0.5rem; }
.tf { white-space: nowrap; margin-right: 0.5rem; }
.ruled { break-inside: avoid; page-break-inside: avoid; margin: 0.3rem 0 0.8rem; }
.ruled .line { height: 2em; border-bottom: 1pt solid #000; }
.key-answer, .key-note { border-left: 3pt solid #000; padding-left: 0.5rem; }
.rubric { break-inside: avoid; page-break-inside: avoid; margin: 0.3rem 0 0.8rem; }
.rubric table { border-collapse: collapse; width: 100%; font-size: 10pt; }
.rubric th, .rubric td { border: 1pt solid #000; padding: 0.2rem 0.35rem; text-align: left; vertical-align: top; }
.screen-only { font: 11pt system-ui, sans-serif; background: #eef4ff; border: 1px solid #c9dafc; border-radius: 6px; padding: 0.4rem 0.6rem; }
@media print { body.sheet { margin: 0; max-width: none; padding: 0; } .screen-only { display: none; } }
";
