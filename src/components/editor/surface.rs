//! The one place the editor talks to the DOM's text: what a block's
//! editable element holds, as runs; the runs written into it; where the
//! caret is, as a UTF-16 offset into the block's text, and putting it there.
//!
//! Reading a block keeps only text, bold (`<b>`, `<strong>`) and italic
//! (`<i>`, `<em>`): whatever else the browser or a paste put there (spans,
//! line breaks, styles, links) is read as its text, so nothing but the
//! format's marks ever reaches a save.

use crate::lesson::{blocks::Run, escape_text};

/// Runs as the editable element's HTML.
pub fn html_of(runs: &[Run]) -> String {
    let mut out = String::new();
    for r in runs {
        let (open, close) = match (r.bold, r.italic) {
            (true, true) => ("<strong><em>", "</em></strong>"),
            (true, false) => ("<strong>", "</strong>"),
            (false, true) => ("<em>", "</em>"),
            (false, false) => ("", ""),
        };
        out.push_str(open);
        out.push_str(&escape_text(&r.text));
        out.push_str(close);
    }
    out
}

/// A fill-in sentence as its editable element's HTML: its words, and each
/// blank as a box the caret passes over, showing its answer.
pub fn sentence_html(p: &crate::lesson::Element) -> String {
    use crate::lesson::parts::{blank_answer, runs_with_blanks, Piece};
    let mut out = String::new();
    for piece in runs_with_blanks(p) {
        match piece {
            Piece::Words(r) => out.push_str(&html_of(&[r])),
            Piece::Blank(id) => {
                let answer = blank_answer(p, &id);
                out.push_str(&format!(
                    "<span class=\"blank-chip\" contenteditable=\"false\" data-blank=\"{}\">{}</span>",
                    crate::lesson::escape_attr(&id),
                    escape_text(answer)
                ));
            }
        }
    }
    out
}

#[cfg(feature = "hydrate")]
pub use dom::*;

/// The lesson's XML (the server's, already checked) as the format's tree,
/// read by the browser's own XML parser: the editor's part then carries no
/// parser of its own. Elsewhere (tests, the server's build) the format's.
#[cfg(not(feature = "hydrate"))]
pub fn read_lesson(xml: &str) -> Option<crate::lesson::Element> {
    crate::lesson::parse(xml).ok()
}

#[cfg(feature = "hydrate")]
mod dom {
    use leptos::{
        prelude::*,
        wasm_bindgen::JsCast,
        web_sys::{Element, HtmlElement, Node},
    };

    use crate::lesson::blocks::{tidy, Run};

    /// See `read_lesson` above: the same tree as the format's parser gives
    /// (names, attributes in order, text with neighbours merged, comments
    /// left out), without positions.
    pub fn read_lesson(xml: &str) -> Option<crate::lesson::Element> {
        use leptos::web_sys::{DomParser, SupportedType};
        fn tree(el: &Element) -> crate::lesson::Element {
            let mut e = crate::lesson::Element::new(el.local_name());
            e.attrs = el.get_attribute_names().iter().filter_map(|n| n.as_string()).filter_map(|n| el.get_attribute(&n).map(|v| (n, v))).collect();
            let kids = el.child_nodes();
            for c in (0..kids.length()).filter_map(|i| kids.item(i)) {
                match c.node_type() {
                    Node::ELEMENT_NODE => e.children.push(crate::lesson::Node::Element(tree(c.unchecked_ref()))),
                    Node::TEXT_NODE | Node::CDATA_SECTION_NODE => {
                        let text = c.node_value().unwrap_or_default();
                        match e.children.last_mut() {
                            Some(crate::lesson::Node::Text(prev)) => prev.push_str(&text),
                            _ => e.children.push(crate::lesson::Node::Text(text)),
                        }
                    }
                    _ => {}
                }
            }
            e
        }
        let doc = DomParser::new().ok()?.parse_from_string(xml, SupportedType::ApplicationXml).ok()?;
        // A document the parser could not read holds its complaint instead.
        if doc.get_elements_by_tag_name("parsererror").length() > 0 {
            return None;
        }
        let root = doc.document_element()?;
        (root.local_name() == "lesson").then(|| tree(&root))
    }

