//! What a lesson announces beyond its open pages, and who may listen: when
//! its content changes (a save, a restore, an applied proposal, a reply that
//! edited it, once it ended), the reactions carry the change to its
//! versions (`reactions::carry`). A lesson never names who listens; the
//! listener is handed to the state when it is made (`AppState::new`), so the
//! lessons never import the reactions that stand on them. `S` is the state
//! a listener is given: this file knows nothing above it.

use futures::future::BoxFuture;

pub trait ChangeListener<S>: Send + Sync {
    /// `lesson_id`'s content changed and is stored. It cannot fail the
    /// change: a listener says its own trouble in the log.
    fn changed<'a>(&'a self, state: &'a S, lesson_id: &'a str) -> BoxFuture<'a, ()>;
}
