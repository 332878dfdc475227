//! Notes between the instances sharing a database: "turn T has new events",
//! "lesson L changed". Short, and only ever a hint to go and read the
//! database, which holds the truth; a reader that misses one (a dropped
//! connection) still finds everything on its next read, which it makes at
//! least every `POLL` anyway.
//!
//! On PostgreSQL a note is a `NOTIFY` on the note's channel, which every
//! instance `LISTEN`s to (this one too) and passes on to its own readers. On
//! SQLite there is one instance, so a note goes straight to its readers.
//! Nothing else is needed to run many instances: no Redis, no NATS.

use std::time::Duration;

use tokio::sync::{broadcast, watch};

use crate::server::db::{Backend, Db};

/// How often a reader waiting on notes reads the database regardless.
pub const POLL: Duration = Duration::from_secs(1);

/// The channels.
pub const TURNS: &str = "margin_turns";
pub const LESSONS: &str = "margin_lessons";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub channel: String,
    pub payload: String,
}

pub struct Bus {
    local: broadcast::Sender<Note>,
    shared: bool,
    /// Whether PostgreSQL's notifications are being listened to now.
    listening: watch::Receiver<bool>,
}

impl Bus {
    /// A bus for `db`; on PostgreSQL it starts listening (and keeps
    /// reconnecting) in a task of its own.
    pub fn start(db: &Db) -> Self {
        let (local, _) = broadcast::channel(1024);
        let shared = Backend::of(db) == Backend::Postgres;
        let (listening_tx, listening) = watch::channel(!shared);
        if shared {
            tokio::spawn(listen(db.connect_options().database_url.to_string(), local.clone(), listening_tx));
        }
        Self { local, shared, listening }
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

    pub fn subscribe(&self) -> broadcast::Receiver<Note> {
        self.local.subscribe()
    }

    /// Sends a note to every instance's readers. A note that cannot be sent
    /// is logged, not returned: readers poll as well.
    pub async fn publish(&self, db: &Db, channel: &str, payload: &str) {
        if !self.shared {
            let _ = self.local.send(Note { channel: channel.into(), payload: payload.into() });
            return;
        }
        if let Err(e) = sqlx::query("SELECT pg_notify($1, $2)").bind(channel).bind(payload).execute(db).await {
            tracing::warn!(error = %e, channel, "could not send a note to the other instances");
        }
    }
}

/// Passes PostgreSQL's notifications on to this instance's readers.
async fn listen(url: String, local: broadcast::Sender<Note>, listening: watch::Sender<bool>) {
    loop {
        match sqlx::postgres::PgListener::connect(&url).await {
            Ok(mut listener) => match listener.listen_all([TURNS, LESSONS]).await {
                Ok(()) => {
                    listening.send_replace(true);
                    // `recv` reconnects by itself; notes sent meanwhile are
                    // lost, which the readers' polling covers.
                    loop {
                        match listener.recv().await {
                            Ok(n) => {
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
