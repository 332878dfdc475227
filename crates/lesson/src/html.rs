//! The lesson as HTML, for the page: the teacher's view (exercises as students
//! meet them, answers shown) or the student preview (answers hidden, inputs to
//! fill in, teacher notes left out). It runs on the server only: every
//! document the browser shows arrives rendered for both audiences
//! ([`LessonHtml`]), so the browser bundle needs no XML parser.
//!
//! Why a string and not Leptos views: the lesson is static markup with no
//! event handlers, and each distinct `view!` shape costs the browser bundle
//! its build, hydrate and rebuild code. One string writer keeps the WASM
//! small (see `docs/benchmarks.md`).
//!
//! Inert by construction: every text and attribute value from the document is
//! escaped; the only tags written are the literal ones below.
//!
//! One cohesive thing at about 450 lines: the screen drawing of every
//! element for both audiences and for a student's sheet; what each element
//! is, is decided once in `walk`, shared with `paper`.

use std::{collections::HashMap, fmt::Write};

use serde::{Deserialize, Serialize};

use super::{escape_attr, escape_text, walk::Draw, Element, ExerciseKind};

/// A lesson document as HTML for both audiences, rendered by the server
/// ([`render_both`]): the teacher's view with answers, and the student
/// preview. The browser shows these as they are.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LessonHtml {
    pub teacher: String,
    pub student: String,
}

/// "Reading level: grade 6.2" above the teacher's view, when the lesson is
/// long enough to measure (`reading`; the server's alone).
fn level_line(root: &Element) -> String {
    #[cfg(feature = "ssr")]
    if let Some(level) = super::reading::of_lesson(root) {
        return format!("<p class=\"reading-level\" title=\"{} over {} words of what students read\">Reading level: {}</p>", level.formula, level.words, escape_text(&level.said()));
    }
    let _ = root;
    String::new()
}

/// "Standards: RL.4.1 · RL.4.2" above the teacher's view, when the lesson
/// itself names standards (an exercise's show in its head).
fn standards_line(root: &Element) -> String {
    match root.attr("standards") {
        Some(value) => format!("<p class=\"standards\">Standards: {}</p>", escape_text(&super::standards::codes(value).join(" · "))),
        None => String::new(),
    }
}

/// Who the lesson is shown to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    Teacher,
    Student,
}

/// A document rendered for both audiences, as the lesson view shows it. A
/// document that cannot be parsed (only possible for stored documents from an
/// older format) renders as a message saying so.
pub fn render_both(xml: &str) -> LessonHtml {
    match super::parse(xml) {
        Ok(root) => LessonHtml {
            teacher: format!("{}{}{}", level_line(&root), standards_line(&root), to_html(&root, Audience::Teacher)),
            student: to_html(&root, Audience::Student),
        },
        Err(e) => {
            let message = format!(
                "<p class=\"form-error\" role=\"alert\">This lesson cannot be shown: {}</p>",
                escape_text(&e.to_string())
            );
            LessonHtml { teacher: message.clone(), student: message }
        }
    }
}

/// The blocks of a parsed lesson as HTML (without a wrapping element).
pub fn to_html(root: &Element, who: Audience) -> String {
    let mut w = Writer { out: String::with_capacity(1024), who, sheet: None, feedback: None };
    for e in root.elements() {
        w.block(e);
    }
    w.out
}

/// A student's answer sheet: the student rendering with every input named
/// by its item's id (`answers::items`) and filled with what the student
/// answered, and the marks of the last check beside the items. The form
/// around it is the page's.
pub fn to_answer_sheet(root: &Element, answers: &HashMap<String, String>, marks: &HashMap<String, bool>, feedback: &HashMap<String, ItemFeedback>) -> String {
    let mut w = Writer { out: String::with_capacity(2048), who: Audience::Student, sheet: Some((answers, marks)), feedback: Some(feedback) };
    for e in root.elements() {
        w.block(e);
    }
    w.out
}

struct Writer<'a> {
    out: String,
    who: Audience,
    /// Answers and marks, when writing a student's sheet.
    sheet: Option<(&'a HashMap<String, String>, &'a HashMap<String, bool>)>,
    /// The teacher's approved feedback on open answers, on a sheet.
    feedback: Option<&'a HashMap<String, ItemFeedback>>,
}

