//! `make bench`, first part: what each agent's first request costs a
//! model before it writes a word, on a new lesson (a title and an empty
//! paragraph): the request's bytes, and its tokens estimated at four bytes
//! each (tokenizers differ: SmolLM2's read this prompt at about 3.8 bytes a
//! token). A school's own small model reads every one of them before its
//! first token, so this is what a first reply waits for on modest hardware.
//! Budget: the teacher's ≤ 1,800 tokens (#67). Writes
//! `docs/benchmarks/prompt.md`. The model's own time to first token for
//! this prompt needs a real model, and is not measured here.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use margin::{
    agent::{
        config::AiConfig,
        run::{Agent, TurnRequest},
        tools::{DocumentStore, SaveRejection, ToolContext},
    },
    scripted::ScriptedLlm,
};
use tokio_util::sync::CancellationToken;

const NEW_LESSON: &str = "<lesson>\n  <h1 id=\"h-1\">Volcanoes</h1>\n  <p id=\"p-1\"></p>\n</lesson>\n";
const BUDGET_TOKENS: usize = 1_800;

struct Lesson(Mutex<String>);

impl DocumentStore for Lesson {
    fn current(&self) -> String {
        self.0.lock().unwrap().clone()
    }
    fn save(&self, xml: String, _summary: String) -> BoxFuture<'_, Result<i64, SaveRejection>> {
        *self.0.lock().unwrap() = xml;
        Box::pin(async { Ok(2) })
    }
    fn reviews_edits(&self) -> bool {
        false
    }
    fn propose(&self, _xml: String, _summary: String, _changes: Vec<margin::lesson::Change>) -> BoxFuture<'_, Result<margin::agent::tools::Proposed, SaveRejection>> {
        Box::pin(async { Ok(margin::agent::tools::Proposed { id: "p".into(), digest: "d".into() }) })
    }
}

#[tokio::main]
async fn main() {
    let prompts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let mut rows = Vec::new();
    for name in ["teacher", "feedback", "tutor"] {
        let llm = ScriptedLlm::start().await.expect("the scripted model");
        let config = AiConfig::scripted(llm.base_url.clone(), &prompts);
        let agent = match name {
            "teacher" => Agent::new(&config),
            "feedback" => Agent::feedback(&config),
            _ => Agent::tutor(&config),
        }
        .expect("the agent");
        let ctx = ToolContext { document: Arc::new(Lesson(Mutex::new(NEW_LESSON.into()))), student: None, approvals: None };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let request = TurnRequest { history: Vec::new(), user_text: "Hello".into() };
        agent.run_turn(request, &ctx, &tx, &CancellationToken::new(), &margin::agent::meter::Unmetered).await;
        drop(tx);
        while rx.recv().await.is_some() {}
        let first = &llm.requests()[0];
        let system = first["messages"][0]["content"].as_str().map_or(0, str::len);
        let tools = first.get("tools").map_or(0, |t| t.to_string().len());
        let whole = first.to_string().len();
        if let Ok(dir) = std::env::var("MARGIN_PROMPT_DUMP") {
            std::fs::write(format!("{dir}/{name}.json"), serde_json::to_string_pretty(first).unwrap_or_default()).ok();
        }
        rows.push((name, system, tools, whole, whole.div_ceil(4)));
    }
    let mut out = String::from("# The agents' first request\n\nWritten by `make bench` (`benches/prompt.rs`): each agent's first request on a new lesson, a title and an empty paragraph. Tokens are the bytes over four (tokenizers differ). Budget: the teacher's ≤ 1,800 tokens.\n\n| agent | system prompt | tool definitions | whole request | tokens, estimated |\n|---|---|---|---|---|\n");
    for (name, system, tools, whole, tokens) in &rows {
        out.push_str(&format!("| {name} | {system} B | {tools} B | {whole} B | {tokens} |\n"));
        println!("{name:>9}: system {system} B, tools {tools} B, whole {whole} B, about {tokens} tokens");
    }
    let teacher = rows[0].4;
    let verdict = if teacher <= BUDGET_TOKENS { "within".to_string() } else { format!("**over** by {}", teacher - BUDGET_TOKENS) };
    out.push_str(&format!("\nThe teacher's: {teacher} tokens, {verdict} the budget.\n"));
    println!("the teacher's first request: {teacher} tokens, {verdict} the budget of {BUDGET_TOKENS}");
    std::fs::write(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmarks/prompt.md"), out).expect("docs/benchmarks/prompt.md");
}
