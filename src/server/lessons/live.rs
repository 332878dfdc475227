//! The lesson pages open on this instance, all fed by one subscription to
//! the bus: a note about a lesson is read once here and handed to the pages
//! open on that lesson, never parsed by every page. No page queries the
//! database on a timer; notes lost while the bus reconnected (or skipped by
//! a reader that fell behind) are made up by one sweep for every open
//! lesson at once: at once after such a loss, and every `sweep_every`
//! besides.
//!
//! Each account may hold a bounded number of pages open at once
//! (`MARGIN_LESSON_STREAMS_PER_ACCOUNT`): a page is a held connection and a
//! slot here, which one script must not be able to take by the thousand.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, Weak},
    time::Duration,
};

use tokio::sync::broadcast;

use crate::{
    models::LessonEvent,
    server::{
        bus::{self, Bus, Note},
        db::Db,
        error::AppError,
    },
};

/// What a lesson note on the bus says: which lesson, what happened.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct LessonNote {
    pub lesson: String,
    pub event: LessonEvent,
}

/// Events a page may fall behind by before it reloads what it shows.
const PAGE_BACKLOG: usize = 64;
/// Lessons per sweep statement.
const SWEEP_CHUNK: usize = 500;

struct Watched {
    events: broadcast::Sender<LessonEvent>,
    /// The newest revision told to its pages.
    revision: i64,
    pages: usize,
    /// The sweep found it gone (deleted or trashed) and said so once.
    gone: bool,
}

#[derive(Default)]
struct Open {
    lessons: HashMap<String, Watched>,
    /// Pages open per account.
    accounts: HashMap<String, usize>,
}

/// The open lesson pages of this instance.
pub struct LessonPages {
    open: Mutex<Open>,
    per_account: usize,
    /// How many of the bus's notes the feed has dealt with.
    read: tokio::sync::watch::Sender<u64>,
}

/// One open page's events; dropping it frees its slot.
pub struct Page {
    pub events: broadcast::Receiver<LessonEvent>,
    pages: Weak<LessonPages>,
    owner: String,
    lesson: String,
}

impl Drop for Page {
    fn drop(&mut self) {
        let Some(pages) = self.pages.upgrade() else { return };
        let mut open = pages.lock();
        if let Some(n) = open.accounts.get_mut(&self.owner) {
            *n -= 1;
            if *n == 0 {
                open.accounts.remove(&self.owner);
            }
        }
        if let Some(w) = open.lessons.get_mut(&self.lesson) {
            w.pages -= 1;
            if w.pages == 0 {
                open.lessons.remove(&self.lesson);
            }
        }
    }
}

impl LessonPages {
    /// Starts feeding pages from `bus`, sweeping every `sweep_every`;
    /// `per_account` pages at most per account (0: no limit).
    pub fn start(db: Db, bus: &Bus, per_account: usize, sweep_every: Duration) -> Arc<Self> {
        let pages = Arc::new(Self { open: Mutex::default(), per_account, read: tokio::sync::watch::channel(0).0 });
        tokio::spawn(feed(Arc::downgrade(&pages), db, bus.subscribe(), bus.listening(), sweep_every));
        pages
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits (briefly) until the feed has dealt with every note the bus had
    /// handed out when asked: a page opened then is not told of changes
    /// from before it read its lesson.
    pub async fn caught_up(&self, bus: &Bus) {
        let upto = bus.handed();
        let mut read = self.read.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(1), read.wait_for(|n| *n >= upto)).await;
    }

    /// Opens a page of `owner`'s on `lesson`; refused past the account's limit.
    pub fn open(self: &Arc<Self>, owner: &str, lesson: &str) -> Result<Page, AppError> {
        let mut open = self.lock();
        let held = open.accounts.get(owner).copied().unwrap_or(0);
        if self.per_account > 0 && held >= self.per_account {
            return Err(AppError::TooManyPages);
        }
        *open.accounts.entry(owner.to_string()).or_default() += 1;
        let w = open.lessons.entry(lesson.to_string()).or_insert_with(|| Watched { events: broadcast::channel(PAGE_BACKLOG).0, revision: 0, pages: 0, gone: false });
        w.pages += 1;
        Ok(Page { events: w.events.subscribe(), pages: Arc::downgrade(self), owner: owner.to_string(), lesson: lesson.to_string() })
    }

