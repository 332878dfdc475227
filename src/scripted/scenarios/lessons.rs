//! Scenarios of a teacher's work on a lesson: edits, reviews, material,
//! what to do next, and the plain answers of the offline demo.

use serde_json::{json, Value};
use super::{text, call, calls, load, edit, document, with_block, last_user, Call, Ctx, Step};

const UNSAFE_REPLY: &str = "Here is some markup to show safely: <img src=x onerror=alert(1)> and <script>alert(1)</script>.\n\n\
A [bad link](javascript:alert(1)), a [data link](data:text/html,<b>x</b>), a [good link](https://example.org) and an image ![pixel](https://example.org/pixel.png).";

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

const CAPABILITIES: &str = "I can write these kinds of exercises for your lesson:\n\n\
- **Fill in the blanks**: sentences with gaps, with accepted answers and hints\n\
- **Multiple choice**: questions with one or several right options\n\
- **True or false**: statements to judge\n\
- **Put in order**: steps or events to sequence\n\
- **Short answer**: open questions, with a model answer for you\n\
- **Writing**: longer tasks with space to write\n\n\
Tell me the topic and the kind, and I'll add one.";

const FIXED_EXERCISE: &str = r#"
  <exercise type="true-false">
    <statement answer="true">The sun is a star.</statement>
    <statement answer="false">The moon makes its own light.</statement>
  </exercise>"#;

const BROKEN_EXERCISE: &str = r#"
  <exercise type="true-false">
    <statement>The sun is a star.</statement>
  </exercise>"#;

const VERB_EXERCISE: &str = r#"
  <exercise type="fill-blanks" title="French verbs: être and avoir">
    <instructions>Write the correct present-tense form of the verb in brackets.</instructions>
    <p>Je <blank answer="suis" hint="être"/> en retard ce matin.</p>
    <p>Nous <blank answer="avons" hint="avoir"/> un petit chat.</p>
    <p>Ils <blank answer="sont" alts="sont bien" hint="être"/> contents de partir.</p>
  </exercise>"#;

pub(super) fn fill_in_the_blank(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    match round {
        0 => load("fill-blanks"),
        1 => match edit(with_block(&document(body), VERB_EXERCISE), "Added a fill-in-the-blank exercise on être and avoir") {
            // Written out over about a second, like a real model.
            Step::Calls { delay_ms: _, piece: _, text_before, calls, interleave, whole, finish } => {
                Step::Calls { text_before, calls, piece: 24, interleave, whole, finish, delay_ms: 20 }
            }
            other => other,
        },
        // Discarded by the teacher while the reply waited: nothing was added.
        _ if last_tool.as_deref().is_some_and(|t| t.contains("discarded this edit")) => {
            text("Understood: I left the lesson as it was. Tell me what you would like instead.")
        }
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
    }
}

/// Says back what the conversation so far tells the model about its
/// proposed edits, so a test can see the next turn knows.
pub(super) fn what_did_i_decide(c: &Ctx) -> Step {
    let Ctx { body, .. } = c;
    let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let known: Vec<String> = messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .filter_map(|m| m.get("content").and_then(Value::as_str))
        .flat_map(|c| c.lines().filter(|l| l.contains("proposed:")).map(str::to_string).collect::<Vec<_>>())
        .collect();
    match known.last() {
        Some(line) => text(&format!("From our conversation: {line}")),
        None => text("I have not proposed any changes in this chat."),
    }
}

/// A model taken in by instructions written inside the lesson: it
/// wipes the lesson. The edit guard must hold this for review.
pub(super) fn do_what_the_lesson_says(c: &Ctx) -> Step {
    let Ctx { round, .. } = c;
    match round {
        0 => edit("<lesson>\n  <h1>Nothing here</h1>\n</lesson>\n".into(), "Cleared the lesson as it asked"),
        _ => text("I did what the lesson said."),
    }
}

/// A model that cuts the lesson away a paragraph at a time, each cut small
/// on its own: the guard over the whole turn must hold the cut that makes
/// the sum large.
pub(super) fn trim_it_bit_by_bit(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    let doc = document(body);
    let last_paragraph = doc.rfind("<p ").and_then(|start| Some((start, doc[start..].find("</p>")? + start + 4)));
    match (round, last_paragraph) {
        (0..=2, Some((start, end))) => edit(format!("{}{}", doc[..start].trim_end(), &doc[end..]), "Removed the last paragraph"),
        _ if last_tool.as_deref().is_some_and(|t| t.contains("not applied")) => text("I trimmed two paragraphs; the third cut waits for your review."),
        _ => text("I trimmed the lesson."),
    }
}

