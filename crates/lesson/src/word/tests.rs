use std::io::{Cursor, Read, Write};

use base64::Engine as _;

use super::*;
use read::{words_of_document, CHANGED};
use crate::parse;

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
    let w = shown(&to_docx(&root(), "Verbs", Sheet::Worksheet, "ref-1").unwrap());
    let all = w.join("\n");
    for hidden in ["runs", "Because it rains", "☒", "Go slowly", "Clear reason given", "Rubric"] {
        assert!(!all.contains(hidden), "{hidden} in the worksheet: {all}");
    }
    assert_eq!(w[0], "Verbs", "the title first");
    assert_eq!(w.iter().filter(|p| p.as_str() == "Verbs").count(), 1, "the title once, not again as the lesson's first heading: {w:#?}");
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
    let k = shown(&to_docx(&root(), "Verbs", Sheet::Key, "").unwrap());
    let all = k.join("\n");
    assert_eq!(k[1], "Answer key: for the teacher.");
    assert_eq!(k.iter().filter(|p| p.as_str() == "Verbs").count(), 1, "the title once: {k:#?}");
    for line in ["She runs (run) fast.", "☒ went", "☐ goed", "☐ True   ☒ False   Fish can fly.", "[ 2 ] Then", "[ 1 ] First", "Because it rains.", "Answers will vary.", "Rubric: up to 2 points"] {
        assert!(k.iter().any(|p| p == line), "{line:?} not in {k:#?}");
    }
    assert!(!all.contains("Go slowly"), "no notes: {all}");
    assert!(!k.iter().any(|p| p == RULE), "no lines to write on in the key");
}

#[test]
fn the_key_imports_as_the_same_lesson() {
    let docx = to_docx(&root(), "Verbs", Sheet::Key, "").unwrap();
    assert_eq!(read_docx(&docx).unwrap(), Carried::Key(root().to_xml()));
}

