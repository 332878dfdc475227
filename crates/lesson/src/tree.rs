//! The parsed lesson: a small owned tree of elements and text that can be
//! checked, given ids, rendered and written back as XML.
//!
//! Writing XML back is done here rather than with a second XML crate: the
//! format needs only element, attribute and text output with five escapes.

use serde::{Deserialize, Serialize};

use super::schema;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Node {
    Element(Element),
    Text(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Element {
    pub name: String,
    /// Attributes in document order.
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
    /// Where the element starts in the source text (1-based; 0 when built in code).
    pub line: u32,
    pub column: u32,
}

impl Element {
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), attrs: Vec::new(), children: Vec::new(), line: 0, column: 0 }
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn set_attr(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.attrs.iter_mut().find(|(k, _)| k == name) {
            Some((_, v)) => *v = value,
            None => self.attrs.push((name.to_string(), value)),
        }
    }

    pub fn id(&self) -> Option<&str> {
        self.attr("id")
    }

    /// Child elements, skipping text.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// All text inside, with markup removed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        collect_text(self, &mut out);
        out
    }

    /// The element as XML, indented by block structure; inline content is kept
    /// exactly as written.
    pub fn to_xml(&self) -> String {
        let mut out = String::new();
        write_element(self, 0, &mut out);
        out.push('\n');
        out
    }
}

fn collect_text(e: &Element, out: &mut String) {
    for child in &e.children {
        match child {
            Node::Text(t) => out.push_str(t),
            Node::Element(c) => collect_text(c, out),
        }
    }
}

fn write_open(e: &Element, out: &mut String) {
    out.push('<');
    out.push_str(&e.name);
    for (k, v) in &e.attrs {
        out.push(' ');
        out.push_str(k);
        out.push_str("=\"");
        out.push_str(&escape_attr(v));
        out.push('"');
    }
}

fn write_element(e: &Element, depth: usize, out: &mut String) {
    write_open(e, out);
    if e.children.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    if schema::holds_blocks(&e.name) {
        let indent = "  ".repeat(depth + 1);
        for child in &e.children {
            match child {
                Node::Element(c) => {
                    out.push('\n');
                    out.push_str(&indent);
                    write_element(c, depth + 1, out);
                }
                // Stray text between blocks is invalid and never reaches here
                // from `normalize`; whitespace between blocks is layout only.
                Node::Text(t) if t.trim().is_empty() => {}
                Node::Text(t) => {
                    out.push('\n');
                    out.push_str(&indent);
                    out.push_str(&escape_text(t.trim()));
                }
            }
        }
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    } else {
        for child in &e.children {
            match child {
                Node::Element(c) => write_element(c, depth + 1, out),
                Node::Text(t) => out.push_str(&escape_text(t)),
            }
        }
    }
    out.push_str("</");
    out.push_str(&e.name);
    out.push('>');
}

/// Escapes text content.
pub fn escape_text(s: &str) -> String {
    escape(s, false)
}

/// Escapes an attribute value (double-quoted).
pub fn escape_attr(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, attr: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            '\n' if attr => out.push_str("&#10;"),
            '\t' if attr => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}
