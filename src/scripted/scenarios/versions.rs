//! The scripted model keeping versions of a lesson: carrying its core's
//! changes into a version (each quoted block of the core put in place of
//! the version's block with its id, or added at the end; each block the
//! core removed taken out; everything else left as the version has it), and
//! translating a lesson (every paragraph in a fixed Spanish text, `lang`
//! set). A real model rewrites for the version's level or language; the
//! script only shows the moves, the same every time.

use super::{document, edit, last_user, text, Ctx, Step};
use crate::lesson::{self, Element, Node};

/// Plain Spanish sentences (written for this script), for any paragraph.
pub const SPANISH: &str = "Las plantas verdes hacen su propia comida con la luz del sol, el agua y el aire que las rodea. Esto pasa dentro de las hojas, donde una parte verde atrapa la luz. La planta convierte esa energía en azúcar y la usa para crecer.";

/// The blocks quoted in the first ```xml fence of `message`.
fn quoted_blocks(message: &str) -> Vec<Element> {
    let Some(start) = message.find("```xml\n").map(|i| i + 7) else { return Vec::new() };
    let Some(len) = message[start..].find("```") else { return Vec::new() };
    lesson::parse(&format!("<lesson>{}</lesson>", &message[start..start + len])).map(|root| root.elements().cloned().collect()).unwrap_or_default()
}

/// The ids listed after "Blocks the core removed (their ids): ".
fn removed_ids(message: &str) -> Vec<String> {
    let marker = "Blocks the core removed (their ids): ";
    message
        .find(marker)
        .map(|i| message[i + marker.len()..].lines().next().unwrap_or("").trim_end_matches('.').split(", ").map(|s| s.trim().to_string()).collect())
        .unwrap_or_default()
}

/// `doc` with the core's changes from `message` carried in.
fn carried(doc: &str, message: &str) -> Option<String> {
    let mut root = lesson::parse(doc).ok()?;
    let gone = removed_ids(message);
    root.children.retain(|n| !matches!(n, Node::Element(e) if e.id().is_some_and(|id| gone.iter().any(|g| g == id))));
    for block in quoted_blocks(message) {
        let at = root.children.iter().position(|n| matches!(n, Node::Element(e) if e.id().is_some() && e.id() == block.id()));
        match at {
            Some(i) => root.children[i] = Node::Element(block),
            None => root.children.push(Node::Element(block)),
        }
    }
    Some(root.to_xml())
}

pub(super) fn carry_core_changes(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    match round {
        0 => match carried(&document(body), &last_user(body)) {
            Some(xml) => edit(xml, "Carried the core's changes into this version"),
            None => text("I could not read this version's lesson, so I changed nothing."),
        },
        _ if last_tool.as_deref().is_some_and(|t| t.starts_with("Error")) => {
            text(&format!("I could not carry the changes: {}", last_tool.as_deref().unwrap_or_default().trim_start_matches("Error: ")))
        }
        _ => text("I carried the core's changes into this version. They wait for you here: apply or discard them."),
    }
}

/// The language code the request names (`lang="es"`).
fn asked_lang(said: &str) -> String {
    said.split("lang=\"").nth(1).and_then(|r| r.split('"').next()).filter(|c| !c.is_empty()).unwrap_or("es").to_string()
}

/// `doc` with `lang` set and every paragraph in `SPANISH`.
fn translated(doc: &str, lang: &str) -> Option<String> {
    let mut root = lesson::parse(doc).ok()?;
    root.set_attr("lang", lang);
    for n in root.children.iter_mut() {
        if let Node::Element(e) = n {
            if e.name == "p" {
                e.children = vec![Node::Text(SPANISH.to_string())];
            }
        }
    }
    Some(root.to_xml())
}

pub(super) fn translate(c: &Ctx) -> Step {
    let Ctx { body, round, last_tool, .. } = c;
    match round {
        0 => match translated(&document(body), &asked_lang(&last_user(body))) {
            Some(xml) => edit(xml, "Translated the lesson"),
            None => text("I could not read the lesson, so I changed nothing."),
        },
        _ if last_tool.as_deref().is_some_and(|t| t.starts_with("Error")) => {
            text(&format!("I could not translate the lesson: {}", last_tool.as_deref().unwrap_or_default().trim_start_matches("Error: ")))
        }
        _ => text("I translated every paragraph and set the lesson's language. The exercises and their ids are as they were."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cores_blocks_replace_theirs_new_ones_are_added_removed_ones_go() {
        let version = r#"<lesson><h1 id="h">Plantas</h1><p id="a">Mine, kept.</p><p id="b">Old b.</p><p id="c">Old c.</p></lesson>"#;
        let message = "What changed…\n```xml\n<p id=\"b\">New b.</p>\n<p id=\"d\">New d.</p>\n```\n\nBlocks the core removed (their ids): c.\n";
        let out = carried(version, message).unwrap();
        assert!(out.contains("Mine, kept.") && out.contains(r#"<p id="b">New b.</p>"#) && out.contains(r#"<p id="d">New d.</p>"#), "{out}");
        assert!(!out.contains("Old b.") && !out.contains("Old c."), "{out}");
        assert!(out.find("New b.") < out.find("New d."), "{out}");
    }

    #[test]
    fn a_translation_sets_lang_and_rewrites_every_paragraph() {
        let out = translated(r#"<lesson><h1 id="h">Plants</h1><p id="a">Leaves.</p></lesson>"#, &asked_lang("with lang=\"es\" on")).unwrap();
        assert!(out.contains(r#"lang="es""#) && out.contains(SPANISH) && !out.contains("Leaves."), "{out}");
    }
}
