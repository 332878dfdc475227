//! The one walk over a lesson shared by its two drawings, the screen
//! (`html`) and paper (`paper`): which element is a block, which is inline
//! content, and what each part of an exercise is, is decided here once;
//! each drawing says only how it draws each thing. A new element or a new
//! exercise part is added here and then, by the compiler's insistence, to
//! both drawings.

use super::{Element, ExerciseKind, Node};

pub(super) trait Draw {
    /// Text, escaped.
    fn text(&mut self, s: &str);
    /// `em` or `strong` around its inline content.
    fn styled(&mut self, tag: &str, e: &Element);
    fn blank(&mut self, e: &Element);
    /// `h1`, `h2`, `h3` or `p` as a block of the lesson.
    fn heading(&mut self, tag: &str, e: &Element);
    /// A teacher's note: nothing unless the drawing is for the teacher.
    fn note(&mut self, _e: &Element) {}
    fn writing_area(&mut self, e: &Element);
    /// The exercise's frame; its parts are drawn by [`Draw::parts`].
    fn exercise(&mut self, e: &Element);
    fn instructions(&mut self, e: &Element);
    /// A paragraph inside an exercise.
    fn paragraph(&mut self, e: &Element);
    fn choice_question(&mut self, q: &Element);
    fn open_question(&mut self, q: &Element);
    fn statement(&mut self, s: &Element);
    fn item(&mut self, i: &Element);
    fn prompt(&mut self, p: &Element);
    /// How an open answer is scored: drawn for whoever may see it.
    fn rubric(&mut self, r: &Element);

    /// One block of the lesson.
    fn block(&mut self, e: &Element) {
        match e.name.as_str() {
            tag @ ("h1" | "h2" | "h3" | "p") => self.heading(tag, e),
            "note" => self.note(e),
            "writing-area" => self.writing_area(e),
            "exercise" => self.exercise(e),
            _ => {}
        }
    }

    /// The inline content of `e`: text, emphasis, blanks; anything else as its text.
    fn inline(&mut self, e: &Element) {
        for n in &e.children {
            match n {
                Node::Text(t) => self.text(t),
                Node::Element(c) => match c.name.as_str() {
                    tag @ ("em" | "strong") => self.styled(tag, c),
                    "blank" => self.blank(c),
                    _ => self.text(&c.text()),
                },
            }
        }
    }

    /// The parts of an exercise of `kind`, in the order written.
    fn parts(&mut self, e: &Element, kind: Option<ExerciseKind>) {
        for part in e.elements() {
            match (part.name.as_str(), kind) {
                ("instructions", _) => self.instructions(part),
                ("p", _) => self.paragraph(part),
                ("question", Some(ExerciseKind::MultipleChoice)) => self.choice_question(part),
                ("question", _) => self.open_question(part),
                ("statement", _) => self.statement(part),
                ("item", _) => self.item(part),
                ("prompt", _) => self.prompt(part),
                ("writing-area", _) => self.writing_area(part),
                ("rubric", _) => self.rubric(part),
                _ => {}
            }
        }
    }

    /// The rubric a question ends with, if any.
    fn rubric_of(&mut self, q: &Element) {
        if let Some(r) = q.elements().find(|c| c.name == "rubric") {
            self.rubric(r);
        }
    }
}

/// The lesson's blocks as printed under its title: a first `h1` that says
/// the title again (every new lesson starts with one) is left out, so that
/// a page, document or worksheet shows its title once.
#[cfg(feature = "ssr")]
pub(super) fn blocks_under_title<'a>(root: &'a Element, title: &str) -> impl Iterator<Item = &'a Element> {
    let words = |s: &str| s.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>();
    let repeats = root.elements().next().is_some_and(|e| e.name == "h1" && words(&e.text()) == words(title));
    root.elements().skip(usize::from(repeats))
}

/// How many ruled lines a writing area asks for on paper (5 unless it says).
#[cfg(feature = "ssr")]
pub(super) fn writing_lines(e: &Element) -> u32 {
    e.attr("lines").and_then(|l| l.parse().ok()).unwrap_or(5)
}

/// An exercise's kind, and its head on paper: "2. Multiple choice: Past
/// forms" (its number, what kind it is, and its title if it has one).
#[cfg(feature = "ssr")]
pub(super) fn exercise_head(number: u32, e: &Element) -> (Option<ExerciseKind>, String) {
    let kind = e.attr("type").and_then(ExerciseKind::from_name);
    let mut head = format!("{number}. {}", kind.map(|k| k.label()).unwrap_or("Exercise"));
    if let Some(t) = e.attr("title") {
        head.push_str(": ");
        head.push_str(t);
    }
    (kind, head)
}

/// A rubric as a table, one row per criterion with its levels, best
/// first; `heading` names it for whoever reads it. Escaped like all text.
pub(super) fn rubric_table(r: &Element, heading: &str, out: &mut String) {
    use std::fmt::Write;
    let rubric = super::rubric::Rubric::from_element(r);
    let _ = write!(out, "<div class=\"rubric\"><p class=\"rubric-title\"><span class=\"tag\">{}</span> up to {} points</p><table>", super::escape_text(heading), rubric.max_points());
    for c in &rubric.criteria {
        let _ = write!(out, "<tr><th scope=\"row\">{}</th>", super::escape_text(&c.name));
        for l in &c.levels {
            let _ = write!(out, "<td><strong>{}</strong> {}</td>", l.points, super::escape_text(&l.text));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
}
