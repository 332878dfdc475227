//! Notes between the instances sharing a database: "turn T has new events",
//! "lesson L changed". Short, and only ever a hint to go and read the
//! database, which holds the truth; a reader that misses one (a dropped
//! connection) still finds everything on its next read, which it makes at
//! least every `POLL` anyway.
//!
//! On PostgreSQL a note is a `NOTIFY` on the note's channel, which every
//! instance `LISTEN`s to (this one too) and passes on to its own readers.
//! Notes wait up to `GATHER` to be sent together, in one statement: a
//! reply's start and end, a saved version, a reader's interest would each be
//! a transaction of their own, which with thousands of replies at once is
//! what PostgreSQL's one notification lock cannot take. On SQLite there is
//! one instance, so a note goes straight to its readers.
//! Nothing else is needed to run many instances: no Redis, no NATS.

use std::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

use tokio::sync::{broadcast, mpsc, watch};

use crate::server::db::{Backend, Db};

/// How often a reader waiting on notes reads the database regardless.
pub const POLL: Duration = Duration::from_secs(1);
/// How long a note waits for others to be sent with it.
pub const GATHER: Duration = Duration::from_millis(20);
/// Notes per statement.
const NOTES_PER_STATEMENT: usize = 200;

/// The channels.
pub const TURNS: &str = "margin_turns";
pub const LESSONS: &str = "margin_lessons";
/// A proposal was decided (the payload is its id): a turn paused on it goes on.
pub const PROPOSALS: &str = "margin_proposals";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub channel: String,
    pub payload: String,
}

pub struct Bus {
    local: broadcast::Sender<Note>,
    shared: bool,
    /// Notes waiting to be sent (PostgreSQL).
    outbox: Option<mpsc::UnboundedSender<Note>>,
    /// Whether PostgreSQL's notifications are being listened to now.
    listening: watch::Receiver<bool>,
    /// Notes handed to this instance's readers so far.
    handed: Arc<AtomicU64>,
}

impl Bus {
    /// A bus for `db`; on PostgreSQL it starts listening (and keeps
    /// reconnecting) in a task of its own.
    pub fn start(db: &Db) -> Self {
        let (local, _) = broadcast::channel(1024);
        let shared = Backend::of(db) == Backend::Postgres;
        let (listening_tx, listening) = watch::channel(!shared);
        let mut outbox = None;
        let handed = Arc::new(AtomicU64::new(0));
        if shared {
            tokio::spawn(listen(db.connect_options().database_url.to_string(), local.clone(), handed.clone(), listening_tx));
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(send(db.clone(), rx));
            outbox = Some(tx);
        }
        Self { local, shared, outbox, listening, handed }
    }

    /// Waits until every note sent before this call has reached this
    /// instance's readers (and the bus is listening): a note of its own makes
    /// the round trip, and PostgreSQL delivers notes in the order they were
    /// committed. For tests, and for anything that must not see old notes.
    pub async fn settle(&self, db: &Db) {
        if !self.shared {
            return;
        }
        let mut listening = self.listening.clone();
        let _ = tokio::time::timeout(Duration::from_secs(10), listening.wait_for(|on| *on)).await;
        let mut notes = self.subscribe();
        let token = format!("settle:{}", crate::server::ids::new_id());
        self.publish(db, TURNS, &token).await;
        let _ = tokio::time::timeout(Duration::from_secs(10), async {
            while let Ok(note) = notes.recv().await {
                if note.payload == token {
                    return;
                }
            }
        })
        .await;
    }

    /// Whether other instances may share the database (PostgreSQL).
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// Whether the notes of other instances are being heard now (always, on
    /// SQLite); turns true again after a reconnect, when notes may have been lost.
    pub fn listening(&self) -> watch::Receiver<bool> {
        self.listening.clone()
    }

