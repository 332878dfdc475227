//! The agent loop. One turn: stream a round and pass its text on as it comes;
//! gather the tool calls from the deltas; run them, each answered by id; feed
//! the results back; repeat until a round calls no tool or the step cap is
//! reached. Everything is reported as `ChatEvent`s; the caller adds the final
//! `done`, `cancelled` or `error` once it has stored the result.

use std::sync::Arc;

use async_openai::types::chat::{ChatCompletionRequestMessage, FinishReason};
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::{
    assemble::ToolCallAssembler,
    config::AiConfig,
    prompt::{self, PastMessage},
    provider::{Provider, ProviderError},
    skills::Skills,
    tools::{ToolContext, ToolRegistry},
};
use crate::lesson;
use crate::chat::{
    events::{ChatEvent, RoundData, ToolArgs, ToolEndData, ToolStartData, ToolStatus, UsageData},
    message::ToolCallRecord,
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

/// What a turn produced, to be stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnResult {
    /// The whole reply text, as streamed.
    pub text: String,
    pub tool_calls: Vec<ToolCallRecord>,
    /// The lesson after the turn's last successful edit.
    pub document_xml: Option<String>,
    pub usage: UsageData,
    pub outcome: TurnOutcome,
    /// The turn ended because it reached the step cap.
    pub hit_step_cap: bool,
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
        let emit = |e: ChatEvent| {
            // A closed receiver only means nobody listens any more; the turn goes on.
            let _ = events.send(e);
        };
        // The conversation without the system prompt: that is written anew
        // for every model call (it holds the lesson as it is then) and not
        // kept between calls.
        let mut messages = prompt::turn_messages(&request.history, &request.user_text);
        let mut result = TurnResult::default();

        for round in 1..=self.max_steps {
            let started = tokio::select! {
                biased;
                _ = cancel.cancelled() => return result.ended(TurnOutcome::Cancelled),
                // Boxed, as is the tool call below: a future is as large as
                // its largest await, and a turn spends its life streaming.
                s = Box::pin(self.provider.stream(self.with_system(&messages, ctx), self.definitions.clone())) => s,
            };
            let mut stream = match started {
                Ok(s) => s,
                Err(e) => return result.ended(TurnOutcome::Failed(e)),
            };
            let mut calls = ToolCallAssembler::new();
            let mut round_text = String::new();
            let mut finish = None;
            let mut streamed = false;
            // Calls already shown with an early `tool_start` this round.
            let mut announced: Vec<String> = Vec::new();
            loop {
                let item = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return result.ended(TurnOutcome::Cancelled),
                    item = stream.next() => item,
                };
                let chunk = match item {
                    None => break,
                    Some(Ok(chunk)) => chunk,
                    Some(Err(e)) => return result.ended(TurnOutcome::Failed(self.provider.classify(&e, streamed))),
                };
                if let Some(u) = chunk.usage {
                    result.usage.prompt_tokens += u.prompt_tokens;
                    result.usage.completion_tokens += u.completion_tokens;
                    result.usage.total_tokens += u.total_tokens;
                    emit(ChatEvent::Usage(result.usage));
                }
                for choice in chunk.choices.iter().filter(|c| c.index == 0) {
                    if let Some(text) = choice.delta.content.as_deref().filter(|t| !t.is_empty()) {
                        // Text of a later round starts a new paragraph.
                        if round_text.is_empty() && !result.text.is_empty() && !result.text.ends_with('\n') {
                            result.text.push_str("\n\n");
                            emit(ChatEvent::text("\n\n"));
                        }
                        streamed = true;
                        round_text.push_str(text);
                        result.text.push_str(text);
                        emit(ChatEvent::text(text));
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
                        finish = choice.finish_reason;
                    }
                }
                let early: Vec<(String, String, String)> = calls
                    .started()
                    .filter(|(id, _)| !announced.iter().any(|a| a == id))
                    .filter_map(|(id, name)| self.tools.early_label(name).map(|label| (id.to_string(), name.to_string(), label)))
                    .collect();
                for (id, tool, display_text) in early {
                    emit(ChatEvent::ToolStart(Box::new(ToolStartData { id: id.clone(), tool, args: ToolArgs::empty(), display_text })));
                    announced.push(id);
                }
            }
            emit(ChatEvent::RoundFinished(RoundData { round, finish_reason: finish_name(finish).into() }));

            let calls = calls.finish();
            if calls.is_empty() {
                let note = match finish {
                    Some(FinishReason::Length) => Some("(The reply was cut off: it reached the provider's length limit.)"),
                    Some(FinishReason::ContentFilter) => Some("(The provider's content filter stopped this reply.)"),
                    _ => None,
                };
                if let Some(note) = note {
                    let sep = if result.text.is_empty() { "" } else { "\n\n" };
                    let text = format!("{sep}{note}");
                    result.text.push_str(&text);
                    emit(ChatEvent::text(text));
                }
                return result.ended(TurnOutcome::Complete);
            }

            messages.push(prompt::assistant(round_text, &calls));
            for call in &calls {
                let args: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
                let display_text = self.tools.display_text(&call.name, &args);
                if !announced.contains(&call.id) {
                    emit(ChatEvent::ToolStart(Box::new(ToolStartData {
                        id: call.id.clone(),
                        tool: call.name.clone(),
                        args: ToolArgs::from_model(&call.arguments),
                        display_text: display_text.clone(),
                    })));
                }
                let outcome = Box::pin(self.tools.call(&call.name, &call.arguments, ctx)).await;
                let mut record = ToolCallRecord {
                    id: call.id.clone(),
                    tool: call.name.clone(),
                    args: ToolArgs::from_model(&call.arguments),
                    display_text,
                    status: ToolStatus::Success,
                    error: None,
                    summary: None,
                };
                match outcome {
                    Ok(out) => {
                        record.summary = out.summary.clone();
                        if out.document_xml.is_some() {
                            result.document_xml = out.document_xml.clone();
                        }
                        emit(ChatEvent::ToolEnd(Box::new(ToolEndData {
                            id: call.id.clone(),
                            status: ToolStatus::Success,
                            error: None,
                            summary: out.summary,
                            document_html: out.document_xml.as_deref().map(lesson::render_both),
                            document_xml: out.document_xml,
                            revision: out.revision,
                        })));
                        messages.push(prompt::tool_result(&call.id, out.content));
                    }
                    Err(error) => {
                        record.status = ToolStatus::Error;
                        record.error = Some(error.clone());
                        emit(ChatEvent::ToolEnd(Box::new(ToolEndData {
                            id: call.id.clone(),
                            status: ToolStatus::Error,
                            error: Some(error.clone()),
                            summary: None,
                            document_xml: None,
                            document_html: None,
                            revision: None,
                        })));
                        messages.push(prompt::tool_result(&call.id, format!("Error: {error}")));
                    }
                }
                result.tool_calls.push(record);
            }
            // Stop between rounds, never in the middle of a tool.
            if cancel.is_cancelled() {
                return result.ended(TurnOutcome::Cancelled);
            }
        }

        let sep = if result.text.is_empty() { "" } else { "\n\n" };
        let note = format!(
            "{sep}I stopped after {} steps without finishing. Tell me to go on if you want me to continue.",
            self.max_steps
        );
        result.text.push_str(&note);
        emit(ChatEvent::text(note));
        result.hit_step_cap = true;
        result.ended(TurnOutcome::Complete)
    }
}

impl TurnResult {
    fn ended(mut self, outcome: TurnOutcome) -> Self {
        self.outcome = outcome;
        self
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
