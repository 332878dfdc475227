//! What the sidebar does: load the chats of the lesson and their history,
//! send a message and follow its turn, re-attach when the stream drops or the
//! page reloads, stop a turn, retry a failed one.
//!
//! Its state is three parts, each with one job: the lesson's chats
//! ([`ChatList`]), the open chat's messages ([`Conversation`]) and the turn
//! under way ([`RunningTurn`]). Scrolling and the message being typed belong
//! to the components that show them. Everything that talks to the server goes
//! through `chat::client`, and runs in the browser only.
//!
//! Over 400 lines, and not one thing: the sidebar is rewritten as typed
//! components in #44, which splits this file by job.

use leptos::{prelude::*, task::spawn_local};

use super::state::{Phase, Reply, UiMessage};
use crate::{
    chat::{
        client::{self, ClientError, StreamEnd},
        events::ChatEvent,
        message::{title_from, AiStatus, Attachments, SelectedText, ChatSession, Role, SessionMessages, TitleRequest, MessageRequest, DEFAULT_CHAT_TITLE},
    },
    components::lesson_state::LessonState,
};

/// How many times a dropped stream is re-attached before giving up.
const MAX_RESUMES: u32 = 5;

/// The lesson's chats, and which one is open.
#[derive(Clone, Copy)]
pub struct ChatList {
    pub lesson_id: StoredValue<String>,
    pub sessions: RwSignal<Vec<ChatSession>>,
    pub current: RwSignal<Option<String>>,
    /// The first chat (or the lack of one) has been loaded.
    pub loaded: RwSignal<bool>,
    /// Reloads of the list asked for so far: only the latest one's answer is
    /// shown, so an answer that arrives late never puts an older list back.
    reloads: StoredValue<u32>,
    /// Chats opened so far: a chat's history that arrives after another
    /// chat (or the same one again) was opened is dropped, so two opens
    /// that overlap (the page's first, and a reply started elsewhere that
    /// arrives meanwhile) never show the conversation twice nor follow one
    /// turn with two replies.
    opens: StoredValue<u32>,
    /// A message sent before the first chat was open (the box takes typing
    /// as soon as the page is live): sent once it is, rather than shown and
    /// then wiped by the chat's history arriving.
    asked_early: StoredValue<Option<(String, bool)>>,
}

/// The open chat's messages as they are on screen.
#[derive(Clone, Copy)]
pub struct Conversation {
    pub messages: RwSignal<Vec<UiMessage>>,
    next_key: StoredValue<u64>,
    /// Said to screen readers: steps as they start and end, and replies as
    /// they end; the latest few, numbered. Each is added as a line of its
    /// own, so sentences said in the same moment are all read rather than
    /// the last replacing the others.
    pub announce: RwSignal<Vec<(u64, String)>>,
    /// Bumped on every change of the conversation (the view follows it).
    pub tick: RwSignal<u64>,
    /// Bumped when the teacher sends a message or opens a chat: the view
    /// goes to the end and follows it again.
    pub to_end: RwSignal<u64>,
}

/// The turn under way, from Send until its last event.
#[derive(Clone, Copy)]
pub struct RunningTurn {
    pub busy: RwSignal<bool>,
    /// Its id, once the server has said it.
    pub id: RwSignal<Option<String>>,
    /// Stop was pressed; if the id was not known yet, the turn is stopped
    /// as soon as it is.
    pub stopping: RwSignal<bool>,
}

#[derive(Clone, Copy)]
pub struct Chat {
    pub list: ChatList,
    pub conversation: Conversation,
    pub turn: RunningTurn,
    pub status: RwSignal<Option<AiStatus>>,
    /// A problem not tied to one reply (loading failed, …).
    pub notice: RwSignal<Option<String>>,
    lesson: StoredValue<Option<LessonState>>,
    /// The lesson text chosen with "Ask about this" (the lesson's), which
    /// goes with the next message.
    pub asking: Option<RwSignal<Option<String>>>,
    /// The sidebar's reactive owner. Replies are created under it, not under
    /// whatever button sent them (a suggestion chip disappears as it is used,
    /// and would take the reply's signals with it).
    owner: StoredValue<Option<Owner>>,
}

/// How many announcements stay in the live region.
const ANNOUNCEMENTS_KEPT: usize = 6;

impl Conversation {
    /// Says a sentence to screen readers.
    pub fn say(&self, said: String) {
        self.announce.update(|a| {
            let n = a.last().map_or(0, |(n, _)| n + 1);
            a.push((n, said));
            let over = a.len().saturating_sub(ANNOUNCEMENTS_KEPT);
            a.drain(..over);
        });
    }

