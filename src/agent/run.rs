//! The agent loop. One turn: stream a round and pass its text on as it comes;
//! gather the tool calls from the deltas; run them, each answered by id; feed
//! the results back; repeat until a round calls no tool or the step cap is
//! reached. Everything is reported as `ChatEvent`s and folded into the turn's
//! `TurnRecord` on the way; the caller adds the final `done`, `cancelled` or
//! `error` once it has stored the result.

use std::sync::Arc;

use async_openai::types::chat::ChatCompletionRequestMessage;
use tokio::{sync::mpsc::UnboundedSender, time::Instant};
use tokio_util::sync::CancellationToken;

mod once;
mod round;
pub mod unchanged;

use round::{Pausing, Talk, Turn};

use super::{
    assemble::AssembledCall,
    config::{AiConfig, Limits},
    context::{self, Budget},
    meter::{estimate_tokens, Meter},
    pause::PausedTurn,
    prompt::{self, PastMessage},
    provider::{Provider, ProviderError},
    skills::Skills,
    tools::{ToolContext, ToolRegistry},
};
use crate::chat::{
    events::{ChatEvent, RoundData, TextDoneData},
    turn::TurnRecord,
};

/// What a call is reserved for when `AI_MAX_TOKENS` is not set.
const UNCAPPED_OUTPUT: u32 = 16_384;

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
    /// Paused on a held edit when the process stopped: not ended, but put
    /// aside (stored) for another process to resume (`Agent::resume_turn`).
    Parked,
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
    /// The same without `read_source`, for a lesson with no material: a
    /// tool that has nothing to read is not described to the model (every
    /// call carries the definitions; a small model's server reads each).
    definitions_without_material: Vec<async_openai::types::chat::ChatCompletionTools>,
    skills: Arc<Skills>,
    base_prompt: String,
    /// The size of the system prompt without a lesson and of the tool
    /// definitions, as sent, for reservations.
    prompt_bytes: usize,
    max_steps: u32,
    limits: Limits,
    /// Bytes per token of the provider's models (`context`).
    bytes_per_token: f64,
    /// A student's tutor (`Agent::tutor`) rather than the teacher's colleague.
    tutor: bool,
}

