//! "For a learning platform": `GET /api/lessons/{id}/qti`, the lesson's
//! exercises as a QTI 2.1 package, and `GET /api/lessons/{id}/cartridge`,
//! the lesson page and its quiz as a Common Cartridge (`lesson::qti`). The
//! owner's lessons only. The way back is the lesson import, which takes a
//! QTI package (`forms::form_import`).

use axum::{extract::State, response::Response};

use crate::{
    lesson,
    server::{
        accounts::current_user::CurrentUser,
        error::{AppError, Result},
        http::{
            download::download,
            extractors::ApiPath,
        },
        lessons,
        state::AppState,
    },
};

/// A QTI package is a plain zip archive.
pub const QTI_TYPE: &str = "application/zip";
/// A Common Cartridge 1.1 (`.imscc`).
pub const CARTRIDGE_TYPE: &str = "application/vnd.ims.imsccv1p1";

pub async fn qti(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Response> {
    let (root, title) = owned(&state, &user.id, &id).await?;
    let bytes = lesson::qti::to_qti_package(&root, &title).map_err(AppError::Internal)?;
    Ok(download(bytes, QTI_TYPE, &format!("{title} (QTI)"), "zip"))
}

pub async fn cartridge(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Response> {
    let (root, title) = owned(&state, &user.id, &id).await?;
    let bytes = lesson::qti::to_cartridge(&root, &title).map_err(AppError::Internal)?;
    Ok(download(bytes, CARTRIDGE_TYPE, &title, "imscc"))
}

async fn owned(state: &AppState, user: &str, id: &str) -> Result<(lesson::Element, String)> {
    let l = lessons::get_editable(&state.db, user, id).await?;
    let root = lesson::parse(&l.document_xml).map_err(|e| AppError::BadRequest(format!("This lesson cannot be packaged for a platform: {e}")))?;
    Ok((root, l.title))
}
