//! Pastes from Word, Google Docs and anywhere else come out as the format's
//! blocks and nothing more.

use proptest::prelude::*;

use super::*;
use crate::lesson::blocks::{Block, Doc};

fn el(tag: &str, style: &str, children: Vec<Pasted>) -> Pasted {
    Pasted::Element { tag: tag.into(), style: style.into(), children }
}

fn t(s: &str) -> Pasted {
    Pasted::Text(s.into())
}

fn bold(s: &str) -> Run {
    Run { text: s.into(), bold: true, italic: false }
}

fn italic(s: &str) -> Run {
    Run { text: s.into(), bold: false, italic: true }
}

#[test]
fn google_docs_wrapper_is_not_bold_and_styled_spans_are() {
    // What Google Docs puts on the clipboard, trimmed.
    let body = el("BODY", "", vec![
        el("META", "", vec![]),
        el("B", "font-weight:normal;", vec![
            el("H1", "", vec![el("SPAN", "font-size:20pt;font-weight:400", vec![t("Photosynthesis")])]),
            el("P", "", vec![
                el("SPAN", "font-weight:400", vec![t("Plants make ")]),
                el("SPAN", "font-weight:700", vec![t("sugar")]),
                el("SPAN", "font-style:italic;font-weight:400", vec![t(" from light.")]),
            ]),
            el("BR", "", vec![]),
            el("UL", "", vec![el("LI", "", vec![el("P", "", vec![el("SPAN", "", vec![t("water")])])])]),
        ]),
    ]);
    let made = from_html(&body);
    assert_eq!(made.blocks, vec![
        (TextKind::H1, vec![Run::plain("Photosynthesis")]),
        (TextKind::P, vec![Run::plain("Plants make "), bold("sugar"), italic(" from light.")]),
        (TextKind::P, vec![Run::plain("water")]),
    ]);
    assert_eq!(made.left_out, "");
}

#[test]
fn word_lists_lose_their_bullets_and_images_are_said() {
    // What Word puts on the clipboard, trimmed: styles in the head,
    // MsoNormal paragraphs, list bullets in an ignored span, an image.
    let body = el("BODY", "", vec![
        el("STYLE", "", vec![t("p.MsoNormal {margin:0}")]),
        el("H2", "", vec![t("Key\r\nwords")]),
        el("P", "", vec![el("B", "", vec![t("Energy")]), t(":\u{a0} the ability to do "), el("I", "", vec![t("work")]), el("O:P", "", vec![])]),
        el("P", "", vec![el("SPAN", "mso-list:Ignore", vec![t("·"), el("SPAN", "", vec![t("\u{a0}\u{a0}")])]), t("Light")]),
        el("P", "", vec![el("IMG", "", vec![])]),
        el("SCRIPT", "", vec![t("alert(1)")]),
        el("H5", "", vec![t("Small")]),
    ]);
    let made = from_html(&body);
    assert_eq!(made.blocks, vec![
        (TextKind::H2, vec![Run::plain("Key words")]),
        (TextKind::P, vec![bold("Energy"), Run::plain(": the ability to do "), italic("work")]),
        (TextKind::P, vec![Run::plain("Light")]),
        (TextKind::H3, vec![Run::plain("Small")]),
    ]);
    assert_eq!(made.left_out, "Pasted as text: an image left out.");
}

#[test]
fn plain_text_is_a_paragraph_a_line() {
    assert_eq!(from_text("one\n\n  two  words \r\nthree").blocks.len(), 3);
}

fn tree() -> impl Strategy<Value = Pasted> {
    let leaf = prop_oneof![
        "[a-zé <>&\"'\\n\\t\u{a0}]{0,8}".prop_map(Pasted::Text),
        Just(el("img", "", vec![])),
        Just(el("br", "", vec![])),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        (
            prop::sample::select(vec!["p", "div", "b", "i", "em", "strong", "span", "h1", "h4", "li", "script", "style", "td", "tr", "a", "o:p", "svg"]),
            prop::sample::select(vec!["", "font-weight:700", "font-weight:normal", "font-style:italic", "mso-list:Ignore", "color:red"]),
            prop::collection::vec(inner, 0..5),
        )
            .prop_map(|(tag, style, children)| el(tag, style, children))
    })
}

proptest! {
    /// Whatever is pasted, the blocks are valid lesson blocks that survive
    /// the format unchanged, with no empty ones and no control characters.
    #[test]
    fn any_paste_makes_valid_blocks(root in tree()) {
        let made = from_html(&el("body", "", vec![root]));
        let doc = Doc {
            attrs: vec![],
            blocks: made.blocks.iter().enumerate().map(|(i, (kind, runs))| Block::Text { id: format!("p-{i}"), kind: *kind, runs: runs.clone() }).collect(),
        };
        let back = crate::lesson::normalize(&doc.to_xml());
        prop_assert!(back.is_ok(), "{:?}", back.err());
        prop_assert_eq!(Doc::from_root(&back.unwrap()), doc);
        for (_, runs) in &made.blocks {
            prop_assert!(!runs.is_empty());
            for r in runs {
                prop_assert!(!r.text.chars().any(|c| c.is_control()));
            }
        }
    }
}
