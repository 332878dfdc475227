//! The edge every request crosses before it reaches a domain: the router
//! that assembles every domain's routes, body limits, the cross-site check,
//! security headers, typed extractors, the one error shape, the client's
//! address, open connections and rate limits; and the rules for requests
//! Margin makes outward (`outbound`).

pub mod assets;
pub mod bodies;
pub mod client_addr;
pub mod connections;
pub mod csrf;
pub mod download;
pub mod error;
pub mod extractors;
pub mod guard;
pub mod headers;
pub mod limits;
pub mod outbound;
pub mod router;
