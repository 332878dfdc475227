//! What the sidebar does: load the chats of the lesson and their history,
//! send a message and follow its turn, re-attach when the stream drops or the
//! page reloads, stop a turn, retry a failed one. Everything that talks to
//! the server runs only in the browser.

use leptos::prelude::*;

use super::state::UiMessage;
use crate::{
    chat::message::{AiStatus, ChatSession},
    components::lesson_state::LessonState,
};

#[derive(Clone, Copy)]
pub struct Chat {
    pub lesson_id: StoredValue<String>,
    pub sessions: RwSignal<Vec<ChatSession>>,
    pub current: RwSignal<Option<String>>,
    pub messages: RwSignal<Vec<UiMessage>>,
    /// A turn is under way (from Send until its last event).
    pub busy: RwSignal<bool>,
    /// The running turn's id, once the server has said it.
    pub turn_id: RwSignal<Option<String>>,
    pub status: RwSignal<Option<AiStatus>>,
    /// A problem not tied to one reply (loading failed, …).
    pub notice: RwSignal<Option<String>>,
    /// Said to screen readers: finished steps and replies.
    pub announce: RwSignal<String>,
    /// Bumped on every change of the conversation, for auto-scroll.
    pub tick: RwSignal<u64>,
    /// The reader is at the end of the conversation, so new content scrolls
    /// into view. Scrolling up clears it; sending a message or opening a chat
    /// sets it again.
    pub follow: RwSignal<bool>,
    pub draft: RwSignal<String>,
    pub loaded: RwSignal<bool>,
    // Read only by the browser half below.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    next_key: StoredValue<u64>,
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    lesson: StoredValue<Option<LessonState>>,
    /// The sidebar's reactive owner. Replies are created under it, not under
    /// whatever button sent them (a suggestion chip disappears as it is used,
    /// and would take the reply's signals with it).
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    owner: StoredValue<Option<Owner>>,
}

