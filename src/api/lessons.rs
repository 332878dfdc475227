//! The lessons list and opening a lesson, for the pages rendered on the
//! server. (A lesson is created by a plain form, `server::lessons::forms`; the
//! workspace in the browser saves and browses versions through
//! `server::lessons::routes`.)

use leptos::prelude::*;

use crate::models::{ImportReport, Lesson, LessonList, TrashedLesson};

/// Lessons on one page of the list.
pub const LESSONS_PER_PAGE: i64 = 50;

/// One page of the teacher's lessons: those matching `query` (all when
/// empty), ordered by `sort` (`title`, or last edited), from `offset`.
#[server]
pub async fn list_lessons(query: String, sort: String, offset: i64) -> Result<LessonList, ServerFnError> {
    use super::ssr::{fail, require_user};
    use crate::server::lessons::library::{find, Sort};
    let (state, user) = require_user().await?;
    find(&state.db, &user.id, &query, Sort::from_word(&sort), LESSONS_PER_PAGE, offset).await.map_err(fail)
}

/// The teacher's trash, most recently deleted first.
#[server]
pub async fn list_trash() -> Result<Vec<TrashedLesson>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::library::list_trash(&state.db, &user.id).await.map_err(fail)
}

/// Where the lesson stands with students (see `Publication`).
#[server]
pub async fn get_publication(id: String) -> Result<crate::models::Publication, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    let (published, _, classes) = crate::server::classes::publication(&state.db, &user.id, &id).await.map_err(fail)?;
    let all = crate::server::classes::list(&state.db, &user.id).await.map_err(fail)?;
    let others = all.into_iter().filter(|c| !classes.iter().any(|(id, _)| *id == c.id)).map(|c| (c.id, c.name)).collect();
    let tutor = crate::server::safety::policy::of_lesson(&state.db, &id).await.map_err(fail)?;
    Ok(crate::models::Publication { published, classes: classes.into_iter().map(|c| c.1).collect(), others, tutor })
}

#[server]
pub async fn get_lesson(id: String) -> Result<Lesson, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    let lesson = crate::server::lessons::get_editable(&state.db, &user.id, &id).await.map_err(fail)?;
    // The teacher opened it: the assistant may greet them back
    // (`sessionStart`), told apart from the page's answer.
    tokio::spawn(async move { state.lesson_listener.opened(&state, &user.id, &id).await });
    Ok(lesson)
}

/// Why the teacher's last lesson file could not be imported (`token` from
/// the address the import redirected to).
#[server]
pub async fn find_import_report(token: String) -> Result<Option<ImportReport>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    let now = crate::server::db::time::now();
    crate::server::lessons::import_reports::find(&state.db, &user.id, &token, &now).await.map_err(fail)
}

/// The lesson's sources (the teacher's material), whether the teacher lets
/// the assistant react on its own, and why their last upload was
/// refused (`refusal`: the token from the page's address), for the lesson page.
#[server]
pub async fn get_sources(id: String, refusal: Option<String>) -> Result<crate::models::Material, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    let sources = crate::server::material::sources::list(&state.db, &user.id, &id).await.map_err(fail)?;
    let react_to_events = crate::server::reactions::enabled(&state.db, &user.id).await.map_err(fail)?;
    let refused = match refusal.filter(|t| t.chars().all(|c| c.is_ascii_hexdigit())) {
        Some(token) if !token.is_empty() => {
            let now = crate::server::db::time::now();
            let report = crate::server::lessons::import_reports::find(&state.db, &user.id, &token, &now).await.map_err(fail)?;
            report.and_then(|r| r.problems.into_iter().next())
        }
        // A refusal that could not be kept, or one gone stale.
        Some(_) | None => None,
    };
    Ok(crate::models::Material { sources, react_to_events, refused })
}

/// A lesson's Versions page: its versions with their measured levels, or
/// its core when it is a version.
#[server]
pub async fn get_versions(id: String) -> Result<crate::models::LessonVersions, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::versions::page(&state.db, &user.id, &id).await.map_err(fail)
}

/// The School library: what the teacher's school shares, filtered.
#[server]
pub async fn get_school_library(q: String, subject: String, grade: String) -> Result<crate::models::SchoolLibrary, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::sharing::list(&state.db, &user, &q, &subject, &grade).await.map_err(fail)
}

/// One lesson of the School library, to read.
#[server]
pub async fn get_shared_lesson(id: String) -> Result<crate::models::SharedLessonView, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::sharing::open(&state.db, &user, &id).await.map_err(fail)
}

/// Whether one of the teacher's lessons is shared with their school.
#[server]
pub async fn get_sharing(id: String) -> Result<crate::models::Sharing, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::sharing::sharing(&state.db, &user.id, &id).await.map_err(fail)
}

/// The colleagues' lessons the teacher was invited to edit.
#[server]
pub async fn list_co_edited() -> Result<Vec<crate::models::CoEditedLesson>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::editors::co_edited(&state.db, &user.id).await.map_err(fail)
}

/// The owner's email when the teacher edits this lesson as a colleague
/// (`None`: it is their own).
#[server]
pub async fn get_lesson_owner(id: String) -> Result<Option<String>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lessons::editors::owner_of(&state.db, &user.id, &id).await.map_err(fail)
}