    fn new() -> Self {
        Self {
            messages: RwSignal::new(Vec::new()),
            next_key: StoredValue::new(0),
            announce: RwSignal::new(Vec::new()),
            tick: RwSignal::new(0),
            to_end: RwSignal::new(0),
        }
    }

    fn key(&self) -> u64 {
        self.next_key.update_value(|k| *k += 1);
        self.next_key.get_value()
    }

    fn push_user(&self, text: &str, attachments: Option<&Attachments>) {
        let key = self.key();
        let trigger = attachments.and_then(|a| a.trigger.clone());
        let quote = attachments.and_then(|a| a.selected_text.as_ref()).map(|s| s.text.clone());
        self.messages.update(|m| m.push(UiMessage { key, text: text.to_string(), quote, trigger, reply: None }));
    }

    fn push_reply(&self, reply: Reply) {
        let key = self.key();
        self.messages.update(|m| m.push(UiMessage { key, text: String::new(), quote: None, trigger: None, reply: Some(reply) }));
        self.changed();
    }

    fn clear(&self) {
        self.messages.set(Vec::new());
    }

    fn changed(&self) {
        self.tick.update(|t| *t += 1);
    }

    fn go_to_end(&self) {
        self.to_end.update(|t| *t += 1);
    }
}

impl Chat {
    pub fn new(lesson_id: String, lesson: Option<LessonState>) -> Self {
        Self {
            list: ChatList {
                lesson_id: StoredValue::new(lesson_id),
                sessions: RwSignal::new(Vec::new()),
                current: RwSignal::new(None),
                loaded: RwSignal::new(false),
                reloads: StoredValue::new(0),
                opens: StoredValue::new(0),
                asked_early: StoredValue::new(None),
            },
            conversation: Conversation::new(),
            turn: RunningTurn { busy: RwSignal::new(false), id: RwSignal::new(None), stopping: RwSignal::new(false) },
            status: RwSignal::new(None),
            notice: RwSignal::new(None),
            lesson: StoredValue::new(lesson),
            asking: lesson.map(|l| l.asking),
            owner: StoredValue::new(Owner::current()),
        }
    }

    /// A reply, created under the sidebar's owner.
    fn reply(&self, make: impl FnOnce() -> Reply) -> Reply {
        match self.owner.get_value() {
            Some(owner) => owner.with(make),
            None => make(),
        }
    }

    fn chats_url(&self) -> String {
        format!("/api/lessons/{}/chats", self.list.lesson_id.get_value())
    }

    /// Loads the assistant's status and the lesson's chats, and opens the latest.
    pub fn start(self) {
        spawn_local(async move {
            self.read_status().await;
            match client::json::<Vec<ChatSession>>("GET", &self.chats_url(), None::<&()>).await {
                Ok(list) => {
                    let first = list.first().map(|s| s.id.clone());
                    self.list.sessions.set(list);
                    match first {
                        Some(id) => self.open(id).await,
                        None => self.now_loaded(),
                    }
                }
                Err(e) => {
                    self.notice.set(Some(e.message()));
                    self.now_loaded();
                }
            }
        });
    }

    /// The first chat is open (or there is none): a message sent meanwhile goes now.
    fn now_loaded(self) {
        self.list.loaded.set(true);
        let early = self.list.asked_early.get_value();
        if let Some((text, retry)) = early {
            self.list.asked_early.set_value(None);
            self.ask(text, retry);
        }
    }

    /// The assistant's status and the school's budget (read again after each
    /// reply, which has spent some of it).
    async fn read_status(self) {
        if let Ok(json) = client::answer_text("GET", "/api/ai/status", None).await {
            self.status.set(Some(AiStatus::from_json(&json)));
        }
    }

