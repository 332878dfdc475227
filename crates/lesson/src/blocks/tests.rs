//! The editor's blocks and the format agree: every lesson survives the round
//! trip, and the text operations keep every character and mark.

use proptest::prelude::*;

use super::*;
use crate::{normalize, parse};

const LESSON: &str = r#"<lesson title="Verbs" lang="fr" standards="RL.4.1">
  <h1 id="h1">Les <em>verbes</em></h1>
  <p id="p1">Read <em>carefully <strong>and</strong></em><strong> answer</strong> &amp; &lt;go&gt;.</p>
  <note id="n1">Only for you.</note>
  <h2 id="h2">Part two</h2>
  <p id="p2"/>
  <writing-area id="w1" lines="4"/>
  <exercise id="ex1" type="fill-blanks">
    <p id="p3">Je <blank id="b1" answer="suis"/> content.</p>
  </exercise>
</lesson>"#;

#[test]
fn a_lesson_makes_the_same_lesson_back() {
    let root = normalize(LESSON).unwrap();
    let doc = Doc::from_root(&root);
    assert_eq!(doc.blocks.len(), 7);
    assert!(matches!(&doc.blocks[0], Block::Text { kind: TextKind::H1, .. }));
    assert!(matches!(&doc.blocks[5], Block::Other(e) if e.name == "writing-area"));
    let back = normalize(&doc.to_xml()).unwrap();
    // The same words with the same marks in the same blocks, ids kept.
    assert_eq!(Doc::from_root(&back), doc);
    assert_eq!(back.attrs, root.attrs);
    // Marks come out in one canonical shape.
    assert!(doc.to_xml().contains(r#"<p id="p1">Read <em>carefully </em><strong><em>and</em></strong><strong> answer</strong> &amp; &lt;go&gt;.</p>"#), "{}", doc.to_xml());
}

#[test]
fn runs_of_nested_marks() {
    let root = parse(LESSON).unwrap();
    let p = root.elements().nth(1).unwrap();
    assert_eq!(
        runs_of(p),
        vec![
            Run::plain("Read "),
            Run { text: "carefully ".into(), bold: false, italic: true },
            Run { text: "and".into(), bold: true, italic: true },
            Run { text: " answer".into(), bold: true, italic: false },
            Run::plain(" & <go>."),
        ]
    );
}

#[test]
fn new_ids_are_free() {
    let doc = Doc::from_root(&normalize(r#"<lesson><p id="p-1">a</p><exercise type="fill-blanks"><p id="p-2">x <blank answer="y"/></p></exercise></lesson>"#).unwrap());
    assert_eq!(doc.new_id(TextKind::P), "p-3");
    assert_eq!(doc.new_id(TextKind::H2), "h-1");
}

#[test]
fn split_counts_in_utf16_and_keeps_marks() {
    let runs = vec![Run::plain("a😀b"), Run { text: "cd".into(), bold: true, italic: false }];
    // "a" is 1 unit, the emoji 2.
    assert_eq!(split_at(&runs, 3), (vec![Run::plain("a😀")], vec![Run::plain("b"), Run { text: "cd".into(), bold: true, italic: false }]));
    // Inside the pair: before it.
    assert_eq!(split_at(&runs, 2).0, vec![Run::plain("a")]);
    assert_eq!(split_at(&runs, 5), (vec![Run::plain("a😀b"), Run { text: "c".into(), bold: true, italic: false }], vec![Run { text: "d".into(), bold: true, italic: false }]));
    assert_eq!(split_at(&runs, 99).1, vec![]);
    assert_eq!(split_at(&runs, 0).0, vec![]);
}

fn run() -> impl Strategy<Value = Run> {
    ("[a-z <&>é😀\"]{0,6}", any::<bool>(), any::<bool>()).prop_map(|(text, bold, italic)| Run { text, bold, italic })
}

proptest! {
    /// Enter then Backspace gives the block back, wherever the caret was.
    #[test]
    fn split_then_join_is_the_same_text(runs in proptest::collection::vec(run(), 0..6), at in 0usize..40) {
        let (a, b) = split_at(&runs, at);
        prop_assert_eq!(join(&a, &b), tidy(runs.clone()));
        prop_assert!(len16(&a) <= at);
    }

    /// Any runs written into a paragraph and read back are the same runs.
    #[test]
    fn runs_survive_the_format(runs in proptest::collection::vec(run(), 0..6)) {
        let doc = Doc { attrs: vec![], blocks: vec![Block::Text { id: "p-1".into(), kind: TextKind::P, runs: runs.clone() }] };
        let back = normalize(&doc.to_xml()).unwrap();
        match &Doc::from_root(&back).blocks[0] {
            Block::Text { runs: read, .. } => prop_assert_eq!(read, &tidy(runs)),
            other => prop_assert!(false, "{:?}", other),
        }
    }
}
