//! What the pages ask about students' safety: the flags the signed-in
//! teacher (or admin) may see, and how many are still open.

use leptos::prelude::*;

use crate::models::Flag;

/// The flags the signed-in account may see, newest first; the acknowledged
/// ones too when `all`.
#[server]
pub async fn list_flags(all: bool) -> Result<Vec<Flag>, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::safety::flags::list(&state.db, &user, all, None).await.map_err(fail)
}

/// How many flags the signed-in account has not acknowledged (0 for a
/// student, or nobody signed in).
#[server]
pub async fn open_flag_count() -> Result<i64, ServerFnError> {
    use super::ssr::{fail, state, user};
    let Some(user) = user().await? else { return Ok(0) };
    crate::server::safety::flags::open_count(&state()?.db, &user).await.map_err(fail)
}
