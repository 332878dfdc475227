//! The agent's events on their way to the turn's log and its checkpoints,
//! inside the turn's own task: the agent pushes (`EventSink`), the turn's
//! forwarder (`run::forward`) takes them in order, and both are polled by
//! the one task that runs the turn.
//!
//! Not tokio's unbounded channel, which this was: it allocates a block of
//! 32 events up front (1.8 KB for every running reply, measured with
//! heaptrack at 1,000 open streams) and suits senders on other tasks, with
//! atomics and a waker per send. Here sender and receiver share a task and
//! seldom more than a few events wait, so a `VecDeque` behind a mutex no
//! one else contends for, grown only as far as the longest backlog, and a
//! `Notify` for the forwarder to wait on. (`futures`' channel would
//! allocate a node per event instead.)

use std::{collections::VecDeque, sync::Mutex};

use tokio::sync::Notify;

use crate::{agent::sink::EventSink, chat::events::ChatEvent};

#[derive(Default)]
pub(super) struct EventQueue {
    waiting: Mutex<Waiting>,
    /// Told at each push and at the close; a push with nobody waiting
    /// leaves a permit, so one made between a look and a wait is not missed.
    pushed: Notify,
}

#[derive(Default)]
struct Waiting {
    events: VecDeque<ChatEvent>,
    closed: bool,
}

impl EventQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// No more events come (the agent is done); `next` answers `None` once
    /// those waiting are taken.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.pushed.notify_one();
    }

    /// The next event, in the order pushed; `None` once closed and empty.
    pub(super) async fn next(&self) -> Option<ChatEvent> {
        loop {
            {
                let mut w = self.lock();
                if let Some(event) = w.events.pop_front() {
                    return Some(event);
                }
                if w.closed {
                    return None;
                }
            }
            self.pushed.notified().await;
        }
    }
}

impl EventSink for EventQueue {
    fn push(&self, event: ChatEvent) {
        let mut w = self.lock();
        if w.closed {
            return;
        }
        w.events.push_back(event);
        drop(w);
        self.pushed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::events::TextData;

    fn text(s: &str) -> ChatEvent {
        ChatEvent::text_in(1, s)
    }

    fn said(e: Option<ChatEvent>) -> Option<String> {
        e.map(|e| match e {
            ChatEvent::Text(TextData { content, .. }) => content,
            other => panic!("{other:?}"),
        })
    }

    #[tokio::test]
    async fn events_come_out_in_order_and_end_once_closed_and_taken() {
        let q = EventQueue::default();
        q.push(text("a"));
        q.push(text("b"));
        q.close();
        q.push(text("after the close"));
        assert_eq!(said(q.next().await).as_deref(), Some("a"));
        assert_eq!(said(q.next().await).as_deref(), Some("b"));
        assert_eq!(said(q.next().await), None);
        assert_eq!(said(q.next().await), None);
    }

    #[tokio::test]
    async fn a_waiting_forwarder_wakes_at_a_push_made_in_the_same_task() {
        let q = EventQueue::default();
        // The agent's side and the forwarder's, polled by one task as in `run`.
        let agent = async {
            for i in 0..100 {
                q.push(text(&i.to_string()));
                tokio::task::yield_now().await;
            }
            q.close();
        };
        let forward = async {
            let mut got = Vec::new();
            while let Some(t) = said(q.next().await) {
                got.push(t);
            }
            got
        };
        let ((), got) = futures::future::join(agent, forward).await;
        assert_eq!(got, (0..100).map(|i| i.to_string()).collect::<Vec<_>>());
    }
}
