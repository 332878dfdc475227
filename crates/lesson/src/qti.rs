//! A lesson's exercises for a learning platform (LMS), and back.
//!
//! Two packages go out:
//! - **QTI 2.1** (`to_qti_package`): an IMS content package with one
//!   assessment test, one section per exercise and one item per question,
//!   statement, paragraph of blanks, sequence or writing task. 2.1 rather
//!   than 3.0 because it is the version Canvas (classic and New Quizzes),
//!   Moodle's QTI plugins and the item banks in schools import today; few
//!   platforms read 3.0 yet. Every exercise kind has its own interaction:
//!   choice (multiple choice, true/false), text entry with every accepted
//!   answer mapped (blanks), order (sequencing), extended text (short
//!   answer, writing), with model answers and rubrics as scorer rubric blocks.
//! - **Common Cartridge 1.1** (`to_cartridge`): the lesson page and its quiz,
//!   which Canvas, Moodle and Schoology import as a page and a quiz. A
//!   cartridge's quiz must be QTI 1.2 in the cartridge's own profile, which
//!   knows multiple choice, multiple response, true/false, fill in the blank
//!   (one blank per question) and essay, and no ordering: a sequence goes in
//!   as one "which place?" question per item (`cartridge`).
//!
//! The way back (`lesson_of_package`) reads a QTI 2.x or 3.0 package (or a
//! single item), and the QTI 1.2 quizzes of a cartridge or a Canvas export,
//! into a new lesson for the interactions Margin has, and says in sentences
//! what it could not bring in (`read`, `read_v1`). The QTI package comes
//! back exactly; a cartridge as its profile allows (a question per gap,
//! places of a sequence as choices, no model answers or rubrics).
//!
//! Every document is built as a tree of `Element`s and written by the
//! lesson's own writer, so every text and attribute is escaped in one place.

mod budget;
mod cartridge;
mod inline;
mod items;
mod read;
mod read_v1;
mod write;
mod xml_tree;

use std::io::{Cursor, Write as _};

pub use cartridge::to_cartridge;
pub use items::Imported;
pub use read::{is_package, lesson_of_package, lesson_of_qti_xml};
pub use write::to_qti_package;

use super::{Element, Node};

/// The XML declaration every document starts with.
const DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// Building documents: `el("p").with_attr("id", "p-1").with_text("Hello")`.
trait Build: Sized {
    fn with_attr(self, name: &str, value: impl Into<String>) -> Self;
    fn child(self, child: Element) -> Self;
    fn children(self, children: impl IntoIterator<Item = Element>) -> Self;
    fn nodes(self, nodes: impl IntoIterator<Item = Node>) -> Self;
    fn with_text(self, text: impl Into<String>) -> Self;
}

impl Build for Element {
    fn with_attr(mut self, name: &str, value: impl Into<String>) -> Self {
        self.set_attr(name, value);
        self
    }
    fn child(mut self, child: Element) -> Self {
        self.children.push(Node::Element(child));
        self
    }
    fn children(mut self, children: impl IntoIterator<Item = Element>) -> Self {
        self.children.extend(children.into_iter().map(Node::Element));
        self
    }
    fn nodes(mut self, nodes: impl IntoIterator<Item = Node>) -> Self {
        self.children.extend(nodes);
        self
    }
    fn with_text(mut self, text: impl Into<String>) -> Self {
        self.children.push(Node::Text(text.into()));
        self
    }
}

fn el(name: &str) -> Element {
    Element::new(name)
}

/// A whole document: the declaration, then `root`.
fn document(root: &Element) -> Vec<u8> {
    format!("{DECLARATION}{}", root.to_xml()).into_bytes()
}

/// Files as a zip archive (deflated), in the order given.
fn zip(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let failed = |e: &dyn std::fmt::Display| format!("The package could not be written: {e}");
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        out.start_file(name.as_str(), options).map_err(|e| failed(&e))?;
        out.write_all(bytes).map_err(|e| failed(&e))?;
    }
    Ok(out.finish().map_err(|e| failed(&e))?.into_inner())
}

/// The inline content of a lesson element (text, `em`, `strong`) for a
/// platform; `blank` becomes what `blank` returns (its answer's gap, an
/// interaction, …).
fn inline(e: &Element, blank: &mut dyn FnMut(&Element) -> Node) -> Vec<Node> {
    e.children
        .iter()
        .map(|n| match n {
            Node::Text(t) => Node::Text(t.clone()),
            Node::Element(c) => match c.name.as_str() {
                "em" | "strong" => Node::Element(el(&c.name).nodes(inline(c, blank))),
                "blank" => blank(c),
                _ => Node::Text(c.text()),
            },
        })
        .collect()
}

/// Inline content with blanks shown as a gap.
fn inline_gapped(e: &Element) -> Vec<Node> {
    inline(e, &mut |_| Node::Text("_____".into()))
}

/// Every answer a blank accepts: its answer first, then its alternatives,
/// each once.
fn accepted_answers(blank: &Element) -> Vec<String> {
    let mut accepted: Vec<String> = Vec::new();
    for a in std::iter::once(blank.attr("answer").unwrap_or_default().to_string()).chain(blank.attr("alts").map(super::answers::list).unwrap_or_default()) {
        if !accepted.contains(&a) {
            accepted.push(a);
        }
    }
    accepted
}

/// The first child element named `name`.
fn first<'a>(e: &'a Element, name: &str) -> Option<&'a Element> {
    e.elements().find(|c| c.name == name)
}

/// Nodes as HTML (for the cartridge's `mattext` and page): the lesson's
/// writer escapes every text.
fn html_of(nodes: Vec<Node>) -> String {
    let wrapped = el("span").nodes(nodes).to_xml();
    let inner = wrapped.trim_end().strip_prefix("<span>").and_then(|s| s.strip_suffix("</span>"));
    inner.unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests;
