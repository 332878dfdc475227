//! A .docx made by "Download for Word", read back for an import.
//!
//! The key carries its lesson, which comes back whole. A worksheet carries
//! only a reference, which the server resolves for a teacher who may edit
//! the lesson it names; for anyone else it is the lesson the worksheet
//! shows (`Worksheet::shown`): its title, headings and paragraphs, with the
//! exercises as the text a student reads (gaps, boxes and all), since the
//! answers were never in the file. Edits made in Word are not read back
//! into a lesson's exercises: a file whose text no longer matches what
//! Margin wrote is refused with a sentence, rather than imported without
//! them.

use std::io::Cursor;

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::{to_docx, LESSON_PART, WORKSHEET_PART};
use crate::{
    archive::{Budgeted, PartError},
    paper::Sheet,
    Element, Node,
};

/// The most one part of a .docx is read to, unpacked.
const MAX_PART_BYTES: u64 = 8 * 1024 * 1024;
/// The most all parts read from a .docx unpack to, together.
const MAX_DOCX_BYTES: u64 = 16 * 1024 * 1024;
/// The most parts read from a .docx (its custom parts and its text).
const MAX_READS: usize = 12;
/// The most blocks taken from what a worksheet shows.
const MAX_BLOCKS: usize = 2_000;

/// What a .docx made here carries.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Carried {
    /// The answer key's lesson, as XML: it still shows what Margin wrote.
    Key(String),
    /// A worksheet, to be resolved by whoever imports it.
    Worksheet(Worksheet),
}

/// A worksheet as read, before anyone's rights are known.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worksheet {
    /// The server's name for the lesson it was made from; `None` on a
    /// worksheet made before worksheets carried one (which carried the
    /// lesson itself, no longer believed).
    pub reference: Option<String>,
    /// Its title, as printed.
    pub title: String,
    /// The text it shows, paragraph by paragraph (`\u{1}` between), to
    /// compare with what a lesson makes.
    pub words: String,
    /// The lesson it shows, as lesson XML.
    pub shown: String,
}

impl Worksheet {
    /// Whether the lesson `xml` still makes this worksheet, word for word:
    /// then it is the lesson the worksheet came from, unchanged in Word.
    pub fn made_from(&self, xml: &str) -> bool {
        let Ok(root) = crate::parse(xml) else { return false };
        let reference = self.reference.as_deref().unwrap_or_default();
        to_docx(&root, &self.title, Sheet::Worksheet, reference).ok().and_then(|again| words_of_docx(&again).ok()).is_some_and(|w| w == self.words)
    }
}

/// What the .docx `bytes` carries, or why it cannot be imported, as a
/// sentence for the teacher.
pub fn read_docx(bytes: &[u8]) -> Result<Carried, String> {
    let not_ours = || "This Word document was not made by Margin's Word download, so it holds no lesson to import. To use its text, add it to a lesson as material.".to_string();
    let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| "The file is not a Word document (.docx) that can be opened.".to_string())?;
    let mut zip = Budgeted::new(zip, MAX_PART_BYTES, MAX_DOCX_BYTES, MAX_READS);
    let names: Vec<String> = zip.names().filter(|n| n.starts_with("customXml/item") && !n.contains("Props") && n.ends_with(".xml")).take(8).map(str::to_string).collect();
    let mut found = None;
    for name in names {
        let text = part(&mut zip, &name)?;
        let Ok(doc) = roxmltree::Document::parse(&text) else { continue };
        let root = doc.root_element();
        match root.tag_name().name() {
            LESSON_PART if root.attribute("sheet") == Some("key") => found = Some(Found::Key(root.text().unwrap_or("").trim().to_string())),
            // Made before worksheets carried a reference: the lesson in it is not read.
            LESSON_PART => found = Some(Found::Worksheet(None)),
            WORKSHEET_PART => found = Some(Found::Worksheet(root.attribute("ref").map(str::to_string))),
            _ => continue,
        }
        break;
    }
    let found = found.ok_or_else(not_ours)?;
    let document = part(&mut zip, "word/document.xml")?;
    match found {
        Found::Key(encoded) => {
            let xml = base64::engine::general_purpose::STANDARD.decode(encoded.as_bytes()).ok().and_then(|b| String::from_utf8(b).ok()).ok_or_else(not_ours)?;
            // What the key shows must still be what Margin wrote from it.
            let root = crate::parse(&xml).map_err(|e| format!("The lesson in this Word document cannot be read: {e}"))?;
            let shown = words_of_document(&document);
            let title = shown.split('\u{1}').next().unwrap_or_default().to_string();
            if words_of_docx(&to_docx(&root, &title, Sheet::Key, "")?)? != shown {
                return Err(CHANGED.into());
            }
            Ok(Carried::Key(xml))
        }
        Found::Worksheet(reference) => {
            let (title, shown) = lesson_shown(&document)?;
            Ok(Carried::Worksheet(Worksheet { reference, title, words: words_of_document(&document), shown }))
        }
    }
}

