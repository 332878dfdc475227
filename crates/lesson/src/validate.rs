//! The rules of the format, checked all at once. Each error says where (line,
//! column, element path), what is wrong and what would be right, so that the
//! agent can correct itself and a teacher can fix the XML by hand.
//!
//! One cohesive thing (a little over 400 lines): the rules of the format,
//! element by element, in one place to read against `docs/lesson-format.md`.

mod rubric;

use std::collections::HashMap;

use super::{
    error::LessonError,
    schema::{self, ExerciseKind},
    tree::{Element, Node},
};

/// More errors than this are not listed: fixing the first ones usually fixes many.
const MAX_ERRORS: usize = 50;

pub fn validate(root: &Element) -> Vec<LessonError> {
    let mut v = Validator { errors: Vec::new(), ids: HashMap::new() };
    if root.name != "lesson" {
        v.err(root, &root.name, format!("the document must start with <lesson>, not <{}>.", root.name));
        return v.errors;
    }
    v.attrs(root, "lesson");
    for child in &root.children {
        match child {
            Node::Text(t) if t.trim().is_empty() => {}
            Node::Text(t) => v.err(root, "lesson", format!(
                "the text \"{}\" stands directly inside <lesson>. Put text inside a block, e.g. <p>…</p>.",
                excerpt(t)
            )),
            Node::Element(e) => {
                let path = seg(e);
                match e.name.as_str() {
                    "h1" | "h2" | "h3" | "p" | "note" => {
                        v.attrs(e, &path);
                        v.inline(e, &path, false);
                    }
                    "writing-area" => v.writing_area(e, &path),
                    "exercise" => v.exercise(e, &path),
                    other => v.err(e, &path, format!(
                        "<{other}> is not a lesson element. Directly inside <lesson> use one of: {}.",
                        schema::BLOCK_ELEMENTS.join(", ")
                    )),
                }
            }
        }
    }
    v.errors.truncate(MAX_ERRORS);
    v.errors
}

struct Validator {
    errors: Vec<LessonError>,
    /// Ids seen so far, with the line of their first use.
    ids: HashMap<String, u32>,
}

fn seg(e: &Element) -> String {
    match e.id() {
        Some(id) if !id.is_empty() => format!("{}#{}", e.name, id),
        _ => e.name.clone(),
    }
}

fn join(path: &str, e: &Element) -> String {
    format!("{path} > {}", seg(e))
}

fn excerpt(t: &str) -> String {
    let t = t.trim();
    let short: String = t.chars().take(30).collect();
    if short.len() < t.len() { format!("{short}…") } else { short }
}

fn has_text(e: &Element) -> bool {
    !e.text().trim().is_empty()
}

impl Validator {
    fn err(&mut self, at: &Element, path: &str, message: impl Into<String>) {
        self.errors.push(LessonError::new(at.line, at.column, path, message));
    }

    /// Known attributes only, required ones present, ids well formed and unique.
    fn attrs(&mut self, e: &Element, path: &str) {
        let (allowed, required) = schema::attributes(&e.name);
        for (name, _) in &e.attrs {
            if !allowed.contains(&name.as_str()) {
                let hint = if allowed.is_empty() {
                    format!("<{}> takes no attributes.", e.name)
                } else {
                    format!("<{}> takes: {}.", e.name, allowed.join(", "))
                };
                self.err(e, path, format!("unknown attribute `{name}`. {hint}"));
            }
        }
        for name in required {
            if e.attr(name).is_none() {
                self.err(e, path, format!("missing required attribute `{name}`: {}", required_hint(&e.name, name)));
            }
        }
        if let Some(problem) = e.attr("standards").and_then(super::standards::shape_problem) {
            self.err(e, path, problem);
        }
        if let Some(id) = e.id() {
            if !schema::valid_id(id) {
                self.err(e, path, format!(
                    "the id \"{id}\" is not valid. Ids start with a letter and use only letters, digits, - and _ (or leave it out and one is assigned)."
                ));
            } else if let Some(first) = self.ids.get(id) {
                self.err(e, path, format!(
                    "the id \"{id}\" is already used on line {first}. Ids must be unique: remove this one and a new id is assigned."
                ));
            } else {
                self.ids.insert(id.to_string(), e.line);
            }
        }
    }