    /// Shows a chat's history and follows its running turn, if any.
    async fn open(self, id: String) {
        self.list.opens.update_value(|n| *n += 1);
        let this_open = self.list.opens.get_value();
        self.list.current.set(Some(id.clone()));
        self.conversation.clear();
        self.conversation.go_to_end();
        let history = client::json::<SessionMessages>("GET", &format!("/api/chats/{id}/messages"), None::<&()>).await;
        if self.list.opens.get_value() != this_open {
            return;
        }
        let history = match history {
            Ok(h) => h,
            Err(e) => {
                self.notice.set(Some(e.message()));
                return self.now_loaded();
            }
        };
        let mut asked = String::new();
        let mut running = None;
        for m in &history.messages {
            match m.role {
                Role::User => {
                    asked = m.content.clone();
                    self.conversation.push_user(&m.content, m.attachments.as_ref());
                }
                // Rebuilt from its events below, so nothing shows twice.
                Role::Assistant if history.running_turn_id.is_some() && m.turn_id == history.running_turn_id => {
                    let reply = self.reply(|| Reply::new(&asked));
                    self.conversation.push_reply(reply);
                    running = Some(reply);
                }
                Role::Assistant => self.conversation.push_reply(self.reply(|| Reply::stored(m, &asked))),
            }
        }
        self.now_loaded();
        if let (Some(reply), Some(turn)) = (running, history.running_turn_id) {
            self.turn.busy.set(true);
            self.turn.id.set(Some(turn));
            // A reloaded page attaches to the turn as a dropped stream
            // re-attaches: from its first event.
            self.follow(reply, Ok(StreamEnd::Dropped { last_id: 0 })).await;
        }
    }

    /// The lesson's chats changed elsewhere: the list is read again.
    pub async fn reload_list(self) {
        self.list.reloads.update_value(|n| *n += 1);
        let asked = self.list.reloads.get_value();
        if let Ok(list) = client::json::<Vec<ChatSession>>("GET", &self.chats_url(), None::<&()>).await {
            if self.list.reloads.get_value() == asked {
                self.list.sessions.set(list);
            }
        }
    }

    /// A reply started elsewhere in chat `id`: shown and followed here when
    /// that chat (or none) is open and no reply of this page's is running.
    /// One the assistant started on its own (`automatic`) opens its chat.
    pub fn started_elsewhere(self, id: String, automatic: bool) {
        if !self.turn.busy.get_untracked() && (automatic || self.list.current.get_untracked().is_none_or(|c| c == id)) {
            self.reopen(id);
        }
    }

    pub fn switch(self, id: String) {
        if self.turn.busy.get_untracked() || self.list.current.get_untracked().as_deref() == Some(id.as_str()) {
            return;
        }
        self.reopen(id);
    }

    /// Opens chat `id` (again), in a task of its own.
    fn reopen(self, id: String) {
        spawn_local(async move { self.open(id).await });
    }

    pub fn new_chat(self) {
        if self.turn.busy.get_untracked() {
            return;
        }
        spawn_local(async move {
            if let Some(id) = self.create_session().await {
                self.list.current.set(Some(id));
                self.conversation.clear();
            }
        });
    }

    async fn create_session(self) -> Option<String> {
        match client::json::<ChatSession>("POST", &self.chats_url(), Some(&TitleRequest::default())).await {
            Ok(s) => {
                let id = s.id.clone();
                self.list.sessions.update(|list| list.insert(0, s));
                Some(id)
            }
            Err(e) => {
                self.notice.set(Some(e.message()));
                None
            }
        }
    }

    pub fn rename(self) {
        let Some(id) = self.list.current.get_untracked() else { return };
        let old = self.list.sessions.with_untracked(|l| l.iter().find(|s| s.id == id).map(|s| s.title.clone())).unwrap_or_default();
        let Some(title) = client::ask("Name this chat", &old) else { return };
        spawn_local(async move {
            match client::json::<ChatSession>("PATCH", &format!("/api/chats/{id}"), Some(&TitleRequest { title })).await {
                Ok(s) => self.list.sessions.update(|l| {
                    if let Some(x) = l.iter_mut().find(|x| x.id == s.id) {
                        *x = s;
                    }
                }),
                Err(e) => self.notice.set(Some(e.message())),
            }
        });
    }

    pub fn delete(self) {
        let Some(id) = self.list.current.get_untracked() else { return };
        if !client::confirm("Delete this chat? The lesson itself is not affected.") {
            return;
        }
        spawn_local(async move {
            if let Err(e) = client::json::<()>("DELETE", &format!("/api/chats/{id}"), None::<&()>).await {
                return self.notice.set(Some(e.message()));
            }
            self.list.sessions.update(|l| l.retain(|s| s.id != id));
            let next = self.list.sessions.with_untracked(|l| l.first().map(|s| s.id.clone()));
            self.turn.stopping.set(false);
            self.turn.busy.set(false);
            match next {
                Some(n) => self.open(n).await,
                None => {
                    self.list.current.set(None);
                    self.conversation.clear();
                }
            }
        });
    }

