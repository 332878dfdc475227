//! Plain data shared by the server and the browser: what a page shows of a
//! teacher, their school and their lessons, one file per domain, all
//! reachable as `models::Name`. Database access for these lives in `server`.

use serde::{Deserialize, Serialize};

mod accounts;
mod audit;
mod classes;
mod lessons;
mod material;
mod safety;
mod standards;
mod students;

pub use accounts::*;
pub use audit::*;
pub use classes::*;
pub use lessons::*;
pub use material::*;
pub use safety::*;
pub use standards::*;
pub use students::*;

/// The body of every failed API call: a sentence for the teacher and a
/// stable code for programs; for an edit that collides with later changes
/// (`conflict`), the changes of that edit that collide.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub error: String,
    pub code: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<crate::lesson::Change>,
}
