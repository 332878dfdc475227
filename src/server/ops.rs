//! What the people who run Margin use beside the product: `/metrics` for
//! their Prometheus, `/readyz` for their load balancer, and `margin copy`
//! to move a school from one machine's SQLite onto PostgreSQL.

pub mod backup;
pub mod copy;
pub mod deletion;
pub mod deletion_routes;
pub mod export;
pub mod retention;
pub mod metrics;
pub mod ready;
