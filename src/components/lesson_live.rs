//! Keeps an open lesson page in step with what happens to the lesson
//! elsewhere (another tab, another device, another instance), from
//! `GET /api/lessons/{id}/events`:
//! - a newer version is shown at once; unsaved XML in the editor stays as it
//!   is, and the editor says a newer version exists and offers to load it
//!   (`xml_editor`);
//! - the chat list is read again when chats are made, renamed or deleted;
//! - a reply started elsewhere in the open chat is shown and followed.
//!
//! The stream is opened again after a pause when it drops; its first event
//! is always the lesson's current version, so nothing is missed.

use leptos::{prelude::*, task::spawn_local};

use super::{chat::controller::Chat, lesson_calls, lesson_state::LessonState};
use crate::chat::{
    client::{self, ClientError},
    sse::SseMessage,
};

/// A field of a lesson event's data, as its JSON text: `"revision":` in
/// `{"revision":3}` gives `3`, `"chatId":` in `{"chatId":"ab12"}` gives `ab12`.
/// The server writes these objects (`models::LessonEvent`, with hex ids and
/// no nesting); reading three fields this way costs the bundle far less than
/// a derived deserialiser.
fn field<'a>(data: &'a str, key: &str) -> Option<&'a str> {
    let rest = &data[data.find(key)? + key.len()..];
    let value = &rest[..rest.find(|c| c == ',' || c == '}')?];
    Some(value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value))
}

/// Listens for the page's lifetime.
pub fn follow(state: LessonState, chat: Chat) {
    spawn_local(async move {
        let url = format!("/api/lessons/{}/events", state.id.get_value());
        loop {
            let mut on_message = |m: SseMessage| {
                heard(state, chat, &m.event, &m.data);
                true
            };
            let read = client::messages(&url, None, 0, &mut |_| {}, &mut on_message).await;
            // Gone, or no longer signed in: nothing more to hear.
            if let Err(ClientError::Http { .. }) = read {
                return;
            }
            client::pause(3000).await;
        }
    });
}

/// Acts on one event.
fn heard(state: LessonState, chat: Chat, event: &str, data: &str) {
    // A reply starting names a new chat after its question and moves the
    // chat to the top: the list is read again then too.
    let chats = event == "chats" || event == "turn";
    if let (Some("true"), Some(id)) = (field(data, "\"running\":"), field(data, "\"chatId\":")) {
        chat.started_elsewhere(id.to_string(), data.contains("\"automatic\":true"));
    }
    let revision = field(data, "\"revision\":").and_then(|n| n.parse::<i64>().ok()).filter(|n| *n > state.revision.get_untracked());
    spawn_local(async move {
        if let Some(n) = revision {
            if let Ok(r) = lesson_calls::revision(&state.id.get_value(), n).await {
                state.apply_revision(n, r.revision.document_xml, r.html);
            }
        }
        if chats {
            chat.reload_list().await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_are_read_from_the_servers_json() {
        let turn = r#"{"kind":"turn","chatId":"ab12","turnId":"cd34","running":true}"#;
        assert_eq!(field(turn, r#""chatId":"#), Some("ab12"));
        assert_eq!(field(turn, r#""running":"#), Some("true"));
        assert_eq!(field(r#"{"kind":"revision","revision":12}"#, r#""revision":"#), Some("12"));
        assert_eq!(field(r#"{"kind":"chats"}"#, r#""revision":"#), None);
        // The server's own serialisation, whatever order serde gives.
        let told = serde_json::to_string(&crate::models::LessonEvent::Turn { chat_id: "ab12".into(), turn_id: "cd34".into(), running: false, automatic: false }).unwrap();
        assert_eq!((field(&told, r#""chatId":"#), field(&told, r#""running":"#)), (Some("ab12"), Some("false")));
    }
}
