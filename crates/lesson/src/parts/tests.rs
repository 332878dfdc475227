use super::*;
use crate::blocks::Block;

fn words(text: &str) -> Step {
    Step::Words(vec![Run::plain(text)])
}

fn ids() -> Ids {
    Ids::of(&Doc::default())
}

fn xml(e: &Element) -> String {
    let mut root = Element::new("lesson");
    root.children = vec![Node::Element(e.clone())];
    root.to_xml()
}

/// The exercise as the server would store it: it must pass the format's checks.
fn stored(e: &Element) -> Element {
    let root = crate::normalize(&xml(e)).unwrap_or_else(|errs| panic!("{}\n{}", crate::describe_errors(&errs), xml(e)));
    let first = root.elements().next().unwrap().clone();
    first
}

#[test]
fn a_new_multiple_choice_question_is_written_marked_and_saved() {
    let mut ids = ids();
    let mut ex = new_exercise(ExerciseKind::MultipleChoice, &mut ids);
    // Empty, the format says what is missing, at the part it is about.
    let found = problems(&ex);
    assert!(found.contains(&(vec![0, 0], "Write the prompt.".to_string())), "{found:?}");
    assert!(found.contains(&(vec![0, 1], "Write the option.".to_string())), "{found:?}");
    assert!(found.contains(&(vec![0], "Mark the right answer.".to_string())), "{found:?}");
    apply(&mut ex, &[0, 0], words("Which is a verb?"), &mut ids).unwrap();
    apply(&mut ex, &[0, 1], words("manger"), &mut ids).unwrap();
    apply(&mut ex, &[0, 2], words("la table"), &mut ids).unwrap();
    let third = apply(&mut ex, &[0], Step::Add(Part::Option), &mut ids).unwrap();
    assert_eq!(third, vec![0, 3]);
    apply(&mut ex, &third, words("courir"), &mut ids).unwrap();
    apply(&mut ex, &[0, 1], Step::Correct(true), &mut ids).unwrap();
    // One right answer: marking another unmarks the first.
    apply(&mut ex, &[0, 3], Step::Correct(true), &mut ids).unwrap();
    let marked = |ex: &Element| at(ex, &[0]).unwrap().elements().filter(|o| o.attr("correct") == Some("true")).filter_map(|o| o.id().map(String::from)).collect::<Vec<_>>();
    assert_eq!(marked(&ex), ["opt-3"]);
    // Several allowed: both stay; allowed no more: the first marked stays.
    apply(&mut ex, &[0], Step::Multiple(true), &mut ids).unwrap();
    apply(&mut ex, &[0, 1], Step::Correct(true), &mut ids).unwrap();
    assert_eq!(marked(&ex), ["opt-1", "opt-3"]);
    apply(&mut ex, &[0], Step::Multiple(false), &mut ids).unwrap();
    assert_eq!(marked(&ex), ["opt-1"]);
    assert_eq!(problems(&ex), vec![]);
    let saved = stored(&ex);
    assert_eq!(saved.to_xml(), ex.to_xml(), "the editor writes what the server stores");
}

#[test]
fn every_kind_starts_with_its_parts_and_is_saved_once_written() {
    for kind in ExerciseKind::ALL {
        let mut ids = ids();
        let mut ex = new_exercise(kind, &mut ids);
        assert!(!problems(&ex).is_empty(), "{kind:?} starts empty, so not yet right");
        apply(&mut ex, &[], Step::Add(Part::Instructions), &mut ids).unwrap();
        assert_eq!(at(&ex, &[0]).unwrap().name, "instructions", "instructions come first");
        apply(&mut ex, &[0], words("Do this."), &mut ids).unwrap();
        match kind {
            ExerciseKind::FillBlanks => {
                apply(&mut ex, &[1], words("Je suis content."), &mut ids).unwrap();
                apply(&mut ex, &[1], Step::MakeBlank { start: 3, end: 7 }, &mut ids).unwrap();
            }
            ExerciseKind::MultipleChoice => {
                for (path, w) in [([1, 0], "Q?"), ([1, 1], "a"), ([1, 2], "b")] {
                    apply(&mut ex, &path, words(w), &mut ids).unwrap();
                }
                apply(&mut ex, &[1, 2], Step::Correct(true), &mut ids).unwrap();
            }
            ExerciseKind::TrueFalse => {
                apply(&mut ex, &[1], words("Paris is in France."), &mut ids).unwrap();
            }
            ExerciseKind::Sequencing => {
                apply(&mut ex, &[1], words("first"), &mut ids).unwrap();
                apply(&mut ex, &[2], words("second"), &mut ids).unwrap();
            }
            ExerciseKind::ShortAnswer => {
                apply(&mut ex, &[1, 0], words("Why?"), &mut ids).unwrap();
                let answer = apply(&mut ex, &[1], Step::Add(Part::ModelAnswer), &mut ids).unwrap();
                assert_eq!(answer, vec![1, 1], "a model answer follows the prompt");
                apply(&mut ex, &answer, words("Because."), &mut ids).unwrap();
            }
            ExerciseKind::Writing => {
                apply(&mut ex, &[1], words("Write a letter."), &mut ids).unwrap();
                apply(&mut ex, &[2], Step::Attr("lines", "12".into()), &mut ids).unwrap();
            }
        }
        assert_eq!(problems(&ex), vec![], "{kind:?}: {}", xml(&ex));
        assert_eq!(stored(&ex).to_xml(), ex.to_xml(), "{kind:?}");
    }
}

