//! The students' tutor (`Agent::tutor`): hints, checks, never the answer,
//! and a try at editing the lesson when a student (or a lesson) asks for one.

use serde_json::json;
use super::{text, call, calls, edit, Step};

/// The id in the first `<blank … id="…"` of a lesson.
fn first_blank(lesson: &str) -> String {
    let Some(at) = lesson.find("<blank") else { return "none".into() };
    let tag = &lesson[at..at + lesson[at..].find('>').unwrap_or(0)];
    tag.split("id=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or("none").to_string()
}

/// The students' tutor (`Agent::tutor`): hints, checks, never the answer,
/// and a try at editing the lesson when a student (or a lesson) asks for one.
pub(super) fn tutor(said: &str, lesson: &str, round: usize, last_tool: Option<&str>) -> Step {
    let has = |s: &str| said.contains(s);
    // A message the server marked as one to answer with care (`safety::CARE_NOTE`).
    if has("a note from margin") {
        return text("I'm really sorry you're going through this, and I'm glad you told me. You matter, and you deserve to feel safe.");
    }
    // A model that gives in: the answer it works out for the first gap
    // (the tests' lesson's), which "hints only" must keep from the student.
    if has("tell me the answer") || has("give me the answer") {
        return text("Fine, just this once: the first gap is serai. Don't tell your teacher!");
    }
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
