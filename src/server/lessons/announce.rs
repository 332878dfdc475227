//! What a lesson announces beyond its open pages, and who may listen: when
//! its content changes (a save, a restore, an applied proposal, a reply that
//! edited it, once it ended), the reactions carry the change to its
//! versions (`reactions::carry`); when a teacher creates one ("New lesson")
//! or opens it, the assistant may greet them (`reactions::sessions`). A lesson never names who listens; the
//! listener is handed to the state when it is made (`AppState::new`), so the
//! lessons never import the reactions that stand on them. `S` is the state
//! a listener is given: this file knows nothing above it.

use futures::future::BoxFuture;

pub trait ChangeListener<S>: Send + Sync {
    /// `lesson_id`'s content changed and is stored. It cannot fail the
    /// change: a listener says its own trouble in the log.
    fn changed<'a>(&'a self, state: &'a S, lesson_id: &'a str) -> BoxFuture<'a, ()>;

    /// `owner_id` created `lesson_id` with "New lesson" (not an import, a
    /// copy or a version). Cannot fail the creation.
    fn created<'a>(&'a self, _state: &'a S, _owner_id: &'a str, _lesson_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// `user_id` opened `lesson_id`'s page (one they may edit). Cannot
    /// fail the page.
    fn opened<'a>(&'a self, _state: &'a S, _user_id: &'a str, _lesson_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}