    /// Running text with <em>/<strong> (and <blank/> where allowed).
    fn inline(&mut self, e: &Element, path: &str, allow_blank: bool) {
        for child in e.elements() {
            let child_path = join(path, child);
            match child.name.as_str() {
                "em" | "strong" => {
                    self.attrs(child, &child_path);
                    self.inline(child, &child_path, false);
                }
                "blank" if allow_blank => self.blank(child, &child_path),
                "blank" => self.err(child, &child_path,
                    "<blank/> is only allowed in a <p> of an exercise with type=\"fill-blanks\"."),
                other => {
                    let allowed = if allow_blank { "<em>, <strong> and <blank/>" } else { "<em> and <strong>" };
                    self.err(child, &child_path, format!(
                        "<{other}> cannot stand inside <{}>. Text here may only use {allowed}.",
                        e.name
                    ));
                }
            }
        }
    }

    fn blank(&mut self, e: &Element, path: &str) {
        self.attrs(e, path);
        if !e.children.is_empty() && (has_text(e) || e.elements().next().is_some()) {
            self.err(e, path, "a blank is written empty, as <blank answer=\"…\"/>. Move its text into the answer attribute.");
        }
        if let Some(answer) = e.attr("answer") {
            if answer.trim().is_empty() {
                self.err(e, path, "the answer is empty. Write the word or words that fill the blank.");
            }
        }
    }

    fn writing_area(&mut self, e: &Element, path: &str) {
        self.attrs(e, path);
        if let Some(lines) = e.attr("lines") {
            if !matches!(lines.parse::<u32>(), Ok(1..=50)) {
                self.err(e, path, format!("lines=\"{lines}\" must be a whole number from 1 to 50."));
            }
        }
        if has_text(e) || e.elements().next().is_some() {
            self.err(e, path, "<writing-area/> is written empty; put the task in a <prompt> or a <p> before it.");
        }
    }

    /// Text that must not be empty (options, statements, prompts, …).
    fn text_part(&mut self, e: &Element, path: &str, what: &str) {
        self.attrs(e, path);
        self.inline(e, path, false);
        if !has_text(e) {
            self.err(e, path, format!("this {what} is empty. Write its text between the tags."));
        }
    }