/// The teacher's feedback on one open answer, as the student's sheet shows
/// it: only ever what the teacher approved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemFeedback {
    pub text: String,
    pub points: Option<i64>,
    /// The most the rubric gave when it was approved.
    pub max_points: Option<i64>,
}

/// `name="value"`, escaped, with a leading space.
fn attr(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, " {name}=\"{}\"", escape_attr(value));
}

impl<'a> Writer<'a> {
    fn teacher(&self) -> bool {
        self.who == Audience::Teacher
    }

    /// The standards an element names, for the teacher only.
    fn standards(&mut self, e: &Element) {
        if let (true, Some(value)) = (self.teacher(), e.attr("standards")) {
            self.out.push_str("<span class=\"standards\" title=\"Standards\">");
            self.text(&super::standards::codes(value).join(" · "));
            self.out.push_str("</span>");
        }
    }

    /// The student's answer to an item, on a sheet.
    fn answer(&self, id: &str) -> Option<&'a str> {
        self.sheet.and_then(|(a, _)| a.get(id)).map(String::as_str)
    }

    /// ` name="id"` on a sheet, so the form sends the input as that item.
    fn name(&mut self, id: &str) {
        if self.sheet.is_some() {
            attr(&mut self.out, "name", id);
        }
    }

    /// The teacher's feedback under an open answer, on a sheet.
    fn feedback(&mut self, id: &str) {
        let Some(f) = self.feedback.and_then(|f| f.get(id)) else { return };
        self.out.push_str("<div class=\"feedback\" role=\"note\"><p class=\"feedback-title\">Feedback from your teacher</p><p>");
        self.text(&f.text);
        self.out.push_str("</p>");
        if let (Some(points), Some(max)) = (f.points, f.max_points) {
            let _ = write!(self.out, "<p class=\"points\">{points} of {max} points</p>");
        }
        self.out.push_str("</div>");
    }

    /// The mark of the last check beside an item, on a sheet.
    fn mark(&mut self, id: &str) {
        match self.sheet.and_then(|(_, m)| m.get(id)) {
            Some(true) => self.out.push_str("<span class=\"mark right\">✓ Right</span>"),
            Some(false) => self.out.push_str("<span class=\"mark wrong\">✗ Not right yet</span>"),
            None => {}
        }
    }

    /// `<tag class="…" data-id="…">`; an empty class is left out.
    fn open(&mut self, tag: &str, class: &str, e: Option<&Element>) {
        self.out.push('<');
        self.out.push_str(tag);
        if !class.is_empty() {
            attr(&mut self.out, "class", class);
        }
        if let Some(e) = e {
            attr(&mut self.out, "data-id", e.id().unwrap_or_default());
        }
        self.out.push('>');
    }

    fn close(&mut self, tag: &str) {
        let _ = write!(self.out, "</{tag}>");
    }

    /// A simple element around the inline content of `e`.
    fn wrap(&mut self, tag: &str, class: &str, e: &Element, with_id: bool) {
        self.open(tag, class, with_id.then_some(e));
        self.inline(e);
        self.close(tag);
    }

    fn prompt_of(&mut self, q: &Element) {
        if let Some(p) = q.elements().find(|c| c.name == "prompt") {
            self.wrap("p", "prompt", p, false);
        }
    }

    /// A radio button or checkbox; checked and disabled in the teacher's view.
    fn choice_input(&mut self, kind: &str, group: &str, value: Option<&str>, checked: bool) {
        let _ = write!(self.out, "<input type=\"{kind}\"");
        attr(&mut self.out, "name", group);
        if let Some(v) = value {
            attr(&mut self.out, "value", v);
        }
        if checked {
            self.out.push_str(" checked");
        }
        if self.teacher() {
            self.out.push_str(" disabled");
        }
        self.out.push('>');
    }

    /// A sequence on a student's sheet: the items in the student's order
    /// (the written order at first), each with a hidden input that sends
    /// it in that order and buttons to move it. Without the browser's code
    /// the buttons send the form and the server moves the item.
    fn sequence_sheet(&mut self, e: &Element) {
        let eid = e.id().unwrap_or_default();
        if let Some(i) = e.elements().find(|c| c.name == "instructions") {
            self.wrap("p", "instructions", i, false);
        }
        let mut items: Vec<&Element> = e.elements().filter(|c| c.name == "item").collect();
        if let Some(order) = self.answer(eid).map(super::answers::list) {
            items.sort_by_key(|i| order.iter().position(|o| Some(o.as_str()) == i.id()).unwrap_or(usize::MAX));
        }
        self.out.push_str("<ol class=\"sequence\"");
        attr(&mut self.out, "data-item", eid);
        self.out.push('>');
        for i in items {
            let iid = i.id().unwrap_or_default();
            self.open("li", "sequence-item", Some(i));
            self.out.push_str("<input type=\"hidden\"");
            attr(&mut self.out, "name", eid);
            attr(&mut self.out, "value", iid);
            self.out.push_str("><span class=\"item-text\">");
            self.inline(i);
            self.out.push_str("</span>");
            for (way, label) in [("up", "Move up"), ("down", "Move down")] {
                self.out.push_str("<button type=\"submit\" class=\"move\" name=\"_move\"");
                attr(&mut self.out, "value", &format!("{way}:{eid}:{iid}"));
                let _ = write!(self.out, ">{label}</button>");
            }
            self.out.push_str("</li>");
        }
        self.out.push_str("</ol>");
        self.mark(eid);
    }
}

