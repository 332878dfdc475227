//! The agent loop. One turn: stream a round and pass its text on as it comes;
//! gather the tool calls from the deltas; run them, each answered by id; feed
//! the results back; repeat until a round calls no tool or the step cap is
//! reached. Everything is reported as `ChatEvent`s and folded into the turn's
//! `TurnRecord` on the way; the caller adds the final `done`, `cancelled` or
//! `error` once it has stored the result.

use std::sync::Arc;

use async_openai::types::chat::ChatCompletionRequestMessage;
use serde_json::Value;
use tokio::{sync::mpsc::UnboundedSender, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{
    assemble::{AssembledCall, ToolCallAssembler},
    config::{AiConfig, Limits},
    context::{self, Budget},
    meter::{estimate_tokens, CallOutcome, CallUsage, Meter},
    prompt::{self, PastMessage},
    provider::{wire::SentMessage, Provider, ProviderError},
    skills::Skills,
    tools::{ToolContext, ToolRegistry},
};
use crate::chat::{
    events::{ChatEvent, RoundData, TextData, ToolArgs, ToolEndData, ToolProgressData, ToolStartData, ToolStatus, UsageData, OUTPUT_SHOWN},
    turn::TurnRecord,
};

/// What a call is reserved for when `AI_MAX_TOKENS` is not set.
const UNCAPPED_OUTPUT: u32 = 16_384;

/// How often a call announced early reports its progress: each time this
/// many more bytes of its arguments have come (by size, not time, so the
/// same stream always gives the same events).
const PROGRESS_EVERY: usize = 1024;

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
    /// The size of the system prompt without a lesson and of the tool
    /// definitions, as sent, for reservations.
    prompt_bytes: usize,
    max_steps: u32,
    limits: Limits,
    /// The context window the conversation is fitted into.
    context: Budget,
    /// A student's tutor (`Agent::tutor`) rather than the teacher's colleague.
    tutor: bool,
}

/// A prompt file under the prompts folder.
fn read_prompt(config: &AiConfig, name: &str) -> Result<String, String> {
    let path = config.prompts_dir.join(name);
    std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// A turn under way: where its events go, and its record so far.
struct Turn<'a> {
    events: &'a UnboundedSender<ChatEvent>,
    result: TurnResult,
    /// The model call under way: what the provider said it used (its last
    /// report), and how much it wrote, for an estimate when it said nothing.
    call_usage: Option<super::provider::wire::Usage>,
    call_output: usize,
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
    /// As the provider named it ("stop", "length", "tool_calls"…).
    finish: Option<String>,
    /// Calls already shown with an early `tool_start`, with the size of
    /// their arguments when their progress was last reported.
    announced: Vec<(String, usize)>,
    /// The model's reasoning in this call.
    reasoning: String,
    /// It came as `reasoning_content`, which DeepSeek wants back with the
    /// tool results of the same turn.
    reasoning_content: bool,
}

impl Agent {
    /// Reads the base prompt and the skills from the prompts folder.
    pub fn new(config: &AiConfig) -> Result<Self, String> {
        let base_prompt = read_prompt(config, "chat/base.md")?;
        let skills = Arc::new(Skills::load(&config.prompts_dir.join("chat/skills"))?);
        let tools = ToolRegistry::standard(skills.clone());
        Ok(Self::build(config, base_prompt, skills, tools, false))
    }

    /// The students' tutor: its own prompt (`prompts/tutor/base.md`), no
    /// skills, and only the tools that read (`ToolRegistry::tutor`). Its
    /// prompt's lesson is the students' version (the store's `current`).
    pub fn tutor(config: &AiConfig) -> Result<Self, String> {
        let base_prompt = read_prompt(config, "tutor/base.md")?;
        Ok(Self::build(config, base_prompt, Arc::new(Skills::from_list(Vec::new())), ToolRegistry::tutor(), true))
    }

