//! The lesson as the editor holds it: a list of blocks, the text blocks
//! (headings, paragraphs, notes) as runs of text marked bold or italic, and
//! every other block (an exercise, a writing area) as its element, shown as
//! the server draws it and moved or deleted whole.
//!
//! Why runs and not the element tree: a caret, a split at Enter, a join at
//! Backspace and what a paste brings are all offsets into plain text with
//! two marks; the format's `<em>` and `<strong>`, nested freely, say no
//! more than that. [`Doc::from_root`] and [`Doc::to_root`] turn one into the
//! other, and the round trip keeps every word and mark (tested below).
//!
//! Shared by the server and the browser; it needs no XML parser.

use super::{
    tree::{Element, Node},
    ExerciseKind,
};

/// The text blocks a teacher types in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    H1,
    H2,
    H3,
    P,
    Note,
}

impl TextKind {
    pub const ALL: [TextKind; 5] = [Self::P, Self::H1, Self::H2, Self::H3, Self::Note];

    pub fn tag(self) -> &'static str {
        match self {
            Self::H1 => "h1",
            Self::H2 => "h2",
            Self::H3 => "h3",
            Self::P => "p",
            Self::Note => "note",
        }
    }

    pub fn from_tag(tag: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.tag() == tag)
    }

    /// What the teacher calls it.
    pub fn label(self) -> &'static str {
        match self {
            Self::H1 => "Heading 1",
            Self::H2 => "Heading 2",
            Self::H3 => "Heading 3",
            Self::P => "Paragraph",
            Self::Note => "Teacher note",
        }
    }

    /// The prefix of the ids the editor gives blocks of this kind.
    pub fn id_prefix(self) -> &'static str {
        match self {
            Self::H1 | Self::H2 | Self::H3 => "h",
            Self::P => "p",
            Self::Note => "note",
        }
    }
}

/// A stretch of text with the same marks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Run {
    pub text: String,
    pub bold: bool,
    pub italic: bool,
}

impl Run {
    pub fn plain(text: impl Into<String>) -> Self {
        Self { text: text.into(), bold: false, italic: false }
    }
}

/// One block of the lesson.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    Text { id: String, kind: TextKind, runs: Vec<Run> },
    /// An exercise or a writing area, whole.
    Other(Element),
}

impl Block {
    pub fn id(&self) -> &str {
        match self {
            Self::Text { id, .. } => id,
            Self::Other(e) => e.id().unwrap_or_default(),
        }
    }

    /// The block as an element of the format.
    pub fn to_element(&self) -> Element {
        match self {
            Self::Text { id, kind, runs } => {
                let mut e = Element::new(kind.tag());
                if !id.is_empty() {
                    e.set_attr("id", id.clone());
                }
                e.children = inline_of(runs);
                e
            }
            Self::Other(e) => e.clone(),
        }
    }

    /// What a screen reader and the block's menu call it.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Text { kind, .. } => kind.label(),
            Self::Other(e) if e.name == "writing-area" => "Writing area",
            Self::Other(e) => e.attr("type").and_then(ExerciseKind::from_name).map_or("Exercise", ExerciseKind::label),
        }
    }
}

/// A lesson as blocks, with the lesson's own attributes (`title`, `lang`,
/// `standards`) kept as they were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Doc {
    pub attrs: Vec<(String, String)>,
    pub blocks: Vec<Block>,
}

impl Doc {
    pub fn from_root(root: &Element) -> Self {
        let blocks = root
            .elements()
            .map(|e| match TextKind::from_tag(&e.name) {
                Some(kind) => Block::Text { id: e.id().unwrap_or_default().to_string(), kind, runs: runs_of(e) },
                None => Block::Other(e.clone()),
            })
            .collect();
        Self { attrs: root.attrs.clone(), blocks }
    }

