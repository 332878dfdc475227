//! The words of an item: its prompt and text blocks as the lesson's inline
//! nodes (bold, italic, line breaks), with what the format cannot hold
//! (pictures, formulas, tables but a rubric's) left out and spaces tidied.

use super::{
    el, first, write,
    xml_tree::{descendants, MAX_DEPTH},
    Build,
};
use crate::{Element, Node};

/// The question's text: the interaction's prompt, or else the text before it.
pub(super) fn prompt(body: &Element, interaction: &Element) -> Vec<Node> {
    let own = first(interaction, "prompt").map(|p| tidy(inline_of(p))).unwrap_or_default();
    if !own.is_empty() {
        return own;
    }
    let mut before = Vec::new();
    for b in text_blocks(body) {
        if std::ptr::eq(b, interaction) || descendants(b).iter().any(|d| std::ptr::eq(*d, interaction)) {
            break;
        }
        if !before.is_empty() {
            before.push(Node::Text(" ".into()));
        }
        before.extend(inline_of(b));
    }
    tidy(before)
}

/// The blocks of text in `e` (paragraphs, list items, cells, …), looking
/// into containers; rubric blocks and feedback are not the question's text.
pub(super) fn text_blocks(e: &Element) -> Vec<&Element> {
    fn walk<'a>(e: &'a Element, out: &mut Vec<&'a Element>, depth: usize) {
        for c in e.elements() {
            match c.name.as_str() {
                "rubricBlock" | "modalFeedback" | "feedbackBlock" | "feedbackInline" | "templateBlock" | "stylesheet" => {}
                "div" | "blockquote" | "ul" | "ol" | "dl" | "table" | "tbody" | "thead" | "tfoot" | "tr" | "section" | "article" | "figure" if depth < MAX_DEPTH => walk(c, out, depth + 1),
                _ => out.push(c),
            }
        }
    }
    let mut out = Vec::new();
    walk(e, &mut out, 0);
    out
}

pub(super) fn has_rubric_table(b: &Element) -> bool {
    descendants(b).iter().any(|e| e.name == "table" && e.attr("class") == Some(write::RUBRIC_CLASS))
}

/// Inline content as the lesson has it: text, emphasis; a text entry
/// becomes nothing.
pub(super) fn inline_of(e: &Element) -> Vec<Node> {
    inline_with(e, &mut |_| None)
}

/// Inline content, each text entry as `entry` makes it.
pub(super) fn inline_with(e: &Element, entry: &mut dyn FnMut(&Element) -> Option<Node>) -> Vec<Node> {
    fn walk(e: &Element, entry: &mut dyn FnMut(&Element) -> Option<Node>, out: &mut Vec<Node>, depth: usize) {
        for n in &e.children {
            match n {
                Node::Text(t) => out.push(Node::Text(t.clone())),
                Node::Element(c) => match c.name.as_str() {
                    "em" | "i" | "strong" | "b" if depth < MAX_DEPTH => {
                        let mut inner = Vec::new();
                        walk(c, entry, &mut inner, depth + 1);
                        out.push(Node::Element(el(if matches!(c.name.as_str(), "em" | "i") { "em" } else { "strong" }).nodes(inner)));
                    }
                    "textEntryInteraction" => out.extend(entry(c)),
                    "br" => out.push(Node::Text(" ".into())),
                    "img" | "object" | "math" | "audio" | "video" | "rubricBlock" | "feedbackInline" | "feedbackBlock" | "modalFeedback" | "printedVariable" | "templateInline" | "stylesheet" => {}
                    "p" | "div" | "li" | "td" | "th" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" if depth < MAX_DEPTH => {
                        out.push(Node::Text(" ".into()));
                        walk(c, entry, out, depth + 1);
                        out.push(Node::Text(" ".into()));
                    }
                    _ if depth < MAX_DEPTH => walk(c, entry, out, depth + 1),
                    _ => {}
                },
            }
        }
    }
    let mut out = Vec::new();
    walk(e, entry, &mut out, 0);
    out
}

/// Spaces as a reader sees them: runs of white space as one, none at the
/// ends; emphasis left empty dropped.
pub(super) fn tidy(nodes: Vec<Node>) -> Vec<Node> {
    fn collapse(nodes: Vec<Node>, prev_space: &mut bool) -> Vec<Node> {
        let mut out = Vec::new();
        for n in nodes {
            match n {
                Node::Text(t) => {
                    let mut s = String::new();
                    for ch in t.chars() {
                        if ch.is_whitespace() {
                            if !*prev_space {
                                s.push(' ');
                            }
                            *prev_space = true;
                        } else {
                            s.push(ch);
                            *prev_space = false;
                        }
                    }
                    if !s.is_empty() {
                        out.push(Node::Text(s));
                    }
                }
                Node::Element(mut e) if e.name == "em" || e.name == "strong" => {
                    e.children = collapse(e.children, prev_space);
                    if !e.children.is_empty() {
                        out.push(Node::Element(e));
                    }
                }
                other => {
                    *prev_space = false;
                    out.push(other);
                }
            }
        }
        out
    }
    let mut space = true;
    let mut out = collapse(nodes, &mut space);
    trim_end(&mut out);
    out
}

pub(super) fn trim_end(nodes: &mut Vec<Node>) {
    while let Some(last) = nodes.last_mut() {
        match last {
            Node::Text(t) => {
                let kept = t.trim_end().len();
                t.truncate(kept);
                if t.is_empty() {
                    nodes.pop();
                    continue;
                }
            }
            Node::Element(e) if e.name == "em" || e.name == "strong" => {
                trim_end(&mut e.children);
                if e.children.is_empty() {
                    nodes.pop();
                    continue;
                }
            }
            _ => {}
        }
        break;
    }
}

/// Text with its runs of white space made one space, trimmed.
pub(super) fn tidy_text(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
