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