impl Draw for Writer<'_> {
    fn text(&mut self, s: &str) {
        self.out.push_str(&escape_text(s));
    }

    fn blank(&mut self, e: &Element) {
        let answer = e.attr("answer").unwrap_or_default();
        let hint = e.attr("hint");
        let id = e.id().unwrap_or_default();
        match self.who {
            Audience::Teacher => {
                let alts: Vec<&str> = e.attr("alts").unwrap_or_default().split(',').map(str::trim).filter(|a| !a.is_empty()).collect();
                self.out.push_str("<span class=\"blank answer\"");
                attr(&mut self.out, "data-id", id);
                if !alts.is_empty() {
                    attr(&mut self.out, "title", &format!("Also accepted: {}", alts.join(", ")));
                }
                self.out.push('>');
                self.text(answer);
                self.out.push_str("</span>");
                if let Some(h) = hint {
                    self.out.push_str("<span class=\"hint\"> (");
                    self.text(h);
                    self.out.push_str(")</span>");
                }
            }
            Audience::Student => {
                // Every blank is as wide as every other: a box sized by its
                // answer would tell the student how long the answer is.
                self.out.push_str("<input class=\"blank\" type=\"text\"");
                attr(&mut self.out, "data-id", id);
                let _ = write!(self.out, " aria-label=\"Blank\" size=\"{BLANK_WIDTH}\"");
                attr(&mut self.out, "placeholder", hint.unwrap_or_default());
                self.name(id);
                if let Some(v) = self.answer(id) {
                    attr(&mut self.out, "value", v);
                }
                self.out.push('>');
                self.mark(id);
            }
        }
    }

    fn writing_area(&mut self, e: &Element) {
        let lines: u32 = e.attr("lines").and_then(|l| l.parse().ok()).unwrap_or(5);
        self.out.push_str("<textarea class=\"writing-area\"");
        attr(&mut self.out, "data-id", e.id().unwrap_or_default());
        let _ = write!(self.out, " rows=\"{lines}\" aria-label=\"Your writing\"");
        attr(&mut self.out, "placeholder", e.attr("placeholder").unwrap_or_default());
        if self.teacher() {
            self.out.push_str(" disabled");
        }
        let id = e.id().unwrap_or_default();
        self.name(id);
        self.out.push('>');
        if let Some(v) = self.answer(id) {
            self.text(v);
        }
        self.out.push_str("</textarea>");
        self.feedback(id);
    }

    fn exercise(&mut self, e: &Element) {
        let kind = e.attr("type").and_then(ExerciseKind::from_name);
        self.out.push_str("<section class=\"exercise\"");
        attr(&mut self.out, "data-id", e.id().unwrap_or_default());
        attr(&mut self.out, "data-kind", kind.map(|k| k.name()).unwrap_or_default());
        self.out.push_str("><header class=\"exercise-head\"><span class=\"exercise-kind\">");
        self.text(kind.map(|k| k.label()).unwrap_or("Exercise"));
        self.out.push_str("</span>");
        if let Some(t) = e.attr("title") {
            self.out.push_str("<span class=\"exercise-title\">");
            self.text(t);
            self.out.push_str("</span>");
        }
        self.standards(e);
        self.out.push_str("</header>");
        let sequence = kind == Some(ExerciseKind::Sequencing);
        if sequence && self.sheet.is_some() {
            self.sequence_sheet(e);
            self.out.push_str("</section>");
            return;
        }
        if sequence {
            self.out.push_str("<ol class=\"sequence\">");
        }
        self.parts(e, kind);
        if sequence {
            self.out.push_str("</ol>");
        }
        self.out.push_str("</section>");
    }

    fn choice_question(&mut self, q: &Element) {
        let kind = if q.attr("multiple") == Some("true") { "checkbox" } else { "radio" };
        let qid = q.id().unwrap_or_default();
        // On a sheet the group is the item, and each input says its option.
        let (group, chosen) = match self.sheet {
            Some(_) => (qid.to_string(), self.answer(qid).map(super::answers::list).unwrap_or_default()),
            None => (format!("q-{qid}"), Vec::new()),
        };
        self.open("div", "question", Some(q));
        self.prompt_of(q);
        if self.sheet.is_some() {
            // Sent even when nothing is chosen, so that clearing every box is saved.
            self.out.push_str("<input type=\"hidden\" value=\"\"");
            attr(&mut self.out, "name", &group);
            self.out.push('>');
        }
        self.out.push_str("<ul class=\"options\">");
        for o in q.elements().filter(|c| c.name == "option") {
            let correct = self.teacher() && o.attr("correct") == Some("true");
            let oid = o.id().unwrap_or_default();
            let value = self.sheet.is_some().then_some(oid);
            let checked = correct || chosen.iter().any(|c| c == oid);
            self.open("li", if correct { "option correct" } else { "option" }, Some(o));
            self.out.push_str("<label>");
            self.choice_input(kind, &group, value, checked);
            self.out.push(' ');
            self.inline(o);
            if correct {
                self.out.push_str("<span class=\"answer-mark\"> ✓ correct</span>");
            }
            self.out.push_str("</label></li>");
        }
        self.out.push_str("</ul>");
        self.mark(qid);
        self.out.push_str("</div>");
    }

    fn open_question(&mut self, q: &Element) {
        self.open("div", "question", Some(q));
        self.prompt_of(q);
        match (self.who, q.elements().find(|c| c.name == "answer")) {
            (Audience::Teacher, Some(a)) => {
                self.out.push_str("<p class=\"model-answer\"><span class=\"tag\">Model answer</span> ");
                self.text(&a.text());
                self.out.push_str("</p>");
            }
            (Audience::Teacher, None) => {}
            (Audience::Student, _) => {
                let id = q.id().unwrap_or_default();
                self.out.push_str("<textarea class=\"short-answer\" rows=\"3\" aria-label=\"Your answer\"");
                self.name(id);
                self.out.push('>');
                if let Some(v) = self.answer(id) {
                    self.text(v);
                }
                self.out.push_str("</textarea>");
                self.feedback(id);
            }
        }
        self.rubric_of(q);
        self.out.push_str("</div>");
    }

    fn statement(&mut self, s: &Element) {
        let answer = s.attr("answer").unwrap_or_default();
        let sid = s.id().unwrap_or_default();
        let group = if self.sheet.is_some() { sid.to_string() } else { format!("st-{sid}") };
        let given = self.answer(sid).map(String::from);
        self.open("div", "statement", Some(s));
        self.out.push_str("<span class=\"statement-text\">");
        self.inline(s);
        self.out.push_str("</span><span class=\"tf-choices\">");
        for (i, (value, label)) in [("true", "True"), ("false", "False")].into_iter().enumerate() {
            if i > 0 {
                self.out.push(' ');
            }
            let checked = self.teacher() && answer == value;
            self.open("label", if checked { "tf-choice correct" } else { "tf-choice" }, None);
            let checked = checked || given.as_deref() == Some(value);
            self.choice_input("radio", &group, Some(value), checked);
            let _ = write!(self.out, " {label}</label>");
        }
        self.out.push_str("</span>");
        self.mark(sid);
        self.out.push_str("</div>");
    }

    fn item(&mut self, i: &Element) {
        self.open("li", "sequence-item", Some(i));
        match self.who {
            Audience::Teacher => {
                self.out.push_str("<span class=\"position\" title=\"Place in the right order\">");
                self.text(i.attr("position").unwrap_or_default());
                self.out.push_str("</span>");
            }
            Audience::Student => {
                self.out.push_str("<input class=\"position-input\" type=\"number\" min=\"1\" aria-label=\"Position\">");
            }
        }
        self.out.push(' ');
        self.inline(i);
        self.out.push_str("</li>");
    }

    fn styled(&mut self, tag: &str, e: &Element) {
        self.wrap(tag, "", e, false);
    }

    fn heading(&mut self, tag: &str, e: &Element) {
        self.wrap(tag, "", e, true);
    }

    fn note(&mut self, e: &Element) {
        if self.teacher() {
            self.open("aside", "teacher-note", Some(e));
            self.out.push_str("<span class=\"tag\">Teacher note</span> ");
            self.inline(e);
            self.close("aside");
        }
    }

    fn instructions(&mut self, e: &Element) {
        self.wrap("p", "instructions", e, false);
    }

    fn paragraph(&mut self, e: &Element) {
        self.wrap("p", "", e, true);
    }

    fn prompt(&mut self, p: &Element) {
        self.wrap("p", "prompt", p, false);
    }

    /// The teacher sees every rubric; a student only one shared with them.
    fn rubric(&mut self, r: &Element) {
        let shared = r.attr("shared") == Some("true");
        match (self.who, shared) {
            (Audience::Teacher, true) => super::walk::rubric_table(r, "Rubric, shown to students", &mut self.out),
            (Audience::Teacher, false) => super::walk::rubric_table(r, "Rubric", &mut self.out),
            (Audience::Student, true) => super::walk::rubric_table(r, "How it is marked", &mut self.out),
            (Audience::Student, false) => {}
        }
    }
}

