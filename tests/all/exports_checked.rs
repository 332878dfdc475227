//! Margin's exports read by software no one here wrote, with every
//! exercise kind: the QTI 2.1 package and the Common Cartridge 1.1
//! validated against the official IMS schemas (`tests/peers/ims-schemas`,
//! with their licence note) by libxml2's `xmllint`, offline; the Word
//! worksheet and key read by python-docx. `make test` installs both
//! (`make readers`); without them these tests fail rather than pass unread.
#![cfg(feature = "ssr")]

use std::{
    io::{Cursor, Read},
    path::{Path, PathBuf},
    process::Command,
};

use margin::lesson::{self, Sheet};

/// Every exercise kind, with what each can carry: instructions and a
/// title, several right options, alternatives and a hint, emphasis, a model
/// answer, a rubric kept from students and one shared with them, a writing
/// area with its lines. Around them a heading that repeats the title, a
/// paragraph and a teacher's note.
const LESSON: &str = r#"<lesson lang="en">
<h1 id="h1">Verbs</h1>
<p id="p0">We practise <strong>verbs</strong> in <em>the past</em> &amp; “quotes”.</p>
<note id="n1">Note for the teacher: go slowly.</note>
<exercise id="e1" type="fill-blanks" title="Gaps"><instructions>Fill in <em>each</em> gap.</instructions><p id="p1">She <blank id="b1" answer="ranquil" alts="runquil, Ranquil" hint="run"/> fast and <blank id="b2" answer="jumpquil"/>.</p></exercise>
<exercise id="e2" type="multiple-choice" title="Past forms"><question id="q1"><prompt>Pick the <em>past</em> form</prompt><option id="o1" correct="true">went</option><option id="o2">goed</option></question><question id="q3" multiple="true"><prompt>Pick every verb</prompt><option id="o4" correct="true">run</option><option id="o5">table</option><option id="o6" correct="true">sing</option></question></exercise>
<exercise id="e3" type="true-false"><statement id="s1" answer="false">Fish can fly.</statement></exercise>
<exercise id="e4" type="sequencing"><item id="t1" position="2">Then</item><item id="t2" position="1">First</item><item id="t3" position="3">Last</item></exercise>
<exercise id="e5" type="short-answer"><question id="q2"><prompt>Why?</prompt><answer>Model answer: because it rains.</answer><rubric id="r1"><criterion id="c1" name="Reason"><level points="2">Private level: a clear reason.</level><level points="0">No reason.</level></criterion></rubric></question></exercise>
<exercise id="e6" type="writing"><prompt>Write a letter.</prompt><writing-area id="w1" lines="8"/><rubric id="r2" shared="true"><criterion id="c2" name="Greeting"><level points="1">Opens with a greeting.</level><level points="0">No greeting.</level></criterion></rubric></exercise>
</lesson>"#;

/// What students must not read, in any file made for them.
const SECRETS: &[&str] = &["ranquil", "runquil", "jumpquil", "Note for the teacher", "Model answer", "Private level"];

fn root() -> lesson::Element {
    lesson::normalize(LESSON).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The archive `bytes` unpacked under `dir`: the paths of its files.
fn unpack(bytes: &[u8], dir: &Path) -> Vec<PathBuf> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip archive");
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).unwrap();
            let path = dir.join(f.enclosed_name().expect("a name inside the archive"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let mut out = Vec::new();
            f.read_to_end(&mut out).unwrap();
            std::fs::write(&path, out).unwrap();
            path
        })
        .collect()
}

fn schemas() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ims-schemas")
}

