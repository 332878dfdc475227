//! One round of a turn: a streamed model call, its text passed on as it
//! comes, its tool calls assembled (each announced as soon as its name is
//! in), and each call run and answered. The loop over rounds is `run`.

use async_openai::types::chat::ChatCompletionRequestMessage;
use serde_json::Value;
use tokio::{sync::mpsc::UnboundedSender, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{Agent, TurnOutcome, TurnResult};
use crate::chat::turn::TurnRecord;
use crate::{
    agent::{
        assemble::{AssembledCall, ToolCallAssembler},
        meter::{estimate_tokens, CallOutcome, CallUsage, Meter},
        provider::{wire::SentMessage, ProviderError},
        pause::{PausedCall, PausedTurn},
        tools::{Approvals, Decision, ToolContext},
    },
    chat::proposal::{ProposalMark, ProposalStatus},
    chat::events::{AwaitingData, ChatEvent, TextData, ToolArgs, ToolEndData, ToolProgressData, ToolStartData, ToolStatus, UsageData, OUTPUT_SHOWN},
};

/// How often a call announced early reports its progress: each time this
/// many more bytes of its arguments have come (by size, not time, so the
/// same stream always gives the same events).
const PROGRESS_EVERY: usize = 1024;

/// A turn under way: where its events go, and its record so far.
pub(super) struct Turn<'a> {
    pub(super) events: &'a UnboundedSender<ChatEvent>,
    pub(super) result: TurnResult,
    /// The model call under way: what the provider said it used (its last
    /// report), and how much it wrote, for an estimate when it said nothing.
    pub(super) call_usage: Option<crate::agent::provider::wire::Usage>,
    pub(super) call_output: usize,
    /// The round under way (from 1): every event says which it belongs to.
    pub(super) round: u32,
    /// How long the turn has waited for the teacher's decisions.
    pub(super) paused: std::time::Duration,
    /// The call ids the turn has used so far (`Round::own_id`).
    pub(super) ids: Vec<String>,
}

impl<'a> Turn<'a> {
    pub(super) fn new(events: &'a UnboundedSender<ChatEvent>, record: TurnRecord, round: u32, ids: Vec<String>) -> Self {
        Self {
            events,
            result: TurnResult { record, ..TurnResult::default() },
            call_usage: None,
            call_output: 0,
            round,
            paused: std::time::Duration::ZERO,
            ids,
        }
    }

    pub(super) fn emit(&mut self, e: ChatEvent) {
        self.result.record.apply(&e);
        // A closed receiver only means nobody listens any more; the turn goes on.
        let _ = self.events.send(e);
    }

    /// Text of the turn, starting a new paragraph when an earlier round wrote some.
    pub(super) fn text(&mut self, round_text: &str, piece: &str) {
        let text = &self.result.record.text;
        if round_text.is_empty() && !text.is_empty() && !text.ends_with('\n') {
            self.emit(ChatEvent::text_in(self.round, "\n\n"));
        }
        self.emit(ChatEvent::text_in(self.round, piece));
    }

    /// A closing remark of Margin's own, as its own paragraph.
    pub(super) fn note(&mut self, note: &str) {
        let sep = if self.result.record.text.is_empty() { "" } else { "\n\n" };
        self.emit(ChatEvent::text_in(self.round, format!("{sep}{note}")));
    }

    pub(super) fn ended(self, outcome: TurnOutcome) -> TurnResult {
        TurnResult { outcome, ..self.result }
    }
}

/// The conversation a turn carries from round to round: every message
/// after the system prompt, and the reasoning to send back.
pub(super) struct Talk {
    pub(super) messages: Vec<ChatCompletionRequestMessage>,
    /// This turn's reasoning to send back, by the index of the assistant
    /// message it led to (only where the provider wants it back).
    pub(super) thoughts: Vec<(usize, String)>,
}

