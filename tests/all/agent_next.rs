//! The reply as a workspace, at the agent: what each step took in and gave
//! back, progress while a long edit is written, and what the reply offers to
//! do next (`suggest_next`), checked by the server and ending the reply
//! without another model call.
#![cfg(feature = "ssr")]

use crate::agent_run;

use agent_run::{prompts, run_turn, Memory, Run, START};
use margin::{
    agent::config::AiConfig,
    chat::{
        actions::PageAction,
        events::{ChatEvent, ToolEndData, ToolStatus, OUTPUT_SHOWN},
        turn::TurnRecord,
    },
    scripted::ScriptedLlm,
};

async fn run(said: &str) -> Run {
    run_on(START, said).await
}

async fn run_on(doc: &str, said: &str) -> Run {
    let llm = ScriptedLlm::start().await.unwrap();
    let config = AiConfig::scripted(llm.base_url.clone(), prompts());
    run_turn(llm, config, Memory::with(doc), Vec::new(), said).await
}

/// A lesson of some length: a reading of 40 paragraphs (about 3 KB).
fn long_lesson() -> String {
    let body: String = (1..=40).map(|n| format!("\n  <p id=\"p-{n}\">Paragraph {n} of the first reading, about mountains and valleys.</p>")).collect();
    format!("<lesson>\n  <h1 id=\"h-1\">Landscapes</h1>{body}\n</lesson>\n")
}

