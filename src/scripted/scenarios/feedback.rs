//! The scripted model drafting feedback ("Draft feedback" on the Results
//! page): for each item the message lists, it reads the answers, then
//! drafts one feedback per student who answered, with points when the
//! item has a rubric (one less than the most, so a test can see them).

use serde_json::json;

use super::{call, calls, last_user, text, Ctx, Step};

/// The items the message lists ("Items to draft feedback for: q3, w1").
fn listed(said: &str) -> Vec<String> {
    said.lines()
        .find_map(|l| l.strip_prefix("Items to draft feedback for: "))
        .map(|r| r.split(", ").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
        .unwrap_or_default()
}

pub(super) fn draft_feedback(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    let items = listed(&last_user(body));
    let (item, reading) = (*round / 2, *round % 2 == 0);
    let Some(id) = items.get(item as usize) else {
        return text(&format!("I drafted feedback on {} questions. The drafts wait for you on the Results page.", items.len()));
    };
    if reading {
        return calls(vec![call(&format!("call_read_{item}"), "read_open_answers", json!({ "itemId": id }))]);
    }
    let read = last_tool.as_deref().unwrap_or_default();
    let most: Option<u32> = read.lines().find_map(|l| l.strip_prefix("Rubric: up to ")).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok());
    let drafts: Vec<_> = read
        .lines()
        .filter_map(|l| l.strip_prefix("- Student "))
        .filter(|l| !l.ends_with("(no answer)"))
        .filter_map(|l| {
            let (n, answer) = l.split_once(": ")?;
            let n: usize = n.parse().ok()?;
            let words = answer.trim_matches(['“', '”']).split_whitespace().count();
            let mut d = json!({ "student": n, "feedback": format!("Student {n}: your answer has {words} words and gives one reason. Add a second reason.") });
            if let Some(m) = most {
                d["points"] = json!(m.saturating_sub(1));
            }
            Some(d)
        })
        .collect();
    calls(vec![call(&format!("call_draft_{item}"), "draft_feedback", json!({ "itemId": id, "drafts": drafts }))])
}