/// A prompt file under the prompts folder.
fn read_prompt(config: &AiConfig, name: &str) -> Result<String, String> {
    let path = config.prompts_dir.join(name);
    std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

impl Agent {
    /// Reads the base prompt and the skills from the prompts folder.
    pub fn new(config: &AiConfig) -> Result<Self, String> {
        let base_prompt = read_prompt(config, "chat/base.md")?;
        let skills = Arc::new(Skills::load(&config.prompts_dir.join("chat/skills"))?);
        let tools = ToolRegistry::standard(skills.clone());
        Ok(Self::build(config, base_prompt, skills, tools, false))
    }

    /// The teacher's agent for a "Draft feedback" turn: its own prompt
    /// (`prompts/feedback/base.md`: the teacher's says the assistant marks
    /// no work, which this one drafts), the teacher's skills, and their
    /// tools with those that read students' open answers and keep drafts
    /// (`ToolRegistry::feedback`).
    pub fn feedback(config: &AiConfig) -> Result<Self, String> {
        let base_prompt = read_prompt(config, "feedback/base.md")?;
        let skills = Arc::new(Skills::load(&config.prompts_dir.join("chat/skills"))?);
        let tools = ToolRegistry::feedback(skills.clone());
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
        let definitions_without_material =
            definitions.iter().filter(|d| !matches!(d, async_openai::types::chat::ChatCompletionTools::Function(f) if f.function.name == "read_source")).cloned().collect();
        let empty = if tutor { prompt::tutor_system_prompt(&base_prompt, "", None) } else { prompt::system_prompt(&base_prompt, "", &[]) };
        Self {
            provider: Provider::new(config),
            prompt_bytes: serde_json::to_vec(&definitions).map_or(0, |v| v.len()) + empty.len(),
            definitions,
            definitions_without_material,
            tools,
            skills,
            base_prompt,
            max_steps: config.max_steps.max(1),
            bytes_per_token: context::bytes_per_token(config.provider),
            limits: config.limits.clone(),
            tutor,
        }
    }

    /// The same agent on the model whose window `other` knows: every
    /// agent of a server learns the window together.
    pub fn sharing_window_of(mut self, other: &Agent) -> Self {
        self.provider = self.provider.with_window(other.provider.window().clone());
        self
    }

    /// Asks the model's server for its context window (`provider::window`).
    pub async fn read_window(&self) -> Option<u32> {
        self.provider.read_window().await
    }

    /// The model's context window, in tokens, as known now.
    pub fn window(&self) -> u32 {
        self.provider.window().get()
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
            let last_check = ctx.student.as_ref().and_then(|d| d.last_check());
            return prompt::system(prompt::tutor_system_prompt(&self.base_prompt, &ctx.document.current(), last_check));
        }
        prompt::system(prompt::system_prompt(&self.base_prompt, &ctx.document.current(), &ctx.document.sources()))
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
        let mut turn = Turn::new(events, TurnRecord::default(), 1, Vec::new());
        // What fits in the model's window: the lesson and the question whole,
        // as much of the conversation as there is room for.
        // The sources are listed in every call's prompt (their text is read a page at a time).
        let listed: usize = ctx.document.sources().iter().map(|s| s.id.len() + s.name.len() + s.opening.len() + 40).sum();
        let fixed = self.prompt_bytes + ctx.document.current().len() + listed + request.user_text.len();
        // The window as the server last said (`provider::window`).
        let context = Budget { window: self.provider.window().get(), bytes_per_token: self.bytes_per_token };
        let reply_room = self.max_output().min(context.window / 4);
        let history = match context.fit(request.history, fixed, reply_room) {
            Ok(history) => history,
            Err(e) => return turn.ended(TurnOutcome::Failed(e)),
        };
        // The conversation without the system prompt: that is written anew
        // for every model call (it holds the lesson as it is then) and not
        // kept between calls.
        let mut talk = Talk { messages: prompt::turn_messages(&history, &request.user_text), thoughts: Vec::new() };
        let deadline = Instant::now() + self.limits.turn_timeout;
        match Box::pin(self.rounds(&mut talk, 1, deadline, ctx, &mut turn, cancel, meter)).await {
            Ok(()) | Err(TurnOutcome::Complete) => self.finished(turn, Some(&request.user_text)),
            Err(outcome) => turn.ended(outcome),
        }
    }

    /// A turn whose rounds ended well, with what it did not do said
    /// (`unchanged`): nothing to show is a failure to retry; a teacher's
    /// request (`said`) or a claim the reply makes, with no change made,
    /// ends with a line that says so.
    fn finished(&self, mut turn: Turn<'_>, said: Option<&str>) -> TurnResult {
        if let Some(e) = unchanged::empty(&turn.result.record) {
            return turn.ended(TurnOutcome::Failed(e));
        }
        if !self.tutor && said.is_some_and(|said| unchanged::should_say_unchanged(&turn.result.record, said)) {
            turn.note(unchanged::NOT_CHANGED);
        }
        turn.ended(TurnOutcome::Complete)
    }

    /// Goes on with a turn that paused on a held edit (`PausedTurn`), in
    /// this process or another: waits for the teacher's decision (unless it
    /// already came), answers the paused call with it, runs the rest of
    /// that round's calls and then the rounds after, as `run_turn` would
    /// have. `record` is the turn's record as stored at the pause; the
    /// events go on from there.
    pub async fn resume_turn(
        &self,
        paused: PausedTurn,
        record: TurnRecord,
        ctx: &ToolContext,
        events: &UnboundedSender<ChatEvent>,
        cancel: &CancellationToken,
        meter: &dyn Meter,
    ) -> TurnResult {
        let PausedTurn { messages, thoughts, round, calls, cut_off, last_word, proposal_id, end, answer, left_ms, ids } = paused;
        let mut turn = Turn::new(events, record, round, ids);
        let mut talk = Talk { messages, thoughts };
        let deadline = Instant::now() + std::time::Duration::from_millis(left_ms);
        let calls: Vec<AssembledCall> = calls.into_iter().map(Into::into).collect();
        let (Some(approvals), Some(paused_call)) = (ctx.approvals.clone(), calls.first()) else {
            return turn.ended(TurnOutcome::Failed(ProviderError::new("not_resumable", "This reply cannot go on here.".to_string())));
        };
        let ended = async {
            let Some((answer, ok)) = self.decided(proposal_id, end, answer, approvals.as_ref(), ctx, &mut turn, cancel).await else {
                return Err(TurnOutcome::Parked);
            };
            let last_word = last_word && ok && self.tools.ends_turn(&paused_call.name);
            talk.messages.push(prompt::tool_result(&paused_call.id, answer));
            let last_word = self.run_calls(&mut talk, &calls, 1, cut_off, last_word, deadline, ctx, &mut turn, cancel).await?;
            self.after_round(last_word, deadline, &turn, cancel)?;
            Box::pin(self.rounds(&mut talk, round + 1, deadline, ctx, &mut turn, cancel, meter)).await
        };
        match Box::pin(ended).await {
            // Its request was answered with a change held for review.
            Ok(()) | Err(TurnOutcome::Complete) => self.finished(turn, None),
            Err(outcome) => turn.ended(outcome),
        }
    }

    /// Rounds from `first` on until one calls no tool, something ends the
    /// turn (`Err`: how), or the step cap is reached (`Ok`, with a note).
    #[allow(clippy::too_many_arguments)]
    async fn rounds(
        &self,
        talk: &mut Talk,
        first: u32,
        deadline: Instant,
        ctx: &ToolContext,
        turn: &mut Turn<'_>,
        cancel: &CancellationToken,
        meter: &dyn Meter,
    ) -> Result<(), TurnOutcome> {
        for round in first..=self.max_steps {
            turn.round = round;
            // Boxed, as is the tool call below: a future is as large as its
            // largest await, and a turn spends its life streaming.
            // Time spent waiting for the teacher's decisions does not count.
            let round_deadline = deadline + turn.paused;
            let r = Box::pin(self.stream_round(&talk.messages, &talk.thoughts, ctx, turn, cancel, round_deadline, meter)).await?;
            let finish = r.finish.as_deref().unwrap_or("none");
            if !r.text.is_empty() {
                turn.emit(ChatEvent::AssistantTextDone(Box::new(TextDoneData { full_text: r.text.clone(), round_index: round })));
            }
            turn.emit(ChatEvent::RoundFinished(RoundData { round, finish_reason: finish.into() }));
            if r.calls.is_empty() {
                match finish {
                    "length" => turn.note("(The reply was cut off: it reached the provider's length limit.)"),
                    "content_filter" => turn.note("(The provider's content filter stopped this reply.)"),
                    _ => {}
                }
                return Err(TurnOutcome::Complete);
            }
            if r.reasoning_content && !r.reasoning.is_empty() {
                talk.thoughts.push((talk.messages.len(), r.reasoning));
            }
            talk.messages.push(prompt::assistant(r.text, &r.calls));
            // A round that only offered what to do next, successfully, after
            // the reply was written, is the turn's end: nothing is left for
            // the model to say.
            let last_word = !turn.result.record.text.is_empty();
            // Cut off by the output cap, a call is not what the model
            // meant, even when it happens to parse: it is not run.
            let cut_off = finish == "length";
            self.announce_inputs(&r.calls, turn);
            let last_word = self.run_calls(talk, &r.calls, 0, cut_off, last_word, deadline, ctx, turn, cancel).await?;
            self.after_round(last_word, deadline, turn, cancel)?;
        }
        turn.note(&format!("I stopped after {} steps without finishing. Tell me to go on if you want me to continue.", self.max_steps));
        turn.result.hit_step_cap = true;
        Ok(())
    }

    /// Runs a round's calls from `from` on, each answered in `talk`; returns
    /// whether all of them only offered what to do next (`last_word` so far).
    #[allow(clippy::too_many_arguments)]
    async fn run_calls(
        &self,
        talk: &mut Talk,
        calls: &[AssembledCall],
        from: usize,
        cut_off: bool,
        mut last_word: bool,
        deadline: Instant,
        ctx: &ToolContext,
        turn: &mut Turn<'_>,
        cancel: &CancellationToken,
    ) -> Result<bool, TurnOutcome> {
        for (i, call) in calls.iter().enumerate().skip(from) {
            let here = Pausing { talk, calls: &calls[i..], cut_off, last_word, deadline };
            let (answer, ok) = self.run_call(call, cut_off, ctx, turn, cancel, &here).await.ok_or(TurnOutcome::Parked)?;
            last_word &= ok && self.tools.ends_turn(&call.name);
            talk.messages.push(prompt::tool_result(&call.id, answer));
        }
        Ok(last_word)
    }

    /// After a round's calls: the turn ends when they were its last word,
    /// when it was stopped (between rounds, never in the middle of a tool),
    /// or when its time is up.
    fn after_round(&self, last_word: bool, deadline: Instant, turn: &Turn<'_>, cancel: &CancellationToken) -> Result<(), TurnOutcome> {
        if last_word {
            return Err(TurnOutcome::Complete);
        }
        if cancel.is_cancelled() {
            return Err(TurnOutcome::Cancelled);
        }
        if Instant::now() >= deadline + turn.paused {
            return Err(TurnOutcome::Failed(self.turn_too_long()));
        }
        Ok(())
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
}