/// `file` checked by xmllint against `schema` (under the schemas folder).
fn valid(file: &Path, schema: &str) {
    let out = Command::new("xmllint")
        .args(["--noout", "--nonet", "--schema"])
        .arg(schemas().join(schema))
        .arg(file)
        .output()
        .expect("xmllint (Debian's libxml2-utils; `make readers` installs it)");
    assert!(out.status.success(), "{} is not valid against {schema}:\n{}", file.display(), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_qti_package_is_valid_against_the_ims_qti_2_1_and_content_packaging_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let files = unpack(&lesson::qti::to_qti_package(&root(), "Verbs").unwrap(), dir.path());
    let mut items = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        if name == "imsmanifest.xml" {
            valid(f, "imscp_v1p1.xsd");
        } else if name.ends_with(".xml") {
            valid(f, "qtiv2p1/imsqti_v2p1.xsd");
            items += 1;
        }
    }
    // The test, and an item per question: 2 blanks' paragraph, 2 choices, 1 statement, 1 order, 1 short answer, 1 writing task.
    assert!(items >= 8, "{files:?}");
}

#[test]
fn the_cartridge_is_valid_against_the_common_cartridge_1_1_profile_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let files = unpack(&lesson::qti::to_cartridge(&root(), "Verbs").unwrap(), dir.path());
    let find = |name: &str| files.iter().find(|f| f.ends_with(name)).unwrap_or_else(|| panic!("{name} in {files:?}")).clone();
    valid(&find("imsmanifest.xml"), "cc11/ccv1p1_imscp_v1p2_v1p0.xsd");
    valid(&find("quiz/assessment.xml"), "cc11/ccv1p1_qtiasiv1p2p1_v1p0.xsd");
    // The page students read holds no answer, note or private rubric.
    let page = std::fs::read_to_string(find("lesson/index.html")).unwrap();
    for secret in SECRETS {
        assert!(!page.contains(secret), "{secret} on the cartridge's page");
    }
}

/// The text python-docx reads from the .docx at `path`: paragraphs, then
/// the tables' cells.
fn python_docx_text(path: &Path) -> String {
    let python = std::env::var("MARGIN_TEST_PEER_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = "import docx, sys\nd = docx.Document(sys.argv[1])\nprint('\\n'.join(p.text for p in d.paragraphs))\nfor t in d.tables:\n    for r in t.rows:\n        print(' | '.join(c.text for c in r.cells))\n";
    let out = Command::new(&python).arg("-c").arg(script).arg(path).output().unwrap_or_else(|e| panic!("{python}: {e} (`make readers` installs python-docx)"));
    assert!(out.status.success(), "python-docx could not read {}:\n{}", path.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_word_worksheet_and_key_are_read_by_python_docx_with_every_exercise_kind() {
    let dir = tempfile::tempdir().unwrap();
    let worksheet = dir.path().join("worksheet.docx");
    std::fs::write(&worksheet, lesson::word::to_docx(&root(), "Verbs", Sheet::Worksheet, "reference").unwrap()).unwrap();
    let key = dir.path().join("key.docx");
    std::fs::write(&key, lesson::word::to_docx(&root(), "Verbs", Sheet::Key, "").unwrap()).unwrap();

    let w = python_docx_text(&worksheet);
    for shown in [
        "We practise verbs in the past & “quotes”.",
        "1. Fill in the blanks: Gaps",
        "Fill in each gap.",
        "2. Multiple choice: Past forms",
        "☐ went",
        "☐ True   ☐ False   Fish can fly.",
        "[ \u{a0}\u{a0} ] Then",
        "Why?",
        "Write a letter.",
        "Greeting | 1 Opens with a greeting. | 0 No greeting.",
    ] {
        assert!(w.contains(shown), "{shown:?} not read from the worksheet:\n{w}");
    }
    assert_eq!(w.lines().filter(|l| *l == "Verbs").count(), 1, "the title once:\n{w}");
    for secret in SECRETS {
        assert!(!w.contains(secret), "{secret} read from the worksheet");
    }
    let k = python_docx_text(&key);
    for shown in ["ranquil", "☒ went", "☐ True   ☒ False   Fish can fly.", "[ 2 ] Then", "Model answer: because it rains.", "Private level: a clear reason."] {
        assert!(k.contains(shown), "{shown:?} not read from the key:\n{k}");
    }
    assert!(!k.contains("Note for the teacher"), "no notes in the key");
}