impl Chat {
    pub fn new(lesson_id: String, lesson: Option<LessonState>) -> Self {
        Self {
            lesson_id: StoredValue::new(lesson_id),
            sessions: RwSignal::new(Vec::new()),
            current: RwSignal::new(None),
            messages: RwSignal::new(Vec::new()),
            busy: RwSignal::new(false),
            turn_id: RwSignal::new(None),
            status: RwSignal::new(None),
            notice: RwSignal::new(None),
            announce: RwSignal::new(String::new()),
            tick: RwSignal::new(0),
            follow: RwSignal::new(true),
            draft: RwSignal::new(String::new()),
            loaded: RwSignal::new(false),
            next_key: StoredValue::new(0),
            lesson: StoredValue::new(lesson),
            owner: StoredValue::new(Owner::current()),
        }
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::{prelude::*, task::spawn_local};

    use super::*;
    use crate::{
        chat::message::{title_from, Role, TitleRequest, TurnRequest, DEFAULT_CHAT_TITLE},
        components::chat::state::{Phase, Reply},
    };
    use crate::chat::{
        client::{self, ClientError, StreamEnd, StreamHandle},
        message::SessionMessages,
    };

    /// How many times a dropped stream is re-attached before giving up.
    const MAX_RESUMES: u32 = 5;

    impl Chat {
        fn reply(&self, asked: &str) -> Reply {
            match self.owner.get_value() {
                Some(owner) => owner.with(|| Reply::new(asked)),
                None => Reply::new(asked),
            }
        }

        fn stored_reply(&self, m: &crate::chat::message::ChatMessage, asked: &str) -> Reply {
            match self.owner.get_value() {
                Some(owner) => owner.with(|| Reply::stored(m, asked)),
                None => Reply::stored(m, asked),
            }
        }

        fn key(&self) -> u64 {
            self.next_key.update_value(|k| *k += 1);
            self.next_key.get_value()
        }

        fn push_user(&self, text: &str) {
            let key = self.key();
            self.messages.update(|m| m.push(UiMessage { key, role: Role::User, text: text.to_string(), reply: None }));
        }

        fn push_reply(&self, reply: Reply) {
            let key = self.key();
            self.messages.update(|m| m.push(UiMessage { key, role: Role::Assistant, text: String::new(), reply: Some(reply) }));
            self.bump();
        }

        fn bump(&self) {
            self.tick.update(|t| *t += 1);
        }

        /// Loads the assistant's status and the lesson's chats, and opens the latest.
        pub fn start(self) {
            spawn_local(async move {
                if let Ok(status) = client::json::<AiStatus>("GET", "/api/ai/status", None::<&()>).await {
                    self.status.set(Some(status));
                }
                let url = format!("/api/lessons/{}/chats", self.lesson_id.get_value());
                match client::json::<Vec<ChatSession>>("GET", &url, None::<&()>).await {
                    Ok(list) => {
                        let first = list.first().map(|s| s.id.clone());
                        self.sessions.set(list);
                        match first {
                            Some(id) => self.open(id).await,
                            None => self.loaded.set(true),
                        }
                    }
                    Err(e) => {
                        self.notice.set(Some(e.message()));
                        self.loaded.set(true);
                    }
                }
            });
        }

        /// Shows a chat's history and follows its running turn, if any.
        async fn open(self, id: String) {
            self.current.set(Some(id.clone()));
            self.messages.set(Vec::new());
            self.follow.set(true);
            let url = format!("/api/chats/{id}/messages");
            match client::json::<SessionMessages>("GET", &url, None::<&()>).await {
                Ok(history) => {
                    let mut asked = String::new();
                    let mut running = None;
                    for m in &history.messages {
                        match m.role {
                            Role::User => {
                                asked = m.content.clone();
                                self.push_user(&m.content);
                            }
                            Role::Assistant if history.running_turn_id.is_some() && m.turn_id == history.running_turn_id => {
                                // Rebuilt from its events below, so nothing shows twice.
                                let reply = self.reply(&asked);
                                self.push_reply(reply);
                                running = Some(reply);
                            }
                            Role::Assistant => self.push_reply(self.stored_reply(m, &asked)),
                        }
                    }
                    self.loaded.set(true);
                    if let (Some(reply), Some(turn)) = (running, history.running_turn_id) {
                        self.busy.set(true);
                        self.turn_id.set(Some(turn.clone()));
                        self.follow(reply, turn, 0).await;
                    }
                }
                Err(e) => {
                    self.notice.set(Some(e.message()));
                    self.loaded.set(true);
                }
            }
        }

        pub fn switch(self, id: String) {
            if self.busy.get_untracked() || self.current.get_untracked().as_deref() == Some(id.as_str()) {
                return;
            }
            spawn_local(async move { self.open(id).await });
        }

        pub fn new_chat(self) {
            if self.busy.get_untracked() {
                return;
            }
            spawn_local(async move {
                if let Some(id) = self.create_session().await {
                    self.current.set(Some(id));
                    self.messages.set(Vec::new());
                }
            });
        }

        async fn create_session(self) -> Option<String> {
            let url = format!("/api/lessons/{}/chats", self.lesson_id.get_value());
            match client::json::<ChatSession>("POST", &url, Some(&TitleRequest::default())).await {
                Ok(s) => {
                    let id = s.id.clone();
                    self.sessions.update(|list| list.insert(0, s));
                    Some(id)
                }
                Err(e) => {
                    self.notice.set(Some(e.message()));
                    None
                }
            }
        }

        pub fn rename(self) {
            let Some(id) = self.current.get_untracked() else { return };
            let old = self.sessions.with_untracked(|l| l.iter().find(|s| s.id == id).map(|s| s.title.clone())).unwrap_or_default();
            let Some(title) = window().prompt_with_message_and_default("Name this chat", &old).ok().flatten() else { return };
            spawn_local(async move {
                match client::json::<ChatSession>("PATCH", &format!("/api/chats/{id}"), Some(&TitleRequest { title })).await {
                    Ok(s) => self.sessions.update(|l| {
                        if let Some(x) = l.iter_mut().find(|x| x.id == s.id) {
                            *x = s;
                        }
                    }),
                    Err(e) => self.notice.set(Some(e.message())),
                }
            });
        }

        pub fn delete(self) {
            let Some(id) = self.current.get_untracked() else { return };
            if !window().confirm_with_message("Delete this chat? The lesson itself is not affected.").unwrap_or(false) {
                return;
            }
            spawn_local(async move {
                match client::json::<()>("DELETE", &format!("/api/chats/{id}"), None::<&()>).await {
                    Ok(()) => {
                        self.sessions.update(|l| l.retain(|s| s.id != id));
                        let next = self.sessions.with_untracked(|l| l.first().map(|s| s.id.clone()));
                        self.busy.set(false);
                        match next {
                            Some(n) => self.open(n).await,
                            None => {
                                self.current.set(None);
                                self.messages.set(Vec::new());
                            }
                        }
                    }
                    Err(e) => self.notice.set(Some(e.message())),
                }
            });
        }

        /// Sends a message and follows the reply to its end.
        pub fn send(self, text: String) {
            let text = text.trim().to_string();
            if text.is_empty() || self.busy.get_untracked() {
                return;
            }
            self.busy.set(true);
            self.notice.set(None);
            self.follow.set(true);
            self.push_user(&text);
            let reply = self.reply(&text);
            self.push_reply(reply);
            spawn_local(async move {
                let session = match self.current.get_untracked() {
                    Some(s) => Some(s),
                    None => self.create_session().await.inspect(|id| self.current.set(Some(id.clone()))),
                };
                let Some(session) = session else {
                    reply.phase.set(Phase::Failed("The chat could not be created.".into()));
                    self.busy.set(false);
                    return;
                };
                // The server names an unnamed chat after its first message; so does the picker.
                let first = self.messages.with_untracked(|m| m.len() <= 2);
                self.sessions.update(|list| {
                    if let Some(s) = list.iter_mut().find(|s| s.id == session && first && s.title == DEFAULT_CHAT_TITLE) {
                        s.title = title_from(&text);
                    }
                });
                let body = serde_json::to_string(&TurnRequest { session_id: session.clone(), content: text.clone() }).unwrap_or_default();
                let Some(handle) = StreamHandle::new() else { return };
                let opened = client::stream(
                    "/api/chat/stream",
                    Some(body),
                    0,
                    &handle,
                    |turn| self.turn_id.set(turn),
                    |event| self.on_event(reply, event),
                )
                .await;
                self.after_stream(reply, opened).await;
            });
        }

        fn on_event(self, reply: Reply, event: crate::chat::events::ChatEvent) {
            if let Some(said) = reply.apply(event, self.lesson.get_value()) {
                self.announce.set(said);
            }
            self.bump();
        }

        /// Reads a turn from `after` on, re-attaching if the connection drops.
        async fn follow(self, reply: Reply, turn: String, after: u64) {
            let Some(handle) = StreamHandle::new() else { return };
            let url = format!("/api/chat/turns/{turn}/events");
            let result = client::stream(&url, None, after, &handle, |_| {}, |event| self.on_event(reply, event)).await;
            self.after_stream(reply, result).await;
        }

        async fn after_stream(self, reply: Reply, mut result: Result<StreamEnd, ClientError>) {
            let mut resumes = 0;
            loop {
                match result {
                    Ok(StreamEnd::Finished) => break,
                    Ok(StreamEnd::Dropped { last_id }) if resumes < MAX_RESUMES => {
                        let Some(turn) = self.turn_id.get_untracked() else {
                            reply.phase.set(Phase::Failed("The connection dropped before the reply started.".into()));
                            break;
                        };
                        resumes += 1;
                        let Some(handle) = StreamHandle::new() else { break };
                        let url = format!("/api/chat/turns/{turn}/events");
                        result = client::stream(&url, None, last_id, &handle, |_| {}, |event| self.on_event(reply, event)).await;
                    }
                    Ok(StreamEnd::Dropped { .. }) => {
                        reply.phase.set(Phase::Failed("The connection kept dropping. Reload the page to see the reply.".into()));
                        break;
                    }
                    Err(e) => {
                        reply.phase.set(Phase::Failed(e.message()));
                        break;
                    }
                }
            }
            self.turn_id.set(None);
            self.busy.set(false);
            self.bump();
        }

        /// Asks the server to stop the running turn; its stream then ends with `cancelled`.
        pub fn stop(self) {
            let Some(turn) = self.turn_id.get_untracked() else { return };
            spawn_local(async move {
                if let Err(e) = client::json::<serde::de::IgnoredAny>("POST", &format!("/api/chat/turns/{turn}/cancel"), None::<&()>).await {
                    self.notice.set(Some(e.message()));
                }
            });
        }
    }
}

#[cfg(not(feature = "hydrate"))]
impl Chat {
    // On the server the sidebar is rendered empty; the browser fills it in.
    pub fn start(self) {}
    pub fn switch(self, _id: String) {}
    pub fn new_chat(self) {}
    pub fn rename(self) {}
    pub fn delete(self) {}
    pub fn send(self, _text: String) {}
    pub fn stop(self) {}
}
