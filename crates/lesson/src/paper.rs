//! A lesson on paper: the worksheet students fill in with a pen, or its
//! answer key. Numbered exercises; a blank is a line to write on, a writing
//! area as many ruled lines as it asks for, a choice a box to tick, a
//! sequence a box for each number. The key shows every answer in those
//! places. Neither shows teacher notes.
//!
//! A string writer like `html`, for the same reasons (static markup, every
//! text escaped, only the literal tags below), and server-only: the print
//! pages need no code in the browser.

use std::fmt::Write;

use super::{escape_attr, escape_text, walk::Draw, Element, ExerciseKind};

/// Worksheet or answer key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sheet {
    Worksheet,
    Key,
}

/// The blocks of a lesson for printing (without a wrapping element).
pub fn to_paper(root: &Element, sheet: Sheet) -> String {
    let mut p = Paper { out: String::with_capacity(1024), key: sheet == Sheet::Key, number: 0 };
    for e in root.elements() {
        p.block(e);
    }
    p.out
}

/// Ruled lines for a short answer on the worksheet.
const SHORT_ANSWER_LINES: u32 = 3;
/// The most lines one writing area takes on paper.
const MAX_LINES: u32 = 40;

struct Paper {
    out: String,
    key: bool,
    /// The exercise being written, counted from 1.
    number: u32,
}

impl Paper {
    fn wrap(&mut self, tag: &str, class: &str, e: &Element) {
        let _ = write!(self.out, "<{tag}");
        if !class.is_empty() {
            let _ = write!(self.out, " class=\"{}\"", escape_attr(class));
        }
        self.out.push('>');
        self.inline(e);
        let _ = write!(self.out, "</{tag}>");
    }

    /// Ruled lines, each a border (browsers leave backgrounds off paper).
    fn lines(&mut self, n: u32) {
        let n = n.clamp(1, MAX_LINES);
        let _ = write!(self.out, "<div class=\"ruled\" data-lines=\"{n}\">");
        for _ in 0..n {
            self.out.push_str("<div class=\"line\"></div>");
        }
        self.out.push_str("</div>");
    }

    fn open_answer_note(&mut self) {
        self.out.push_str("<p class=\"key-note\">Answers will vary.</p>");
    }

    fn prompt_of(&mut self, q: &Element) {
        if let Some(p) = q.elements().find(|c| c.name == "prompt") {
            self.wrap("p", "prompt", p);
        }
    }

    /// A box to tick; ticked in the key when `ticked`.
    fn tick_box(&mut self, ticked: bool) {
        self.out.push_str(if self.key && ticked { "<span class=\"box\">✔</span>" } else { "<span class=\"box\"></span>" });
    }
}

impl Draw for Paper {
    fn text(&mut self, s: &str) {
        self.out.push_str(&escape_text(s));
    }

    /// A line to write on: on the worksheet every line is as long as every
    /// other (one as long as its answer would give the answer's length
    /// away); on the key, as long as the answer it shows.
    fn blank(&mut self, e: &Element) {
        let answer = e.attr("answer").unwrap_or_default();
        let width = if self.key { answer.chars().count().clamp(6, 28) } else { super::html::BLANK_WIDTH + 2 };
        let _ = write!(self.out, "<span class=\"fill\" style=\"min-width:{width}ch\">");
        if self.key {
            self.text(answer);
        }
        self.out.push_str("</span>");
        if let Some(hint) = e.attr("hint") {
            self.out.push_str(" <span class=\"hint\">(");
            self.text(hint);
            self.out.push_str(")</span>");
        }
    }

    fn writing_area(&mut self, e: &Element) {
        if self.key {
            return self.open_answer_note();
        }
        self.lines(super::walk::writing_lines(e));
    }

    fn exercise(&mut self, e: &Element) {
        self.number += 1;
        let (kind, head) = super::walk::exercise_head(self.number, e);
        self.out.push_str("<section class=\"exercise\"><h2 class=\"exercise-head\">");
        self.text(&head);
        self.out.push_str("</h2>");
        let sequence = kind == Some(ExerciseKind::Sequencing);
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
        self.out.push_str("<div class=\"question\">");
        self.prompt_of(q);
        self.out.push_str("<ul class=\"options\">");
        for o in q.elements().filter(|c| c.name == "option") {
            self.out.push_str("<li>");
            self.tick_box(o.attr("correct") == Some("true"));
            self.out.push(' ');
            self.inline(o);
            self.out.push_str("</li>");
        }
        self.out.push_str("</ul></div>");
    }

