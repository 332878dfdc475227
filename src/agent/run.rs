//! The agent loop. One turn: stream a round and pass its text on as it comes;
//! gather the tool calls from the deltas; run them, each answered by id; feed
//! the results back; repeat until a round calls no tool or the step cap is
//! reached. Everything is reported as `ChatEvent`s and folded into the turn's
//! `TurnRecord` on the way; the caller adds the final `done`, `cancelled` or
//! `error` once it has stored the result.

use std::sync::Arc;

use async_openai::types::chat::{ChatCompletionRequestMessage, FinishReason};
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::{
    assemble::{AssembledCall, ToolCallAssembler},
    config::AiConfig,
    prompt::{self, PastMessage},
    provider::{Provider, ProviderError},
    skills::Skills,
    tools::{ToolContext, ToolRegistry},
};
use crate::chat::{
    events::{ChatEvent, RoundData, ToolArgs, ToolEndData, ToolStartData, ToolStatus},
    turn::TurnRecord,
};

/// One turn's input.
pub struct TurnRequest {
    pub history: Vec<PastMessage>,
    pub user_text: String,
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum TurnOutcome {
    #[default]
    Complete,
    /// Stopped by the teacher.
    Cancelled,
    /// A failure of the provider (or of Margin) ended it.
    Failed(ProviderError),
}

/// What a turn produced: its record (still `running`: the caller ends it),
/// and how it ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnResult {
    pub record: TurnRecord,
    pub outcome: TurnOutcome,
    /// The turn ended because it reached the step cap.
    pub hit_step_cap: bool,
}

impl std::ops::Deref for TurnResult {
    type Target = TurnRecord;

    fn deref(&self) -> &TurnRecord {
        &self.record
    }
}

pub struct Agent {
    provider: Provider,
    tools: ToolRegistry,
    /// The tools as the model is told about them; built once, not per turn.
    definitions: Vec<async_openai::types::chat::ChatCompletionTools>,
    skills: Arc<Skills>,
    base_prompt: String,
    max_steps: u32,
}

/// A turn under way: where its events go, and its record so far.
struct Turn<'a> {
    events: &'a UnboundedSender<ChatEvent>,
    result: TurnResult,
}

impl Turn<'_> {
    fn emit(&mut self, e: ChatEvent) {
        self.result.record.apply(&e);
        // A closed receiver only means nobody listens any more; the turn goes on.
        let _ = self.events.send(e);
    }

    /// Text of the turn, starting a new paragraph when an earlier round wrote some.
    fn text(&mut self, round_text: &str, piece: &str) {
        let text = &self.result.record.text;
        if round_text.is_empty() && !text.is_empty() && !text.ends_with('\n') {
            self.emit(ChatEvent::text("\n\n"));
        }
        self.emit(ChatEvent::text(piece));
    }

    /// A closing remark of Margin's own, as its own paragraph.
    fn note(&mut self, note: &str) {
        let sep = if self.result.record.text.is_empty() { "" } else { "\n\n" };
        self.emit(ChatEvent::text(format!("{sep}{note}")));
    }

    fn ended(self, outcome: TurnOutcome) -> TurnResult {
        TurnResult { outcome, ..self.result }
    }
}

/// What one streamed model call produced.
struct Round {
    text: String,
    calls: Vec<AssembledCall>,
    finish: Option<FinishReason>,
    /// Calls already shown with an early `tool_start`.
    announced: Vec<String>,
}

impl Agent {
    /// Reads the base prompt and the skills from the prompts folder.
    pub fn new(config: &AiConfig) -> Result<Self, String> {
        let base_path = config.prompts_dir.join("chat/base.md");
        let base_prompt = std::fs::read_to_string(&base_path).map_err(|e| format!("cannot read {}: {e}", base_path.display()))?;
        let skills = Arc::new(Skills::load(&config.prompts_dir.join("chat/skills"))?);
        let tools = ToolRegistry::standard(skills.clone());
        Ok(Self {
            provider: Provider::new(config),
            definitions: tools.definitions(),
            tools,
            skills,
            base_prompt,
            max_steps: config.max_steps.max(1),
        })
    }

    pub fn model(&self) -> &str {
        self.provider.model()
    }

    pub fn skills(&self) -> &Skills {
        &self.skills
    }

    /// What one model call is sent: the system prompt with the lesson as it
    /// is now, then the conversation.
    fn with_system(&self, messages: &[ChatCompletionRequestMessage], ctx: &ToolContext) -> Vec<ChatCompletionRequestMessage> {
        let mut sent = Vec::with_capacity(messages.len() + 1);
        sent.push(prompt::system(prompt::system_prompt(&self.base_prompt, &self.skills, &ctx.document.current())));
        sent.extend(messages.iter().cloned());
        sent
    }