    /// The revision a page read as it opened: the sweep tells only newer ones.
    pub fn seen(&self, lesson: &str, revision: i64) {
        if let Some(w) = self.lock().lessons.get_mut(lesson) {
            w.revision = w.revision.max(revision);
        }
    }

    /// Pages open now, and lessons they show.
    pub fn counts(&self) -> (usize, usize) {
        let open = self.lock();
        (open.accounts.values().sum(), open.lessons.len())
    }

    /// Hands `event` to the pages open on `lesson` (a revision only if it is newer).
    fn tell(&self, lesson: &str, event: LessonEvent) {
        let mut open = self.lock();
        let Some(w) = open.lessons.get_mut(lesson) else { return };
        if let LessonEvent::Revision { revision } = event {
            if revision <= w.revision {
                return;
            }
            w.revision = revision;
        }
        let _ = w.events.send(event);
    }

    /// One look at every open lesson: a revision missed is told, a lesson gone is said once.
    async fn sweep(&self, db: &Db) {
        let ids: Vec<String> = self.lock().lessons.keys().cloned().collect();
        for chunk in ids.chunks(SWEEP_CHUNK) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
            let sql = format!("SELECT id, revision FROM lessons WHERE deleted_at IS NULL AND id IN ({})", marks.join(", "));
            let mut q = sqlx::query_as::<_, (String, i64)>(&sql);
            for id in chunk {
                q = q.bind(id);
            }
            let found = match q.fetch_all(db).await {
                Ok(found) => found,
                Err(e) => {
                    tracing::warn!(error = %e, "could not sweep the open lessons");
                    return;
                }
            };
            let found: HashMap<String, i64> = found.into_iter().collect();
            for id in chunk {
                match found.get(id) {
                    Some(&revision) => self.tell(id, LessonEvent::Revision { revision }),
                    None => {
                        let mut open = self.lock();
                        if let Some(w) = open.lessons.get_mut(id).filter(|w| !w.gone) {
                            w.gone = true;
                            let _ = w.events.send(LessonEvent::Lesson);
                        }
                    }
                }
            }
        }
    }
}

/// Reads the bus's lesson notes once for every page of this instance.
async fn feed(pages: Weak<LessonPages>, db: Db, mut notes: broadcast::Receiver<Note>, mut listening: tokio::sync::watch::Receiver<bool>, sweep_every: Duration) {
    let mut every = tokio::time::interval(sweep_every);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.tick().await; // the first tick is at once; nothing is open yet
    let mut watching = true;
    loop {
        enum Next {
            Note(Note),
            Sweep,
        }
        let next = tokio::select! {
            note = notes.recv() => match note {
                Ok(note) => Next::Note(note),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    if let Some(pages) = pages.upgrade() {
                        pages.read.send_modify(|r| *r += n);
                    }
                    Next::Sweep
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = every.tick() => Next::Sweep,
            changed = listening.changed(), if watching => match changed {
                // Listening again after a loss: notes sent meanwhile are gone.
                Ok(()) if *listening.borrow_and_update() => Next::Sweep,
                Ok(()) => continue,
                Err(_) => {
                    watching = false; // one instance (SQLite): nothing to lose
                    continue;
                }
            },
        };
        let Some(pages) = pages.upgrade() else { return };
        match next {
            Next::Note(note) => {
                if note.channel == bus::LESSONS {
                    if let Ok(note) = serde_json::from_str::<LessonNote>(&note.payload) {
                        pages.tell(&note.lesson, note.event);
                    }
                }
                pages.read.send_modify(|r| *r += 1);
            }
            Next::Sweep => pages.sweep(&db).await,
        }
    }
}