fn end_of(r: &Run, id: &str) -> ToolEndData {
    r.events
        .iter()
        .find_map(|e| match e {
            ChatEvent::ToolEnd(t) if t.id == id => Some((**t).clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no end for {id}"))
}

#[tokio::test]
async fn an_offer_of_what_next_ends_the_reply_without_another_model_call() {
    let r = run("Write a quiz about the sun").await;
    assert_eq!(r.result.outcome, margin::agent::run::TurnOutcome::Complete);
    // Skill, edit, then the reply with its offer: three calls, no fourth.
    assert_eq!(r.llm.requests().len(), 3);
    let end = end_of(&r, "call_next");
    assert_eq!(end.status, ToolStatus::Success);
    assert_eq!(end.replies, ["Add two more statements", "Make it harder"]);
    let offered: Vec<PageAction> = end.actions.iter().filter_map(|a| PageAction::from_wire(a)).collect();
    assert_eq!(offered, [PageAction::StudentPreview, PageAction::UndoEdit, PageAction::PrintWorksheet, PageAction::PrintKey]);
    assert_eq!(end.actions.len(), 4);
    assert!(r.result.text.starts_with("I added a true-or-false quiz"), "{}", r.result.text);
    assert!(matches!(r.events.last(), Some(ChatEvent::ToolEnd(t)) if t.id == "call_next"), "{:?}", r.events.last());

    // The offer is kept with the turn's record, and comes back from it.
    let stored = serde_json::to_string(&r.result.tool_calls).unwrap();
    assert!(stored.contains(r#""replies":["Add two more statements","Make it harder"]"#), "{stored}");
    assert!(stored.contains(r#""actions":["student_preview","undo_edit","print_worksheet","print_key"]"#), "{stored}");
    let mut again = TurnRecord::default();
    let back: Vec<margin::chat::turn::ToolCallRecord> = serde_json::from_str(&stored).unwrap();
    again.tool_calls = back;
    let replayed = again.events("m").into_iter().find_map(|e| match e {
        ChatEvent::ToolEnd(t) if t.id == "call_next" => Some(t),
        _ => None,
    });
    assert_eq!(replayed.map(|t| (t.replies, t.actions)), Some((end.replies, end.actions)));

    // The tool is declared to the model like the others.
    let tools: Vec<String> =
        r.llm.requests()[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect();
    // (No material here, so no `read_source`.)
    assert_eq!(tools, ["load_skill", "edit_document", "read_results", "suggest_next", "read_lesson", "list_lessons", "create_lesson", "check_reading_level", "find_standards"]);
}

#[tokio::test]
async fn an_action_the_page_does_not_have_is_refused_and_the_model_told() {
    let r = run("Offer something odd").await;
    let odd = end_of(&r, "call_odd");
    assert_eq!(odd.status, ToolStatus::Error);
    assert!(odd.error.as_deref().unwrap().contains("no action named `publish_lesson`"), "{odd:?}");
    assert!(odd.actions.is_empty() && odd.replies.is_empty());
    // The model heard why, offered again properly, and that ended the reply.
    let requests = r.llm.requests();
    assert_eq!(requests.len(), 2);
    let told = requests[1]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(told.starts_with("Error:") && told.contains("student_preview, undo_edit, print"), "{told}");
    assert_eq!(end_of(&r, "call_ok").replies, ["Show me the lesson"]);
}

#[tokio::test]
async fn each_step_keeps_its_input_and_what_the_model_was_told() {
    let r = run("Write a quiz about the sun").await;
    let skill = &r.result.tool_calls[0];
    assert_eq!(skill.args.json(), r#"{"skill":"true-false"}"#);
    let output = skill.output.as_deref().unwrap();
    assert!(output.contains("true") && output.len() > 100, "the skill's text: {output}");
    // The step names the skill and what it covers.
    let summary = skill.summary.as_deref().unwrap();
    assert!(summary.contains(':') && summary.len() > 20, "{summary}");
    // An edit's answer holds the whole lesson: kept up to a size, then cut, saying so.
    let edit = &r.result.tool_calls[1];
    assert!(edit.args.json().contains("documentXml"));
    assert!(edit.output.as_deref().unwrap().starts_with("Saved as version 2"), "{:?}", edit.output);
    // The edit was announced early, once, then said its arguments before it ran.
    let said: Vec<(&str, String)> = r
        .events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolStart(s) if s.id == "call_edit" => Some(("start", s.args.json().to_string())),
            ChatEvent::ToolInput(s) if s.id == "call_edit" => Some(("input", s.args.json().to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(said.iter().map(|(k, _)| *k).collect::<Vec<_>>(), ["start", "input"]);
    assert_eq!(said[0].1, "{}");
    assert!(said[1].1.contains("documentXml"));
}

#[tokio::test]
async fn a_long_answer_is_cut_for_the_details_only() {
    let r = run_on(&long_lesson(), "Add a long reading about rivers").await;
    let edit = &r.result.tool_calls[0];
    let output = edit.output.as_deref().unwrap();
    assert!(output.len() < OUTPUT_SHOWN + 40 && output.contains("more characters)"), "{}", output.len());
    // The model itself was told everything.
    let told = r.llm.requests()[1]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().len();
    assert!(told > OUTPUT_SHOWN, "{told}");
}

#[tokio::test]
async fn a_long_edit_reports_its_progress_as_it_is_written() {
    let r = run_on(&long_lesson(), "Add a long reading about rivers").await;
    let end_at = r.events.iter().position(|e| matches!(e, ChatEvent::ToolEnd(t) if t.id == "call_edit")).unwrap();
    let progress: Vec<(usize, String, Option<f32>)> = r
        .events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            ChatEvent::ToolProgress(p) => Some((i, p.message.clone(), p.fraction)),
            _ => None,
        })
        .collect();
    // A report for each KB of arguments (they come 64 bytes at a time), all
    // before the edit ends.
    let kb = r.result.tool_calls[0].args.json().len() / 1024;
    assert!(kb >= 6, "a long edit: {kb} KB");
    assert_eq!(progress.len(), kb, "{progress:?}");
    assert!(progress.iter().all(|(i, _, _)| *i < end_at));
    for (n, (_, message, _)) in progress.iter().enumerate() {
        assert_eq!(*message, format!("Writing the lesson: {} KB so far", n + 1));
    }
    // How far along, against the lesson as it was (about 3 KB): it grows,
    // and once the new lesson is longer than that it is no longer guessed.
    let fractions: Vec<f32> = progress.iter().map_while(|(_, _, f)| *f).collect();
    assert!(fractions.len() >= 2 && fractions.len() < progress.len(), "{progress:?}");
    assert!(fractions.windows(2).all(|w| w[0] < w[1]) && fractions.iter().all(|f| *f > 0.0 && *f < 0.95), "{progress:?}");
    assert!(progress[fractions.len()..].iter().all(|(_, _, f)| f.is_none()), "{progress:?}");
    // Progress is of the moment: the record does not keep it.
    let mut replayed = TurnRecord::default();
    for e in &r.events {
        replayed.apply(e);
    }
    assert!(replayed.events("m").iter().all(|e| !matches!(e, ChatEvent::ToolProgress(_))));
    // On the wire.
    let p = r.events.iter().find(|e| matches!(e, ChatEvent::ToolProgress(_))).unwrap();
    assert_eq!(p.name(), "tool_progress");
    assert!(p.data_json().starts_with(r#"{"id":"call_edit","message":"Writing the lesson: 1 KB so far","fraction":0."#), "{}", p.data_json());
    assert_eq!(ChatEvent::from_sse(p.name(), &p.data_json()).as_ref(), Ok(p));
}
