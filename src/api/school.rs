//! The School page's data, for the page rendered on the server (its changes
//! are plain forms, `server::accounts::school_routes`).

use leptos::prelude::*;

use crate::models::SchoolOverview;

/// The signed-in admin's school; an error for anyone else.
#[server]
pub async fn get_school() -> Result<SchoolOverview, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::accounts::school_routes::overview(&state, &user).await.map_err(fail)
}

/// The first step of deleting a member's account: what goes. The signed-in
/// admin's own school only.
#[server]
pub async fn deletion_preview(id: String) -> Result<crate::models::DeletionPreview, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::ops::deletion_routes::preview(&state.db, &user, &id).await.map_err(fail)
}