    fn build(config: &AiConfig, base_prompt: String, skills: Arc<Skills>, tools: ToolRegistry, tutor: bool) -> Self {
        let definitions = tools.definitions();
        let empty = if tutor { prompt::tutor_system_prompt(&base_prompt, "") } else { prompt::system_prompt(&base_prompt, &skills, "", &[]) };
        Self {
            provider: Provider::new(config),
            prompt_bytes: serde_json::to_vec(&definitions).map_or(0, |v| v.len()) + empty.len(),
            definitions,
            tools,
            skills,
            base_prompt,
            max_steps: config.max_steps.max(1),
            context: Budget { window: config.context_tokens, bytes_per_token: context::bytes_per_token(config.provider) },
            limits: config.limits.clone(),
            tutor,
        }
    }

    /// Whether this is the students' tutor.
    pub fn is_tutor(&self) -> bool {
        self.tutor
    }

    /// The names of the tools this agent may call.
    pub fn tool_names(&self) -> Vec<&'static str> {
        self.tools.names()
    }

    pub fn model(&self) -> &str {
        self.provider.model()
    }

    pub fn skills(&self) -> &Skills {
        &self.skills
    }

    /// The system prompt with the lesson as it is now (the first message of
    /// every model call).
    fn system(&self, ctx: &ToolContext) -> ChatCompletionRequestMessage {
        if self.tutor {
            return prompt::system(prompt::tutor_system_prompt(&self.base_prompt, &ctx.document.current()));
        }
        prompt::system(prompt::system_prompt(&self.base_prompt, &self.skills, &ctx.document.current(), &ctx.document.sources()))
    }

    /// What a turn's first call is reserved by before it starts: the fixed
    /// prompt, the question and `AI_MAX_TOKENS`. The server reserves it with
    /// the request (a spent budget is a 402 rather than a failed stream),
    /// beside the query that reads the lesson, so the lesson is not counted
    /// here; later calls reserve by the size of what they really send.
    pub fn first_call_reservation(&self, question_bytes: usize) -> u32 {
        estimate_tokens(self.prompt_bytes + question_bytes).saturating_add(self.max_output())
    }

    /// The most one call may write, as reserved: `AI_MAX_TOKENS`, or a
    /// generous guess when it is not capped.
    fn max_output(&self) -> u32 {
        self.provider.max_tokens().unwrap_or(UNCAPPED_OUTPUT)
    }

    pub async fn run_turn(
        &self,
        request: TurnRequest,
        ctx: &ToolContext,
        events: &UnboundedSender<ChatEvent>,
        cancel: &CancellationToken,
        meter: &dyn Meter,
    ) -> TurnResult {
        let mut turn = Turn { events, result: TurnResult::default(), call_usage: None, call_output: 0 };
        // What fits in the model's window: the lesson and the question whole,
        // as much of the conversation as there is room for.
        // The sources are listed in every call's prompt (their text is read a page at a time).
        let listed: usize = ctx.document.sources().iter().map(|s| s.id.len() + s.name.len() + s.opening.len() + 40).sum();
        let fixed = self.prompt_bytes + ctx.document.current().len() + listed + request.user_text.len();
        let reply_room = self.max_output().min(self.context.window / 4);
        let history = match self.context.fit(request.history, fixed, reply_room) {
            Ok(history) => history,
            Err(e) => return turn.ended(TurnOutcome::Failed(e)),
        };
        // The conversation without the system prompt: that is written anew
        // for every model call (it holds the lesson as it is then) and not
        // kept between calls.
        let mut messages = prompt::turn_messages(&history, &request.user_text);
        // This turn's reasoning to send back, by the index of the assistant
        // message it led to (only where the provider wants it back).
        let mut thoughts: Vec<(usize, String)> = Vec::new();

        let deadline = Instant::now() + self.limits.turn_timeout;
        for round in 1..=self.max_steps {
            // Boxed, as is the tool call below: a future is as large as its
            // largest await, and a turn spends its life streaming.
            let streamed = Box::pin(self.stream_round(&messages, &thoughts, ctx, &mut turn, cancel, deadline, meter)).await;
            let r = match streamed {
                Ok(r) => r,
                Err(outcome) => return turn.ended(outcome),
            };
            let finish = r.finish.as_deref().unwrap_or("none");
            turn.emit(ChatEvent::RoundFinished(RoundData { round, finish_reason: finish.into() }));
            if r.calls.is_empty() {
                match finish {
                    "length" => turn.note("(The reply was cut off: it reached the provider's length limit.)"),
                    "content_filter" => turn.note("(The provider's content filter stopped this reply.)"),
                    _ => {}
                }
                return turn.ended(TurnOutcome::Complete);
            }
            if r.reasoning_content && !r.reasoning.is_empty() {
                thoughts.push((messages.len(), r.reasoning));
            }
            messages.push(prompt::assistant(r.text, &r.calls));
            // A round that only offered what to do next, successfully, after
            // the reply was written, is the turn's end: nothing is left for
            // the model to say.
            let mut last_word = !turn.result.record.text.is_empty();
            for call in &r.calls {
                // Cut off by the output cap, a call is not what the model
                // meant, even when it happens to parse: it is not run.
                let cut_off = finish == "length";
                let (answer, ok) = self.run_call(call, cut_off, ctx, &mut turn).await;
                last_word &= ok && self.tools.ends_turn(&call.name);
                messages.push(prompt::tool_result(&call.id, answer));
            }
            if last_word {
                return turn.ended(TurnOutcome::Complete);
            }
            // Stop between rounds, never in the middle of a tool.
            if cancel.is_cancelled() {
                return turn.ended(TurnOutcome::Cancelled);
            }
            if Instant::now() >= deadline {
                return turn.ended(TurnOutcome::Failed(self.turn_too_long()));
            }
        }

        turn.note(&format!("I stopped after {} steps without finishing. Tell me to go on if you want me to continue.", self.max_steps));
        turn.result.hit_step_cap = true;
        turn.ended(TurnOutcome::Complete)
    }

    fn turn_too_long(&self) -> ProviderError {
        ProviderError::new(
            "turn_timeout",
            format!(
                "This reply took longer than {} minutes, so it was stopped. What it wrote so far is kept.",
                (self.limits.turn_timeout.as_secs() / 60).max(1)
            ),
        )
    }

    /// Streams one model call: passes its text on, assembles its tool calls
    /// and announces those worth announcing before their arguments are in.
    ///
    /// The call is reserved with the meter first (refused: the turn ends
    /// without calling) and settled after, however it ended.
    #[allow(clippy::too_many_arguments)]
    async fn stream_round(
        &self,
        messages: &[ChatCompletionRequestMessage],
        thoughts: &[(usize, String)],
        ctx: &ToolContext,
        turn: &mut Turn<'_>,
        cancel: &CancellationToken,
        deadline: Instant,
        meter: &dyn Meter,
    ) -> Result<Round, TurnOutcome> {
        let system = self.system(ctx);
        let mut sent: Vec<SentMessage<'_>> = Vec::with_capacity(messages.len() + 1);
        sent.push(SentMessage::from(&system));
        sent.extend(messages.iter().enumerate().map(|(i, message)| SentMessage {
            message,
            reasoning_content: thoughts.iter().find(|(at, _)| *at == i).map(|(_, r)| r.as_str()),
        }));
        let body = self.provider.request_body(&sent, &self.definitions).map_err(TurnOutcome::Failed)?;
        drop(sent);
        drop(system);
        let prompt_bytes = body.len();
        meter.reserve(estimate_tokens(prompt_bytes).saturating_add(self.max_output())).await.map_err(TurnOutcome::Failed)?;
        turn.call_usage = None;
        turn.call_output = 0;
        let result = self.stream_call(body, ctx, turn, cancel, deadline).await;
        let outcome = match &result {
            Ok(_) => CallOutcome::Complete,
            Err(TurnOutcome::Cancelled) => CallOutcome::Cancelled,
            Err(_) => CallOutcome::Failed,
        };
        let used = match turn.call_usage {
            Some(u) => CallUsage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, estimated: false, outcome },
            // Nothing came back: nothing to pay for, the reservation goes back.
            None if turn.call_output == 0 => CallUsage { prompt_tokens: 0, completion_tokens: 0, estimated: false, outcome },
            // Cut short after it wrote: what was sent and what came, at
            // about four bytes a token.
            None => CallUsage {
                prompt_tokens: u32::try_from(prompt_bytes / 4).unwrap_or(u32::MAX),
                completion_tokens: u32::try_from(turn.call_output.div_ceil(4)).unwrap_or(u32::MAX),
                estimated: true,
                outcome,
            },
        };
        meter.settle(used).await;
        result
    }

    /// Streams one call whose body is written: passes its text on, assembles
    /// its tool calls and announces those worth announcing early.
    async fn stream_call(
        &self,
        body: bytes::Bytes,
        ctx: &ToolContext,
        turn: &mut Turn<'_>,
        cancel: &CancellationToken,
        deadline: Instant,
    ) -> Result<Round, TurnOutcome> {
        let started = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(TurnOutcome::Cancelled),
            _ = tokio::time::sleep_until(deadline) => return Err(TurnOutcome::Failed(self.turn_too_long())),
            s = self.provider.send(body) => s,
        };
        let mut stream = started.map_err(TurnOutcome::Failed)?;
        let mut calls = ToolCallAssembler::new();
        let mut round = Round {
            text: String::new(),
            calls: Vec::new(),
            finish: None,
            announced: Vec::new(),
            reasoning: String::new(),
            reasoning_content: false,
        };
        let usage_before = turn.result.record.usage;
        loop {
            let item = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(TurnOutcome::Cancelled),
                _ = tokio::time::sleep_until(deadline) => return Err(TurnOutcome::Failed(self.turn_too_long())),
                item = stream.next() => item,
            };
            let chunk = match item {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => return Err(TurnOutcome::Failed(e)),
            };
            if let Some(u) = chunk.usage {
                turn.call_usage = Some(u);
                // Some providers repeat the running total in several chunks:
                // the call's usage is the last one, added once to the turn's.
                turn.emit(ChatEvent::Usage(UsageData {
                    prompt_tokens: usage_before.prompt_tokens + u.prompt_tokens,
                    completion_tokens: usage_before.completion_tokens + u.completion_tokens,
                    total_tokens: usage_before.total_tokens + u.total_tokens,
                }));
            }
            for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
                if let Some(thought) = choice.delta.reasoning() {
                    if turn.result.record.reasoning.len() + thought.len() > self.limits.max_reply_bytes {
                        return Err(too_long("The model's thinking", self.limits.max_reply_bytes));
                    }
                    round.reasoning_content |= choice.delta.reasoning_content.is_some();
                    round.reasoning.push_str(thought);
                    turn.call_output += thought.len();
                    turn.emit(ChatEvent::Reasoning(TextData { content: thought.to_string() }));
                }
                if let Some(text) = choice.delta.content.as_deref().filter(|t| !t.is_empty()) {
                    if turn.result.record.text.len() + text.len() > self.limits.max_reply_bytes {
                        return Err(too_long("The reply", self.limits.max_reply_bytes));
                    }
                    turn.text(&round.text, text);
                    round.text.push_str(text);
                    turn.call_output += text.len();
                }
                let deltas = choice.delta.tool_calls.unwrap_or_default();
                for delta in &deltas {
                    let function = delta.function.as_ref();
                    turn.call_output += function.and_then(|f| f.arguments.as_deref()).map_or(0, str::len);
                    calls.push(
                        delta.index,
                        delta.id.as_deref(),
                        function.and_then(|f| f.name.as_deref()),
                        function.and_then(|f| f.arguments.as_deref()),
                    );
                }
                if !deltas.is_empty() && calls.largest_arguments() > self.limits.max_call_bytes {
                    return Err(TurnOutcome::Failed(ProviderError::new(
                        "tool_call_too_large",
                        format!(
                            "The assistant tried to send a change larger than {} KB, so it was stopped before anything was changed.",
                            self.limits.max_call_bytes / 1024
                        ),
                    )));
                }
                if let Some(f) = choice.finish_reason.filter(|f| !f.is_empty()) {
                    round.finish = Some(f);
                }
            }
            let early: Vec<(String, String, String)> = calls
                .started()
                .filter(|(id, _)| !round.announced.iter().any(|(a, _)| a == id))
                .filter_map(|(id, name)| self.tools.early_label(name).map(|label| (id.to_string(), name.to_string(), label)))
                .collect();
            for (id, tool, display_text) in early {
                turn.emit(ChatEvent::ToolStart(Box::new(ToolStartData { id: id.clone(), tool, args: ToolArgs::empty(), display_text })));
                round.announced.push((id, 0));
            }
            self.report_progress(&calls, &mut round, ctx, turn);
        }
        // No finish reason and no `[DONE]`: the connection dropped. Calls
        // still arriving are never run; the text so far is kept.
        if round.finish.is_none() && !stream.saw_done() {
            return Err(TurnOutcome::Failed(ProviderError::cut_off()));
        }
        round.calls = calls.finish();
        Ok(round)
    }

    /// Says how far the calls announced early have come, each time another
    /// `PROGRESS_EVERY` bytes of their arguments are in.
    fn report_progress(&self, calls: &ToolCallAssembler, round: &mut Round, ctx: &ToolContext, turn: &mut Turn<'_>) {
        for (id, reported) in &mut round.announced {
            let Some((name, bytes)) = calls.arguments_of(id) else { continue };
            if bytes / PROGRESS_EVERY <= *reported / PROGRESS_EVERY {
                continue;
            }
            *reported = bytes;
            if let Some((message, fraction)) = self.tools.progress(name, bytes, ctx) {
                turn.emit(ChatEvent::ToolProgress(Box::new(ToolProgressData { id: id.clone(), message, fraction })));
            }
        }
    }

    /// Runs one call (or, `cut_off`, reports it failed without running it),
    /// reporting its start and its end; returns
    /// what the model is told, and whether the call succeeded.
    async fn run_call(&self, call: &AssembledCall, cut_off: bool, ctx: &ToolContext, turn: &mut Turn<'_>) -> (String, bool) {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
        let start = ToolStartData {
            id: call.id.clone(),
            tool: call.name.clone(),
            args: ToolArgs::from_model(&call.arguments),
            display_text: self.tools.display_text(&call.name, &args),
        };
        // A call announced early is announced again, now with its arguments
        // (the step's "Details" show them).
        turn.emit(ChatEvent::ToolStart(Box::new(start)));
        let outcome = if cut_off {
            Err(cut_off_error(call, args.is_string()))
        } else {
            Box::pin(self.tools.call(&call.name, &call.arguments, ctx)).await
        };
        let (end, answer) = match outcome {
            Ok(out) => (
                ToolEndData {
                    id: call.id.clone(),
                    status: if out.proposal_id.is_some() { ToolStatus::Proposed } else { ToolStatus::Success },
                    error: None,
                    summary: out.summary,
                    document_html: out.document_xml.as_deref().map(crate::lesson::render_both),
                    document_xml: out.document_xml,
                    revision: out.revision,
                    changes: out.changes,
                    proposal_id: out.proposal_id,
                    output: Some(shown(&out.content)),
                    replies: out.replies,
                    actions: out.actions.iter().map(|a| a.as_str().to_string()).collect(),
                },
                out.content,
            ),
            Err(error) => {
                let answer = format!("Error: {error}");
                (ToolEndData { error: Some(error), ..ToolEndData::bare(call.id.clone(), ToolStatus::Error) }, answer)
            }
        };
        let ok = end.status != ToolStatus::Error;
        turn.emit(ChatEvent::ToolEnd(Box::new(end)));
        (answer, ok)
    }
}

/// A tool's answer as a step's "Details" keep it: whole up to
/// `OUTPUT_SHOWN` bytes, then cut at a character, saying how much is left out.
fn shown(content: &str) -> String {
    if content.len() <= OUTPUT_SHOWN {
        return content.to_string();
    }
    let mut end = OUTPUT_SHOWN;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… ({} more characters)", &content[..end], content[end..].chars().count())
}

/// What a call cut off by the output cap is answered with.
fn cut_off_error(call: &AssembledCall, broken_json: bool) -> String {
    format!(
        "Your reply reached the length limit, so the arguments of {} were cut off{} and it was not run. Nothing changed. Send a shorter call: change one part of the lesson at a time.",
        call.name,
        if broken_json { " (they are not valid JSON)" } else { "" }
    )
}

/// A reply, or its thinking, that grew past the cap.
fn too_long(what: &str, cap: usize) -> TurnOutcome {
    TurnOutcome::Failed(ProviderError::new(
        "reply_too_long",
        format!("{what} grew past {} KB, so it was stopped. What it wrote so far is kept.", cap / 1024),
    ))
}
