//! What the scripted model says. The last user message picks a scenario; the
//! number of tool rounds already in the turn picks the step within it. Each
//! scenario exists to exercise one behaviour of the agent, the turn engine or
//! the sidebar; `docs/teaching.md` lists the phrases for the offline demo.

use serde_json::{json, Value};

use super::ScriptState;

mod bench;
mod faults;
mod feedback;
mod lessons;
mod reading;
mod standards;
mod versions;

pub use reading::PLAIN as PLAIN_SENTENCES;
pub use versions::SPANISH as SPANISH_SENTENCES;
mod tutor;

/// One scripted response.
pub enum Step {
    /// A reply streamed in pieces of `piece` characters, `delay_ms` apart.
    Text { text: String, piece: usize, delay_ms: u64 },
    /// Tool calls (after optional text). `interleave` alternates the calls'
    /// argument pieces; `whole` sends each call complete in one chunk;
    /// `finish` is the finish reason (None: the chunk never comes).
    /// `delay_ms` spaces the argument pieces, as a real model writing a long edit would.
    Calls { text_before: Option<String>, calls: Vec<Call>, piece: usize, interleave: bool, whole: bool, finish: Option<&'static str>, delay_ms: u64 },
    /// An HTTP error instead of a stream.
    Fail { status: u16, retry_after: Option<u32>, code: Option<&'static str>, message: &'static str },
    /// Some text, then the connection is cut.
    Drop { text: String },
    /// Some text, then a chunk that is not JSON.
    Malformed { text: String },
    /// Some text, then nothing until the client leaves.
    Hold { text: String },
    /// A tool call announced with the first half of its arguments, then
    /// nothing until the client leaves: a step under way that stays so.
    HoldCall { call: Call },
    /// Some text (and the start of a tool call, if given), then the stream
    /// ends cleanly, with no finish reason and no `[DONE]`: a dropped
    /// connection as a proxy closes it.
    EndEarly { text: String, call: Option<Call> },
    /// Some text, then an error object in the stream (as OpenRouter and
    /// others send one when the model fails mid-reply).
    ErrorMidStream { text: String, error: Value },
    /// The connection is accepted but no answer ever comes.
    Silent,
    /// A reply whose every chunk repeats the running token count.
    RepeatedUsage { text: String },
    /// Reasoning deltas (`reasoning_content`, as DeepSeek sends them), then `then`.
    Reasoned { reasoning: String, then: Box<Step> },
}

pub struct Call {
    pub id: String,
    pub name: String,
    pub args: String,
}

fn text(t: &str) -> Step {
    Step::Text { text: t.to_string(), piece: 6, delay_ms: 0 }
}

fn call(id: &str, name: &str, args: Value) -> Call {
    Call { id: id.into(), name: name.into(), args: args.to_string() }
}

fn calls(list: Vec<Call>) -> Step {
    Step::Calls { text_before: None, calls: list, piece: 7, interleave: false, whole: false, finish: Some("tool_calls"), delay_ms: 0 }
}

fn load(skill: &str) -> Step {
    calls(vec![call("call_skill", "load_skill", json!({ "skill": skill }))])
}

fn edit(xml: String, summary: &str) -> Step {
    calls(vec![call("call_edit", "edit_document", json!({ "documentXml": xml, "summary": summary }))])
}

/// The text of the last user message.
fn last_user(body: &Value) -> String {
    let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|m| match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join(" "),
            _ => String::new(),
        })
        .unwrap_or_default()
}

/// How many assistant rounds came after the last user message, and the last tool result.
fn progress(body: &Value) -> (usize, Option<String>) {
    let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let start = messages.iter().rposition(|m| m.get("role").and_then(Value::as_str) == Some("user")).map(|i| i + 1).unwrap_or(0);
    let after = &messages[start..];
    let rounds = after.iter().filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant")).count();
    let last_tool = after
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
        .and_then(|m| m.get("content").and_then(Value::as_str))
        .map(str::to_string);
    (rounds, last_tool)
}