    fn open_question(&mut self, q: &Element) {
        self.out.push_str("<div class=\"question\">");
        self.prompt_of(q);
        match (self.key, q.elements().find(|c| c.name == "answer")) {
            (true, Some(a)) => {
                self.out.push_str("<p class=\"key-answer\">");
                self.text(&a.text());
                self.out.push_str("</p>");
            }
            (true, None) => self.open_answer_note(),
            (false, _) => self.lines(SHORT_ANSWER_LINES),
        }
        self.rubric_of(q);
        self.out.push_str("</div>");
    }

    fn statement(&mut self, s: &Element) {
        let answer = s.attr("answer").unwrap_or_default();
        self.out.push_str("<div class=\"question statement\"><span class=\"tf\">");
        for (value, label) in [("true", "True"), ("false", "False")] {
            self.tick_box(answer == value);
            let _ = write!(self.out, " {label} ");
        }
        self.out.push_str("</span> ");
        self.inline(s);
        self.out.push_str("</div>");
    }

    fn item(&mut self, i: &Element) {
        self.out.push_str("<li class=\"question\"><span class=\"box number\">");
        if self.key {
            self.text(i.attr("position").unwrap_or_default());
        }
        self.out.push_str("</span> ");
        self.inline(i);
        self.out.push_str("</li>");
    }

    fn styled(&mut self, tag: &str, e: &Element) {
        self.wrap(tag, "", e);
    }

    fn heading(&mut self, tag: &str, e: &Element) {
        self.wrap(tag, "", e);
    }

    // Notes are for the teacher, on screen: the default draws none.

    fn instructions(&mut self, e: &Element) {
        self.wrap("p", "instructions", e);
    }

    fn paragraph(&mut self, e: &Element) {
        self.wrap("p", "", e);
    }

    fn prompt(&mut self, p: &Element) {
        self.wrap("p", "prompt", p);
    }

    /// On the key every rubric; on the worksheet one shared with students.
    fn rubric(&mut self, r: &Element) {
        if self.key {
            super::walk::rubric_table(r, "Rubric", &mut self.out);
        } else if r.attr("shared") == Some("true") {
            super::walk::rubric_table(r, "How it is marked", &mut self.out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LESSON: &str = r#"<lesson>
<h1>Verbs</h1>
<note>Go slowly with this class.</note>
<exercise type="fill-blanks"><p>She <blank answer="runs" hint="run"/> fast.</p></exercise>
<exercise type="multiple-choice"><question><prompt>Pick one</prompt><option correct="true">went</option><option>goed</option></question></exercise>
<exercise type="true-false"><statement answer="false">Fish can fly.</statement></exercise>
<exercise type="sequencing"><item position="2">Then</item><item position="1">First</item></exercise>
<exercise type="short-answer"><question><prompt>Why?</prompt><answer>Because it rains.</answer></question></exercise>
<exercise type="writing"><prompt>Write a letter.</prompt><writing-area lines="8"/></exercise>
</lesson>"#;

    fn sheet(which: Sheet) -> String {
        to_paper(&crate::parse(LESSON).unwrap(), which)
    }

    #[test]
    fn the_worksheet_has_no_answers_and_no_notes() {
        let w = sheet(Sheet::Worksheet);
        for hidden in ["runs", "Because it rains", "✔", "Go slowly"] {
            assert!(!w.contains(hidden), "{hidden} in {w}");
        }
        assert!(w.contains("<h2 class=\"exercise-head\">1. Fill in the blanks</h2>"), "{w}");
        assert!(w.contains("6. Writing"));
        assert!(w.contains("data-lines=\"8\""), "the writing area's lines: {w}");
        assert_eq!(w.matches("<div class=\"line\">").count(), 8 + 3, "eight for the writing, three for the short answer");
        assert!(w.contains("(run)"), "hints stay");
    }

    #[test]
    fn the_key_has_every_answer_and_no_notes() {
        let k = sheet(Sheet::Key);
        for shown in ["runs", "Because it rains.", "Answers will vary."] {
            assert!(k.contains(shown), "{shown} missing from {k}");
        }
        assert_eq!(k.matches('✔').count(), 2, "the right option and the right one of True/False: {k}");
        assert!(k.contains("<span class=\"box number\">2</span> Then"));
        assert!(!k.contains("Go slowly"));
    }

    #[test]
    fn text_is_escaped() {
        let root = crate::parse("<lesson><p>&lt;script&gt;</p></lesson>").unwrap();
        assert!(to_paper(&root, Sheet::Worksheet).contains("&lt;script&gt;"));
    }
}