    /// What an editable element holds.
    pub fn runs_of(el: &Node) -> Vec<Run> {
        fn walk(n: &Node, bold: bool, italic: bool, out: &mut Vec<Run>) {
            let children = n.child_nodes();
            for i in 0..children.length() {
                let Some(c) = children.item(i) else { continue };
                match c.node_type() {
                    Node::TEXT_NODE => out.push(Run { text: c.node_value().unwrap_or_default().replace(['\n', '\r'], " "), bold, italic }),
                    Node::ELEMENT_NODE => {
                        let tag = c.node_name().to_ascii_lowercase();
                        walk(&c, bold || tag == "b" || tag == "strong", italic || tag == "i" || tag == "em", out);
                    }
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(el, false, false, &mut out);
        tidy(out)
    }

    /// What a fill-in sentence's editable element holds: words, and its
    /// blanks by id (a box the browser dropped is a blank removed).
    pub fn pieces_of(el: &Node) -> Vec<crate::lesson::parts::Piece> {
        use crate::lesson::parts::Piece;
        fn walk(n: &Node, bold: bool, italic: bool, out: &mut Vec<Piece>) {
            let children = n.child_nodes();
            for i in 0..children.length() {
                let Some(c) = children.item(i) else { continue };
                match c.node_type() {
                    Node::TEXT_NODE => out.push(Piece::Words(Run { text: c.node_value().unwrap_or_default().replace(['\n', '\r'], " "), bold, italic })),
                    Node::ELEMENT_NODE => {
                        if let Some(id) = c.dyn_ref::<Element>().and_then(|e| e.get_attribute("data-blank")) {
                            out.push(Piece::Blank(id));
                            continue;
                        }
                        let tag = c.node_name().to_ascii_lowercase();
                        walk(&c, bold || tag == "b" || tag == "strong", italic || tag == "i" || tag == "em", out);
                    }
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(el, false, false, &mut out);
        out
    }

    /// The selection's start and end in `el`, in UTF-16 units of its text;
    /// `None` when the selection is not in it.
    pub fn caret(el: &Node) -> Option<(usize, usize)> {
        let sel = window().get_selection().ok()??;
        if sel.range_count() == 0 {
            return None;
        }
        let range = sel.get_range_at(0).ok()?;
        let (start, end) = (range.start_container().ok()?, range.end_container().ok()?);
        if !el.contains(Some(&start)) || !el.contains(Some(&end)) {
            return None;
        }
        let upto = |node: &Node, offset: u32| -> Option<usize> {
            let r = document().create_range().ok()?;
            r.select_node_contents(el).ok()?;
            r.set_end(node, offset).ok()?;
            Some(r.to_string().length() as usize)
        };
        Some((upto(&start, range.start_offset().ok()?)?, upto(&end, range.end_offset().ok()?)?))
    }

    /// Puts the caret `at` UTF-16 units into `el`'s text (its end when past
    /// it) and focuses `el`.
    pub fn place_caret(el: &HtmlElement, at: usize) {
        let _ = el.focus();
        let Some(sel) = window().get_selection().ok().flatten() else { return };
        let Ok(range) = document().create_range() else { return };
        let mut left = at;
        let mut spot: Option<(Node, u32)> = None;
        let mut last_text: Option<Node> = None;
        fn texts(n: &Node, out: &mut Vec<Node>) {
            let children = n.child_nodes();
            for i in 0..children.length() {
                if let Some(c) = children.item(i) {
                    if c.node_type() == Node::TEXT_NODE {
                        out.push(c);
                    } else {
                        texts(&c, out);
                    }
                }
            }
        }
        let mut all = Vec::new();
        texts(el, &mut all);
        for t in all {
            let n = t.node_value().unwrap_or_default().encode_utf16().count();
            if left <= n {
                spot = Some((t, left as u32));
                break;
            }
            left -= n;
            last_text = Some(t);
        }
        let placed = match (spot, last_text) {
            (Some((node, off)), _) => range.set_start(&node, off),
            (None, Some(t)) => {
                let n = t.node_value().unwrap_or_default().encode_utf16().count() as u32;
                range.set_start(&t, n)
            }
            (None, None) => range.set_start(el, 0),
        };
        if placed.is_ok() {
            range.collapse_with_to_start(true);
            let _ = sel.remove_all_ranges();
            let _ = sel.add_range(&range);
        }
    }

    /// Bold or italic on the selection, as the browser does it (its own
    /// undo of the selection's marks comes with it).
    pub fn toggle(command: &str) {
        if let Ok(doc) = document().dyn_into::<leptos::web_sys::HtmlDocument>() {
            let _ = doc.exec_command(command);
        }
    }

    /// Puts plain text in at the caret, as typing would.
    pub fn insert_text(text: &str) {
        if let Ok(doc) = document().dyn_into::<leptos::web_sys::HtmlDocument>() {
            let _ = doc.exec_command_with_show_ui_and_value("insertText", false, text);
        }
    }

    /// The editable element of the block drawn with `key`.
    pub fn editable(key: u64) -> Option<HtmlElement> {
        document().query_selector(&format!("[data-key=\"{key}\"] [contenteditable]")).ok().flatten().and_then(|e: Element| e.dyn_into().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_written_escaped_with_the_formats_marks() {
        let runs = vec![Run::plain("a <b> & "), Run { text: "c".into(), bold: true, italic: true }, Run { text: "d".into(), bold: false, italic: true }];
        assert_eq!(html_of(&runs), "a &lt;b&gt; &amp; <strong><em>c</em></strong><em>d</em>");
    }
}