/// How wide a student's box for a blank is, in characters, whatever its answer.
pub const BLANK_WIDTH: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    fn render(xml: &str, who: Audience) -> String {
        to_html(&parse(xml).unwrap(), who)
    }

    #[test]
    fn text_and_attributes_are_escaped() {
        let html = render(
            r#"<lesson><p id="a&quot;b">&lt;script&gt;alert(1)&lt;/script&gt; &amp; <em>x</em></p></lesson>"#,
            Audience::Teacher,
        );
        assert_eq!(html, r#"<p data-id="a&quot;b">&lt;script&gt;alert(1)&lt;/script&gt; &amp; <em>x</em></p>"#);
    }

    #[test]
    fn blanks_show_answers_to_the_teacher_and_inputs_to_students() {
        let xml = r#"<lesson><exercise id="e1" type="fill-blanks" title="Verbs"><p id="p1">Je <blank id="b1" answer="suis" alts="suis, " hint="être"/> ici.</p></exercise></lesson>"#;
        let teacher = render(xml, Audience::Teacher);
        assert!(teacher.contains(r#"<span class="blank answer" data-id="b1" title="Also accepted: suis">suis</span><span class="hint"> (être)</span>"#), "{teacher}");
        assert!(teacher.contains(r#"<span class="exercise-title">Verbs</span>"#), "{teacher}");
        let student = render(xml, Audience::Student);
        assert!(student.contains(r#"<input class="blank" type="text" data-id="b1" aria-label="Blank" size="16" placeholder="être">"#), "{student}");
        assert!(!student.contains("suis"), "{student}");
    }

    #[test]
    fn notes_and_correct_answers_are_for_the_teacher_only() {
        let xml = r#"<lesson><note id="n1">Watch the time</note><exercise id="e1" type="multiple-choice"><question id="q1"><prompt>Pick</prompt><option id="o1" correct="true">A</option><option id="o2">B</option></question></exercise></lesson>"#;
        let teacher = render(xml, Audience::Teacher);
        assert!(teacher.contains("Teacher note"), "{teacher}");
        assert!(teacher.contains(r#"<li class="option correct" data-id="o1"><label><input type="radio" name="q-q1" checked disabled> A<span class="answer-mark"> ✓ correct</span></label></li>"#), "{teacher}");
        let student = render(xml, Audience::Student);
        assert!(!student.contains("Watch the time") && !student.contains("checked") && !student.contains("correct"), "{student}");
    }
}
