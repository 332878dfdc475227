//! What a paste brings: the clipboard's HTML (from Word, Google Docs or a
//! web page) or its plain text, made into the format's blocks. Headings
//! stay headings (h4–h6 become h3), paragraphs, list items and table rows
//! become paragraphs; bold and italic are kept however the source wrote
//! them (`<b>`, `<strong>`, Google Docs' and Word's styled spans); scripts,
//! styles, images and everything else are left out, and what was left out
//! is said once.
//!
//! The browser reads the HTML with its own parser (`DOMParser`, which runs
//! nothing) into a [`Pasted`] tree; the rest is plain Rust, tested here.

use crate::lesson::blocks::{tidy, Run, TextKind};

/// The clipboard's HTML as a tree: only tag names, the `style` attribute
/// and text are read from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pasted {
    Text(String),
    Element { tag: String, style: String, children: Vec<Pasted> },
}

/// The blocks a paste makes, and a sentence on what it left out (empty
/// when nothing).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Made {
    pub blocks: Vec<(TextKind, Vec<Run>)>,
    pub left_out: String,
}

/// Most blocks one paste makes; the rest is left out and said.
pub const MAX_PASTED_BLOCKS: usize = 400;

/// Elements whose content is never text for the lesson.
const DROPPED: &[&str] = &["script", "style", "head", "title", "meta", "link", "template", "iframe", "object", "embed", "svg", "math", "noscript", "canvas", "video", "audio", "select", "button", "input", "textarea"];
const BLOCKS: &[&str] = &["p", "div", "li", "tr", "blockquote", "pre", "section", "article", "header", "footer", "dt", "dd", "figcaption", "caption", "address", "ul", "ol", "table", "main", "nav", "aside"];

struct Walk {
    blocks: Vec<(TextKind, Vec<Run>)>,
    kind: TextKind,
    runs: Vec<Run>,
    images: usize,
    other: usize,
}

impl Walk {
    fn end_block(&mut self) {
        let runs = std::mem::take(&mut self.runs);
        let runs = collapse(runs);
        if !runs.is_empty() {
            self.blocks.push((self.kind, runs));
        }
        self.kind = TextKind::P;
    }

    fn walk(&mut self, node: &Pasted, bold: bool, italic: bool) {
        match node {
            Pasted::Text(t) => self.runs.push(Run { text: t.clone(), bold, italic }),
            Pasted::Element { tag, style, children } => {
                let tag = tag.to_ascii_lowercase();
                let tag = tag.as_str();
                if DROPPED.contains(&tag) {
                    if !matches!(tag, "script" | "style" | "head" | "title" | "meta" | "link" | "template") {
                        self.other += 1;
                    }
                    return;
                }
                if tag == "img" || tag == "picture" {
                    self.images += 1;
                    return;
                }
                // Word's list numbers and bullets, written as text.
                if style.replace(' ', "").to_ascii_lowercase().contains("mso-list:ignore") {
                    return;
                }
                let bold = marked(tag, style, bold, &["b", "strong"], "font-weight", |v| v == "bold" || v == "bolder" || v.parse::<u32>().is_ok_and(|n| n >= 600), |v| v == "normal" || v == "lighter" || v.parse::<u32>().is_ok_and(|n| n < 600));
                let italic = marked(tag, style, italic, &["i", "em"], "font-style", |v| v == "italic" || v == "oblique", |v| v == "normal");
                let heading = match tag {
                    "h1" => Some(TextKind::H1),
                    "h2" => Some(TextKind::H2),
                    "h3" | "h4" | "h5" | "h6" => Some(TextKind::H3),
                    _ => None,
                };
                if tag == "br" {
                    self.end_block();
                    return;
                }
                let block = heading.is_some() || BLOCKS.contains(&tag);
                if block {
                    self.end_block();
                    self.kind = heading.unwrap_or(TextKind::P);
                }
                if tag == "td" || tag == "th" {
                    self.runs.push(Run::plain(" "));
                }
                for c in children {
                    self.walk(c, bold, italic);
                }
                if block {
                    self.end_block();
                }
            }
        }
    }
}

