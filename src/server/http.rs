//! The parts of HTTP every domain uses, and nothing above them: typed
//! extractors, the client's address, security headers,
//! downloads and stylesheet assets, open connections and rate limits; and
//! the rules for requests Margin makes outward (`outbound`). It is the
//! server's floor: it reads the configuration and the database, never a
//! domain. The layers that know the domains (the router, body limits, the
//! cross-site check, the sign-in guard) stand on top, in `edge`.

pub mod assets;
pub mod client_addr;
pub mod connections;
pub mod download;
pub mod extractors;
pub mod headers;
pub mod limits;
pub mod outbound;
