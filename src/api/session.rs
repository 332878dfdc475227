//! Who is signed in, for the pages' top bar.

use leptos::prelude::*;

use crate::models::UserInfo;

#[server]
pub async fn whoami() -> Result<Option<UserInfo>, ServerFnError> {
    super::ssr::user().await
}