/// The lesson a student's tutor was given, when the request is a tutor's
/// (its system prompt says so).
fn student_lesson(body: &Value) -> Option<String> {
    let system = body.pointer("/messages/0/content").and_then(Value::as_str)?;
    let rest = &system[system.find("## The lesson the student has open")?..];
    let start = rest.find("xml\n")? + 4;
    let end = rest[start..].find("\n```")? + start;
    Some(rest[start..end].to_string())
}

/// The lesson as given in the system prompt.
fn document(body: &Value) -> String {
    let system = body
        .pointer("/messages/0/content")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let marker = "## The lesson as it is now";
    system
        .find(marker)
        .and_then(|i| {
            let rest = &system[i..];
            let start = rest.find("```xml\n")? + 7;
            let end = rest[start..].find("\n```")? + start;
            Some(rest[start..end].to_string())
        })
        .unwrap_or_else(|| "<lesson>\n</lesson>".into())
}

/// The document with `block` added before `</lesson>`.
fn with_block(doc: &str, block: &str) -> String {
    match doc.rfind("</lesson>") {
        Some(i) => format!("{}{}\n</lesson>\n", doc[..i].trim_end(), block),
        None => format!("<lesson>{block}\n</lesson>\n"),
    }
}

/// What one scenario needs to answer: the request, the script's counters,
/// how many tool rounds the turn has had and the last tool's answer.
struct Ctx<'a> {
    said: &'a str,
    body: &'a Value,
    state: &'a ScriptState,
    round: usize,
    last_tool: Option<String>,
}

/// A scenario: the phrases that pick it (any of them, in the last user
/// message, lower-cased) and what it says. The first that matches wins, so
/// the order matters where one phrase contains another.
struct Scenario {
    says: &'static [&'static str],
    step: fn(&Ctx) -> Step,
}