    /// Sends a message and follows the reply to its end.
    pub fn send(self, text: String) {
        self.ask(text, false);
    }

    /// Asks the last question again in place of its reply, which did not
    /// finish (the question is not repeated in the chat).
    pub fn retry(self, text: String) {
        self.ask(text, true);
    }

    fn ask(self, text: String, retry: bool) {
        let text = text.trim().to_string();
        if text.is_empty() || self.turn.busy.get_untracked() {
            return;
        }
        if !self.list.loaded.get_untracked() {
            self.list.asked_early.set_value(Some((text, retry)));
            return;
        }
        self.turn.busy.set(true);
        self.notice.set(None);
        self.conversation.go_to_end();
        // The lesson text asked about ("Ask about this") goes with the message.
        let asking = self.asking.filter(|_| !retry).and_then(|a| a.try_update(Option::take).flatten());
        let attachments = asking.map(|s| Attachments { trigger: None, selected_text: Some(SelectedText::unpacked(&s)) });
        if retry {
            self.conversation.messages.update(|m| {
                m.pop();
            });
        } else {
            self.conversation.push_user(&text, attachments.as_ref());
        }
        let reply = self.reply(|| Reply::new(&text));
        self.conversation.push_reply(reply);
        spawn_local(async move {
            let session = match self.list.current.get_untracked() {
                Some(s) => Some(s),
                None => self.create_session().await.inspect(|id| self.list.current.set(Some(id.clone()))),
            };
            let Some(session) = session else {
                reply.phase.set(Phase::Failed("The chat could not be created.".into()));
                self.turn.stopping.set(false);
                self.turn.busy.set(false);
                return;
            };
            // The server names an unnamed chat after its first message; so does the picker.
            let first = self.conversation.messages.with_untracked(|m| m.len() <= 2);
            self.list.sessions.update(|list| {
                if let Some(s) = list.iter_mut().find(|s| s.id == session && first && s.title == DEFAULT_CHAT_TITLE) {
                    s.title = title_from(&text);
                }
            });
            let body = serde_json::to_string(&MessageRequest { session_id: session, content: text, retry, attachments }).unwrap_or_default();
            let opened = client::stream(
                "/api/chat/stream",
                Some(body),
                0,
                |turn| self.opened(turn),
                |event| self.on_event(reply, event),
            )
            .await;
            self.follow(reply, opened).await;
        });
    }

    fn on_event(self, reply: Reply, event: ChatEvent) {
        if let Some(said) = reply.apply(event, self.lesson.get_value()) {
            self.conversation.say(said);
        }
        self.conversation.changed();
    }

    /// Follows a turn whose stream ended as `read` says: re-attaches from the
    /// last event read while the connection keeps dropping (up to
    /// `MAX_RESUMES` times), then frees the sidebar.
    async fn follow(self, reply: Reply, mut read: Result<StreamEnd, ClientError>) {
        let mut resumes = 0;
        loop {
            match read {
                Ok(StreamEnd::Finished) => break,
                Ok(StreamEnd::Dropped { last_id }) if resumes < MAX_RESUMES => {
                    let Some(turn) = self.turn.id.get_untracked() else {
                        reply.phase.set(Phase::Failed("The connection dropped before the reply started.".into()));
                        break;
                    };
                    resumes += 1;
                    let url = format!("/api/chat/turns/{turn}/events");
                    read = client::stream(&url, None, last_id, |_| {}, |event| self.on_event(reply, event)).await;
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
        self.turn.id.set(None);
        self.turn.stopping.set(false);
        self.turn.busy.set(false);
        self.conversation.changed();
        self.read_status().await;
    }

    /// The server has named the turn; a Stop pressed before that is sent now.
    fn opened(self, turn: Option<String>) {
        self.turn.id.set(turn);
        if self.turn.stopping.get_untracked() {
            self.cancel();
        }
    }

    /// Stops the running turn: at once if its id is known, otherwise as soon
    /// as it is. Its stream then ends with `cancelled`.
    pub fn stop(self) {
        if !self.turn.busy.get_untracked() {
            return;
        }
        self.turn.stopping.set(true);
        self.cancel();
    }

    /// Asks the server to stop the turn, if its id is known.
    fn cancel(self) {
        let Some(turn) = self.turn.id.get_untracked() else { return };
        spawn_local(async move {
            if let Err(e) = client::json::<serde::de::IgnoredAny>("POST", &format!("/api/chat/turns/{turn}/cancel"), None::<&()>).await {
                self.notice.set(Some(e.message()));
            }
        });
    }
}
