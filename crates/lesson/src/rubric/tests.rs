//! Rubrics, end to end in the lesson: the rules, the ids they get, what a
//! student sees (only a shared one), paper, and the change list.

use super::Rubric;
use crate::{answers::for_students, describe_errors, normalize, parse, to_html, Audience};

fn lesson(rubric: &str) -> String {
    format!(
        r#"<lesson>
  <exercise id="e1" type="short-answer"><question id="q1"><prompt>Why learn être?</prompt><answer>Model answer</answer>{rubric}</question></exercise>
  <exercise id="e2" type="writing"><prompt>Describe yourself.</prompt><writing-area id="w1"/></exercise>
</lesson>"#
    )
}

const RUBRIC: &str = r#"<rubric id="rb1"><criterion id="c1" name="Gives a reason"><level points="2">A clear reason in a full sentence.</level><level points="1">A reason, unclear.</level><level points="0">No reason.</level></criterion><criterion id="c2" name="Spelling"><level points="1">No mistakes.</level><level points="0">Mistakes.</level></criterion></rubric>"#;

fn errors_of(xml: &str) -> String {
    match normalize(xml) {
        Ok(_) => String::new(),
        Err(errs) => describe_errors(&errs),
    }
}

#[test]
fn a_rubric_reads_as_criteria_with_points_and_gets_ids() {
    let root = normalize(&lesson(&RUBRIC.replace(r#" id="c2""#, "").replace(r#"<rubric id="rb1">"#, "<rubric>"))).unwrap();
    let xml = root.to_xml();
    assert!(xml.contains(r#"<rubric id="rb-1">"#) && xml.contains(r#"<criterion id="cr-1" name="Spelling">"#), "{xml}");
    let q = root.elements().next().unwrap().elements().next().unwrap();
    let r = Rubric::of(q).unwrap();
    assert_eq!(r.max_points(), 3);
    assert!(!r.shared);
    assert_eq!(r.criteria[0].name, "Gives a reason");
    assert_eq!(r.criteria[0].levels[1].text, "A reason, unclear.");
    // A writing task may end with one too.
    let writing = lesson("").replace(r#"<writing-area id="w1"/>"#, &format!(r#"<writing-area id="w1"/>{RUBRIC}"#));
    assert_eq!(errors_of(&writing), "");
}

#[test]
fn the_rules_of_a_rubric_are_told_with_how_to_fix_them() {
    let cases: &[(&str, &str)] = &[
        (r#"<rubric/>"#, "a rubric needs 1 to 8 <criterion> elements (it has 0)"),
        (r#"<rubric><criterion name="A"><level points="1">Yes</level></criterion></rubric>"#, "a criterion needs 2 to 6 <level>s (it has 1)"),
        (r#"<rubric><criterion><level points="1">Yes</level><level points="0">No</level></criterion></rubric>"#, "missing required attribute `name`"),
        (r#"<rubric><criterion name=" "><level points="1">Yes</level><level points="0">No</level></criterion></rubric>"#, "the criterion's name is empty"),
        (r#"<rubric><criterion name="A"><level points="1">Yes</level><level points="1">No</level></criterion></rubric>"#, "1 points is already a level of this criterion"),
        (r#"<rubric><criterion name="A"><level points="two">Yes</level><level points="0">No</level></criterion></rubric>"#, "points=\"two\" must be a whole number from 0 to 100"),
        (r#"<rubric><criterion name="A"><level points="1">Yes</level><level points="0"></level></criterion></rubric>"#, "this level is empty"),
        (r#"<rubric shared="yes"><criterion name="A"><level points="1">Yes</level><level points="0">No</level></criterion></rubric>"#, "shared=\"yes\" must be \"true\""),
        (r#"<rubric>Be kind<criterion name="A"><level points="1">Yes</level><level points="0">No</level></criterion></rubric>"#, "stands directly inside <rubric>"),
        (r#"<rubric><level points="1">Yes</level></rubric>"#, "<level> does not belong in a <rubric>"),
    ];
    for (rubric, expected) in cases {
        let errs = errors_of(&lesson(rubric));
        assert!(errs.contains(expected), "{rubric}: expected {expected:?}, got:\n{errs}");
    }
    // One per question, last; and not in other exercises.
    let twice = errors_of(&lesson(&format!("{RUBRIC}{}", RUBRIC.replace("rb1", "rb2").replace("c1", "c3").replace("c2", "c4"))));
    assert!(twice.contains("a question has at most one <rubric>"), "{twice}");
    let first = errors_of(&lesson(RUBRIC).replace(&format!("<answer>Model answer</answer>{RUBRIC}"), &format!("{RUBRIC}<answer>Model answer</answer>")));
    assert!(first.contains("the <rubric> comes last"), "{first}");
    let quiz = r#"<lesson><exercise type="true-false"><statement answer="true">Yes.</statement><rubric/></exercise></lesson>"#;
    assert!(errors_of(quiz).contains("<rubric> does not belong in a true-false exercise"), "{}", errors_of(quiz));
}

#[test]
fn students_see_a_rubric_only_when_it_is_shared() {
    let hidden = parse(&lesson(RUBRIC)).unwrap();
    assert!(!for_students(&hidden).to_xml().contains("rubric"));
    let student = to_html(&hidden, Audience::Student);
    assert!(!student.contains("Gives a reason"), "{student}");
    let teacher = to_html(&hidden, Audience::Teacher);
    assert!(teacher.contains(r#"<span class="tag">Rubric</span> up to 3 points"#) && teacher.contains(r#"<th scope="row">Gives a reason</th><td><strong>2</strong> A clear reason in a full sentence.</td>"#), "{teacher}");

    let shared = parse(&lesson(&RUBRIC.replace("<rubric id=\"rb1\">", "<rubric id=\"rb1\" shared=\"true\">"))).unwrap();
    assert!(for_students(&shared).to_xml().contains("Gives a reason"));
    let student = to_html(&shared, Audience::Student);
    assert!(student.contains("How it is marked") && student.contains("No reason."), "{student}");
    assert!(!student.contains("Model answer"), "{student}");
}

#[test]
fn on_paper_the_key_has_every_rubric_and_the_worksheet_a_shared_one() {
    use crate::{to_paper, Sheet};
    let hidden = parse(&lesson(RUBRIC)).unwrap();
    assert!(to_paper(&hidden, Sheet::Key).contains("Gives a reason"));
    assert!(!to_paper(&hidden, Sheet::Worksheet).contains("Gives a reason"));
    let shared = parse(&lesson(&RUBRIC.replace("<rubric id=\"rb1\">", "<rubric id=\"rb1\" shared=\"true\">"))).unwrap();
    assert!(to_paper(&shared, Sheet::Worksheet).contains("Gives a reason"));
}

#[test]
fn the_change_list_tells_a_rubric_added_shared_edited_and_removed() {
    let lines = |old: &str, new: &str| -> Vec<String> { crate::changes(&parse(old).unwrap(), &parse(new).unwrap()).into_iter().map(|c| c.text).collect() };
    let none = lesson("");
    let with = lesson(RUBRIC);
    assert_eq!(lines(&none, &with), ["Exercise 1 (Short answer), question 1: added a rubric (2 criteria, up to 3 points)"]);
    assert_eq!(lines(&with, &none), ["Exercise 1 (Short answer), question 1: removed the rubric"]);
    let edited = with
        .replace("<rubric id=\"rb1\">", "<rubric id=\"rb1\" shared=\"true\">")
        .replace("Gives a reason", "Explains why")
        .replace("A reason, unclear.", "A reason, but unclear.")
        .replace(r#"<level points="0">No reason.</level>"#, "")
        .replace(r#"<criterion id="c2" name="Spelling"><level points="1">No mistakes.</level><level points="0">Mistakes.</level></criterion>"#, r#"<criterion id="c3" name="Grammar"><level points="1">Right.</level><level points="0">Wrong.</level></criterion>"#);
    assert_eq!(
        lines(&with, &edited),
        [
            "Exercise 1 (Short answer), question 1: the rubric is now shown to students",
            "Exercise 1 (Short answer), question 1: rubric criterion “Gives a reason” → “Explains why”",
            "Exercise 1 (Short answer), question 1, rubric criterion “Explains why”, 1 points: added “but”",
            "Exercise 1 (Short answer), question 1, rubric criterion “Explains why”: removed the level for 0 points “No reason.”",
            "Exercise 1 (Short answer), question 1: added rubric criterion “Grammar”",
            "Exercise 1 (Short answer), question 1: removed rubric criterion “Spelling”",
        ]
    );
    let writing = |r: &str| lesson("").replace(r#"<writing-area id="w1"/>"#, &format!(r#"<writing-area id="w1"/>{r}"#));
    assert_eq!(lines(&writing(""), &writing(RUBRIC)), ["Exercise 2 (Writing): added a rubric (2 criteria, up to 3 points)"]);
}

#[test]
fn the_skills_example_is_a_valid_rubric() {
    let skill = include_str!("../../../../prompts/chat/skills/rubrics.md");
    let example = skill.split("```xml").nth(1).and_then(|r| r.split("```").next()).unwrap();
    let root = normalize(&format!("<lesson>{example}</lesson>")).unwrap_or_else(|e| panic!("{}", describe_errors(&e)));
    let task = root.elements().next().unwrap();
    let r = Rubric::of(task).unwrap();
    assert_eq!((r.criteria.len(), r.max_points(), r.shared), (2, 5, true));
}