/// A skill and an edit called in one round, as capable models do: the steps
/// must stand in that order (the skill ran first).
pub(super) fn skill_and_edit_at_once(c: &Ctx) -> Step {
    let Ctx { body, round, .. } = c;
    match round {
        0 => calls(vec![
            call("call_skill", "load_skill", json!({ "skill": "true-false" })),
            call("call_edit", "edit_document", json!({ "documentXml": with_block(&document(body), FIXED_EXERCISE), "summary": "Added a true/false exercise" })),
        ]),
        _ => text("I added a true-or-false exercise about the sun and the moon."),
    }
}

/// "… as its own lesson": makes a true-or-false quiz as a new lesson
/// (`create_lesson`); "… as its own broken lesson" sends an invalid one
/// first and corrects it.
pub(super) fn as_its_own_lesson(c: &Ctx) -> Step {
    let Ctx { said, round, last_tool, .. } = c;
    let quiz = format!("<lesson>\n  <h1>Quiz: the sun and the moon</h1>{FIXED_EXERCISE}\n</lesson>\n");
    let broken = format!("<lesson>\n  <h1>Quiz: the sun and the moon</h1>{BROKEN_EXERCISE}\n</lesson>\n");
    let make = |xml: String| calls(vec![call("call_make", "create_lesson", json!({ "title": "Quiz: the sun and the moon", "documentXml": xml }))]);
    match (round, last_tool.as_deref()) {
        (0, _) if said.contains("broken") => make(broken),
        (0, _) => make(quiz),
        (1, Some(answer)) if answer.starts_with("Error") => make(quiz),
        (_, Some(answer)) if answer.starts_with("Made the lesson") => text("I made a separate quiz lesson on the sun and the moon. Open it from the card below."),
        _ => text("I could not make the lesson."),
    }
}

/// Says what it will do before each step: text, a step, text, a step,
/// text. The reply shows each group of steps where it happened.
pub(super) fn step_by_step(c: &Ctx) -> Step {
    let Ctx { body, round, .. } = c;
    let with_text = |text: &str, call: Call| Step::Calls {
        text_before: Some(text.into()),
        calls: vec![call],
        piece: 7,
        interleave: false,
        whole: false,
        finish: Some("tool_calls"),
        delay_ms: 0,
    };
    match round {
        0 => with_text("First I will check the rules for true-or-false exercises.", call("call_skill", "load_skill", json!({ "skill": "true-false" }))),
        1 => with_text(
            "Now I will add the exercise.",
            call("call_edit", "edit_document", json!({ "documentXml": with_block(&document(body), FIXED_EXERCISE), "summary": "Added a true/false exercise" })),
        ),
        _ => text("Done: two statements about the sun and the moon."),
    }
}

/// "Add an exercise and then its answer key": two edits, each said before
/// it is made, the second made only once the first is in. With review on,
/// each pauses the reply until the teacher decides; the script goes on from
/// what they decided.
pub(super) fn exercise_then_key(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    let said = |text: &str, xml: String, summary: &str| Step::Calls {
        text_before: Some(text.into()),
        calls: vec![call("call_edit", "edit_document", json!({ "documentXml": xml, "summary": summary }))],
        piece: 7,
        interleave: false,
        whole: false,
        finish: Some("tool_calls"),
        delay_ms: 0,
    };
    let answer = last_tool.as_deref().unwrap_or_default();
    let discarded = || answer.split("saying: “").nth(1).and_then(|r| r.split('”').next()).map(str::to_string);
    match round {
        0 => said("First the exercise.", with_block(&document(body), FIXED_EXERCISE), "Added a true/false exercise"),
        1 if answer.starts_with("Saved") || answer.contains("applied this edit") => said(
            "Now the answer key, as a note for you.",
            with_block(&document(body), "\n  <note>Answer key: 1 true, 2 false.</note>"),
            "Added the answer key",
        ),
        _ if answer.contains("discarded this edit") => match discarded() {
            Some(reason) => text(&format!("Understood, I left the lesson as it was. You said: “{reason}”. Tell me what to change and I will try again.")),
            None => text("Understood, I left the lesson as it was."),
        },
        _ if answer.contains("waits for the teacher") => text("I suggested it; it is waiting for your review."),
        _ => text("Done: the exercise and its answer key are in the lesson."),
    }
}

