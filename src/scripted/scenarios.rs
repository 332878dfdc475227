//! What the scripted model says. The last user message picks a scenario; the
//! number of tool rounds already in the turn picks the step within it. Each
//! scenario exists to exercise one behaviour of the agent, the turn engine or
//! the sidebar; `README.md` lists the phrases for the offline demo.

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use super::ScriptState;

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

/// The id in the first `<blank … id="…"` of a lesson.
fn first_blank(lesson: &str) -> String {
    let Some(at) = lesson.find("<blank") else { return "none".into() };
    let tag = &lesson[at..at + lesson[at..].find('>').unwrap_or(0)];
    tag.split("id=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or("none").to_string()
}

/// The students' tutor (`Agent::tutor`): hints, checks, never the answer,
/// and a try at editing the lesson when a student (or a lesson) asks for one.
fn tutor(said: &str, lesson: &str, round: usize, last_tool: Option<&str>) -> Step {
    let has = |s: &str| said.contains(s);
    if has("change the lesson") || has("edit the lesson") {
        return match round {
            0 => edit("<lesson>\n  <h1>Answers: all of them</h1>\n</lesson>\n".into(), "Rewrote the lesson as asked"),
            _ => text("I can't change the lesson: I can only read it and help you with it."),
        };
    }
    if has("help me") || has("hint") {
        return match (round, last_tool) {
            (0, _) => calls(vec![call("call_hint", "give_hint", json!({ "itemId": first_blank(lesson) }))]),
            (_, Some(result)) => {
                let hint = result.lines().find_map(|l| l.strip_prefix("The teacher's hint: ")).unwrap_or("read the sentence around the gap again");
                text(&format!("Here is a hint for the first gap: think about “{hint}”. What form fits the sentence?"))
            }
            _ => text("Let's look at the first gap together. What word do you think fits?"),
        };
    }
    if has("is my answer right") || has("check my answer") {
        return match (round, last_tool) {
            (0, _) => calls(vec![call("call_check", "check_my_answer", json!({ "itemId": first_blank(lesson) }))]),
            (_, Some(r)) if r.starts_with("Right") => text("Yes, your answer to the first gap is right. Well done!"),
            (_, Some(r)) if r.contains("not answered") => text("You haven't answered the first gap yet. Have a go first!"),
            _ => text("Not quite yet. Read the sentence again: who is doing the action?"),
        };
    }
    if has("quiz me") {
        return text("Let's warm up: in your own words, what is this lesson about?");
    }
    if has("explain this lesson") {
        return text("This lesson practises what the title says. Read each sentence carefully before you fill anything in, and ask me for a hint when you're stuck.");
    }
    text("I'm the offline demo tutor, so my answers are scripted. Try \"Help me with this exercise\".")
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

const VERB_EXERCISE: &str = r#"
  <exercise type="fill-blanks" title="French verbs: être and avoir">
    <instructions>Write the correct present-tense form of the verb in brackets.</instructions>
    <p>Je <blank answer="suis" hint="être"/> en retard ce matin.</p>
    <p>Nous <blank answer="avons" hint="avoir"/> un petit chat.</p>
    <p>Ils <blank answer="sont" alts="sont bien" hint="être"/> contents de partir.</p>
  </exercise>"#;

const BROKEN_EXERCISE: &str = r#"
  <exercise type="true-false">
    <statement>The sun is a star.</statement>
  </exercise>"#;

const FIXED_EXERCISE: &str = r#"
  <exercise type="true-false">
    <statement answer="true">The sun is a star.</statement>
    <statement answer="false">The moon makes its own light.</statement>
  </exercise>"#;

const CAPABILITIES: &str = "I can write these kinds of exercises for your lesson:\n\n\
- **Fill in the blanks**: sentences with gaps, with accepted answers and hints\n\
- **Multiple choice**: questions with one or several right options\n\
- **True or false**: statements to judge\n\
- **Put in order**: steps or events to sequence\n\
- **Short answer**: open questions, with a model answer for you\n\
- **Writing**: longer tasks with space to write\n\n\
Tell me the topic and the kind, and I'll add one.";

const LONG_REPLY: &str = "# Planning a lesson on the water cycle\n\n\
Here is a plan you could follow over **two lessons**.\n\n\
## Lesson one\n\n\
1. Start with a question: *where does rain come from?*\n\
2. Show a diagram and name the four stages.\n\
3. Let pupils act out the cycle in small groups.\n\n\
## Lesson two\n\n\
- Recap with a quick true-or-false round\n\
- Run the evaporation experiment\n\
- Finish with a short written explanation\n\n\
### Timing\n\n\
| Part | Minutes |\n\
|------|---------|\n\
| Starter | 5 |\n\
| Main activity | 25 |\n\
| Plenary | 10 |\n\n\
### A formula to share\n\n\
```text\n\
evaporation -> condensation -> precipitation -> collection\n\
```\n\n\
> Tip: keep the diagram on the board for both lessons.\n\n\
That should give you a calm, well-paced pair of lessons.";

const UNSAFE_REPLY: &str = "Here is some markup to show safely: <img src=x onerror=alert(1)> and <script>alert(1)</script>.\n\n\
A [bad link](javascript:alert(1)), a [data link](data:text/html,<b>x</b>), a [good link](https://example.org) and an image ![pixel](https://example.org/pixel.png).";

pub fn decide(body: &Value, state: &ScriptState) -> Step {
    let said = last_user(body).to_lowercase();
    let (round, last_tool) = progress(body);
    let has = |s: &str| said.contains(s);
    if let Some(lesson) = student_lesson(body) {
        return tutor(&said, &lesson, round, last_tool.as_deref());
    }

    if has("end the stream early") {
        return Step::EndEarly { text: "Here is the first half of".into(), call: None };
    }
    if has("cut the edit short") {
        let call = Call { id: "call_half".into(), name: "edit_document".into(), args: r#"{"documentXml":"<lesson><h1>Gone</h1></lesson>","summary":"Replaced everything"}"#.into() };
        return Step::EndEarly { text: "I'll rewrite it.".into(), call: Some(call) };
    }
    if has("error mid-stream") {
        let error = json!({ "message": "Upstream model overloaded (provider detail)", "type": "server_error", "code": 502 });
        return Step::ErrorMidStream { text: "Let me think about".into(), error };
    }
    if has("throttle me mid-stream") {
        let error = json!({ "message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded" });
        return Step::ErrorMidStream { text: "Sure, ".into(), error };
    }
    if has("stay silent") {
        return Step::Silent;
    }
    if has("think it through") {
        return match round {
            0 => Step::Reasoned {
                reasoning: "The teacher wants a true-or-false exercise. I should read the rules first.".into(),
                then: Box::new(load("true-false")),
            },
            _ => Step::Reasoned {
                reasoning: " Rules read; now ask about the topic.".into(),
                then: Box::new(text("I read the true-or-false rules. Which topic should the statements cover?")),
            },
        };
    }
    if has("count tokens repeatedly") {
        return Step::RepeatedUsage { text: "One, two, three.".into() };
    }
    if has("provider error") {
        // Fails (503) until the retries are used up once; a later try succeeds.
        if state.unavailable_left.load(Ordering::SeqCst) > 0 {
            state.unavailable_left.fetch_sub(1, Ordering::SeqCst);
            return Step::Fail { status: 503, retry_after: None, code: None, message: "The scripted model is unavailable." };
        }
        return text("The provider is back. What would you like to do with the lesson?");
    }
    if has("rate limit") {
        if state.rate_limited_left.load(Ordering::SeqCst) > 0 {
            state.rate_limited_left.fetch_sub(1, Ordering::SeqCst);
            return Step::Fail { status: 429, retry_after: Some(1), code: Some("rate_limit_exceeded"), message: "Slow down." };
        }
        return text("Thanks for waiting. I'm here now.");
    }
    if has("bad key") {
        return Step::Fail { status: 401, retry_after: None, code: Some("invalid_api_key"), message: "Incorrect API key provided." };
    }
    if has("quota") {
        return Step::Fail { status: 429, retry_after: None, code: Some("insufficient_quota"), message: "You exceeded your current quota." };
    }
    if has("drop the connection") {
        return Step::Drop { text: "Let me look at the lesson and".into() };
    }
    if has("malformed") {
        return Step::Malformed { text: "Starting to".into() };
    }
    if has("think and hold") {
        // Reasoning, a few words, then silence: a turn that is still running
        // with thoughts that only a checkpoint has stored.
        return Step::Reasoned {
            reasoning: "The teacher asked me to wait; let me weigh the options first.".into(),
            then: Box::new(Step::Hold { text: "Still working on it".into() }),
        };
    }
    if has("hold on") {
        return Step::Hold { text: "Thinking about this carefully, one moment".into() };
    }
    if has("soak") {
        // A reply written over a minute, a word a second, for `make soak`.
        return Step::Text { text: "word ".repeat(60), piece: 5, delay_ms: 1000 };
    }
    if has("benchmark stream") {
        // 20,000 one-character deltas, for `make bench`.
        return Step::Text { text: "abcdefghij".repeat(2_000), piece: 1, delay_ms: 0 };
    }
    if has("benchmark long") || has("benchmark short") {
        // Replies of 100,000 and 20,000 characters, five per delta, about a
        // millisecond apart (as a fast model writes), for `make bench`: the
        // server's work per delta must not grow with the reply's length.
        let tens = if has("benchmark long") { 10_000 } else { 2_000 };
        return Step::Text { text: "abcdefghij".repeat(tens), piece: 5, delay_ms: 1 };
    }
    if has("benchmark paced") {
        // A reply written over six seconds (600 deltas, 10 ms apart), for the
        // many-turns-at-once part of `make bench`.
        return Step::Text { text: "abcdefghij".repeat(600), piece: 10, delay_ms: 10 };
    }
    if has("benchmark markdown") {
        // 20,000 characters of markdown, one character per chunk about a
        // millisecond apart, for the sidebar benchmark (`make bench-ui`).
        return Step::Text { text: bench_markdown(20_000), piece: 1, delay_ms: 1 };
    }
    if has("slowly") {
        let reply = "Here is a careful answer. ".repeat(12);
        return Step::Text { text: reply.trim_end().to_string(), piece: 4, delay_ms: 40 };
    }
    if has("fill-in-the-blank") || has("fill in the blank") {
        return match round {
            0 => load("fill-blanks"),
            1 => match edit(with_block(&document(body), VERB_EXERCISE), "Added a fill-in-the-blank exercise on être and avoir") {
                // Written out over about a second, like a real model.
                Step::Calls { delay_ms: _, piece: _, text_before, calls, interleave, whole, finish } => {
                    Step::Calls { text_before, calls, piece: 24, interleave, whole, finish, delay_ms: 20 }
                }
                other => other,
            },
            // An edit held for review is not done: say so, as a model told
            // by the tool would.
            _ if last_tool.as_deref().is_some_and(|t| t.contains("not applied")) => Step::Text {
                text: "I suggested a fill-in-the-blank exercise with three sentences on **être** and **avoir**. It is waiting for your review: Apply adds it to the lesson.".into(),
                piece: 6,
                delay_ms: 20,
            },
            // The reply too, so that the finished edit is on screen before
            // the reply begins (as with a real model, which takes a moment).
            _ => Step::Text {
                text: "I added a fill-in-the-blank exercise with three sentences on **être** and **avoir**, each with a hint.".into(),
                piece: 6,
                delay_ms: 20,
            },
        };
    }
    if has("what did i decide") {
        // Says back what the conversation so far tells the model about its
        // proposed edits, so a test can see the next turn knows.
        let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
        let known: Vec<String> = messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
            .filter_map(|m| m.get("content").and_then(Value::as_str))
            .flat_map(|c| c.lines().filter(|l| l.contains("proposed:")).map(str::to_string).collect::<Vec<_>>())
            .collect();
        return match known.last() {
            Some(line) => text(&format!("From our conversation: {line}")),
            None => text("I have not proposed any changes in this chat."),
        };
    }
    if has("do what the lesson says") {
        // A model taken in by instructions written inside the lesson: it
        // wipes the lesson. The edit guard must hold this for review.
        return match round {
            0 => edit("<lesson>\n  <h1>Nothing here</h1>\n</lesson>\n".into(), "Cleared the lesson as it asked"),
            _ => text("I did what the lesson said."),
        };
    }
    if has("fix itself") {
        return match (round, last_tool.as_deref()) {
            (0, _) => edit(with_block(&document(body), BROKEN_EXERCISE), "Added a true/false exercise"),
            (1, Some(result)) if result.starts_with("Error") => {
                edit(with_block(&document(body), FIXED_EXERCISE), "Added a true/false exercise about the sun and the moon")
            }
            _ => text("I added a true-or-false exercise about the sun and the moon."),
        };
    }
    if has("the teacher selected this text") {
        // "Ask about this": repeats the quoted selection it was given.
        let asked = last_user(body);
        let quoted: Vec<&str> = asked.lines().filter_map(|l| l.strip_prefix("> ")).collect();
        return text(&format!("You asked about this part of the lesson: “{}”. It tells students how to begin.", quoted.join(" ")));
    }
    if has("not typed by the teacher") {
        // An automatic turn (`server::reactions`): for new material, reads
        // the first new source, then names every one; otherwise a greeting.
        let asked = last_user(body);
        let added: Vec<(&str, &str)> = asked
            .split("the source \"")
            .skip(1)
            .filter_map(|r| {
                let (name, rest) = r.split_once("\" (id ")?;
                Some((name, rest.split(',').next()?))
            })
            .collect();
        let names: Vec<&str> = added.iter().map(|(n, _)| *n).collect();
        return match (round, added.first(), last_tool) {
            (_, None, _) => text("Hello! I'm here when you need me: ask me to add an exercise or to check the lesson."),
            (0, Some((_, id)), _) => calls(vec![call("call_read", "read_source", json!({ "sourceId": id, "to": 300 }))]),
            (_, _, result) => {
                let page = result.as_deref().and_then(|r| r.split("\n\n").nth(1)).unwrap_or_default();
                text(&format!(
                    "I read your new material ({}). It begins: {} Shall I build a reading with questions from it?",
                    names.join(", "),
                    page.lines().next().unwrap_or_default()
                ))
            }
        };
    }
    if has("from my material") {
        // Reads the first source the prompt lists, then says what it read.
        let system = body.pointer("/messages/0/content").and_then(Value::as_str).unwrap_or_default();
        let first = system.lines().find_map(|l| l.strip_prefix("- id ").and_then(|r| r.split(':').next())).map(str::to_string);
        return match (round, first, last_tool) {
            (_, None, _) => text("I can't see any material for this lesson. Add some with \"Add material\" and ask me again."),
            (0, Some(id), _) => calls(vec![call("call_read", "read_source", json!({ "sourceId": id, "to": 300 }))]),
            (_, _, Some(result)) => {
                let page = result.split("\n\n").nth(1).unwrap_or_default();
                text(&format!("From your material: {}", page.lines().next().unwrap_or_default()))
            }
            _ => text("I could not read your material."),
        };
    }
    if has("quiz about the sun") {
        // An edit, then the reply with what to do next offered as buttons
        // (one call with the reply's text: the turn ends there).
        return match round {
            0 => load("true-false"),
            1 => edit(with_block(&document(body), FIXED_EXERCISE), "Added a true/false quiz about the sun and the moon"),
            _ => Step::Calls {
                text_before: Some("I added a true-or-false quiz with two statements about the sun and the moon.".into()),
                calls: vec![call(
                    "call_next",
                    "suggest_next",
                    json!({
                        "replies": ["Add two more statements", "Make it harder"],
                        "actions": [{ "name": "student_preview" }, { "name": "undo_edit" }, { "name": "print" }, { "name": "print", "answerKey": true }]
                    }),
                )],
                piece: 9,
                interleave: false,
                whole: false,
                finish: Some("tool_calls"),
                delay_ms: 0,
            },
        };
    }
    if has("offer something odd") {
        // An action the page does not have: refused, then offered properly.
        return match (round, last_tool.as_deref()) {
            (0, _) => Step::Calls {
                text_before: Some("Here you are.".into()),
                calls: vec![call("call_odd", "suggest_next", json!({ "actions": [{ "name": "publish_lesson" }] }))],
                piece: 9,
                interleave: false,
                whole: false,
                finish: Some("tool_calls"),
                delay_ms: 0,
            },
            (1, Some(result)) if result.starts_with("Error") => calls(vec![call("call_ok", "suggest_next", json!({ "replies": ["Show me the lesson"] }))]),
            _ => text("Done."),
        };
    }
    if has("add a long reading about rivers") {
        // A long edit written out over a few seconds, as a real model
        // writes a whole lesson: its step reports progress as it comes.
        let paragraphs: String = (1..=40).map(|n| format!("\n  <p>Paragraph {n} of a long reading about rivers, deltas and the sea.</p>")).collect();
        return match round {
            0 => match edit(with_block(&document(body), &paragraphs), "Added a long reading about rivers") {
                Step::Calls { text_before, calls, interleave, whole, finish, .. } => {
                    Step::Calls { text_before, calls, piece: 64, interleave, whole, finish, delay_ms: 40 }
                }
                other => other,
            },
            _ => text("I added a long reading about rivers."),
        };
    }
    if has("two tools") {
        return match round {
            0 => Step::Calls {
                text_before: Some("Let me check both sets of rules.".into()),
                calls: vec![
                    call("call_a", "load_skill", json!({ "skill": "multiple-choice" })),
                    call("call_b", "load_skill", json!({ "skill": "true-false" })),
                ],
                piece: 3,
                interleave: true,
                whole: false,
                finish: Some("tool_calls"),
                delay_ms: 0,
            },
            _ => text("I have the rules for both kinds. Which topic should the questions cover?"),
        };
    }
    if has("tiny pieces") {
        return match round {
            0 => Step::Calls {
                text_before: None,
                calls: vec![call("call_tiny", "load_skill", json!({ "skill": "sequencing" }))],
                piece: 1,
                interleave: false,
                whole: false,
                finish: Some("tool_calls"),
                delay_ms: 0,
            },
            _ => Step::Text { text: "Got the sequencing rules.".into(), piece: 1, delay_ms: 0 },
        };
    }
    if has("whole call") {
        return match round {
            0 => Step::Calls {
                text_before: None,
                calls: vec![call("call_whole", "load_skill", json!({ "skill": "true-false" }))],
                piece: 1,
                interleave: false,
                whole: true,
                finish: None,
                delay_ms: 0,
            },
            _ => text("Loaded the true-or-false rules in one go."),
        };
    }
    if has("cut off") {
        return match round {
            0 => Step::Calls {
                text_before: None,
                calls: vec![Call { id: "call_cut".into(), name: "edit_document".into(), args: r#"{"documentXml":"<lesson><p>Half a"#.into() }],
                piece: 5,
                interleave: false,
                whole: false,
                finish: Some("length"),
                delay_ms: 0,
            },
            _ => text("My last edit was cut off, so nothing changed. Shall I try a shorter version?"),
        };
    }
    if has("list my lessons") {
        return match (round, last_tool) {
            (0, _) => calls(vec![call("call_list", "list_lessons", json!({}))]),
            (_, Some(listed)) => text(&format!("Here are your lessons:\n\n{listed}")),
            _ => text("I could not list your lessons."),
        };
    }
    if has("unknown tool") {
        return match round {
            0 => calls(vec![call("call_unknown", "publish_lesson", json!({ "to": "everyone" }))]),
            _ => text("I can't publish lessons; that isn't something I'm able to do."),
        };
    }
    if has("keep going") {
        return load("fill-blanks");
    }
    if has("unsafe") {
        return text(UNSAFE_REPLY);
    }
    if has("long answer") {
        return text(LONG_REPLY);
    }
    if has("what types of exercises") || has("what can you") {
        return text(CAPABILITIES);
    }
    if has("add an exercise") {
        return text("Happy to. What kind of exercise would you like (for example fill in the blanks, multiple choice or true or false), and on which part of the lesson?");
    }
    if has("explain this lesson") {
        return text("This lesson opens with a title and a short introduction. Add some exercises and I can tell you how they fit together.");
    }
    if has("check my exercises") {
        return text("I looked through the lesson: every exercise passes the checks. Ask me to add more if you'd like.");
    }
    if said.trim() == "test" || has("hello") || said.starts_with("hi") {
        return text("Hello! I'm here and ready to help with this lesson. Ask me a question, or tell me what to add or change.");
    }
    text("I'm the offline demo model, so my answers are scripted. Try: \"Add a fill-in-the-blank exercise about French verbs\" or \"What types of exercises can you create?\".")
}

/// A long, varied markdown reply (headings, paragraphs with inline styles and
/// links, lists, quotes, code) cut to exactly `len` ASCII characters.
pub fn bench_markdown(len: usize) -> String {
    let mut out = String::with_capacity(len + 512);
    let mut n = 0;
    while out.len() < len {
        n += 1;
        out.push_str(&format!(
            "## Part {n}: reading closely\n\n\
             Read the passage **twice**, then note *three* words you do not know. \
             Compare your list with a partner and look up the rest in [a dictionary](https://example.org/words/{n}).\n\n\
             - Underline the main idea of paragraph {n}.\n\
             - Circle every verb in the past tense.\n\
             - Write one question you would ask the author.\n\n\
             > A good reader asks questions before, during and after reading.\n\n\
             1. Summarise the text in `two sentences`.\n\
             2. Share your summary with the class.\n\n"
        ));
    }
    out.truncate(len);
    out
}
