//! The lessons one instance waits on before it tries their gates, with
//! when each is due. It holds no state of the server, so the shared state
//! can keep one without importing what reads it (`fire`).

use std::{
    collections::HashMap,
    sync::{atomic::AtomicBool, Mutex},
};

use tokio::sync::Notify;

/// The lessons this instance waits for, with when each is due and how many
/// times in a row it could not start. One task per instance works through
/// them (`run`), however many lessons wait: a sleeper per lesson, each
/// retrying every two seconds, made a storm of gate claims when an account
/// with many lessons hit its turn limit.
#[derive(Debug, Default)]
pub struct Scheduler {
    waiting: Mutex<HashMap<String, Wait>>,
    pub(super) changed: Notify,
    pub(super) started: AtomicBool,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Wait {
    due: i64,
    /// Tries in a row that could not start a turn (back-off).
    tries: u32,
}

impl Scheduler {
    /// How many lessons this instance waits for.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether this instance already waits for `lesson_id`.
    pub fn waits_for(&self, lesson_id: &str) -> bool {
        self.lock().contains_key(lesson_id)
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Wait>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The earliest due time, if anything waits.
    pub(super) fn next_due(&self) -> Option<i64> {
        self.lock().values().map(|w| w.due).min()
    }

    /// The lessons due at `now`, taken out of the waiting list with their tries.
    pub(super) fn take_due(&self, now: i64) -> Vec<(String, u32)> {
        let mut waiting = self.lock();
        let due: Vec<(String, u32)> = waiting.iter().filter(|(_, w)| w.due <= now).map(|(l, w)| (l.clone(), w.tries)).collect();
        for (lesson, _) in &due {
            waiting.remove(lesson);
        }
        due
    }

    pub(super) fn put(&self, lesson_id: &str, due: i64, tries: u32) {
        let mut waiting = self.lock();
        let w = waiting.entry(lesson_id.to_string()).or_insert(Wait { due, tries });
        w.due = due;
        w.tries = w.tries.max(tries);
        drop(waiting);
        self.changed.notify_one();
    }
}

