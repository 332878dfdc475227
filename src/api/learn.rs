//! A published lesson for the student it is published to, for the page
//! rendered on the server (`components::learn_page`).

use leptos::prelude::*;

use crate::models::StudentLessonView;

/// The lesson as its student answers it; "not found" for anyone who is not
/// in a class it is published to.
#[server]
pub async fn get_student_lesson(id: String) -> Result<StudentLessonView, ServerFnError> {
    use super::ssr::{fail, state, user};
    use crate::server::error::AppError;
    let user = user().await?.ok_or_else(|| fail(AppError::Unauthorized))?;
    crate::server::classes::learn::view(&state()?, &user, &id).await.map_err(fail)
}