    pub fn to_root(&self) -> Element {
        let mut root = Element::new("lesson");
        root.attrs = self.attrs.clone();
        root.children = self.blocks.iter().map(|b| Node::Element(b.to_element())).collect();
        root
    }

    pub fn to_xml(&self) -> String {
        self.to_root().to_xml()
    }

    /// An id for a new block of `kind` that no element of the lesson uses.
    pub fn new_id(&self, kind: TextKind) -> String {
        self.new_id_with(kind.id_prefix())
    }

    /// An id starting `prefix-` that no element of the lesson uses.
    pub fn new_id_with(&self, prefix: &str) -> String {
        let mut used = std::collections::HashSet::new();
        for b in &self.blocks {
            collect_ids(&b.to_element(), &mut used);
        }
        (1..).map(|n| format!("{prefix}-{n}")).find(|id| !used.contains(id)).unwrap_or_default()
    }
}

fn collect_ids(e: &Element, out: &mut std::collections::HashSet<String>) {
    if let Some(id) = e.id() {
        out.insert(id.to_string());
    }
    e.elements().for_each(|c| collect_ids(c, out));
}

/// The inline content of a text element as runs: `<strong>` marks bold,
/// `<em>` italic, however nested; neighbours with the same marks are one run.
pub fn runs_of(e: &Element) -> Vec<Run> {
    fn walk(e: &Element, bold: bool, italic: bool, out: &mut Vec<Run>) {
        for n in &e.children {
            match n {
                Node::Text(t) => out.push(Run { text: t.clone(), bold, italic }),
                Node::Element(c) => walk(c, bold || c.name == "strong", italic || c.name == "em", out),
            }
        }
    }
    let mut out = Vec::new();
    walk(e, false, false, &mut out);
    tidy(out)
}

/// Runs joined where their marks agree, empty ones dropped.
pub fn tidy(runs: Vec<Run>) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::with_capacity(runs.len());
    for r in runs {
        if r.text.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.bold == r.bold && last.italic == r.italic => last.text.push_str(&r.text),
            _ => out.push(r),
        }
    }
    out
}

/// Runs as the format writes them: `<strong>` outside `<em>` when both.
pub fn inline_of(runs: &[Run]) -> Vec<Node> {
    tidy(runs.to_vec())
        .into_iter()
        .map(|r| {
            let mut node = Node::Text(r.text);
            for (on, tag) in [(r.italic, "em"), (r.bold, "strong")] {
                if on {
                    let mut e = Element::new(tag);
                    e.children = vec![node];
                    node = Node::Element(e);
                }
            }
            node
        })
        .collect()
}

/// The length of the runs' text in UTF-16 units, as the browser counts a
/// caret's offset.
pub fn len16(runs: &[Run]) -> usize {
    runs.iter().map(|r| r.text.encode_utf16().count()).sum()
}

/// The runs before and after a caret at `at` UTF-16 units (past the end
/// means the end; inside a surrogate pair means before it).
pub fn split_at(runs: &[Run], at: usize) -> (Vec<Run>, Vec<Run>) {
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut left = at;
    for r in runs {
        let n = r.text.encode_utf16().count();
        if left >= n {
            before.push(r.clone());
            left -= n;
            continue;
        }
        if left == 0 {
            after.push(r.clone());
            continue;
        }
        let mut byte = 0;
        let mut units = 0;
        for c in r.text.chars() {
            if units + c.len_utf16() > left {
                break;
            }
            units += c.len_utf16();
            byte += c.len_utf8();
        }
        before.push(Run { text: r.text[..byte].to_string(), ..r.clone() });
        after.push(Run { text: r.text[byte..].to_string(), ..r.clone() });
        left = 0;
    }
    (tidy(before), tidy(after))
}

/// `first` followed by `second`, as one block's runs.
pub fn join(first: &[Run], second: &[Run]) -> Vec<Run> {
    tidy(first.iter().chain(second).cloned().collect())
}

#[cfg(test)]
mod tests;