    pub async fn run_turn(
        &self,
        request: TurnRequest,
        ctx: &ToolContext,
        events: &UnboundedSender<ChatEvent>,
        cancel: &CancellationToken,
    ) -> TurnResult {
        let mut turn = Turn { events, result: TurnResult::default() };
        // The conversation without the system prompt: that is written anew
        // for every model call (it holds the lesson as it is then) and not
        // kept between calls.
        let mut messages = prompt::turn_messages(&request.history, &request.user_text);

        for round in 1..=self.max_steps {
            // Boxed, as is the tool call below: a future is as large as its
            // largest await, and a turn spends its life streaming.
            let streamed = Box::pin(self.stream_round(&messages, ctx, &mut turn, cancel)).await;
            let r = match streamed {
                Ok(r) => r,
                Err(outcome) => return turn.ended(outcome),
            };
            turn.emit(ChatEvent::RoundFinished(RoundData { round, finish_reason: finish_name(r.finish).into() }));
            if r.calls.is_empty() {
                match r.finish {
                    Some(FinishReason::Length) => turn.note("(The reply was cut off: it reached the provider's length limit.)"),
                    Some(FinishReason::ContentFilter) => turn.note("(The provider's content filter stopped this reply.)"),
                    _ => {}
                }
                return turn.ended(TurnOutcome::Complete);
            }
            messages.push(prompt::assistant(r.text, &r.calls));
            for call in &r.calls {
                let answer = self.run_call(call, r.announced.contains(&call.id), ctx, &mut turn).await;
                messages.push(prompt::tool_result(&call.id, answer));
            }
            // Stop between rounds, never in the middle of a tool.
            if cancel.is_cancelled() {
                return turn.ended(TurnOutcome::Cancelled);
            }
        }

        turn.note(&format!("I stopped after {} steps without finishing. Tell me to go on if you want me to continue.", self.max_steps));
        turn.result.hit_step_cap = true;
        turn.ended(TurnOutcome::Complete)
    }

    /// Streams one model call: passes its text on, assembles its tool calls
    /// and announces those worth announcing before their arguments are in.
    async fn stream_round(
        &self,
        messages: &[ChatCompletionRequestMessage],
        ctx: &ToolContext,
        turn: &mut Turn<'_>,
        cancel: &CancellationToken,
    ) -> Result<Round, TurnOutcome> {
        let started = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(TurnOutcome::Cancelled),
            s = self.provider.stream(self.with_system(messages, ctx), self.definitions.clone()) => s,
        };
        let mut stream = started.map_err(TurnOutcome::Failed)?;
        let mut calls = ToolCallAssembler::new();
        let mut round = Round { text: String::new(), calls: Vec::new(), finish: None, announced: Vec::new() };
        let mut streamed = false;
        loop {
            let item = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(TurnOutcome::Cancelled),
                item = stream.next() => item,
            };
            let chunk = match item {
                None => break,
                Some(Ok(chunk)) => chunk,
                Some(Err(e)) => return Err(TurnOutcome::Failed(self.provider.classify(&e, streamed))),
            };
            if let Some(u) = chunk.usage {
                let mut usage = turn.result.record.usage;
                usage.prompt_tokens += u.prompt_tokens;
                usage.completion_tokens += u.completion_tokens;
                usage.total_tokens += u.total_tokens;
                turn.emit(ChatEvent::Usage(usage));
            }
            for choice in chunk.choices.iter().filter(|c| c.index == 0) {
                if let Some(text) = choice.delta.content.as_deref().filter(|t| !t.is_empty()) {
                    streamed = true;
                    turn.text(&round.text, text);
                    round.text.push_str(text);
                }
                for delta in choice.delta.tool_calls.iter().flatten() {
                    streamed = true;
                    let function = delta.function.as_ref();
                    calls.push(
                        delta.index,
                        delta.id.as_deref(),
                        function.and_then(|f| f.name.as_deref()),
                        function.and_then(|f| f.arguments.as_deref()),
                    );
                }
                if choice.finish_reason.is_some() {
                    round.finish = choice.finish_reason;
                }
            }
            let early: Vec<(String, String, String)> = calls
                .started()
                .filter(|(id, _)| !round.announced.iter().any(|a| a == id))
                .filter_map(|(id, name)| self.tools.early_label(name).map(|label| (id.to_string(), name.to_string(), label)))
                .collect();
            for (id, tool, display_text) in early {
                turn.emit(ChatEvent::ToolStart(Box::new(ToolStartData { id: id.clone(), tool, args: ToolArgs::empty(), display_text })));
                round.announced.push(id);
            }
        }
        round.calls = calls.finish();
        Ok(round)
    }

    /// Runs one call, reporting its start (unless announced early) and its
    /// end; returns what the model is told.
    async fn run_call(&self, call: &AssembledCall, announced: bool, ctx: &ToolContext, turn: &mut Turn<'_>) -> String {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
        let start = ToolStartData {
            id: call.id.clone(),
            tool: call.name.clone(),
            args: ToolArgs::from_model(&call.arguments),
            display_text: self.tools.display_text(&call.name, &args),
        };
        if announced {
            // Already on screen; the record still keeps the whole call.
            turn.result.record.apply(&ChatEvent::ToolStart(Box::new(start)));
        } else {
            turn.emit(ChatEvent::ToolStart(Box::new(start)));
        }
        let outcome = Box::pin(self.tools.call(&call.name, &call.arguments, ctx)).await;
        let (end, answer) = match outcome {
            Ok(out) => (
                ToolEndData {
                    id: call.id.clone(),
                    status: ToolStatus::Success,
                    error: None,
                    summary: out.summary,
                    document_html: out.document_xml.as_deref().map(crate::lesson::render_both),
                    document_xml: out.document_xml,
                    revision: out.revision,
                },
                out.content,
            ),
            Err(error) => {
                let answer = format!("Error: {error}");
                let end = ToolEndData {
                    id: call.id.clone(),
                    status: ToolStatus::Error,
                    error: Some(error),
                    summary: None,
                    document_xml: None,
                    document_html: None,
                    revision: None,
                };
                (end, answer)
            }
        };
        turn.emit(ChatEvent::ToolEnd(Box::new(end)));
        answer
    }
}

fn finish_name(f: Option<FinishReason>) -> &'static str {
    match f {
        Some(FinishReason::Stop) => "stop",
        Some(FinishReason::Length) => "length",
        Some(FinishReason::ToolCalls) => "tool_calls",
        Some(FinishReason::ContentFilter) => "content_filter",
        Some(FinishReason::FunctionCall) => "function_call",
        None => "none",
    }
}