/// Where a call stands in its turn, for the state kept if it pauses.
pub(super) struct Pausing<'t> {
    pub(super) talk: &'t Talk,
    /// The round's calls from this one on.
    pub(super) calls: &'t [AssembledCall],
    pub(super) cut_off: bool,
    pub(super) last_word: bool,
    pub(super) deadline: Instant,
}

/// What one streamed model call produced.
pub(super) struct Round {
    pub(super) text: String,
    pub(super) calls: Vec<AssembledCall>,
    /// As the provider named it ("stop", "length", "tool_calls"…).
    pub(super) finish: Option<String>,
    /// Calls already shown with an early `tool_start`, with the size of
    /// their arguments when their progress was last reported.
    pub(super) announced: Vec<(String, usize)>,
    /// The model's reasoning in this call.
    pub(super) reasoning: String,
    /// It came as `reasoning_content`, which DeepSeek wants back with the
    /// tool results of the same turn.
    pub(super) reasoning_content: bool,
    /// The provider's id of each call of this round, and the id the turn
    /// gives it (`own_id`).
    pub(super) renamed: Vec<(String, String)>,
}

impl Round {
    /// The id a call is known by in this turn: the provider's, unless an
    /// earlier call of the turn had it (some providers number calls afresh
    /// in every round), then the provider's with `_2`, `_3`… Steps, events
    /// and the model's own history all use it, so each call's is unique.
    fn own_id(&mut self, turn: &mut Turn<'_>, provider: &str) -> String {
        if let Some((_, own)) = self.renamed.iter().find(|(p, _)| p == provider) {
            return own.clone();
        }
        let mut own = provider.to_string();
        let mut n = 1;
        while turn.ids.contains(&own) {
            n += 1;
            own = format!("{provider}_{n}");
        }
        turn.ids.push(own.clone());
        self.renamed.push((provider.to_string(), own.clone()));
        own
    }
}

impl Agent {
    /// Streams one model call: passes its text on, assembles its tool calls
    /// and announces those worth announcing before their arguments are in.
    ///
    /// The call is reserved with the meter first (refused: the turn ends
    /// without calling) and settled after, however it ended.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn stream_round(
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
        let tools = if ctx.document.sources().is_empty() { &self.definitions_without_material } else { &self.definitions };
        let body = self.provider.request_body(&sent, tools).map_err(TurnOutcome::Failed)?;
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
        // The cancellation and the turn's deadline are waited on once for the
        // whole call, not made anew for every chunk: a new wait would
        // register with the token and the timer wheel, and leave them again,
        // on every delta of every running reply.
        let cancelled = cancel.cancelled();
        let too_late = tokio::time::sleep_until(deadline);
        tokio::pin!(cancelled, too_late);
        let started = tokio::select! {
            biased;
            _ = &mut cancelled => return Err(TurnOutcome::Cancelled),
            _ = &mut too_late => return Err(TurnOutcome::Failed(self.turn_too_long())),
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
            renamed: Vec::new(),
        };
        let usage_before = turn.result.record.usage;
        loop {
            let item = tokio::select! {
                biased;
                _ = &mut cancelled => return Err(TurnOutcome::Cancelled),
                _ = &mut too_late => return Err(TurnOutcome::Failed(self.turn_too_long())),
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
                    turn.emit(ChatEvent::Reasoning(TextData { content: thought.to_string(), round_index: turn.round }));
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
            // Every call is announced as soon as its name is in, in the
            // order the model wrote them, so the steps stand in the order
            // they were called (and run): a call that runs at once is not
            // listed after one announced early while its arguments stream.
            let early: Vec<(String, String, String)> = calls
                .started()
                .filter(|(id, _)| !round.announced.iter().any(|(a, _)| a == id))
                .map(|(id, name)| (id.to_string(), name.to_string(), self.tools.early_label(name).unwrap_or_else(|| self.tools.display_text(name, &Value::Null))))
                .collect();
            for (id, tool, display_text) in early {
                let own = round.own_id(turn, &id);
                turn.emit(ChatEvent::ToolStart(Box::new(ToolStartData { id: own, tool, args: ToolArgs::empty(), display_text, round_index: turn.round })));
                round.announced.push((id, 0));
            }
            self.report_progress(&calls, &mut round, ctx, turn);
        }
        // No finish reason and no `[DONE]`: the connection dropped. Calls
        // still arriving are never run; the text so far is kept.
        if round.finish.is_none() && !stream.saw_done() {
            return Err(TurnOutcome::Failed(ProviderError::cut_off()));
        }
        let mut assembled = calls.finish();
        for call in &mut assembled {
            call.id = round.own_id(turn, &call.id);
        }
        round.calls = assembled;
        Ok(round)
    }

