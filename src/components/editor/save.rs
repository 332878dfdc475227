//! Saving what the teacher typed, by itself: a moment after the last
//! keystroke the whole document goes to the server as a new version, made
//! on the version the editor last had and merged there into anything saved
//! since (`SaveRequest::merge`). One save at a time; typing during one is
//! saved after it. A save that fails keeps the text, says so and is tried
//! again; the page asks before it is closed with anything unsaved.

use leptos::{prelude::*, task::spawn_local};

use super::{Editor, SaveState};
use crate::{
    chat::client::ClientError,
    components::lesson_calls,
    models::{SaveOutcome, SaveReply},
};

/// How long after the last keystroke a save is sent.
const QUIET_MS: u64 = 700;
/// How long a failed save waits before it is tried again.
const RETRY_MS: u64 = 3000;

impl Editor {
    /// Something changed: a save goes a moment from now, unless more comes.
    pub(super) fn schedule(&self) {
        // Once per burst of typing, not once per keystroke.
        if self.status.with_untracked(|s| *s != SaveState::Saving) {
            self.status.set(SaveState::Saving);
        }
        self.timer.update_value(|t| *t += 1);
        let turn = self.timer.get_value();
        let ed = *self;
        set_timeout(
            move || {
                if ed.timer.get_value() == turn {
                    ed.send();
                }
            },
            std::time::Duration::from_millis(QUIET_MS),
        );
    }

    /// Anything not yet confirmed by the server.
    pub fn unsaved(&self) -> bool {
        self.edits.get_value() > self.confirmed.get_value()
    }

    /// Sends the document now, if it holds anything unsaved.
    pub fn send(&self) {
        if self.sending.get_value() || !self.unsaved() {
            return;
        }
        self.sending.set_value(true);
        self.typing.set_value(false);
        let sent = self.edits.get_value();
        let doc = self.doc();
        let xml = doc.to_xml();
        self.in_flight.set_value(Some(doc.clone()));
        let base = self.base.with_value(|(r, _)| *r);
        let id = self.state.id.get_value();
        let ed = *self;
        spawn_local(async move {
            let reply = lesson_calls::save_edits(&id, xml, base).await;
            ed.sending.set_value(false);
            ed.in_flight.set_value(None);
            ed.answered(sent, doc, reply).await;
        });
    }

    async fn answered(&self, sent: u64, doc: crate::lesson::blocks::Doc, reply: Result<SaveReply, ClientError>) {
        let again = |ed: Editor, ms: u64| set_timeout(move || ed.send(), std::time::Duration::from_millis(ms));
        match reply {
            Ok(SaveReply { outcome: SaveOutcome::Saved { revision, document_xml }, html, .. }) => {
                self.confirmed.set_value(sent);
                self.removed.update_value(|r| r.retain(|(_, n)| *n > sent));
                // What was sent is what the saved version is measured
                // against: only what others merged into it is news.
                self.base.update_value(|(_, base)| *base = doc);
                self.arrive(revision, &document_xml);
                self.state.apply_revision(revision, document_xml, html.unwrap_or_default());
                if self.unsaved() {
                    self.send();
                } else {
                    self.status.set(SaveState::Saved);
                }
            }
            // Something newer touched a block the teacher changed too: the
            // newer version comes in around the teacher's blocks (its change
            // to theirs is offered), and the teacher's is saved on it.
            Ok(SaveReply { outcome: SaveOutcome::Conflict { current }, .. }) => match lesson_calls::revision(&self.state.id.get_value(), current).await {
                Ok(r) => {
                    self.arrive(current, &r.revision.document_xml);
                    self.state.apply_revision(current, r.revision.document_xml, r.html);
                    self.send();
                }
                Err(e) => {
                    self.status.set(SaveState::Retrying(e));
                    again(*self, RETRY_MS);
                }
            },
            Ok(SaveReply { outcome: SaveOutcome::Invalid { errors }, .. }) => {
                let said = errors.first().map(|e| e.message.clone()).unwrap_or_default();
                self.status.set(SaveState::Refused(said));
            }
            // Refused outright (the lesson is gone, or no longer theirs):
            // trying again would not help.
            Err(ClientError::Http { message, status, .. }) if status != 429 && status < 500 => self.status.set(SaveState::Refused(message)),
            Err(e) => {
                self.status.set(SaveState::Retrying(e.message()));
                again(*self, RETRY_MS);
            }
        }
    }
}