    fn exercise(&mut self, e: &Element, path: &str) {
        self.attrs(e, path);
        let Some(type_name) = e.attr("type") else { return };
        let Some(kind) = ExerciseKind::from_name(type_name) else {
            let names: Vec<_> = ExerciseKind::ALL.iter().map(|k| k.name()).collect();
            self.err(e, path, format!("unknown exercise type \"{type_name}\". Use one of: {}.", names.join(", ")));
            return;
        };
        for child in &e.children {
            if let Node::Text(t) = child {
                if !t.trim().is_empty() {
                    self.err(e, path, format!(
                        "the text \"{}\" stands directly inside <exercise>. Put it in <instructions> or in one of the exercise's parts.",
                        excerpt(t)
                    ));
                }
            }
        }
        let parts: Vec<&Element> = e.elements().collect();
        for (i, part) in parts.iter().enumerate() {
            let part_path = join(path, part);
            if part.name == "instructions" {
                if i > 0 {
                    self.err(part, &part_path, "<instructions> must come first in the exercise.");
                }
                self.text_part(part, &part_path, "instructions");
            } else if !kind.parts().contains(&part.name.as_str()) {
                self.err(part, &part_path, format!(
                    "<{}> does not belong in a {} exercise. Inside it use: instructions (optional, first), {}.",
                    part.name,
                    kind.name(),
                    kind.parts().join(", ")
                ));
            }
        }
        fn named<'a>(parts: &'a [&'a Element], name: &'static str) -> impl Iterator<Item = &'a Element> + 'a {
            parts.iter().copied().filter(move |p| p.name == name)
        }
        let of = |name: &'static str| named(&parts, name);
        match kind {
            ExerciseKind::FillBlanks => {
                let mut blanks = 0;
                for p in of("p") {
                    let p_path = join(path, p);
                    self.attrs(p, &p_path);
                    self.inline(p, &p_path, true);
                    blanks += count_blanks(p);
                }
                if blanks == 0 {
                    self.err(e, path, "a fill-blanks exercise needs at least one <blank answer=\"…\"/> inside a <p>.");
                }
            }
            ExerciseKind::MultipleChoice => {
                if of("question").next().is_none() {
                    self.err(e, path, "a multiple-choice exercise needs at least one <question> with a <prompt> and <option>s.");
                }
                for q in of("question") {
                    self.choice_question(q, &join(path, q));
                }
            }
            ExerciseKind::TrueFalse => {
                if of("statement").next().is_none() {
                    self.err(e, path, "a true-false exercise needs at least one <statement answer=\"true\">…</statement>.");
                }
                for s in of("statement") {
                    let s_path = join(path, s);
                    self.text_part(s, &s_path, "statement");
                    if let Some(a) = s.attr("answer") {
                        if a != "true" && a != "false" {
                            self.err(s, &s_path, format!("answer=\"{a}\" must be \"true\" or \"false\"."));
                        }
                    }
                }
            }
            ExerciseKind::Sequencing => self.sequence(e, path, of("item").collect()),
            ExerciseKind::ShortAnswer => {
                if of("question").next().is_none() {
                    self.err(e, path, "a short-answer exercise needs at least one <question> with a <prompt>.");
                }
                for q in of("question") {
                    self.open_question(q, &join(path, q));
                }
            }
            ExerciseKind::Writing => {
                let prompts: Vec<_> = of("prompt").collect();
                if prompts.len() != 1 {
                    self.err(e, path, format!(
                        "a writing exercise needs exactly one <prompt> (it has {}).",
                        prompts.len()
                    ));
                }
                for p in prompts {
                    self.text_part(p, &join(path, p), "prompt");
                }
                let areas: Vec<_> = of("writing-area").collect();
                if areas.len() > 1 {
                    self.err(e, path, "a writing exercise has at most one <writing-area/>.");
                }
                for a in areas {
                    self.writing_area(a, &join(path, a));
                }
                self.rubrics(e, path, of("rubric").collect());
            }
        }
    }