    /// Says every call's arguments, complete, before the first of the
    /// round's calls runs (`tool_input`: the step's "Details" show them, and
    /// a client following the design's rounds gets the round's calls as one
    /// batch before any result).
    pub(super) fn announce_inputs(&self, calls: &[AssembledCall], turn: &mut Turn<'_>) {
        for call in calls {
            let args: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
            turn.emit(ChatEvent::ToolInput(Box::new(ToolStartData {
                id: call.id.clone(),
                tool: call.name.clone(),
                args: ToolArgs::from_model(&call.arguments),
                display_text: self.tools.display_text(&call.name, &args),
                round_index: turn.round,
            })));
        }
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
            let own = round.renamed.iter().find(|(p, _)| p == id).map_or_else(|| id.clone(), |(_, o)| o.clone());
            if let Some((message, fraction)) = self.tools.progress(name, bytes, ctx) {
                turn.emit(ChatEvent::ToolProgress(Box::new(ToolProgressData { id: own, message, fraction, round_index: turn.round })));
            }
        }
    }

    /// Runs one call (or, `cut_off`, reports it failed without running it),
    /// reporting its start and its end; returns
    /// what the model is told, and whether the call succeeded.
    /// `None`: the call paused on a held edit and the process is stopping
    /// (the turn is put aside, `TurnOutcome::Parked`).
    pub(super) async fn run_call(
        &self,
        call: &AssembledCall,
        cut_off: bool,
        ctx: &ToolContext,
        turn: &mut Turn<'_>,
        cancel: &CancellationToken,
        here: &Pausing<'_>,
    ) -> Option<(String, bool)> {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
        let outcome = if cut_off {
            Err(cut_off_error(call, args.is_string()))
        } else {
            Box::pin(self.tools.call(&call.name, &call.arguments, ctx)).await
        };
        let (end, answer) = match outcome {
            Ok(out) => (
                ToolEndData {
                    id: call.id.clone(),
                    tool: call.name.clone(),
                    round_index: turn.round,
                    status: if out.proposal.is_some() { ToolStatus::Proposed } else { ToolStatus::Success },
                    error: None,
                    summary: out.summary,
                    document_html: out.document_xml.as_deref().map(crate::lesson::render_both),
                    document_xml: out.document_xml,
                    revision: out.revision,
                    changes: out.changes,
                    proposal_id: out.proposal.as_ref().map(|p| p.id.clone()),
                    digest: out.proposal.map(|p| p.digest),
                    decisions: out.decisions,
                    output: Some(shown(&out.content)),
                    replies: out.replies,
                    actions: out.actions.iter().map(|a| a.as_str().to_string()).collect(),
                    lesson: out.lesson,
                    decided: None,
                },
                out.content,
            ),
            Err(error) => {
                let answer = format!("Error: {error}");
                let end = ToolEndData { tool: call.name.clone(), round_index: turn.round, error: Some(error), ..ToolEndData::bare(call.id.clone(), ToolStatus::Error) };
                (end, answer)
            }
        };
        let (end, answer) = match (end.proposal_id.clone(), &ctx.approvals) {
            (Some(proposal), Some(approvals)) if end.status == ToolStatus::Proposed => {
                self.pause(&proposal, &end, &answer, approvals.as_ref(), turn, here);
                return Box::pin(self.decided(proposal, end, answer, approvals.as_ref(), ctx, turn, cancel)).await;
            }
            _ => (end, answer),
        };
        let ok = end.status != ToolStatus::Error;
        turn.emit(ChatEvent::ToolEnd(Box::new(end)));
        Some((answer, ok))
    }

    /// An edit held for review pauses the turn: what resuming it needs is
    /// handed over to be kept, and the pause is said.
    fn pause(&self, proposal: &str, end: &ToolEndData, answer: &str, approvals: &dyn Approvals, turn: &mut Turn<'_>, here: &Pausing<'_>) {
        let left = (here.deadline + turn.paused).saturating_duration_since(Instant::now());
        approvals.pause(&PausedTurn {
            messages: here.talk.messages.clone(),
            thoughts: here.talk.thoughts.clone(),
            round: turn.round,
            calls: here.calls.iter().map(PausedCall::from).collect(),
            cut_off: here.cut_off,
            last_word: here.last_word,
            proposal_id: proposal.to_string(),
            end: end.clone(),
            answer: answer.to_string(),
            left_ms: u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
            ids: turn.ids.clone(),
        });
        turn.emit(ChatEvent::AwaitingApproval(Box::new(AwaitingData {
            id: end.id.clone(),
            proposal_id: proposal.to_string(),
            changes: end.changes.clone(),
            digest: end.digest.clone(),
            decisions: end.decisions.clone(),
            round_index: turn.round,
        })));
    }

    /// Waits for the teacher's decision on a paused call's edit; the
    /// decision is the call's answer, and the turn goes on from it. Its end
    /// is said here. Stopped while it waits, the edit stays for later and
    /// the turn stops at the end of the round, unless the process is
    /// stopping: then `None`, and the turn is put aside as it is.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn decided(
        &self,
        proposal: String,
        mut end: ToolEndData,
        answer: String,
        approvals: &dyn Approvals,
        ctx: &ToolContext,
        turn: &mut Turn<'_>,
        cancel: &CancellationToken,
    ) -> Option<(String, bool)> {
        let started = Instant::now();
        let decision = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            d = approvals.decision(&proposal) => Some(d),
        };
        turn.paused += started.elapsed();
        if decision.is_none() && approvals.stopping() {
            return None;
        }
        let proposal_mark = |status, revision, reason| ProposalMark::decided(proposal.clone(), status, revision, reason);
        end.decided = match &decision {
            None | Some(Decision::NotYet) => None,
            Some(Decision::Applied { revision }) => Some(proposal_mark(ProposalStatus::Applied, *revision, None)),
            Some(Decision::Discarded { reason }) => Some(proposal_mark(ProposalStatus::Discarded, None, reason.clone())),
            Some(Decision::Replaced) => Some(proposal_mark(ProposalStatus::Replaced, None, None)),
        };
        let answer = match decision {
            None | Some(Decision::NotYet) => {
                turn.emit(ChatEvent::ToolEnd(Box::new(end)));
                return Some((answer, true));
            }
            Some(Decision::Applied { revision }) => {
                if let Err(e) = ctx.document.reload().await {
                    tracing::warn!(error = %e, "could not read the lesson after an applied edit");
                }
                let version = revision.map(|r| format!(" as version {r}")).unwrap_or_default();
                format!(
                    "The teacher applied this edit{version}. The lesson now reads:\n```xml\n{}```\nGo on with what they asked.",
                    ctx.document.current()
                )
            }
            Some(Decision::Discarded { reason }) => format!(
                "The teacher discarded this edit{}. The lesson is unchanged. Take that into account, and do not send the same edit again.",
                reason.map(|r| format!(", saying: “{r}”")).unwrap_or_default()
            ),
            Some(Decision::Replaced) => "A newer suggestion took this edit's place, so it was not applied. The lesson is unchanged.".to_string(),
        };
        end.output = Some(shown(&answer));
        turn.emit(ChatEvent::ToolEnd(Box::new(end)));
        Some((answer, true))
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
