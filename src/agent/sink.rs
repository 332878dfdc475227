//! Where a turn's events go as the agent makes them. The agent only says
//! them; what is done with them (a log that readers follow, the stored
//! message) is its caller's. A channel is one such place (tests use it);
//! the server's turns use a queue the turn's own task drains
//! (`server::chats::turns::queue`), which costs no task hop per event.

use tokio::sync::mpsc::UnboundedSender;

use crate::chat::events::ChatEvent;

/// Takes a turn's events in the order they happen. Never blocks and never
/// fails the turn: a place nobody reads any more just drops them.
pub trait EventSink: Send + Sync {
    fn push(&self, event: ChatEvent);
}

impl EventSink for UnboundedSender<ChatEvent> {
    fn push(&self, event: ChatEvent) {
        // A closed receiver only means nobody listens any more; the turn goes on.
        let _ = self.send(event);
    }
}
