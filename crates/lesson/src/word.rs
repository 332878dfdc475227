//! A lesson as a Word document (.docx): the worksheet or the answer key
//! laid out as on paper (`paper`): numbered exercises, a blank as an
//! underlined gap (its answer in the key), a box to tick for each option and
//! for True and False, a box for each item's number in a sequence, ruled
//! lines to write on, rubrics as tables. No teacher notes. Written with
//! `docx-rs`; server only.
//!
//! A worksheet is handed to students, so no part of it, seen or unseen,
//! holds what they must not read: it carries only a reference to the
//! lesson it was made from (kept by the server), for the teacher who made
//! it to import it back. The key, which stays with teachers, carries the
//! whole lesson. Reading either back is `read`.

use std::io::Cursor;

use base64::Engine;
use docx_rs::{Docx, Paragraph, Run, Style, StyleType, Table, TableCell, TableRow};

use super::{paper::Sheet, rubric::Rubric, walk::Draw, Element};

mod read;
pub use read::{read_docx, Carried, Worksheet, CHANGED};

/// The element of the key's custom XML part that holds the lesson.
const LESSON_PART: &str = "marginLesson";
/// The element of the worksheet's custom XML part that holds its reference.
const WORKSHEET_PART: &str = "marginWorksheet";
/// Characters of a blank's gap on the worksheet (all blanks alike, so no
/// gap gives its answer's length away).
const BLANK_GAP: usize = 12;
/// One ruled line.
const RULE: &str = "________________________________________________________________________";
/// Ruled lines for a short answer on the worksheet (as on paper).
const SHORT_ANSWER_LINES: u32 = 3;
/// The most lines one writing area takes.
const MAX_LINES: u32 = 40;
/// The line under a worksheet's title for the student's name.
fn name_line() -> String {
    format!("Name: {}    Date: {}", "_".repeat(28), "_".repeat(14))
}

/// The lesson `root` titled `title` as a .docx, worksheet or key. A
/// worksheet carries `reference` (the server's name for the lesson it was
/// made from) and nothing else of the lesson; the key carries the lesson.
pub fn to_docx(root: &Element, title: &str, sheet: Sheet, reference: &str) -> Result<Vec<u8>, String> {
    let key = sheet == Sheet::Key;
    let mut w = Word { blocks: Vec::new(), runs: Vec::new(), bold: false, italic: false, key, number: 0 };
    w.say(title, Some("Title"));
    if key {
        w.say("Answer key: for the teacher.", None);
    } else {
        w.say(&name_line(), None);
    }
    for e in super::walk::blocks_under_title(root, title) {
        w.block(e);
    }
    let mut doc = styles(Docx::new());
    for b in w.blocks {
        doc = match b {
            Block::P(p) => doc.add_paragraph(p),
            Block::T(t) => doc.add_table(t),
        };
    }
    let carried = if key {
        format!("<{LESSON_PART} sheet=\"key\">{}</{LESSON_PART}>", base64::engine::general_purpose::STANDARD.encode(root.to_xml()))
    } else {
        format!("<{WORKSHEET_PART} ref=\"{}\"/>", super::escape_attr(reference))
    };
    doc = doc.add_custom_item("margin-lesson", &carried);
    let mut out = Cursor::new(Vec::new());
    doc.build().pack(&mut out).map_err(|e| format!("The Word document could not be written: {e}"))?;
    Ok(out.into_inner())
}

/// The styles the document names: Word's own headings, so that its
/// navigation pane and table of contents find them.
fn styles(doc: Docx) -> Docx {
    doc.add_style(Style::new("Title", StyleType::Paragraph).name("Title").size(40).bold())
        .add_style(Style::new("Heading1", StyleType::Paragraph).name("heading 1").size(32).bold())
        .add_style(Style::new("Heading2", StyleType::Paragraph).name("heading 2").size(28).bold())
        .add_style(Style::new("Heading3", StyleType::Paragraph).name("heading 3").size(24).bold())
}

enum Block {
    P(Paragraph),
    T(Table),
}

struct Word {
    blocks: Vec<Block>,
    /// The paragraph being written.
    runs: Vec<Run>,
    bold: bool,
    italic: bool,
    key: bool,
    /// The exercise being written, counted from 1.
    number: u32,
}

impl Word {
    fn run(&self, text: &str) -> Run {
        let mut r = Run::new().add_text(text);
        if self.bold {
            r = r.bold();
        }
        if self.italic {
            r = r.italic();
        }
        r
    }

    /// Ends the paragraph being written, in `style`.
    fn end(&mut self, style: Option<&str>) {
        let mut p = Paragraph::new();
        if let Some(s) = style {
            p = p.style(s);
        }
        for r in self.runs.drain(..) {
            p = p.add_run(r);
        }
        self.blocks.push(Block::P(p));
    }

    /// A paragraph of plain text.
    fn say(&mut self, text: &str, style: Option<&str>) {
        self.runs.push(self.run(text));
        self.end(style);
    }

