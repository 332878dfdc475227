//! A lesson as a Word document (.docx): the worksheet or the answer key
//! laid out as on paper (`paper`): numbered exercises, a blank as an
//! underlined gap (its answer in the key), a box to tick for each option and
//! for True and False, a box for each item's number in a sequence, ruled
//! lines to write on, rubrics as tables. No teacher notes. Written with
//! `docx-rs`; server only.
//!
//! The document also carries the lesson itself (a custom XML part,
//! `LESSON_PART`), so that a file made here imports back as the same
//! lesson, ids and answers included (`lesson_of_docx`). Edits made in Word
//! are not read back: a document whose text no longer matches what Margin
//! wrote is refused with a sentence, rather than imported without them.

use std::io::Cursor;

use base64::Engine;
use docx_rs::{Docx, Paragraph, Run, Style, StyleType, Table, TableCell, TableRow};

use super::{paper::Sheet, rubric::Rubric, walk::Draw, Element};

/// The name of the element in the custom XML part that holds the lesson.
const LESSON_PART: &str = "marginLesson";
/// Characters of a blank's gap on the worksheet (all blanks alike, so no
/// gap gives its answer's length away).
const BLANK_GAP: usize = 12;
/// One ruled line.
const RULE: &str = "________________________________________________________________________";
/// Ruled lines for a short answer on the worksheet (as on paper).
const SHORT_ANSWER_LINES: u32 = 3;
/// The most lines one writing area takes.
const MAX_LINES: u32 = 40;
/// The most a .docx part is read to, unpacked: far above any lesson, far
/// below what a crafted archive could claim.
const MAX_PART_BYTES: u64 = 8 * 1024 * 1024;

/// The lesson `root` titled `title` as a .docx, worksheet or key.
pub fn to_docx(root: &Element, title: &str, sheet: Sheet) -> Result<Vec<u8>, String> {
    let key = sheet == Sheet::Key;
    let mut w = Word { blocks: Vec::new(), runs: Vec::new(), bold: false, italic: false, key, number: 0 };
    w.say(title, Some("Title"));
    if key {
        w.say("Answer key: for the teacher.", None);
    } else {
        w.say(&format!("Name: {}    Date: {}", "_".repeat(28), "_".repeat(14)), None);
    }
    for e in root.elements() {
        w.block(e);
    }
    let mut doc = styles(Docx::new());
    for b in w.blocks {
        doc = match b {
            Block::P(p) => doc.add_paragraph(p),
            Block::T(t) => doc.add_table(t),
        };
    }
    let carried = format!(
        "<{LESSON_PART} sheet=\"{}\">{}</{LESSON_PART}>",
        if key { "key" } else { "worksheet" },
        base64::engine::general_purpose::STANDARD.encode(root.to_xml())
    );
    doc = doc.add_custom_item("margin-lesson", &carried);
    let mut out = Cursor::new(Vec::new());
    doc.build().pack(&mut out).map_err(|e| format!("The Word document could not be written: {e}"))?;
    Ok(out.into_inner())
}

/// The lesson a .docx made by `to_docx` carries, as XML; or why it cannot
/// be imported, as a sentence for the teacher.
pub fn lesson_of_docx(bytes: &[u8]) -> Result<String, String> {
    let not_ours = || "This Word document was not made by Margin's Word download, so it holds no lesson to import. To use its text, add it to a lesson as material.".to_string();
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| "The file is not a Word document (.docx) that can be opened.".to_string())?;
    let names: Vec<String> = zip.file_names().filter(|n| n.starts_with("customXml/item") && !n.contains("Props") && n.ends_with(".xml")).take(8).map(str::to_string).collect();
    let mut carried = None;
    for name in names {
        let text = part(&mut zip, &name)?;
        let Ok(doc) = roxmltree::Document::parse(&text) else { continue };
        let root = doc.root_element();
        if root.tag_name().name() == LESSON_PART {
            let sheet = if root.attribute("sheet") == Some("key") { Sheet::Key } else { Sheet::Worksheet };
            carried = Some((root.text().unwrap_or("").trim().to_string(), sheet));
            break;
        }
    }
    let (encoded, sheet) = carried.ok_or_else(not_ours)?;
    let xml = base64::engine::general_purpose::STANDARD.decode(encoded.as_bytes()).ok().and_then(|b| String::from_utf8(b).ok()).ok_or_else(not_ours)?;
    // What the document shows must still be what Margin wrote from it.
    let root = super::parse(&xml).map_err(|e| format!("The lesson in this Word document cannot be read: {e}"))?;
    let shown = words_of_document(&part(&mut zip, "word/document.xml")?);
    let title = shown.split('\u{1}').next().unwrap_or_default().to_string();
    let again = to_docx(&root, &title, sheet)?;
    let mut again = zip::ZipArchive::new(Cursor::new(again.as_slice())).map_err(|e| e.to_string())?;
    if words_of_document(&part(&mut again, "word/document.xml")?) != shown {
        return Err("This Word document was changed after Margin made it, and Margin cannot read changes made in Word back. Import the file as it was downloaded, or make the changes in the lesson.".into());
    }
    Ok(xml)
}

/// One part of the archive as text, read to `MAX_PART_BYTES` at most.
fn part(zip: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str) -> Result<String, String> {
    use super::archive::{self, PartError};
    archive::part(zip, name, MAX_PART_BYTES).map_err(|e| match e {
        PartError::TooLarge => "The Word document is far larger than any lesson: it cannot be imported.".into(),
        PartError::Missing | PartError::Unreadable | PartError::NotText => "The file is not a Word document (.docx) that can be opened.".to_string(),
    })
}

/// The text of `word/document.xml`, paragraph by paragraph (separated by
/// `\u{1}`), for comparing what two documents show.
fn words_of_document(xml: &str) -> String {
    let Ok(doc) = roxmltree::Document::parse(xml) else { return String::new() };
    let mut out = String::new();
    for p in doc.descendants().filter(|n| n.tag_name().name() == "p") {
        if !out.is_empty() {
            out.push('\u{1}');
        }
        for t in p.descendants().filter(|n| n.tag_name().name() == "t") {
            out.push_str(t.text().unwrap_or(""));
        }
    }
    out
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
