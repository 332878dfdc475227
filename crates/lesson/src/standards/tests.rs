//! Codes on lessons: their shape, where they stand, and the catalog's
//! answers (exact, near, search) and errors.

use super::*;
use crate::{normalize, parse, validate};

fn catalog() -> Catalog {
    let s = |code: &str, statement: &str| Standard { code: code.into(), statement: statement.into(), framework: "Reading".into() };
    Catalog::new(vec![
        s("RL.4.1", "Refer to details and examples in a text when explaining what the text says explicitly."),
        s("RL.4.2", "Determine a theme of a story, drama, or poem from details in the text; summarize the text."),
        s("RL.4.3", "Describe in depth a character, setting, or event in a story or drama."),
        s("W.4.1", "Write opinion pieces on topics or texts, supporting a point of view with reasons and information."),
        s("RL.4.1", "A second framework's copy of the same code."),
    ])
}

#[test]
fn codes_are_split_on_spaces_and_kept_once() {
    assert_eq!(codes("  RL.4.1 W.4.1\tRL.4.1 "), vec!["RL.4.1", "W.4.1"]);
}

#[test]
fn the_shape_is_part_of_the_format() {
    assert!(validate(&parse(r#"<lesson standards="RL.4.1"><p>Hi</p></lesson>"#).unwrap()).is_empty());
    let errors = validate(&parse(r#"<lesson standards="  "><p>Hi</p></lesson>"#).unwrap());
    assert!(errors[0].message.contains("`standards` is empty"), "{errors:?}");
    let many = (0..13).map(|n| format!("C.{n}")).collect::<Vec<_>>().join(" ");
    let errors = validate(&parse(&format!(r#"<lesson standards="{many}"><p>Hi</p></lesson>"#)).unwrap());
    assert!(errors[0].message.contains("at most 12"), "{errors:?}");
    let long = "X".repeat(81);
    let errors = validate(&parse(&format!(r#"<lesson><exercise type="writing" standards="{long}"><prompt>Write.</prompt></exercise></lesson>"#)).unwrap());
    assert!(errors[0].message.contains("at most 80 characters"), "{errors:?}");
    // Other elements do not take it.
    let errors = validate(&parse(r#"<lesson><p standards="RL.4.1">Hi</p></lesson>"#).unwrap());
    assert!(errors[0].message.contains("unknown attribute `standards`"), "{errors:?}");
}

#[test]
fn tagged_lists_the_lesson_then_its_exercises() {
    let root = normalize(
        r#"<lesson title="Stories" standards="RL.4.2"><p>Read.</p>
        <exercise type="writing" standards="W.4.1 RL.4.1"><prompt>Write.</prompt></exercise>
        <exercise type="writing" title="Your theme"><prompt>Write.</prompt></exercise>
        <exercise type="writing" title="Theme" standards="RL.4.2"><prompt>Write.</prompt></exercise></lesson>"#,
    )
    .unwrap();
    let t = tagged(&root);
    assert_eq!(t.len(), 3);
    assert_eq!((t[0].id, t[0].label.as_str(), t[0].codes.clone()), (None, "Stories", vec!["RL.4.2"]));
    assert_eq!(t[1].label, "Exercise 1: Writing");
    assert!(t[1].id.is_some());
    assert_eq!(t[2].label, "Exercise 3: Theme");
    assert_eq!(all_codes(&root), vec!["RL.4.2", "W.4.1", "RL.4.1"]);
}

#[test]
fn a_code_listed_twice_is_kept_once() {
    let c = catalog();
    assert_eq!(c.len(), 4);
    assert!(c.get("RL.4.1").unwrap().statement.starts_with("Refer to details"));
    assert!(c.get("rl.4.1").is_none(), "codes are exact");
}

#[test]
fn near_matches_come_case_first_then_spelling() {
    let c = catalog();
    let near: Vec<&str> = c.near("rl.4.1").iter().map(|s| s.code.as_str()).collect();
    assert_eq!(near[0], "RL.4.1");
    let near: Vec<&str> = c.near("RL.4.12").iter().map(|s| s.code.as_str()).collect();
    assert_eq!(near, vec!["RL.4.1", "RL.4.2", "RL.4.3"]);
    assert!(c.near("MATH.K.CC.1").is_empty());
}

#[test]
fn search_finds_codes_by_prefix_then_statements_by_words() {
    let c = catalog();
    let codes: Vec<&str> = c.search("RL.4", 10).iter().map(|s| s.code.as_str()).collect();
    assert_eq!(codes, vec!["RL.4.1", "RL.4.2", "RL.4.3"]);
    let codes: Vec<&str> = c.search("theme story", 10).iter().map(|s| s.code.as_str()).collect();
    assert_eq!(codes, vec!["RL.4.2"]);
    assert_eq!(c.search("w.4", 10)[0].code, "W.4.1");
    assert_eq!(c.search("RL", 2).len(), 2);
    assert!(c.search("  ", 10).is_empty());
}

#[test]
fn check_names_each_unknown_code_with_its_nearest_real_ones() {
    let root = normalize(
        r#"<lesson standards="RL.4.1"><p>Read.</p><exercise id="ex1" type="writing" standards="RL.4.12 W.4.1 ZZZ.9"><prompt>Write.</prompt></exercise></lesson>"#,
    )
    .unwrap();
    let errors = check(&root, &catalog());
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].path, "exercise#ex1");
    assert!(errors[0].message.starts_with("`RL.4.12` is not a code in this school's frameworks. Nearest: RL.4.1 (Refer to details"), "{}", errors[0].message);
    assert!(errors[0].message.contains("RL.4.2 (Determine a theme"), "{}", errors[0].message);
    assert!(errors[1].message.contains("`ZZZ.9` is not a code") && errors[1].message.contains("Search them"), "{}", errors[1].message);
    assert!(errors[0].line > 0);
}

#[test]
fn with_no_frameworks_every_code_is_refused_and_a_lesson_without_codes_is_fine() {
    let tagged = normalize(r#"<lesson standards="RL.4.1"><p>Read.</p></lesson>"#).unwrap();
    let errors = check(&tagged, &Catalog::default());
    assert!(errors[0].message.contains("no standards frameworks loaded"), "{errors:?}");
    let plain = normalize("<lesson><p>Read.</p></lesson>").unwrap();
    assert!(check(&plain, &Catalog::default()).is_empty());
}
