use std::io::{Cursor, Read, Write};

use super::*;
use crate::lesson::parse;

/// Every exercise kind, a note, a hint, a rubric kept from students and
/// one shared with them.
const LESSON: &str = r#"<lesson lang="en">
<h1 id="h1">Verbs</h1>
<p id="p0">We practise <strong>verbs</strong> in <em>the past</em>.</p>
<note id="n1">Go slowly with this class.</note>
<exercise id="e1" type="fill-blanks"><instructions id="i0">Fill in each gap.</instructions><p id="p1">She <blank id="b1" answer="runs" hint="run"/> fast.</p></exercise>
<exercise id="e2" type="multiple-choice" title="Past forms"><question id="q1"><prompt>Pick one</prompt><option id="o1" correct="true">went</option><option id="o2">goed</option></question></exercise>
<exercise id="e3" type="true-false"><statement id="s1" answer="false">Fish can fly.</statement></exercise>
<exercise id="e4" type="sequencing"><item id="t1" position="2">Then</item><item id="t2" position="1">First</item></exercise>
<exercise id="e5" type="short-answer"><question id="q2"><prompt>Why?</prompt><answer>Because it rains.</answer><rubric id="r1"><criterion id="c1" name="Reason"><level points="2">Clear reason given.</level><level points="0">No reason.</level></criterion></rubric></question></exercise>
<exercise id="e6" type="writing"><prompt>Write a letter.</prompt><writing-area id="w1" lines="8"/><rubric id="r2" shared="true"><criterion id="c2" name="Greeting"><level points="1">Opens with a greeting.</level></criterion></rubric></exercise>
</lesson>"#;

fn root() -> Element {
    parse(LESSON).unwrap()
}

/// The text a .docx shows, paragraph by paragraph.
fn shown(docx: &[u8]) -> Vec<String> {
    let mut zip = zip::ZipArchive::new(Cursor::new(docx)).unwrap();
    let mut xml = String::new();
    zip.by_name("word/document.xml").unwrap().read_to_string(&mut xml).unwrap();
    words_of_document(&xml).split('\u{1}').map(str::to_string).collect()
}

#[test]
fn the_worksheet_lays_out_every_kind_without_answers_or_notes() {
    let w = shown(&to_docx(&root(), "Verbs", Sheet::Worksheet).unwrap());
    let all = w.join("\n");
    for hidden in ["runs", "Because it rains", "☒", "Go slowly", "Clear reason given", "Rubric"] {
        assert!(!all.contains(hidden), "{hidden} in the worksheet: {all}");
    }
    assert_eq!(w[0], "Verbs", "the title first");
    assert!(w[1].starts_with("Name: ___"), "{}", w[1]);
    for line in [
        "We practise verbs in the past.",
        "1. Fill in the blanks",
        "Fill in each gap.",
        "She \u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0} (run) fast.",
        "2. Multiple choice: Past forms",
        "☐ went",
        "☐ True   ☐ False   Fish can fly.",
        "4. Put in order",
        "[ \u{a0}\u{a0} ] Then",
        "How it is marked: up to 1 points",
    ] {
        assert!(w.iter().any(|p| p == line), "{line:?} not in {w:#?}");
    }
    assert_eq!(w.iter().filter(|p| p.as_str() == RULE).count(), 8 + 3, "eight ruled lines for the letter, three for the short answer");
    assert!(all.contains("Greeting") && all.contains("Opens with a greeting."), "the shared rubric's table: {all}");
}

#[test]
fn the_key_shows_every_answer() {
    let k = shown(&to_docx(&root(), "Verbs", Sheet::Key).unwrap());
    let all = k.join("\n");
    assert_eq!(k[1], "Answer key: for the teacher.");
    for line in ["She runs (run) fast.", "☒ went", "☐ goed", "☐ True   ☒ False   Fish can fly.", "[ 2 ] Then", "[ 1 ] First", "Because it rains.", "Answers will vary.", "Rubric: up to 2 points"] {
        assert!(k.iter().any(|p| p == line), "{line:?} not in {k:#?}");
    }
    assert!(!all.contains("Go slowly"), "no notes: {all}");
    assert!(!k.iter().any(|p| p == RULE), "no lines to write on in the key");
}

#[test]
fn a_docx_made_here_imports_as_the_same_lesson() {
    for sheet in [Sheet::Worksheet, Sheet::Key] {
        let docx = to_docx(&root(), "Verbs", sheet).unwrap();
        assert_eq!(lesson_of_docx(&docx).unwrap(), root().to_xml(), "{sheet:?}");
    }
}

/// `docx` written again, each part through `part` (`None` leaves it out).
fn rewritten(docx: &[u8], part: impl Fn(&str, Vec<u8>) -> Option<Vec<u8>>) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(Cursor::new(docx)).unwrap();
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        let name = f.name().to_string();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        if let Some(bytes) = part(&name, bytes) {
            out.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
            out.write_all(&bytes).unwrap();
        }
    }
    out.finish().unwrap().into_inner()
}

#[test]
fn a_docx_changed_in_word_or_not_made_here_is_refused_with_a_sentence() {
    let docx = to_docx(&root(), "Verbs", Sheet::Worksheet).unwrap();
    let changed = rewritten(&docx, |name, bytes| {
        Some(if name == "word/document.xml" { String::from_utf8(bytes).unwrap().replace("Fish can fly.", "Birds can fly.").into_bytes() } else { bytes })
    });
    assert!(lesson_of_docx(&changed).unwrap_err().contains("changed after Margin made it"));
    // Without the lesson part: a Word document from anywhere else.
    let foreign = rewritten(&docx, |name, bytes| (!name.starts_with("customXml/")).then_some(bytes));
    assert!(lesson_of_docx(&foreign).unwrap_err().contains("not made by Margin's Word download"));
    assert!(lesson_of_docx(b"<lesson/>").unwrap_err().contains("not a Word document"));
}
