//! Whether a turn's two messages are in the database. The model call does not
//! wait for them (storing them is on the way to the first word of the reply),
//! but everything the turn writes does: its progress, the lesson revisions of
//! its edits, its end. If they could not be stored, the turn is cancelled and
//! leaves no trace.

use tokio::sync::watch;

#[derive(Clone)]
pub struct Stored(watch::Receiver<Option<bool>>);

/// Set once by whoever stores the messages.
pub struct StoredSender(watch::Sender<Option<bool>>);

pub fn stored_gate() -> (StoredSender, Stored) {
    let (tx, rx) = watch::channel(None);
    (StoredSender(tx), Stored(rx))
}

impl StoredSender {
    pub fn set(self, stored: bool) {
        self.0.send_replace(Some(stored));
    }
}

impl Stored {
    /// Waits until the messages are stored (true) or could not be (false).
    pub async fn wait(&self) -> bool {
        let mut rx = self.0.clone();
        let stored = rx.wait_for(Option::is_some).await.map(|v| *v == Some(true));
        stored.unwrap_or(false)
    }
}