/// Every part of a .docx, unpacked, as text.
fn every_part(docx: &[u8]) -> Vec<(String, String)> {
    let mut zip = zip::ZipArchive::new(Cursor::new(docx)).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            (f.name().to_string(), String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect()
}

#[test]
fn no_part_of_the_worksheet_holds_what_students_must_not_see() {
    let secret = parse(
        r#"<lesson><h1 id="h">Animals</h1><note id="n">Secret plan: quokka</note>
<exercise id="e1" type="fill-blanks"><p id="p1">A <blank id="b1" answer="zebracorn" alts="narwhalish"/> runs.</p></exercise>
<exercise id="e2" type="multiple-choice"><question id="q1"><prompt>Pick</prompt><option id="o1" correct="true">Owl</option><option id="o2">Bat</option></question></exercise>
<exercise id="e3" type="true-false"><statement id="s1" answer="false">Fish fly.</statement></exercise>
<exercise id="e4" type="sequencing"><item id="t1" position="2">Then</item><item id="t2" position="1">First</item></exercise>
<exercise id="e5" type="short-answer"><question id="q2"><prompt>Why?</prompt><answer>Because of the axolotl</answer><rubric id="r1"><criterion id="c1" name="Pangolin reasoning"><level points="2">Mentions the okapi.</level></criterion></rubric></question></exercise>
</lesson>"#,
    )
    .unwrap();
    let docx = to_docx(&secret, "Animals", Sheet::Worksheet, "0123abcd").unwrap();
    let parts = every_part(&docx);
    assert!(parts.iter().any(|(n, _)| n == "word/document.xml"));
    let encoded = base64::engine::general_purpose::STANDARD.encode(secret.to_xml());
    for (name, text) in &parts {
        for hidden in ["quokka", "zebracorn", "narwhalish", "axolotl", "Pangolin", "okapi", "correct=", "answer=", "position=", "<lesson", &encoded[..40]] {
            assert!(!text.contains(hidden), "{hidden:?} in {name}: {text}");
        }
    }
    let custom: Vec<&String> = parts.iter().filter(|(n, _)| n.starts_with("customXml/item") && !n.contains("Props")).map(|(_, t)| t).collect();
    assert_eq!(custom.len(), 1);
    let carried = roxmltree::Document::parse(custom[0]).unwrap();
    let root = carried.root_element();
    assert_eq!((root.tag_name().name(), root.attribute("ref")), ("marginWorksheet", Some("0123abcd")));
    assert!(root.children().next().is_none() && root.attributes().count() == 1, "only the reference: {}", custom[0]);
    // The key, for the teacher, carries it all.
    let key = to_docx(&secret, "Animals", Sheet::Key, "").unwrap();
    assert!(every_part(&key).iter().any(|(_, t)| t.contains(&encoded[..40])));
}

#[test]
fn a_worksheet_reads_as_its_reference_and_the_lesson_it_shows() {
    let docx = to_docx(&root(), "Verbs", Sheet::Worksheet, "ref-1").unwrap();
    let Carried::Worksheet(w) = read_docx(&docx).unwrap() else { panic!("a worksheet") };
    assert_eq!(w.reference.as_deref(), Some("ref-1"));
    assert_eq!(w.title, "Verbs");
    assert!(w.made_from(&root().to_xml()), "the lesson it came from makes it again");
    assert!(!w.made_from(&root().to_xml().replace("Fish can fly.", "Birds can fly.")), "another lesson does not");
    // What anyone else gets: the words it shows, as a lesson the format takes, and no answer.
    let shown = crate::normalize(&w.shown).unwrap().to_xml();
    for hidden in ["runs", "Because it rains", "Go slowly", "Clear reason given", "correct=", "position="] {
        assert!(!shown.contains(hidden), "{hidden} in {shown}");
    }
    for kept in ["<h1 id=\"", ">Verbs</h1>", "We practise <strong>verbs</strong> in <em>the past</em>.", ">1. Fill in the blanks</h2>", "She ____________<em> (run)</em> fast.", "☐ went", "☐ True   ☐ False   Fish can fly.", "Greeting · 1 Opens with a greeting."] {
        assert!(shown.contains(kept), "{kept:?} not in {shown}");
    }
    assert!(!shown.contains("Name:") && !shown.contains(RULE), "the student's space is not the lesson's: {shown}");
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
    let key = to_docx(&root(), "Verbs", Sheet::Key, "").unwrap();
    let birds = |name: &str, bytes: Vec<u8>| Some(if name == "word/document.xml" { String::from_utf8(bytes).unwrap().replace("Fish can fly.", "Birds can fly.").into_bytes() } else { bytes });
    assert_eq!(read_docx(&rewritten(&key, birds)).unwrap_err(), CHANGED);
    // A worksheet changed in Word is no longer made by its lesson (the server then refuses it for the teacher who made it).
    let worksheet = to_docx(&root(), "Verbs", Sheet::Worksheet, "ref-1").unwrap();
    let Carried::Worksheet(w) = read_docx(&rewritten(&worksheet, birds)).unwrap() else { panic!("a worksheet") };
    assert!(!w.made_from(&root().to_xml()));
    // Without the lesson part: a Word document from anywhere else.
    let foreign = rewritten(&worksheet, |name, bytes| (!name.starts_with("customXml/")).then_some(bytes));
    assert!(read_docx(&foreign).unwrap_err().contains("not made by Margin's Word download"));
    assert!(read_docx(b"<lesson/>").unwrap_err().contains("not a Word document"));
}

#[test]
fn a_worksheet_made_before_references_is_read_for_what_it_shows() {
    let worksheet = to_docx(&root(), "Verbs", Sheet::Worksheet, "ref-1").unwrap();
    let old = rewritten(&worksheet, |name, bytes| {
        let carried = format!("<marginLesson sheet=\"worksheet\">{}</marginLesson>", base64::engine::general_purpose::STANDARD.encode(root().to_xml()));
        Some(if name.starts_with("customXml/item") && !name.contains("Props") { carried.into_bytes() } else { bytes })
    });
    let Carried::Worksheet(w) = read_docx(&old).unwrap() else { panic!("a worksheet") };
    assert_eq!(w.reference, None, "the lesson it carried is not believed");
}