    fn choice_question(&mut self, q: &Element, path: &str) {
        self.attrs(q, path);
        let multiple = match q.attr("multiple") {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                self.err(q, path, format!("multiple=\"{other}\" must be \"true\" or \"false\"."));
                false
            }
        };
        self.question_prompt(q, path);
        let mut options = 0;
        let mut correct = 0;
        for child in q.elements() {
            let child_path = join(path, child);
            match child.name.as_str() {
                "prompt" => {}
                "option" => {
                    options += 1;
                    self.text_part(child, &child_path, "option");
                    match child.attr("correct") {
                        None | Some("false") => {}
                        Some("true") => correct += 1,
                        Some(other) => self.err(child, &child_path, format!("correct=\"{other}\" must be \"true\" or \"false\".")),
                    }
                }
                other => self.err(child, &child_path, format!(
                    "<{other}> does not belong in a multiple-choice <question>. Use one <prompt> and two or more <option>s."
                )),
            }
        }
        if options < 2 {
            self.err(q, path, format!("a question needs at least two <option>s (it has {options})."));
        }
        if multiple && correct == 0 && options >= 2 {
            self.err(q, path, "mark at least one option correct=\"true\".");
        }
        if !multiple && correct != 1 && options >= 2 {
            self.err(q, path, format!(
                "exactly one option must have correct=\"true\" (found {correct}). If several answers are right, add multiple=\"true\" to the <question>."
            ));
        }
    }

    fn open_question(&mut self, q: &Element, path: &str) {
        self.attrs(q, path);
        if q.attr("multiple").is_some() {
            self.err(q, path, "multiple=\"…\" only applies to multiple-choice questions. Remove it.");
        }
        self.question_prompt(q, path);
        let mut answers = 0;
        let mut rubrics = Vec::new();
        for child in q.elements() {
            let child_path = join(path, child);
            match child.name.as_str() {
                "prompt" => {}
                "answer" => {
                    answers += 1;
                    self.text_part(child, &child_path, "model answer");
                }
                "rubric" => rubrics.push(child),
                other => self.err(child, &child_path, format!(
                    "<{other}> does not belong in a short-answer <question>. Use one <prompt>, if you like one <answer> (a model answer students do not see) and one <rubric>."
                )),
            }
        }
        if answers > 1 {
            self.err(q, path, "a question has at most one <answer>.");
        }
        self.rubrics(q, path, rubrics);
    }

    /// Exactly one <prompt>, first.
    fn question_prompt(&mut self, q: &Element, path: &str) {
        let prompts: Vec<_> = q.elements().filter(|c| c.name == "prompt").collect();
        if prompts.len() != 1 {
            self.err(q, path, format!("a question needs exactly one <prompt> (it has {}).", prompts.len()));
        }
        if let (Some(first), Some(p)) = (q.elements().next(), prompts.first()) {
            if first.name != "prompt" {
                self.err(p, &join(path, p), "the <prompt> must come first in its question.");
            }
        }
        for p in prompts {
            self.text_part(p, &join(path, p), "prompt");
        }
    }

    fn sequence(&mut self, e: &Element, path: &str, items: Vec<&Element>) {
        if items.len() < 2 {
            self.err(e, path, format!("a sequencing exercise needs at least two <item>s (it has {}).", items.len()));
        }
        let mut seen: HashMap<usize, u32> = HashMap::new();
        for item in &items {
            let item_path = join(path, item);
            self.text_part(item, &item_path, "item");
            let Some(raw) = item.attr("position") else { continue };
            match raw.trim().parse::<usize>() {
                Ok(n) if n >= 1 => {
                    if let Some(line) = seen.get(&n) {
                        self.err(item, &item_path, format!("position {n} is already used on line {line}. Each item needs its own position."));
                    } else {
                        seen.insert(n, item.line);
                    }
                }
                _ => self.err(item, &item_path, format!("position=\"{raw}\" must be a whole number, 1 for the first step.")),
            }
        }
        let n = items.len();
        let missing: Vec<String> = (1..=n).filter(|p| !seen.contains_key(p)).map(|p| p.to_string()).collect();
        let beyond: Vec<String> = {
            let mut b: Vec<usize> = seen.keys().copied().filter(|p| *p > n).collect();
            b.sort_unstable();
            b.iter().map(|p| p.to_string()).collect()
        };
        if !missing.is_empty() && seen.len() == items.len() {
            self.err(e, path, format!(
                "positions must run from 1 to {n} with no gaps: {} missing, {} too high.",
                missing.join(", "),
                if beyond.is_empty() { "none".to_string() } else { beyond.join(", ") }
            ));
        }
    }
}

fn count_blanks(e: &Element) -> usize {
    e.elements().map(|c| usize::from(c.name == "blank") + count_blanks(c)).sum()
}

fn required_hint(element: &str, attr: &str) -> String {
    match (element, attr) {
        ("blank", "answer") => "add answer=\"…\" with the word that fills the blank.".into(),
        ("statement", "answer") => "add answer=\"true\" or answer=\"false\".".into(),
        ("item", "position") => "add position=\"N\", 1 for the first step.".into(),
        ("exercise", "type") => {
            let names: Vec<_> = ExerciseKind::ALL.iter().map(|k| k.name()).collect();
            format!("add type=\"…\", one of: {}.", names.join(", "))
        }
        _ => format!("add {attr}=\"…\"."),
    }
}