/// "Take every kind of step": a turn with each kind of round the design's
/// protocol names (its test): thinking, then text and two calls at once,
/// one of which fails; then text and an edit (held, with review on); then
/// the last words.
pub(super) fn every_kind_of_step(c: &Ctx) -> Step {
    let Ctx { body, round, .. } = c;
    let with_text = |text: &str, calls: Vec<Call>| Step::Calls { text_before: Some(text.into()), calls, piece: 7, interleave: false, whole: false, finish: Some("tool_calls"), delay_ms: 0 };
    match round {
        0 => Step::Reasoned {
            reasoning: "Two sets of rules first.".into(),
            then: Box::new(with_text(
                "Let me check the rules.",
                vec![call("call_rules", "load_skill", json!({ "skill": "true-false" })), call("call_nope", "load_skill", json!({ "skill": "no-such-skill" }))],
            )),
        },
        1 => with_text(
            "Here is the exercise.",
            vec![call("call_edit", "edit_document", json!({ "documentXml": with_block(&document(body), FIXED_EXERCISE), "summary": "Added a true/false exercise" }))],
        ),
        _ => text("The exercise is in the lesson."),
    }
}

pub(super) fn fix_itself(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    match (round, last_tool.as_deref()) {
        (0, _) => edit(with_block(&document(body), BROKEN_EXERCISE), "Added a true/false exercise"),
        (1, Some(result)) if result.starts_with("Error") => {
            edit(with_block(&document(body), FIXED_EXERCISE), "Added a true/false exercise about the sun and the moon")
        }
        _ => text("I added a true-or-false exercise about the sun and the moon."),
    }
}

/// "Ask about this": repeats the quoted selection it was given.
pub(super) fn the_teacher_selected_this_text(c: &Ctx) -> Step {
    let Ctx { body, .. } = c;
    let asked = last_user(body);
    let quoted: Vec<&str> = asked.lines().filter_map(|l| l.strip_prefix("> ")).collect();
    text(&format!("You asked about this part of the lesson: “{}”. It tells students how to begin.", quoted.join(" ")))
}

/// An automatic turn (`server::reactions`): for new material, reads
/// the first new source, then names every one; otherwise a greeting.
/// Students' wrong answers told by the app: tries an edit first (which a
/// turn the teacher did not ask for must refuse), then suggests in words,
/// quoting what the tool said.
pub(super) fn students_got_answers_wrong(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    match round {
        0 => edit(with_block(&document(body), "\n  <note>Unasked change from wrong answers.</note>"), "A change nobody asked for"),
        _ => {
            let said = last_tool.as_deref().unwrap_or_default();
            let refused = if said.starts_with("Error") { "I left the lesson as it is." } else { "I changed the lesson." };
            text(&format!("Several students gave the same wrong answer. {refused} Suggestion: add a hint to that blank; ask me and I will."))
        }
    }
}

pub(super) fn not_typed_by_the_teacher(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
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
    match (round, added.first(), last_tool) {
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
    }
}

/// Reads the first source the prompt lists, then says what it read.
pub(super) fn from_my_material(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    let system = body.pointer("/messages/0/content").and_then(Value::as_str).unwrap_or_default();
    let first = system.lines().find_map(|l| l.strip_prefix("- id ").and_then(|r| r.split(':').next())).map(str::to_string);
    match (round, first, last_tool) {
        (_, None, _) => text("I can't see any material for this lesson. Add some with \"Add material\" and ask me again."),
        (0, Some(id), _) => calls(vec![call("call_read", "read_source", json!({ "sourceId": id, "to": 300 }))]),
        (_, _, Some(result)) => {
            let page = result.split("\n\n").nth(1).unwrap_or_default();
            text(&format!("From your material: {}", page.lines().next().unwrap_or_default()))
        }
        _ => text("I could not read your material."),
    }
}

/// An edit, then the reply with what to do next offered as buttons
/// (one call with the reply's text: the turn ends there).
pub(super) fn quiz_about_the_sun(c: &Ctx) -> Step {
    let Ctx { body, round, .. } = c;
    match round {
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
    }
}

