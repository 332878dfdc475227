//! The open items of a lesson: what the teacher marks rather than the
//! app (short-answer questions, writing areas), each with what a reader of
//! the answers needs: its prompt, the model answer and the rubric if the
//! lesson has them. Feedback on students' answers is written against these.

use super::{rubric::Rubric, schema::ExerciseKind, tree::Element};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenItem {
    /// The item's id, as answers are kept under it.
    pub id: String,
    /// "short answer" or "writing".
    pub kind: &'static str,
    /// The question or the task, as plain text.
    pub prompt: String,
    pub model_answer: Option<String>,
    pub rubric: Option<Rubric>,
}

/// Every open item, in document order.
pub fn open_items(root: &Element) -> Vec<OpenItem> {
    let mut out = Vec::new();
    for block in root.elements() {
        match block.name.as_str() {
            "writing-area" => {
                if let Some(id) = block.id() {
                    let prompt = block.attr("placeholder").unwrap_or("Writing area").to_string();
                    out.push(OpenItem { id: id.into(), kind: "writing", prompt, model_answer: None, rubric: None });
                }
            }
            "exercise" => exercise(block, &mut out),
            _ => {}
        }
    }
    out
}

fn text_of(e: &Element, name: &str) -> Option<String> {
    e.elements().find(|c| c.name == name).map(|c| c.text().split_whitespace().collect::<Vec<_>>().join(" "))
}

fn exercise(ex: &Element, out: &mut Vec<OpenItem>) {
    match ex.attr("type").and_then(ExerciseKind::from_name) {
        Some(ExerciseKind::ShortAnswer) => {
            for q in ex.elements().filter(|e| e.name == "question") {
                if let Some(id) = q.id() {
                    let prompt = text_of(q, "prompt").unwrap_or_default();
                    out.push(OpenItem { id: id.into(), kind: "short answer", prompt, model_answer: text_of(q, "answer"), rubric: Rubric::of(q) });
                }
            }
        }
        Some(ExerciseKind::Writing) => {
            let prompt = text_of(ex, "prompt").unwrap_or_default();
            for w in ex.elements().filter(|e| e.name == "writing-area") {
                if let Some(id) = w.id() {
                    out.push(OpenItem { id: id.into(), kind: "writing", prompt: prompt.clone(), model_answer: None, rubric: Rubric::of(ex) });
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    #[test]
    fn open_items_carry_their_prompt_model_answer_and_rubric() {
        let root = parse(
            r#"<lesson><writing-area id="w0" placeholder="Notes"/>
            <exercise id="e1" type="short-answer"><question id="q1"><prompt>Why <em>être</em>?</prompt><answer>Because.</answer>
              <rubric><criterion name="Reason"><level points="2">Clear.</level><level points="0">None.</level></criterion></rubric></question></exercise>
            <exercise id="e2" type="writing"><prompt>Describe yourself.</prompt><writing-area id="w1"/></exercise>
            <exercise id="e3" type="true-false"><statement id="s1" answer="true">Yes.</statement></exercise></lesson>"#,
        )
        .unwrap();
        let items = open_items(&root);
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["w0", "q1", "w1"]);
        assert_eq!(items[1].prompt, "Why être?");
        assert_eq!(items[1].model_answer.as_deref(), Some("Because."));
        assert_eq!(items[1].rubric.as_ref().map(Rubric::max_points), Some(2));
        assert_eq!((items[2].kind, items[2].prompt.as_str(), items[2].rubric.is_none()), ("writing", "Describe yourself.", true));
    }
}
