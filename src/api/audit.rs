//! What the Audit page asks: the school's log of AI actions under its
//! filter, for the school's admin only.

use leptos::prelude::*;

use crate::models::{AuditFilter, AuditView};

#[server]
pub async fn audit_log(filter: AuditFilter) -> Result<AuditView, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    let school = crate::server::accounts::schools::admin_school(&user).map_err(fail)?;
    crate::server::audit::list::view(&state.db, school, &filter).await.map_err(fail)
}
