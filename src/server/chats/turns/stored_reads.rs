//! The reads of stored turn events for every reader on this instance, made
//! together. Each reader of a turn running on another instance (`remote`)
//! reads `turn_events` after its cursor whenever a note names its turn, and
//! one note names every turn with new events, so with hundreds of readers
//! the database would be asked hundreds of times a tick for the same table.
//! Here the readers' asks queue, and one task answers all those waiting
//! with one statement: while it runs, the next asks gather for the next.
//! Statements then follow the instance's notes and polls, not its readers.

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use tokio::sync::{mpsc, oneshot};

use super::compact::Compacted;
use crate::{
    chat::events::ChatEvent,
    server::{
        db::Db,
        error::{AppError, Result},
    },
};

/// Asks per statement, which bounds its one parameter's size.
const ASKS_PER_STATEMENT: usize = 500;

/// A turn's stored events after a cursor, with their numbers, and when the
/// newest batch among them was written.
pub type Stored = (Vec<(u64, ChatEvent)>, Option<String>);

struct Ask {
    turn_id: String,
    after: u64,
    answer: oneshot::Sender<Result<Stored>>,
}

/// The instance's gathered reads.
pub struct StoredReads {
    asks: mpsc::UnboundedSender<Ask>,
    statements: Arc<AtomicU64>,
}

impl StoredReads {
    /// Starts answering reads on `db`.
    pub fn start(db: Db) -> Arc<Self> {
        let (asks, rx) = mpsc::unbounded_channel();
        let statements = Arc::new(AtomicU64::new(0));
        tokio::spawn(answer(db, rx, statements.clone()));
        Arc::new(Self { asks, statements })
    }

    /// The stored events of `turn_id` after `after`, in order.
    pub async fn since(&self, turn_id: &str, after: u64) -> Result<Stored> {
        let (answer, rx) = oneshot::channel();
        self.asks.send(Ask { turn_id: turn_id.to_string(), after, answer }).map_err(|_| AppError::Internal("the instance is stopping".into()))?;
        rx.await.map_err(|_| AppError::Internal("the read of stored events was dropped".into()))?
    }

    /// Statements made so far (for tests and benchmarks).
    pub fn statements(&self) -> u64 {
        self.statements.load(Ordering::Relaxed)
    }
}

async fn answer(db: Db, mut rx: mpsc::UnboundedReceiver<Ask>, statements: Arc<AtomicU64>) {
    while let Some(first) = rx.recv().await {
        let mut asks = vec![first];
        while asks.len() < ASKS_PER_STATEMENT {
            match rx.try_recv() {
                Ok(a) => asks.push(a),
                Err(_) => break,
            }
        }
        statements.fetch_add(1, Ordering::Relaxed);
        match read(&db, &asks).await {
            Ok(rows) => {
                for (ask, rows) in asks.into_iter().zip(rows) {
                    let _ = ask.answer.send(decoded(rows, ask.after));
                }
            }
            Err(e) => {
                let why = e.to_string();
                for ask in asks {
                    let _ = ask.answer.send(Err(AppError::Internal(why.clone())));
                }
            }
        }
    }
}

/// Each ask's rows (entries, written at), in order.
async fn read(db: &Db, asks: &[Ask]) -> std::result::Result<Vec<Vec<(String, String)>>, sqlx::Error> {
    #[derive(serde::Serialize)]
    struct Row<'a> {
        i: usize,
        turn_id: &'a str,
        after: u64,
    }
    let rows: Vec<Row<'_>> = asks.iter().enumerate().map(|(i, a)| Row { i, turn_id: &a.turn_id, after: a.after }).collect();
    // The asks go as one JSON parameter, so that the statement's text is
    // always the same (prepared once, one function scan to set up) however
    // many readers ask. Each ask its own range of the primary key (turn_id,
    // last_seq): a plain join of a hundred asks is planned as a hash join
    // over a scan of every stored event (24 ms over 60,000 rows, against
    // 0.7 ms), and so is a LATERAL subquery PostgreSQL may flatten;
    // `OFFSET 0` keeps it apart.
    let q = sqlx::query_as::<_, (i64, String, String)>(
        "SELECT c.i, e.entries, e.created_at FROM json_to_recordset(CAST($1 AS json)) AS c(i bigint, turn_id text, after bigint)
         CROSS JOIN LATERAL (SELECT t.entries, t.created_at, t.last_seq FROM turn_events t
                             WHERE t.turn_id = c.turn_id AND t.last_seq > c.after OFFSET 0) AS e
         ORDER BY c.i, e.last_seq",
    )
    .bind(serde_json::to_string(&rows).unwrap_or_default());
    let mut out = vec![Vec::new(); asks.len()];
    for (i, entries, at) in q.fetch_all(db).await? {
        if let Some(rows) = usize::try_from(i).ok().and_then(|i| out.get_mut(i)) {
            rows.push((entries, at));
        }
    }
    Ok(out)
}

/// A batch of events numbered from `first`, as the relay stores it (for
/// tests that store batches themselves).
pub fn batch_json(first: u64, events: Vec<ChatEvent>) -> String {
    Compacted::starting_at(first, events).to_json()
}

/// Batches as events after `after`, each event once.
fn decoded(rows: Vec<(String, String)>, after: u64) -> Result<Stored> {
    let mut out: Vec<(u64, ChatEvent)> = Vec::new();
    let written = rows.last().map(|(_, at)| at.clone());
    for (row, _) in rows {
        let cursor = out.last().map_or(after, |(n, _)| *n);
        let batch = Compacted::from_json(&row).map_err(|e| AppError::Internal(format!("stored turn events: {e}")))?;
        out.extend(batch.since(cursor));
    }
    Ok((out, written))
}