#[test]
fn a_blank_is_made_from_selected_words_and_goes_back_to_them() {
    let mut ids = ids();
    let mut ex = new_exercise(ExerciseKind::FillBlanks, &mut ids);
    let p = vec![0];
    apply(&mut ex, &p, Step::Words(vec![Run::plain("Je "), Run { text: "suis".into(), bold: true, italic: false }, Run::plain(" content, je chante.")]), &mut ids).unwrap();
    let before = at(&ex, &p).unwrap().clone();
    // "content, " selected with its space (as a double click does): the space stays a word.
    apply(&mut ex, &p, Step::MakeBlank { start: 8, end: 17 }, &mut ids).unwrap();
    assert_eq!(at(&ex, &p).unwrap().to_xml().trim(), r#"<p id="p-1">Je <strong>suis</strong> <blank id="bl-1" answer="content,"/> je chante.</p>"#);
    // The blank counts as its answer: "chante" is at 20..26.
    apply(&mut ex, &p, Step::MakeBlank { start: 20, end: 26 }, &mut ids).unwrap();
    let sentence = at(&ex, &p).unwrap();
    assert_eq!(sentence.elements().filter(|e| e.name == "blank").filter_map(|b| b.attr("answer")).collect::<Vec<_>>(), ["content,", "chante"]);
    // Across a blank, across a mark, or nothing selected: refused with a reason.
    for (start, end) in [(5, 20), (1, 5), (4, 4)] {
        let refused = apply(&mut ex, &p, Step::MakeBlank { start, end }, &mut ids);
        assert!(refused.is_err(), "{start}..{end}");
    }
    apply(&mut ex, &[0, 2], Step::Attr("hint", "chanter".into()), &mut ids).unwrap();
    apply(&mut ex, &[0, 2], Step::Attr("alts", "chante bien".into()), &mut ids).unwrap();
    assert_eq!(at(&ex, &[0, 2]).unwrap().attr("hint"), Some("chanter"));
    // The sentence retyped around its blanks keeps them and what they hold.
    let pieces = vec![Piece::Words(Run::plain("Tu ")), Piece::Blank("bl-1".into()), Piece::Words(Run::plain(" et ")), Piece::Blank("bl-2".into()), Piece::Blank("gone".into())];
    apply(&mut ex, &p, Step::Sentence(pieces), &mut ids).unwrap();
    assert_eq!(at(&ex, &p).unwrap().to_xml().trim(), r#"<p id="p-1">Tu <blank id="bl-1" answer="content,"/> et <blank id="bl-2" answer="chante" hint="chanter" alts="chante bien"/></p>"#);
    // Made again from words and undone: the words are back as they were.
    let mut again = new_exercise(ExerciseKind::FillBlanks, &mut Ids::of(&Doc::default()));
    let mut ids = Ids::of(&Doc::default());
    apply(&mut again, &p, Step::Sentence(runs_with_blanks(&before)), &mut ids).unwrap();
    apply(&mut again, &p, Step::MakeBlank { start: 8, end: 16 }, &mut ids).unwrap();
    apply(&mut again, &[0, 1], Step::Remove, &mut ids).unwrap();
    assert_eq!(at(&again, &p).unwrap(), &before);
}

#[test]
fn items_keep_positions_that_run_one_to_n() {
    let mut ids = ids();
    let mut ex = new_exercise(ExerciseKind::Sequencing, &mut ids);
    let third = apply(&mut ex, &[], Step::Add(Part::Item), &mut ids).unwrap();
    let positions = |ex: &Element| ex.elements().map(|i| i.attr("position").unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(positions(&ex), ["1", "2", "3"]);
    apply(&mut ex, &third, Step::Position(1), &mut ids).unwrap();
    assert_eq!(positions(&ex), ["3", "2", "1"]);
    apply(&mut ex, &[1], Step::Remove, &mut ids).unwrap();
    assert_eq!(positions(&ex), ["2", "1"]);
}

#[test]
fn a_rubric_is_a_table_of_criteria_and_levels() {
    let mut ids = ids();
    let mut ex = new_exercise(ExerciseKind::Writing, &mut ids);
    apply(&mut ex, &[0], words("Describe your town."), &mut ids).unwrap();
    let rubric = apply(&mut ex, &[], Step::Add(Part::Rubric), &mut ids).unwrap();
    assert_eq!(rubric, vec![2], "the rubric comes last");
    assert_eq!(apply(&mut ex, &[], Step::Add(Part::WritingArea), &mut ids), Err("This already has a writing area.".into()));
    assert!(problems(&ex).iter().any(|(path, said)| path == &vec![2, 0] && said == "Name what this criterion judges."), "{:?}", problems(&ex));
    apply(&mut ex, &[2, 0], Step::Attr("name", "Uses detail".into()), &mut ids).unwrap();
    for (k, text) in ["Rich detail.", "Some detail.", "None."].iter().enumerate() {
        apply(&mut ex, &[2, 0, k], words(text), &mut ids).unwrap();
    }
    let level = apply(&mut ex, &[2, 0], Step::Add(Part::Level), &mut ids).unwrap();
    assert_eq!(at(&ex, &level).unwrap().attr("points"), Some("3"), "a new level takes points no other level has");
    apply(&mut ex, &level, words("Vivid."), &mut ids).unwrap();
    let second = apply(&mut ex, &[2], Step::Add(Part::Criterion), &mut ids).unwrap();
    assert_eq!(at(&ex, &second).unwrap().id(), Some("cr-2"));
    apply(&mut ex, &second, Step::Remove, &mut ids).unwrap();
    apply(&mut ex, &[2], Step::Attr("shared", "true".into()), &mut ids).unwrap();
    assert_eq!(problems(&ex), vec![]);
    // The same points twice is the format's problem, said at the level.
    apply(&mut ex, &level, Step::Attr("points", "2".into()), &mut ids).unwrap();
    assert!(problems(&ex).iter().any(|(path, _)| path == &level), "{:?}", problems(&ex));
    stored(&{
        let mut ok = ex.clone();
        apply(&mut ok, &level, Step::Attr("points", "4".into()), &mut ids).unwrap();
        ok
    });
}

#[test]
fn an_optional_attribute_emptied_is_removed_and_ids_are_the_lessons_own() {
    let doc = Doc { attrs: vec![], blocks: vec![Block::Other(new_exercise(ExerciseKind::TrueFalse, &mut ids()))] };
    let mut ids = Ids::of(&doc);
    let mut ex = new_exercise(ExerciseKind::TrueFalse, &mut ids);
    assert_eq!(ex.id(), Some("ex-2"), "ex-1 is taken in the lesson");
    assert_eq!(at(&ex, &[0]).unwrap().id(), Some("st-2"));
    apply(&mut ex, &[], Step::Attr("title", "Quick check".into()), &mut ids).unwrap();
    assert_eq!(ex.attr("title"), Some("Quick check"));
    apply(&mut ex, &[], Step::Attr("title", " ".into()), &mut ids).unwrap();
    assert_eq!(ex.attr("title"), None);
    apply(&mut ex, &[0], Step::Attr("answer", "false".into()), &mut ids).unwrap();
    assert_eq!(at(&ex, &[0]).unwrap().attr("answer"), Some("false"));
    assert_eq!(apply(&mut ex, &[5], words("x"), &mut ids), Err("That part is no longer there.".into()));
}

#[test]
fn an_editors_ids_carry_its_tag_so_no_other_editor_or_the_server_makes_them() {
    let ex = new_exercise(ExerciseKind::MultipleChoice, &mut Ids::of(&Doc::default()).tagged("k3f9a"));
    let mut ids = Vec::new();
    fn walk(e: &Element, out: &mut Vec<String>) {
        out.extend(e.id().map(str::to_string));
        e.elements().for_each(|c| walk(c, out));
    }
    walk(&ex, &mut ids);
    assert!(!ids.is_empty());
    for id in &ids {
        assert!(id.contains("-k3f9a-") && crate::schema::valid_id(id), "{id}");
    }
    // Untagged (the server's way), the plain numbers.
    let plain = new_exercise(ExerciseKind::MultipleChoice, &mut Ids::of(&Doc::default()));
    assert!(plain.id().is_some_and(|id| !id.contains("k3f9a")));
}

#[test]
fn problems_are_found_on_the_exercise_as_it_stands_and_said_at_their_part() {
    // Two items in the same place (as the XML tab can write them): said at
    // the second, in the teacher's words.
    let mut ids = ids();
    let mut ex = new_exercise(ExerciseKind::Sequencing, &mut ids);
    let items: Vec<Path> = ex.elements().enumerate().filter(|(_, e)| e.name == "item").map(|(i, _)| vec![i]).collect();
    assert!(items.len() >= 2, "{}", xml(&ex));
    for (k, path) in items.iter().enumerate() {
        apply(&mut ex, path, words(&format!("Step {k}")), &mut ids).unwrap();
        apply(&mut ex, path, Step::Attr("position", "1".into()), &mut ids).unwrap();
    }
    let found = problems(&ex);
    assert!(found.contains(&(items[1].clone(), "Another item already has this place: give each item its own.".to_string())), "{found:?}");
    // The same tree written and read again finds the same problems: the
    // check needs no parser, and the parser's positions change nothing.
    let read = crate::parse(&xml(&ex)).unwrap();
    assert_eq!(problems(read.elements().next().unwrap()), found);
}
