//! Scenarios that exercise how a provider fails or streams oddly: cut
//! connections, errors in the stream, refusals, silence, calls in pieces.

use serde_json::json;
use std::sync::atomic::Ordering;
use super::{call, calls, load, text, Call, Ctx, Step};

pub(super) fn end_the_stream_early(_: &Ctx) -> Step {
    Step::EndEarly { text: "Here is the first half of".into(), call: None }
}

pub(super) fn cut_the_edit_short(_: &Ctx) -> Step {
    let call = Call { id: "call_half".into(), name: "edit_document".into(), args: r#"{"documentXml":"<lesson><h1>Gone</h1></lesson>","summary":"Replaced everything"}"#.into() };
    Step::EndEarly { text: "I'll rewrite it.".into(), call: Some(call) }
}

pub(super) fn error_mid_stream(_: &Ctx) -> Step {
    let error = json!({ "message": "Upstream model overloaded (provider detail)", "type": "server_error", "code": 502 });
    Step::ErrorMidStream { text: "Let me think about".into(), error }
}

pub(super) fn throttle_me_mid_stream(_: &Ctx) -> Step {
    let error = json!({ "message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded" });
    Step::ErrorMidStream { text: "Sure, ".into(), error }
}

pub(super) fn stay_silent(_: &Ctx) -> Step {
    Step::Silent
}

pub(super) fn think_it_through(c: &Ctx) -> Step {
    let Ctx { round, .. } = c;
    match round {
        0 => Step::Reasoned {
            reasoning: "The teacher wants a true-or-false exercise. I should read the rules first.".into(),
            then: Box::new(load("true-false")),
        },
        _ => Step::Reasoned {
            reasoning: " Rules read; now ask about the topic.".into(),
            then: Box::new(text("I read the true-or-false rules. Which topic should the statements cover?")),
        },
    }
}

/// A small model asked for a change: it writes about the change and calls nothing.
pub(super) fn talk_about_it_instead(_: &Ctx) -> Step {
    text("I'll add a multiple-choice exercise about the water cycle:\n\n1. What makes water rise into the air?\n   - evaporation\n   - condensation")
}

/// A model whose template opened its thinking and never closed it: all
/// thought, no answer.
pub(super) fn only_think(_: &Ctx) -> Step {
    Step::Reasoned { reasoning: "The teacher wants an exercise. Let me think about which kind would suit".into(), then: Box::new(text("")) }
}

pub(super) fn count_tokens_repeatedly(_: &Ctx) -> Step {
    Step::RepeatedUsage { text: "One, two, three.".into() }
}

/// Fails (503) until the retries are used up once; a later try succeeds.
pub(super) fn provider_error(c: &Ctx) -> Step {
    let Ctx { state, .. } = c;
    if state.unavailable_left.load(Ordering::SeqCst) > 0 {
        state.unavailable_left.fetch_sub(1, Ordering::SeqCst);
        return Step::Fail { status: 503, retry_after: None, code: None, message: "The scripted model is unavailable." };
    }
    text("The provider is back. What would you like to do with the lesson?")
}

pub(super) fn rate_limit(c: &Ctx) -> Step {
    let Ctx { state, .. } = c;
    if state.rate_limited_left.load(Ordering::SeqCst) > 0 {
        state.rate_limited_left.fetch_sub(1, Ordering::SeqCst);
        return Step::Fail { status: 429, retry_after: Some(1), code: Some("rate_limit_exceeded"), message: "Slow down." };
    }
    text("Thanks for waiting. I'm here now.")
}

pub(super) fn bad_key(_: &Ctx) -> Step {
    Step::Fail { status: 401, retry_after: None, code: Some("invalid_api_key"), message: "Incorrect API key provided." }
}

pub(super) fn quota(_: &Ctx) -> Step {
    Step::Fail { status: 429, retry_after: None, code: Some("insufficient_quota"), message: "You exceeded your current quota." }
}

pub(super) fn drop_the_connection(_: &Ctx) -> Step {
    Step::Drop { text: "Let me look at the lesson and".into() }
}

pub(super) fn malformed(_: &Ctx) -> Step {
    Step::Malformed { text: "Starting to".into() }
}

/// Reasoning, a few words, then silence: a turn that is still running
/// with thoughts that only a checkpoint has stored.
pub(super) fn think_and_hold(_: &Ctx) -> Step {
    Step::Reasoned {
        reasoning: "The teacher asked me to wait; let me weigh the options first.".into(),
        then: Box::new(Step::Hold { text: "Still working on it".into() }),
    }
}

/// A long reply in thousands of small pieces, then nothing until the client
/// leaves: more events than a running turn keeps one by one.
pub(super) fn ramble_and_hold(_: &Ctx) -> Step {
    Step::Hold { text: ramble() }
}

/// What `ramble_and_hold` says: 3,000 pieces of six characters.
fn ramble() -> String {
    (0..3_000).map(|i| format!("w{:04} ", i % 10_000)).collect()
}

pub(super) fn hold_on(_: &Ctx) -> Step {
    Step::Hold { text: "Thinking about this carefully, one moment".into() }
}

/// A skill, then an edit whose arguments stop halfway and never finish:
/// the first step done, the second under way (with its progress) until the
/// teacher stops the reply. The sidebar's steps are tested on it while
/// events keep arriving.
pub(super) fn write_and_wait(c: &Ctx) -> Step {
    match c.round {
        0 => load("fill-blanks"),
        _ => {
            let reading: String = (1..=120).map(|n| format!("<p>Paragraph {n} of a reading that is still being written.</p>")).collect();
            Step::HoldCall { call: call("call_held", "edit_document", json!({ "documentXml": format!("<lesson><title>Held</title>{reading}</lesson>"), "summary": "A reading" })) }
        }
    }
}

pub(super) fn tiny_pieces(c: &Ctx) -> Step {
    let Ctx { round, .. } = c;
    match round {
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
    }
}

pub(super) fn whole_call(c: &Ctx) -> Step {
    let Ctx { round, .. } = c;
    match round {
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
    }
}

pub(super) fn cut_off(c: &Ctx) -> Step {
    let Ctx { round, .. } = c;
    match round {
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
    }
}

pub(super) fn unknown_tool(c: &Ctx) -> Step {
    let Ctx { round, .. } = c;
    match round {
        0 => calls(vec![call("call_unknown", "publish_lesson", json!({ "to": "everyone" }))]),
        _ => text("I can't publish lessons; that isn't something I'm able to do."),
    }
}

pub(super) fn two_tools(c: &Ctx) -> Step {
    let Ctx { round, .. } = c;
    match round {
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
    }
}

pub(super) fn keep_going(_: &Ctx) -> Step {
    load("fill-blanks")
}
