//! A model that reads less than Margin's default window, on a server that
//! says so its own way (the scripted model playing llama.cpp's and vLLM's
//! answers and refusals): the window is read from the server or learnt
//! from its refusal, every request then fits, and the teacher is told in
//! Margin's words, never the server's.
#![cfg(feature = "ssr")]

use crate::agent_run::{prompts, Memory, START};
use margin::{
    agent::{
        config::{AiConfig, ProviderKind},
        run::{Agent, TurnOutcome, TurnRequest, TurnResult},
        tools::ToolContext,
    },
    scripted::{ScriptedLlm, ServesAs},
};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The scripted model as `server`, and an agent on it configured as a
/// school's own server is (no `AI_CONTEXT_TOKENS`).
async fn on(server: ServesAs) -> (ScriptedLlm, Agent) {
    let llm = ScriptedLlm::start().await.unwrap();
    llm.serve_as(server);
    let mut config = AiConfig::scripted(llm.base_url.clone(), prompts());
    config.provider = ProviderKind::OpenAiCompatible;
    config.context_tokens = margin::agent::config::default_window(ProviderKind::OpenAiCompatible);
    let agent = Agent::new(&config).unwrap();
    (llm, agent)
}

async fn turn(agent: &Agent, said: &str) -> TurnResult {
    let ctx = ToolContext { document: Memory::with(START), student: None, approvals: None };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = agent.run_turn(TurnRequest { history: Vec::new(), user_text: said.into() }, &ctx, &tx, &CancellationToken::new(), &margin::agent::meter::Unmetered).await;
    drop(tx);
    while rx.recv().await.is_some() {}
    result
}

/// The request's prompt as the scripted server counts it, and its output cap.
fn sizes(request: &Value) -> (u64, u64) {
    let prompt = (request["messages"].to_string().len() + request["tools"].to_string().len()) as u64 / 4;
    (prompt, request["max_tokens"].as_u64().unwrap())
}

#[tokio::test]
async fn a_llama_cpp_servers_window_is_read_and_every_request_fits_it() {
    let (llm, agent) = on(ServesAs::LlamaCpp { n_ctx: 8_192 }).await;
    assert_eq!(agent.window(), 32_768, "Margin's default for a compatible server");
    // Its model list gives the window the model was trained with: not the one it runs.
    assert_eq!(agent.read_window().await, Some(8_192));
    assert_eq!(agent.window(), 8_192);
    let r = turn(&agent, "Hello").await;
    assert!(matches!(r.outcome, TurnOutcome::Complete), "{:?}", r.outcome);
    let (prompt, cap) = sizes(&llm.requests()[0]);
    assert!(prompt + cap <= 8_192, "{prompt} + {cap}");
    assert!(cap < 16_000 && cap >= 256, "the cap is what the window leaves: {cap}");
}

#[tokio::test]
async fn a_vllm_servers_window_is_read_from_its_model_list() {
    let (llm, agent) = on(ServesAs::Vllm { max_model_len: 12_000 }).await;
    assert_eq!(agent.read_window().await, Some(12_000));
    let r = turn(&agent, "Hello").await;
    assert!(matches!(r.outcome, TurnOutcome::Complete), "{:?}", r.outcome);
    let (prompt, cap) = sizes(&llm.requests()[0]);
    assert!(prompt + cap <= 12_000, "{prompt} + {cap}");
}

#[tokio::test]
async fn a_refusal_for_length_is_said_in_margins_words_and_the_next_turn_fits() {
    // Not asked first (the server did not say, or was down when Margin started).
    let (llm, agent) = on(ServesAs::Vllm { max_model_len: 8_192 }).await;
    let r = turn(&agent, "Hello").await;
    let TurnOutcome::Failed(e) = &r.outcome else { panic!("expected the refusal, got {:?}", r.outcome) };
    assert_eq!(e.code, "context_too_long");
    assert!(e.message.contains("8,192 tokens"), "{}", e.message);
    assert!(!e.message.contains("This model's maximum context length"), "the server's words stay in the log: {}", e.message);
    assert_eq!(sizes(&llm.requests()[0]).1, 16_000, "the first request had Margin's usual cap");
    // The refusal named the window: the next turn is sized to it, and is answered.
    assert_eq!(agent.window(), 8_192);
    let r = turn(&agent, "Hello").await;
    assert!(matches!(r.outcome, TurnOutcome::Complete), "{:?}", r.outcome);
    let (prompt, cap) = sizes(llm.requests().last().unwrap());
    assert!(prompt + cap <= 8_192, "{prompt} + {cap}");
}

#[tokio::test]
async fn a_prompt_longer_than_the_whole_window_is_refused_before_it_is_sent() {
    let (llm, agent) = on(ServesAs::LlamaCpp { n_ctx: 1_024 }).await;
    assert_eq!(agent.read_window().await, Some(1_024));
    let r = turn(&agent, "Hello").await;
    let TurnOutcome::Failed(e) = &r.outcome else { panic!("expected a refusal, got {:?}", r.outcome) };
    assert_eq!(e.code, "context_too_long");
    assert!(llm.requests().is_empty(), "nothing was sent");
}
