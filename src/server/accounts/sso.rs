//! Signing in with a school's own accounts (OpenID Connect): Google,
//! Microsoft, Clever, ClassLink or any provider the operator configures
//! (`providers`). The flow and the token checks (`flow`), whose account a
//! verified identity is (`identities`), which school new people land in
//! (`school_links`), and the doors (`routes`).

pub mod flow;
pub mod identities;
pub mod providers;
pub mod routes;
pub mod school_links;
