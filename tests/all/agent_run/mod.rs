//! One agent turn against the scripted model over real HTTP, for the agent
//! tests: a lesson kept in memory, the turn's events and its result.
#![allow(dead_code)]

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
};

use futures::future::BoxFuture;
use margin::{
    agent::{
        config::AiConfig,
        prompt::PastMessage,
        run::{Agent, TurnRequest, TurnResult},
        tools::{DocumentStore, Proposed, SaveRejection, ToolContext},
    },
    chat::events::ChatEvent,
    scripted::ScriptedLlm,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The lesson every turn starts from unless a test gives another.
pub const START: &str = "<lesson>\n  <h1 id=\"h-1\">Verbs</h1>\n  <p id=\"p-1\">Intro.</p>\n</lesson>\n";

/// The lesson, its revision and the summaries of the edits saved to it;
/// whether edits are reviewed, and the proposals made (document, summary).
pub struct Memory(Mutex<(String, i64, Vec<String>)>, bool, Mutex<Vec<(String, String)>>, String);

impl Memory {
    pub fn new() -> Arc<Self> {
        Self::with(START)
    }
    pub fn with(doc: &str) -> Arc<Self> {
        Arc::new(Self(Mutex::new((doc.to_string(), 1, Vec::new())), false, Mutex::new(Vec::new()), doc.to_string()))
    }
    /// A lesson whose teacher reviews every edit.
    pub fn reviewed(doc: &str) -> Arc<Self> {
        Arc::new(Self(Mutex::new((doc.to_string(), 1, Vec::new())), true, Mutex::new(Vec::new()), doc.to_string()))
    }
    pub fn summaries(&self) -> Vec<String> {
        self.0.lock().unwrap().2.clone()
    }
    pub fn proposals(&self) -> Vec<(String, String)> {
        self.2.lock().unwrap().clone()
    }
}

impl DocumentStore for Memory {
    fn current(&self) -> String {
        self.0.lock().unwrap().0.clone()
    }
    fn found(&self) -> String {
        self.3.clone()
    }
    fn save(&self, xml: String, summary: String) -> BoxFuture<'_, Result<i64, SaveRejection>> {
        Box::pin(async move {
            let mut g = self.0.lock().unwrap();
            g.0 = xml;
            g.1 += 1;
            g.2.push(summary);
            Ok(g.1)
        })
    }
    fn reviews_edits(&self) -> bool {
        self.1
    }
    fn propose(&self, xml: String, summary: String, _changes: Vec<margin::lesson::Change>) -> BoxFuture<'_, Result<Proposed, SaveRejection>> {
        Box::pin(async move {
            let mut g = self.2.lock().unwrap();
            g.push((xml, summary));
            Ok(Proposed { id: format!("proposal-{}", g.len()), digest: format!("digest-{}", g.len()) })
        })
    }
}

pub struct Run {
    pub events: Vec<ChatEvent>,
    pub result: TurnResult,
    pub doc: Arc<Memory>,
    pub llm: ScriptedLlm,
}

pub fn prompts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("prompts")
}

/// Runs one turn on `doc` and collects everything it sent.
pub async fn run_turn(llm: ScriptedLlm, config: AiConfig, doc: Arc<Memory>, history: Vec<PastMessage>, said: &str) -> Run {
    let agent = Agent::new(&config).expect("agent");
    let ctx = ToolContext { document: doc.clone(), student: None, approvals: None };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = agent
        .run_turn(TurnRequest { history, user_text: said.into() }, &ctx, &tx, &CancellationToken::new(), &margin::agent::meter::Unmetered)
        .await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    Run { events, result, doc, llm }
}
