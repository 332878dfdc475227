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
                _ => {}
            }
        }
    }
}
