//! "Download for Word": `GET /api/lessons/{id}/docx` (the worksheet) and
//! `?key=1` (the answer key), the lesson as an editable .docx laid out as
//! on paper (`lesson::word`). The owner's lessons only. The way back is the
//! lesson import, which takes a .docx made here (`forms::form_import`): the
//! key whole, a worksheet whole for a teacher who may edit its lesson
//! (`worksheets`), as what it shows for anyone else.

use axum::{extract::State, response::Response};
use serde::Deserialize;

use crate::{
    lesson::{self, Sheet},
    server::{
        accounts::current_user::CurrentUser,
        error::{AppError, Result},
        http::{
            download::download,
            extractors::{ApiPath, ApiQuery},
        },
        lessons,
        state::AppState,
    },
};

/// Word's own type for a .docx.
pub const DOCX_TYPE: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

#[derive(Deserialize)]
pub struct WordQuery {
    /// `1`: the answer key.
    #[serde(default)]
    key: Option<String>,
}

pub async fn docx(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, ApiQuery(q): ApiQuery<WordQuery>) -> Result<Response> {
    let sheet = if q.key.as_deref().is_some_and(|k| k == "1" || k == "true") { Sheet::Key } else { Sheet::Worksheet };
    let l = lessons::get_editable(&state.db, &user.id, &id).await?;
    let root = lesson::parse(&l.document_xml).map_err(|e| AppError::BadRequest(format!("This lesson cannot be made into a Word document: {e}")))?;
    // The worksheet carries a reference to the lesson, never the lesson; the key carries it.
    let reference = match sheet {
        Sheet::Worksheet => lessons::worksheets::reference(&state.db, &l).await?,
        Sheet::Key => String::new(),
    };
    let bytes = lesson::word::to_docx(&root, &l.title, sheet, &reference).map_err(AppError::Internal)?;
    let stem = format!("{} ({})", l.title, if sheet == Sheet::Key { "answer key" } else { "worksheet" });
    Ok(download(bytes, DOCX_TYPE, &stem, "docx"))
}
