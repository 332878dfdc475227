//! The edge every request crosses before it reaches a domain, assembled on
//! top of the server: the router that gathers every domain's routes
//! (`router`), each route's body limit (`bodies`), the cross-site check
//! (`csrf`) and the sign-in guard (`guard`). These know the domains; the
//! domains never import them (what they share of HTTP is in `http`).

pub mod bodies;
pub mod csrf;
pub mod guard;
pub mod router;