    /// How many notes have been handed to this instance's readers so far
    /// (a reader that has received this many has seen every one of them).
    pub fn handed(&self) -> u64 {
        self.handed.load(Ordering::SeqCst)
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Note> {
        self.local.subscribe()
    }

    /// Sends a note to every instance's readers (on PostgreSQL within
    /// `GATHER`, with the others sent meanwhile). A note that cannot be
    /// sent is logged, not returned: readers look on their own as well.
    pub async fn publish(&self, _db: &Db, channel: &str, payload: &str) {
        let note = Note { channel: channel.into(), payload: payload.into() };
        match &self.outbox {
            Some(outbox) => {
                let _ = outbox.send(note);
            }
            None => {
                self.handed.fetch_add(1, Ordering::SeqCst);
                let _ = self.local.send(note);
            }
        }
    }
}

/// The notes in groups of one statement each, in order. PostgreSQL delivers
/// two identical notes of one transaction as one, so a note already in a
/// group starts the next: every note sent is a note heard.
fn statements(notes: &[Note]) -> Vec<&[Note]> {
    let mut out = Vec::new();
    let (mut start, mut seen) = (0, std::collections::HashSet::new());
    for (i, n) in notes.iter().enumerate() {
        if i - start == NOTES_PER_STATEMENT || !seen.insert((&n.channel, &n.payload)) {
            out.push(&notes[start..i]);
            start = i;
            seen.clear();
            seen.insert((&n.channel, &n.payload));
        }
    }
    if start < notes.len() {
        out.push(&notes[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_notes_go_in_statements_of_their_own_and_none_is_lost() {
        let note = |p: &str| Note { channel: LESSONS.into(), payload: p.into() };
        let notes = vec![note("a"), note("b"), note("a"), note("c"), note("a")];
        let groups = statements(&notes);
        assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), vec![2, 2, 1]);
        assert_eq!(groups.concat(), notes);
        let many: Vec<Note> = (0..450).map(|i| note(&i.to_string())).collect();
        assert_eq!(statements(&many).iter().map(|g| g.len()).collect::<Vec<_>>(), vec![200, 200, 50]);
    }
}

/// Sends the notes of this instance, gathered: whatever arrived within
/// `GATHER` of the first goes in one statement.
async fn send(db: Db, mut outbox: mpsc::UnboundedReceiver<Note>) {
    while let Some(first) = outbox.recv().await {
        tokio::time::sleep(GATHER).await;
        let mut notes = vec![first];
        while let Ok(n) = outbox.try_recv() {
            notes.push(n);
        }
        for chunk in statements(&notes) {
            let calls: Vec<String> = (0..chunk.len()).map(|i| format!("pg_notify(${}, ${})", 2 * i + 1, 2 * i + 2)).collect();
            let sql = format!("SELECT {}", calls.join(", "));
            let mut q = sqlx::query(&sql);
            for n in chunk {
                q = q.bind(&n.channel).bind(&n.payload);
            }
            if let Err(e) = q.execute(&db).await {
                tracing::warn!(error = %e, notes = chunk.len(), "could not send notes to the other instances");
            }
        }
    }
}

/// Passes PostgreSQL's notifications on to this instance's readers.
async fn listen(url: String, local: broadcast::Sender<Note>, handed: Arc<AtomicU64>, listening: watch::Sender<bool>) {
    loop {
        match sqlx::postgres::PgListener::connect(&url).await {
            Ok(mut listener) => match listener.listen_all([TURNS, LESSONS, PROPOSALS]).await {
                Ok(()) => {
                    listening.send_replace(true);
                    // `recv` reconnects by itself; notes sent meanwhile are
                    // lost, which the readers' polling covers.
                    loop {
                        match listener.recv().await {
                            Ok(n) => {
                                handed.fetch_add(1, Ordering::SeqCst);
                                let _ = local.send(Note { channel: n.channel().into(), payload: n.payload().into() });
                            }
                            Err(e) => {
                                listening.send_replace(false);
                                tracing::warn!(error = %e, "lost the notes of other instances; listening again");
                                break;
                            }
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not listen for the notes of other instances"),
            },
            Err(e) => tracing::warn!(error = %e, "could not connect to listen for the notes of other instances"),
        }
        tokio::time::sleep(POLL).await;
    }
}