/// Whether text inside `tag` with `style` is marked, given the mark
/// outside it: the tag turns it on, the style can turn it on or off (Google
/// Docs wraps a whole paste in `<b style="font-weight:normal">`).
fn marked(tag: &str, style: &str, outer: bool, tags: &[&str], property: &str, on: impl Fn(&str) -> bool, off: impl Fn(&str) -> bool) -> bool {
    let mut now = outer || tags.contains(&tag);
    for decl in style.split(';') {
        let Some((name, value)) = decl.split_once(':') else { continue };
        if name.trim().eq_ignore_ascii_case(property) {
            let value = value.trim().trim_end_matches("!important").trim().to_ascii_lowercase();
            if on(&value) {
                now = true;
            } else if off(&value) {
                now = false;
            }
        }
    }
    now
}

/// White space as a browser shows it: every run of it one space, none at
/// the block's ends.
fn collapse(runs: Vec<Run>) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    let mut space = true;
    for r in runs {
        let mut text = String::with_capacity(r.text.len());
        for c in r.text.chars() {
            if c.is_whitespace() || c == '\u{a0}' {
                if !space {
                    text.push(' ');
                }
                space = true;
            } else if !c.is_control() {
                text.push(c);
                space = false;
            }
        }
        out.push(Run { text, ..r });
    }
    if let Some(last) = out.iter_mut().rev().find(|r| !r.text.is_empty()) {
        let trimmed = last.text.trim_end().len();
        last.text.truncate(trimmed);
    }
    tidy(out)
}

/// The blocks the clipboard's HTML makes.
pub fn from_html(root: &Pasted) -> Made {
    let mut w = Walk { blocks: Vec::new(), kind: TextKind::P, runs: Vec::new(), images: 0, other: 0 };
    w.walk(root, false, false);
    w.end_block();
    finish(w.blocks, w.images, w.other)
}

/// The blocks plain text makes: a paragraph for each line that has words.
pub fn from_text(text: &str) -> Made {
    let blocks = text.lines().map(|l| collapse(vec![Run::plain(l)])).filter(|r| !r.is_empty()).map(|r| (TextKind::P, r)).collect();
    finish(blocks, 0, 0)
}

fn finish(mut blocks: Vec<(TextKind, Vec<Run>)>, images: usize, other: usize) -> Made {
    let mut said = Vec::new();
    if blocks.len() > MAX_PASTED_BLOCKS {
        said.push(format!("the last {} paragraphs", blocks.len() - MAX_PASTED_BLOCKS));
        blocks.truncate(MAX_PASTED_BLOCKS);
    }
    match images {
        0 => {}
        1 => said.push("an image".to_string()),
        n => said.push(format!("{n} images")),
    }
    if other > 0 {
        said.push("parts that are not text".to_string());
    }
    let left_out = if said.is_empty() { String::new() } else { format!("Pasted as text: {} left out.", said.join(", ")) };
    Made { blocks, left_out }
}

/// The clipboard's HTML read by the browser's parser.
#[cfg(feature = "hydrate")]
pub fn read_html(html: &str) -> Option<Pasted> {
    use leptos::web_sys::{DomParser, Node, SupportedType};
    fn tree(n: &Node, depth: usize) -> Option<Pasted> {
        match n.node_type() {
            Node::TEXT_NODE => Some(Pasted::Text(n.node_value().unwrap_or_default())),
            Node::ELEMENT_NODE if depth < 64 => {
                use leptos::wasm_bindgen::JsCast;
                let style = n.dyn_ref::<leptos::web_sys::Element>().and_then(|e| e.get_attribute("style")).unwrap_or_default();
                let kids = n.child_nodes();
                let children = (0..kids.length()).filter_map(|i| kids.item(i)).filter_map(|c| tree(&c, depth + 1)).collect();
                Some(Pasted::Element { tag: n.node_name(), style, children })
            }
            _ => None,
        }
    }
    let doc = DomParser::new().ok()?.parse_from_string(html, SupportedType::TextHtml).ok()?;
    tree(&doc.body()?.into(), 0)
}

#[cfg(test)]
mod tests;
