//! Who is signed in, for the pages' top bar.

use leptos::prelude::*;

use crate::models::UserInfo;

#[server]
pub async fn whoami() -> Result<Option<UserInfo>, ServerFnError> {
    super::ssr::user().await
}

/// The school-account providers this server trusts, for sign-in buttons.
#[server]
pub async fn sso_buttons() -> Result<Vec<crate::models::SsoButton>, ServerFnError> {
    Ok(super::ssr::state()?.sso.buttons())
}

/// The Account page: how the signed-in account signs in.
#[server]
pub async fn get_account() -> Result<crate::models::AccountView, ServerFnError> {
    use super::ssr::{fail, state, user};
    let state = state()?;
    let user = user().await?.ok_or_else(|| fail(crate::server::error::AppError::Unauthorized))?;
    let identities = crate::server::accounts::sso::identities::linked(&state, &user.id).await.map_err(fail)?;
    let has_password = crate::server::accounts::sso::identities::has_password(&state, &user.id).await.map_err(fail)?;
    Ok(crate::models::AccountView { user, has_password, identities, providers: state.sso.buttons() })
}

/// A teacher's Deep Linking request from their LMS, to choose a lesson for it.
#[server]
pub async fn get_deep_link(id: String) -> Result<crate::models::DeepLinkPick, ServerFnError> {
    use super::ssr::{fail, require_user};
    let (state, user) = require_user().await?;
    crate::server::lti::deep_linking::view(&state.db, &user, &id).await.map_err(fail)
}
