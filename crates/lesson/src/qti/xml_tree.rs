//! A package's XML as Margin's element tree, QTI 3.0's names read as 2.x's
//! (`qti-choice-interaction` as `choiceInteraction`), to a fixed depth; a
//! DTD is never read.

use crate::{Element, Node};

/// How deep the reader follows nested elements.
pub(super) const MAX_DEPTH: usize = 48;

/// Every element inside `e`, in document order.
pub(super) fn descendants(e: &Element) -> Vec<&Element> {
    fn walk<'a>(e: &'a Element, out: &mut Vec<&'a Element>) {
        for c in e.elements() {
            out.push(c);
            walk(c, out);
        }
    }
    let mut out = Vec::new();
    walk(e, &mut out);
    out
}

/// XML as an element tree, QTI 3.0's names read as 2.x's; `None` when it is
/// not XML (or declares a DTD, which is never read).
pub(super) fn parse(text: &str) -> Option<Element> {
    let doc = roxmltree::Document::parse(text).ok()?;
    Some(tree(doc.root_element(), 0))
}

pub(super) fn tree(n: roxmltree::Node, depth: usize) -> Element {
    let mut e = Element::new(qti2_name(n.tag_name().name()));
    for a in n.attributes() {
        e.attrs.push((qti2_attr(a.name()), a.value().to_string()));
    }
    if depth < MAX_DEPTH {
        for c in n.children() {
            if c.is_element() {
                e.children.push(Node::Element(tree(c, depth + 1)));
            } else if let Some(t) = c.text().filter(|_| c.is_text()) {
                e.children.push(Node::Text(t.to_string()));
            }
        }
    }
    e
}

/// `qti-choice-interaction` → `choiceInteraction`; other names as they are.
pub(super) fn qti2_name(name: &str) -> String {
    match name.strip_prefix("qti-") {
        Some(rest) => camel(rest),
        None => name.to_string(),
    }
}

/// `response-identifier` → `responseIdentifier` (`data-`, `aria-` kept).
pub(super) fn qti2_attr(name: &str) -> String {
    if name.contains('-') && !name.starts_with("data-") && !name.starts_with("aria-") {
        camel(name)
    } else {
        name.to_string()
    }
}

pub(super) fn camel(kebab: &str) -> String {
    let mut out = String::with_capacity(kebab.len());
    let mut upper = false;
    for ch in kebab.chars() {
        if ch == '-' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}
