//! Accounts: who someone is and what they may spend. Passwords and sessions
//! (`auth`), the signed-in user as handlers receive it (`current_user`), the
//! sign-in and sign-up doors (`routes`), schools and their invites
//! (`schools`, `school_routes`), operators (`operators`), token budgets
//! (`budget`), storage quotas (`quota`) and sign-in with school accounts
//! (`sso`); a refused sign-in from elsewhere on a page of its own
//! (`refused`).

pub mod auth;
pub mod budget;
pub mod current_user;
pub mod help;
pub mod keeping;
pub mod operators;
pub mod quota;
pub mod refused;
pub mod routes;
pub mod school_routes;
pub mod schools;
pub mod sso;
