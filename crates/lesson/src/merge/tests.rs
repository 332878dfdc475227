use super::merge;
use crate::{normalize, Element};

fn doc(xml: &str) -> Element {
    normalize(xml).unwrap()
}

fn xml(e: &Element) -> String {
    e.to_xml()
}

const BASE: &str = r#"<lesson>
  <h1 id="h-1">Verbs</h1>
  <p id="p-1">Intro.</p>
  <exercise id="ex-1" type="true-false"><statement id="st-1" answer="true">A</statement></exercise>
  <p id="p-2">Outro.</p>
</lesson>"#;

#[test]
fn changes_to_other_blocks_are_made_on_top() {
    // Ours (the proposal) edits the exercise and adds a paragraph after it;
    // theirs (the teacher, meanwhile) edited the intro and the heading.
    let ours = doc(&BASE.replace(r#"answer="true">A"#, r#"answer="false">B"#).replace(r#"<p id="p-2">"#, r#"<p id="p-9">New.</p><p id="p-2">"#));
    let theirs = doc(&BASE.replace("Intro.", "Hello.").replace(">Verbs<", ">French verbs<"));
    let merged = merge(&doc(BASE), &ours, &theirs).unwrap();
    let expected = doc(&BASE
        .replace("Intro.", "Hello.")
        .replace(">Verbs<", ">French verbs<")
        .replace(r#"answer="true">A"#, r#"answer="false">B"#)
        .replace(r#"<p id="p-2">"#, r#"<p id="p-9">New.</p><p id="p-2">"#));
    assert_eq!(xml(&merged), xml(&expected));
}

#[test]
fn the_same_block_changed_on_both_sides_is_a_conflict_naming_our_changes() {
    let ours = doc(&BASE.replace("Intro.", "Welcome."));
    let theirs = doc(&BASE.replace("Intro.", "Hello."));
    let conflict = merge(&doc(BASE), &ours, &theirs).unwrap_err();
    let lines: Vec<&str> = conflict.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(lines, vec!["The paragraph “Intro.”: “Intro.” → “Welcome.”"]);
    // A block ours edits and theirs removed conflicts too.
    let gone = doc(&BASE.replace(r#"<p id="p-1">Intro.</p>"#, ""));
    assert!(merge(&doc(BASE), &ours, &gone).is_err());
}

#[test]
fn removals_and_moves_on_our_side_keep_theirs() {
    // Ours removes the outro and moves the exercise to the top; theirs
    // rewrote the intro.
    let ours = doc(r#"<lesson>
  <exercise id="ex-1" type="true-false"><statement id="st-1" answer="true">A</statement></exercise>
  <h1 id="h-1">Verbs</h1>
  <p id="p-1">Intro.</p>
</lesson>"#);
    let theirs = doc(&BASE.replace("Intro.", "Hello."));
    let merged = merge(&doc(BASE), &ours, &theirs).unwrap();
    let ids: Vec<&str> = merged.elements().filter_map(|e| e.id()).collect();
    assert_eq!(ids, vec!["ex-1", "h-1", "p-1"], "{}", xml(&merged));
    assert!(xml(&merged).contains("Hello."));
}

#[test]
fn new_blocks_on_both_sides_keep_both_with_unique_ids() {
    // Both sides added a paragraph and both were given p-3.
    let ours = doc(&BASE.replace(r#"<p id="p-2">Outro.</p>"#, r#"<p id="p-2">Outro.</p><p id="p-3">Ours.</p>"#));
    let theirs = doc(&BASE.replace(r#"<h1 id="h-1">Verbs</h1>"#, r#"<h1 id="h-1">Verbs</h1><p id="p-3">Theirs.</p>"#));
    let merged = merge(&doc(BASE), &ours, &theirs).unwrap();
    let out = xml(&merged);
    assert!(out.contains(r#"<p id="p-3">Theirs.</p>"#), "the teacher's ids are kept: {out}");
    assert!(out.contains("Ours.") && !out.contains(r#"<p id="p-3">Ours.</p>"#), "{out}");
    assert!(normalize(&out).is_ok(), "still a valid lesson: {out}");
}

#[test]
fn undoing_an_edit_is_a_merge_from_after_to_before() {
    // Revision 2 added an exercise; revision 3 (the teacher) edited the intro.
    let r1 = doc(BASE);
    let r2 = doc(&BASE.replace(r#"<p id="p-2">"#, r#"<exercise id="ex-2" type="true-false"><statement id="st-2" answer="true">C</statement></exercise><p id="p-2">"#));
    let r3 = doc(&xml(&r2).replace("Intro.", "Hello."));
    let undone = merge(&r2, &r1, &r3).unwrap();
    assert_eq!(xml(&undone), xml(&doc(&BASE.replace("Intro.", "Hello."))));
    // Undoing revision 3's own change when revision 4 changed the same block
    // is refused.
    let r4 = doc(&xml(&r3).replace("Hello.", "Hi."));
    assert!(merge(&r3, &r2, &r4).is_err());
}

#[test]
fn the_lessons_title_merges_like_a_block() {
    let base = doc(r#"<lesson title="A"><p id="p-1">x</p></lesson>"#);
    let ours = doc(r#"<lesson title="B"><p id="p-1">x</p></lesson>"#);
    let theirs = doc(r#"<lesson title="A" lang="fr"><p id="p-1">y</p></lesson>"#);
    let merged = merge(&base, &ours, &theirs).unwrap();
    assert_eq!((merged.attr("title"), merged.attr("lang")), (Some("B"), Some("fr")));
    let clash = doc(r#"<lesson title="C"><p id="p-1">x</p></lesson>"#);
    assert!(merge(&base, &ours, &clash).is_err());
}

#[test]
fn the_same_change_made_on_both_sides_is_no_conflict() {
    // The editor saved a paragraph; a second tab saved the same words to it.
    let both = BASE.replace("Intro.", "Welcome.");
    let ours = doc(&both.replace("Outro.", "Bye."));
    let merged = merge(&doc(BASE), &ours, &doc(&both)).unwrap();
    assert_eq!(xml(&merged), xml(&doc(&both.replace("Outro.", "Bye."))));
    // Removed on both sides, too.
    let gone = BASE.replace(r#"<p id="p-2">Outro.</p>"#, "");
    assert_eq!(xml(&merge(&doc(BASE), &doc(&gone), &doc(&gone)).unwrap()), xml(&doc(&gone)));
}