const SCENARIOS: &[Scenario] = &[
    // First: the message quotes the teacher's own lesson, whose words may
    // be any other scenario's phrase.
    Scenario { says: &["carry the same changes into this version"], step: versions::carry_core_changes },
    Scenario { says: &["translate this lesson into"], step: versions::translate },
    Scenario { says: &["end the stream early"], step: faults::end_the_stream_early },
    Scenario { says: &["cut the edit short"], step: faults::cut_the_edit_short },
    Scenario { says: &["error mid-stream"], step: faults::error_mid_stream },
    Scenario { says: &["throttle me mid-stream"], step: faults::throttle_me_mid_stream },
    Scenario { says: &["stay silent"], step: faults::stay_silent },
    Scenario { says: &["think it through"], step: faults::think_it_through },
    Scenario { says: &["talk about it instead"], step: faults::talk_about_it_instead },
    Scenario { says: &["only think"], step: faults::only_think },
    Scenario { says: &["count tokens repeatedly"], step: faults::count_tokens_repeatedly },
    Scenario { says: &["provider error"], step: faults::provider_error },
    Scenario { says: &["rate limit"], step: faults::rate_limit },
    Scenario { says: &["bad key"], step: faults::bad_key },
    Scenario { says: &["quota"], step: faults::quota },
    Scenario { says: &["drop the connection"], step: faults::drop_the_connection },
    Scenario { says: &["malformed"], step: faults::malformed },
    Scenario { says: &["think and hold"], step: faults::think_and_hold },
    Scenario { says: &["hold on"], step: faults::hold_on },
    Scenario { says: &["ramble and hold"], step: faults::ramble_and_hold },
    Scenario { says: &["write and wait"], step: faults::write_and_wait },
    Scenario { says: &["soak"], step: bench::soak },
    Scenario { says: &["benchmark stream"], step: bench::benchmark_stream },
    Scenario { says: &["benchmark long", "benchmark short"], step: bench::benchmark_long },
    Scenario { says: &["benchmark paced"], step: bench::benchmark_paced },
    Scenario { says: &["benchmark markdown"], step: bench::benchmark_markdown },
    Scenario { says: &["slowly"], step: bench::slowly },
    Scenario { says: &["reading level for grade"], step: reading::to_a_grade },
    Scenario { says: &["align this lesson to the standard"], step: standards::align },
    Scenario { says: &["from memory with "], step: standards::from_memory },
    Scenario { says: &["fill-in-the-blank", "fill in the blank"], step: lessons::fill_in_the_blank },
    Scenario { says: &["what did i decide"], step: lessons::what_did_i_decide },
    Scenario { says: &["do what the lesson says"], step: lessons::do_what_the_lesson_says },
    Scenario { says: &["fix itself"], step: lessons::fix_itself },
    Scenario { says: &["trim it bit by bit"], step: lessons::trim_it_bit_by_bit },
    Scenario { says: &["skill and edit at once"], step: lessons::skill_and_edit_at_once },
    Scenario { says: &["take every kind of step"], step: lessons::every_kind_of_step },
    Scenario { says: &["step by step"], step: lessons::step_by_step },
    Scenario { says: &["and then its answer key"], step: lessons::exercise_then_key },
    Scenario { says: &["as its own lesson", "as its own broken lesson"], step: lessons::as_its_own_lesson },
    Scenario { says: &["the teacher selected this text"], step: lessons::the_teacher_selected_this_text },
    Scenario { says: &["checked their answer sheet"], step: lessons::students_got_answers_wrong },
    Scenario { says: &["improve with these results"], step: lessons::from_the_results },
    Scenario { says: &["\"draft feedback\" on the lesson's results page"], step: feedback::draft_feedback },
    Scenario { says: &["not typed by the teacher"], step: lessons::not_typed_by_the_teacher },
    Scenario { says: &["from my material"], step: lessons::from_my_material },
    Scenario { says: &["quiz about the sun"], step: lessons::quiz_about_the_sun },
    Scenario { says: &["offer something odd"], step: lessons::offer_something_odd },
    Scenario { says: &["add a long reading about rivers"], step: lessons::add_a_long_reading_about_rivers },
    Scenario { says: &["two tools"], step: faults::two_tools },
    Scenario { says: &["tiny pieces"], step: faults::tiny_pieces },
    Scenario { says: &["whole call"], step: faults::whole_call },
    Scenario { says: &["cut off"], step: faults::cut_off },
    Scenario { says: &["list my lessons"], step: lessons::list_my_lessons },
    Scenario { says: &["read lesson "], step: lessons::read_lesson_by_id },
    Scenario { says: &["how did my class do"], step: lessons::from_the_results },
    Scenario { says: &["unknown tool"], step: faults::unknown_tool },
    Scenario { says: &["keep going"], step: faults::keep_going },
    Scenario { says: &["unsafe"], step: lessons::unsafe_reply },
    Scenario { says: &["long answer"], step: lessons::long_answer },
    Scenario { says: &["what types of exercises", "what can you"], step: lessons::what_types_of_exercises },
    Scenario { says: &["add an exercise"], step: lessons::add_an_exercise },
    Scenario { says: &["explain this lesson"], step: lessons::explain_this_lesson },
    Scenario { says: &["check my exercises"], step: lessons::check_my_exercises },
];

pub fn decide(body: &Value, state: &ScriptState) -> Step {
    let said = last_user(body).to_lowercase();
    let (round, last_tool) = progress(body);
    // The safety check's second opinion (`server::safety::opinion`): a
    // word, as a careful model would answer.
    if body["messages"][0]["content"].as_str().is_some_and(|s| s.starts_with("You help keep students safe")) {
        let worrying = ["hate myself", "disappear", "can't go on"].iter().any(|w| said.contains(w));
        return text(if worrying { "harm" } else { "none" });
    }
    if let Some(lesson) = student_lesson(body) {
        return tutor::tutor(&said, &lesson, round, last_tool.as_deref());
    }
    if let Some(scenario) = SCENARIOS.iter().find(|s| s.says.iter().any(|p| said.contains(p))) {
        return (scenario.step)(&Ctx { said: &said, body, state, round, last_tool });
    }
    if said.trim() == "test" || said.contains("hello") || said.starts_with("hi") {
        return text("Hello! I'm here and ready to help with this lesson. Ask me a question, or tell me what to add or change.");
    }
    text("I'm the offline demo model, so my answers are scripted. Try: \"Add a fill-in-the-blank exercise about French verbs\" or \"What types of exercises can you create?\".")
}