/// An action the page does not have: refused, then offered properly.
pub(super) fn offer_something_odd(c: &Ctx) -> Step {
    let Ctx { round, last_tool, .. } = c;
    match (round, last_tool.as_deref()) {
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
    }
}

/// A long edit written out over a few seconds, as a real model
/// writes a whole lesson: its step reports progress as it comes.
pub(super) fn add_a_long_reading_about_rivers(c: &Ctx) -> Step {
    let Ctx { body, round, .. } = c;
    let paragraphs: String = (1..=40).map(|n| format!("\n  <p>Paragraph {n} of a long reading about rivers, deltas and the sea.</p>")).collect();
    match round {
        0 => match edit(with_block(&document(body), &paragraphs), "Added a long reading about rivers") {
            Step::Calls { text_before, calls, interleave, whole, finish, .. } => {
                Step::Calls { text_before, calls, piece: 64, interleave, whole, finish, delay_ms: 40 }
            }
            other => other,
        },
        _ => text("I added a long reading about rivers."),
    }
}

pub(super) fn list_my_lessons(c: &Ctx) -> Step {
    let Ctx { round, last_tool, .. } = c;
    match (round, last_tool) {
        (0, _) => calls(vec![call("call_list", "list_lessons", json!({}))]),
        (_, Some(listed)) => text(&format!("Here are your lessons:\n\n{listed}")),
        _ => text("I could not list your lessons."),
    }
}

/// "Read lesson <id>": reads that lesson with `read_lesson` and quotes what
/// the tool answered (its first line), whether it read it or refused.
pub(super) fn read_lesson_by_id(c: &Ctx) -> Step {
    let Ctx { said, round, last_tool, .. } = c;
    let id = said.split("read lesson ").nth(1).and_then(|r| r.split_whitespace().next()).unwrap_or_default();
    match (round, last_tool) {
        (0, _) => calls(vec![call("call_read", "read_lesson", json!({ "lessonId": id }))]),
        (_, Some(answer)) => text(&format!("The tool said: {}", answer.lines().next().unwrap_or_default())),
        _ => text("I could not read that lesson."),
    }
}

/// "How did my class do" (or the Results page's "Improve with these
/// results"): reads the results (each student's too when asked "for each
/// student"), then suggests a hint from the commonest wrong answer, with
/// that line of the results as its evidence; held for the teacher because
/// it comes from results.
pub(super) fn from_the_results(c: &Ctx) -> Step {
    let Ctx { said, body, round, last_tool, .. } = c;
    let answer = last_tool.as_deref().unwrap_or_default();
    match round {
        0 => calls(vec![call("call_results", "read_results", json!({ "perStudent": said.contains("for each student") }))]),
        1 if answer.starts_with("Results of") => {
            let wrong = answer.lines().find(|l| l.contains("; wrong: ")).unwrap_or("- nothing wrong");
            Step::Calls {
                text_before: Some(format!("Here is what I found: {}", wrong.trim_start_matches("- "))),
                calls: vec![call(
                    "call_hint",
                    "edit_document",
                    json!({
                        "documentXml": with_block(&document(body), "\n  <note>Hint from the results: check the verb's ending.</note>"),
                        "summary": "Added a hint from the results",
                        "evidence": wrong.trim_start_matches("- ").chars().take(200).collect::<String>(),
                    }),
                )],
                piece: 7,
                interleave: false,
                whole: false,
                finish: Some("tool_calls"),
                delay_ms: 0,
            }
        }
        1 => text(&format!("I could not read the results: {answer}")),
        _ => text("I suggested a hint from the results for you to review."),
    }
}

pub(super) fn unsafe_reply(_: &Ctx) -> Step {
    text(UNSAFE_REPLY)
}

pub(super) fn long_answer(_: &Ctx) -> Step {
    text(LONG_REPLY)
}

pub(super) fn what_types_of_exercises(_: &Ctx) -> Step {
    text(CAPABILITIES)
}

pub(super) fn add_an_exercise(_: &Ctx) -> Step {
    text("Happy to. What kind of exercise would you like (for example fill in the blanks, multiple choice or true or false), and on which part of the lesson?")
}

pub(super) fn explain_this_lesson(_: &Ctx) -> Step {
    text("This lesson opens with a title and a short introduction. Add some exercises and I can tell you how they fit together.")
}

pub(super) fn check_my_exercises(_: &Ctx) -> Step {
    text("I looked through the lesson: every exercise passes the checks. Ask me to add more if you'd like.")
}
