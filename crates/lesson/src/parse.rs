//! Reading lesson XML into the tree: well-formed XML only, no DTD or entity
//! declarations (roxmltree refuses them), and caps on size and depth so that a
//! hostile document cannot exhaust the server or the browser.

use roxmltree::{Document, NodeType, ParsingOptions};

use super::{
    error::LessonError,
    tree::{Element, Node},
};

/// Largest lesson accepted, in bytes of XML.
pub const MAX_BYTES: usize = 256 * 1024;
/// Deepest nesting of elements accepted.
pub const MAX_DEPTH: usize = 12;
const MAX_NODES: u32 = 50_000;

pub fn parse(xml: &str) -> Result<Element, LessonError> {
    if xml.len() > MAX_BYTES {
        return Err(LessonError::whole(format!(
            "The lesson is too large ({} KB). Keep it under {} KB, or split it into two lessons.",
            xml.len() / 1024,
            MAX_BYTES / 1024
        )));
    }
    if xml.trim().is_empty() {
        return Err(LessonError::whole("The lesson is empty. It must start with <lesson> and end with </lesson>."));
    }
    let options = ParsingOptions { allow_dtd: false, nodes_limit: MAX_NODES, ..ParsingOptions::default() };
    let doc = Document::parse_with_options(xml, options).map_err(|e| {
        let pos = e.pos();
        LessonError::new(pos.row, pos.col, "", explain(&e))
    })?;
    let root = doc.root_element();
    convert(&doc, root, 1)
}

fn explain(e: &roxmltree::Error) -> String {
    use roxmltree::Error as E;
    match e {
        E::DtdDetected => "DOCTYPE and entity declarations are not allowed in a lesson. Remove the <!DOCTYPE …> part.".into(),
        E::NodesLimitReached => "The lesson has too many elements. Split it into two lessons.".into(),
        E::UnexpectedCloseTag(expected, actual, _) => {
            format!("the closing tag </{actual}> does not match the open <{expected}>. Close <{expected}> first.")
        }
        E::UnknownEntityReference(name, _) => {
            format!("unknown entity &{name};. Write & as &amp;, < as &lt; and > as &gt;.")
        }
        E::UnexpectedEntityCloseTag(_) | E::EntityReferenceLoop(_) => {
            "entity references are not allowed in a lesson beyond &amp; &lt; &gt; &quot; &apos;.".into()
        }
        E::NoRootNode => "there is no root element. A lesson starts with <lesson> and ends with </lesson>.".into(),
        E::UnclosedRootNode => "the document ends before </lesson>. Close every open element.".into(),
        other => {
            // roxmltree's own wording already names the problem; drop its position
            // suffix, which we report separately.
            let text = other.to_string();
            match text.rfind(" at ") {
                Some(i) => text[..i].to_string(),
                None => text,
            }
        }
    }
}

fn convert(doc: &Document, node: roxmltree::Node, depth: usize) -> Result<Element, LessonError> {
    let pos = doc.text_pos_at(node.range().start);
    let name = node.tag_name().name().to_string();
    if depth > MAX_DEPTH {
        return Err(LessonError::new(
            pos.row,
            pos.col,
            name,
            format!("elements are nested more than {MAX_DEPTH} deep. Lessons never need that much nesting."),
        ));
    }
    if node.tag_name().namespace().is_some() {
        return Err(LessonError::new(pos.row, pos.col, name, "namespaces are not used in lessons. Remove the prefix and xmlns."));
    }
    let mut element = Element::new(name);
    element.line = pos.row;
    element.column = pos.col;
    element.attrs = node.attributes().map(|a| (a.name().to_string(), a.value().to_string())).collect();
    for child in node.children() {
        match child.node_type() {
            NodeType::Element => element.children.push(Node::Element(convert(doc, child, depth + 1)?)),
            NodeType::Text => {
                let text = child.text().unwrap_or_default();
                // Adjacent text (e.g. around a comment) is merged.
                if let Some(Node::Text(prev)) = element.children.last_mut() {
                    prev.push_str(text);
                } else {
                    element.children.push(Node::Text(text.to_string()));
                }
            }
            // Comments and processing instructions are not part of a lesson.
            _ => {}
        }
    }
    Ok(element)
}