    /// `e`'s inline content as a paragraph.
    fn wrapped(&mut self, e: &Element, style: Option<&str>) {
        self.inline(e);
        self.end(style);
    }

    fn lines(&mut self, n: u32) {
        for _ in 0..n.clamp(1, MAX_LINES) {
            self.say(RULE, None);
        }
    }

    fn tick_box(&mut self, ticked: bool) {
        self.runs.push(Run::new().add_text(if self.key && ticked { "☒" } else { "☐" }));
    }

    fn prompt_of(&mut self, q: &Element) {
        if let Some(p) = q.elements().find(|c| c.name == "prompt") {
            self.prompt(p);
        }
    }

    fn open_answer_note(&mut self) {
        self.italic = true;
        self.say("Answers will vary.", None);
        self.italic = false;
    }

    /// A rubric as a table: each criterion, then its levels, best first.
    fn rubric_table(&mut self, r: &Element, heading: &str) {
        let rubric = Rubric::from_element(r);
        self.bold = true;
        self.say(&format!("{heading}: up to {} points", rubric.max_points()), None);
        self.bold = false;
        let rows: Vec<TableRow> = rubric
            .criteria
            .iter()
            .map(|c| {
                let mut cells = vec![TableCell::new().add_paragraph(Paragraph::new().add_run(Run::new().add_text(c.name.as_str()).bold()))];
                cells.extend(c.levels.iter().map(|l| {
                    TableCell::new().add_paragraph(Paragraph::new().add_run(Run::new().add_text(format!("{} ", l.points)).bold()).add_run(Run::new().add_text(l.text.as_str())))
                }));
                TableRow::new(cells)
            })
            .collect();
        if !rows.is_empty() {
            self.blocks.push(Block::T(Table::new(rows)));
        }
    }
}

impl Draw for Word {
    fn text(&mut self, s: &str) {
        if !s.is_empty() {
            let r = self.run(s);
            self.runs.push(r);
        }
    }

    fn styled(&mut self, tag: &str, e: &Element) {
        let (bold, italic) = (self.bold, self.italic);
        if tag == "strong" {
            self.bold = true;
        } else {
            self.italic = true;
        }
        self.inline(e);
        (self.bold, self.italic) = (bold, italic);
    }

    /// An underlined gap; on the key, the answer underlined.
    fn blank(&mut self, e: &Element) {
        let shown = if self.key { e.attr("answer").unwrap_or_default().to_string() } else { "\u{a0}".repeat(BLANK_GAP) };
        let r = self.run(&shown).underline("single");
        self.runs.push(r);
        if let Some(hint) = e.attr("hint") {
            let r = self.run(&format!(" ({hint})")).italic();
            self.runs.push(r);
        }
    }

    fn heading(&mut self, tag: &str, e: &Element) {
        let style = match tag {
            "h1" => Some("Heading1"),
            "h2" => Some("Heading2"),
            "h3" => Some("Heading3"),
            _ => None,
        };
        self.wrapped(e, style);
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
        self.say(&head, Some("Heading2"));
        self.parts(e, kind);
    }

    fn instructions(&mut self, e: &Element) {
        self.italic = true;
        self.inline(e);
        self.italic = false;
        self.end(None);
    }

    fn paragraph(&mut self, e: &Element) {
        self.wrapped(e, None);
    }

    fn choice_question(&mut self, q: &Element) {
        self.prompt_of(q);
        for o in q.elements().filter(|c| c.name == "option") {
            self.tick_box(o.attr("correct") == Some("true"));
            self.text(" ");
            self.wrapped(o, None);
        }
    }

    fn open_question(&mut self, q: &Element) {
        self.prompt_of(q);
        match (self.key, q.elements().find(|c| c.name == "answer")) {
            (true, Some(a)) => {
                self.bold = true;
                self.say(&a.text(), None);
                self.bold = false;
            }
            (true, None) => self.open_answer_note(),
            (false, _) => self.lines(SHORT_ANSWER_LINES),
        }
        self.rubric_of(q);
    }

    fn statement(&mut self, s: &Element) {
        let answer = s.attr("answer").unwrap_or_default().to_string();
        for (value, label) in [("true", "True"), ("false", "False")] {
            self.tick_box(answer == value);
            self.text(&format!(" {label}   "));
        }
        self.wrapped(s, None);
    }

    fn item(&mut self, i: &Element) {
        let number = if self.key { i.attr("position").unwrap_or_default().to_string() } else { "\u{a0}\u{a0}".to_string() };
        self.text(&format!("[ {number} ] "));
        self.wrapped(i, None);
    }

    fn prompt(&mut self, p: &Element) {
        self.wrapped(p, None);
    }

    fn rubric(&mut self, r: &Element) {
        if self.key {
            self.rubric_table(r, "Rubric");
        } else if r.attr("shared") == Some("true") {
            self.rubric_table(r, "How it is marked");
        }
    }
}

#[cfg(test)]
mod tests;