/// The sentence for a key or worksheet changed in Word.
pub const CHANGED: &str = "This Word document was changed after Margin made it, and Margin cannot read changes made in Word back. Import the file as it was downloaded, or make the changes in the lesson.";

enum Found {
    Key(String),
    Worksheet(Option<String>),
}

/// One part of the archive as text, under the document's budget.
fn part(zip: &mut Budgeted, name: &str) -> Result<String, String> {
    zip.part(name).map_err(|e| match e {
        PartError::TooLarge | PartError::Spent => "The Word document is far larger than any lesson: it cannot be imported.".into(),
        PartError::Missing | PartError::Unreadable | PartError::NotText | PartError::Again => "The file is not a Word document (.docx) that can be opened.".to_string(),
    })
}

/// The text of a .docx Margin wrote, as `words_of_document` reads it.
fn words_of_docx(bytes: &[u8]) -> Result<String, String> {
    let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| e.to_string())?;
    let mut zip = Budgeted::new(zip, MAX_PART_BYTES, MAX_DOCX_BYTES, 1);
    Ok(words_of_document(&part(&mut zip, "word/document.xml")?))
}

/// The text of `word/document.xml`, paragraph by paragraph (separated by
/// `\u{1}`), for comparing what two documents show.
pub(super) fn words_of_document(xml: &str) -> String {
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

/// The lesson a worksheet's `word/document.xml` shows, and its title: the
/// title as the first heading, Word's headings as headings, every other
/// paragraph (an exercise's number and kind, its questions, boxes and gaps)
/// as a paragraph with its bold and italic, a table's rows (a shared
/// rubric's) as paragraphs. The name line and the ruled lines to write on
/// are left out: they are the student's space, not the lesson's words.
fn lesson_shown(xml: &str) -> Result<(String, String), String> {
    let unreadable = || "The file is not a Word document (.docx) that can be opened.".to_string();
    let doc = roxmltree::Document::parse(xml).map_err(|_| unreadable())?;
    let body = doc.descendants().find(|n| n.tag_name().name() == "body").ok_or_else(unreadable)?;
    let mut title = String::new();
    let mut blocks: Vec<Element> = Vec::new();
    for block in body.children().filter(|n| n.is_element()) {
        if blocks.len() >= MAX_BLOCKS {
            break;
        }
        match block.tag_name().name() {
            "p" => {
                let style = block.descendants().find(|n| n.tag_name().name() == "pStyle").and_then(|s| attr(s, "val")).unwrap_or_default();
                let runs = runs(block);
                let text = plain(&runs);
                let is_rule = !text.trim().is_empty() && text.trim().chars().all(|c| c == '_');
                if text.trim().is_empty() || is_rule || (blocks.len() == 1 && text == super::name_line()) {
                    continue;
                }
                let name = match style {
                    "Title" if title.is_empty() => {
                        title = text.trim().to_string();
                        "h1"
                    }
                    "Title" | "Heading1" => "h1",
                    "Heading2" => "h2",
                    "Heading3" => "h3",
                    _ => "p",
                };
                let mut e = Element::new(name);
                e.children = inline(&runs);
                blocks.push(e);
            }
            "tbl" => {
                for row in block.children().filter(|n| n.tag_name().name() == "tr") {
                    let cells: Vec<String> = row.children().filter(|n| n.tag_name().name() == "tc").map(|c| plain(&runs_in(c)).trim().to_string()).filter(|t| !t.is_empty()).collect();
                    if !cells.is_empty() {
                        let mut e = Element::new("p");
                        e.children.push(Node::Text(cells.join(" · ")));
                        blocks.push(e);
                    }
                }
            }
            _ => {}
        }
    }
    let mut lesson = Element::new("lesson");
    lesson.children = blocks.into_iter().map(Node::Element).collect();
    Ok((title, lesson.to_xml()))
}

/// An attribute by its local name (Word's are all `w:`).
fn attr<'a>(n: roxmltree::Node<'a, 'a>, name: &str) -> Option<&'a str> {
    n.attributes().find(|a| a.name() == name).map(|a| a.value())
}

/// One run of text: its words, bold, italic.
struct Piece {
    text: String,
    bold: bool,
    italic: bool,
}

fn runs(p: roxmltree::Node) -> Vec<Piece> {
    p.children().filter(|n| n.tag_name().name() == "r").map(piece).collect()
}

/// Every run inside `n` (a table cell's paragraphs), one after another.
fn runs_in(n: roxmltree::Node) -> Vec<Piece> {
    let mut out = Vec::new();
    for p in n.descendants().filter(|d| d.tag_name().name() == "p") {
        if !out.is_empty() {
            out.push(Piece { text: " ".into(), bold: false, italic: false });
        }
        out.extend(runs(p));
    }
    out
}

fn piece(r: roxmltree::Node) -> Piece {
    let props = r.children().find(|n| n.tag_name().name() == "rPr");
    let on = |name: &str| props.and_then(|p| p.children().find(|n| n.tag_name().name() == name)).is_some_and(|n| !matches!(attr(n, "val"), Some("0" | "false" | "none")));
    let mut text = String::new();
    for n in r.children() {
        match n.tag_name().name() {
            "t" => text.push_str(n.text().unwrap_or("")),
            "tab" | "br" => text.push(' '),
            _ => {}
        }
    }
    // A gap: an underlined run of spaces, shown as the line it is.
    if on("u") && !text.is_empty() && text.chars().all(|c| c == '\u{a0}' || c == ' ') {
        text = "_".repeat(text.chars().count());
    }
    Piece { text, bold: on("b"), italic: on("i") }
}

fn plain(pieces: &[Piece]) -> String {
    pieces.iter().map(|p| p.text.as_str()).collect()
}

/// Runs as the format's inline content: text in `strong` and `em`. Runs
/// in the same style join first, so one phrase is one piece of text.
fn inline(pieces: &[Piece]) -> Vec<Node> {
    let mut joined: Vec<Piece> = Vec::new();
    for p in pieces.iter().filter(|p| !p.text.is_empty()) {
        match joined.last_mut() {
            Some(last) if (last.bold, last.italic) == (p.bold, p.italic) => last.text.push_str(&p.text),
            _ => joined.push(Piece { text: p.text.clone(), bold: p.bold, italic: p.italic }),
        }
    }
    joined
        .into_iter()
        .map(|p| {
            let mut node = Node::Text(p.text);
            if p.italic {
                node = wrap("em", node);
            }
            if p.bold {
                node = wrap("strong", node);
            }
            node
        })
        .collect()
}

fn wrap(name: &str, node: Node) -> Node {
    let mut e = Element::new(name);
    e.children.push(node);
    Node::Element(e)
}
