//! The scripted model bringing a lesson to a reading level ("… for grade
//! N"): it measures, rewrites every paragraph in plain sentences (about
//! grade 6, or about grade 4 for a target below 5; keeping the ids), measures again and says where the lesson landed; or,
//! when the lesson cannot be measured, says so and changes nothing.

use serde_json::json;

use super::{call, calls, document, edit, text, Ctx, Step};

/// Plain sentences of common words (about grade 6), for any paragraph.
pub const PLAIN: &str = "Green plants make their own food from sunlight, water and the air around them. This happens inside the leaves, where a green material catches the light. The plant turns that energy into sugar, which it uses to grow taller.";

/// Plainer still (about grade 4), for targets below grade 5.
pub const PLAINER: &str = "Green plants make their own food from sunlight, water and the air around them. It happens in the leaves, where a green part catches the light. The plant turns that light into sugar and uses it to grow taller.";

/// The grade asked for ("for grade 4" → 4).
fn target(said: &str) -> f64 {
    said.split("for grade ").nth(1).and_then(|r| r.split(|c: char| !c.is_ascii_digit() && c != '.').next()).and_then(|n| n.trim_end_matches('.').parse().ok()).unwrap_or(4.0)
}

/// Every `<p id="…">…</p>` directly in the lesson, its words made plain
/// (`text`).
fn plainer(doc: &str, text: &str) -> String {
    let mut out = String::new();
    let mut rest = doc;
    while let Some(i) = rest.find("\n  <p id=\"") {
        let head = &rest[..i];
        let after = &rest[i..];
        let Some(open_end) = after.find('>') else { break };
        let Some(close) = after.find("</p>") else { break };
        out.push_str(head);
        out.push_str(&after[..=open_end]);
        out.push_str(text);
        out.push_str("</p>");
        rest = &after[close + 4..];
    }
    out.push_str(rest);
    out
}

pub(super) fn to_a_grade(c: &Ctx) -> Step {
    let Ctx { said, body, round, last_tool, .. } = c;
    let target = target(said);
    let measured = last_tool.as_deref().unwrap_or_default();
    match round {
        0 => calls(vec![call("call_level", "check_reading_level", json!({ "target": target }))]),
        _ if measured.starts_with("Error") => text(&format!("I could not bring the lesson to grade {target}: {}", measured.trim_start_matches("Error: "))),
        1 if measured.contains("Within ±0.5") => text("The lesson is already at that level; I changed nothing."),
        1 => edit(plainer(&document(body), if target < 5.0 { PLAINER } else { PLAIN }), &format!("Plainer sentences for grade {target}")),
        2 => calls(vec![call("call_level_again", "check_reading_level", json!({ "target": target }))]),
        _ => {
            let first = measured.lines().next().unwrap_or_default();
            text(&format!("Measured again. {first}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_texts_read_at_about_grade_six_and_four() {
        let level = |text: &str| {
            let xml = format!("<lesson><p id=\"a\">{text}</p><p id=\"b\">{text}</p></lesson>");
            crate::lesson::reading::of_lesson(&crate::lesson::parse(&xml).unwrap()).unwrap().grade.unwrap()
        };
        assert!((level(PLAIN) - 6.0).abs() <= 0.5, "{}", level(PLAIN));
        assert!((level(PLAINER) - 4.0).abs() <= 0.5, "{}", level(PLAINER));
    }
}
