//! The scripted model naming standards: aligning a lesson to one (it looks
//! the code up, tags the first exercise, says so), and writing a code from
//! memory that the school does not have, then taking the right one from the
//! error (the validator loop, as for the XML).

use serde_json::json;

use super::{call, calls, document, edit, last_user, text, Ctx, Step};

/// The first word after `marker` in the request, as written.
fn word_after(body: &serde_json::Value, marker: &str) -> String {
    let said = last_user(body);
    said.split(marker).nth(1).and_then(|r| r.split_whitespace().next()).unwrap_or_default().trim_matches(|c: char| c == '"' || c == '“' || c == '”').to_string()
}

/// The lesson with `standards="code"` on its first exercise.
fn tagged(doc: &str, code: &str) -> String {
    doc.replacen("<exercise ", &format!("<exercise standards=\"{code}\" "), 1)
}

/// "align this lesson to the standard CODE …"
pub(super) fn align(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    let code = word_after(body, "to the standard ");
    let result = last_tool.as_deref().unwrap_or_default();
    match round {
        0 => calls(vec![call("call_find", "find_standards", json!({ "query": code }))]),
        1 if !result.contains(&format!("- {code}:")) => text(&format!("I could not find {code} in your school's frameworks, so I changed nothing.")),
        1 => edit(tagged(&document(body), &code), &format!("Tagged exercise 1 with {code}")),
        _ if result.starts_with("Error") => text(&format!("The lesson could not take {code}: {}", result.trim_start_matches("Error: "))),
        _ => text(&format!("I tagged exercise 1 with {code}.")),
    }
}

/// "tag it from memory with CODE": the code as given, then, when refused,
/// the nearest code the error names.
pub(super) fn from_memory(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    let result = last_tool.as_deref().unwrap_or_default();
    match round {
        0 => edit(tagged(&document(body), &word_after(body, "from memory with ")), "Tagged exercise 1"),
        1 if result.contains("Nearest: ") => {
            let nearest = result.split("Nearest: ").nth(1).and_then(|r| r.split(" (").next()).unwrap_or_default();
            edit(tagged(&document(body), nearest), &format!("Tagged exercise 1 with {nearest}"))
        }
        1 => text("That code was taken as it is."),
        _ if result.starts_with("Error") => text("The code is still refused; I changed nothing."),
        _ => text("The first code was not one of your school's, so I used the nearest one it named."),
    }
}
