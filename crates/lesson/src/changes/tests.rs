use super::changes;
use crate::{normalize, parse, Change, ChangeKind};

fn lines(old: &str, new: &str) -> Vec<String> {
    let (old, new) = (parse(old).unwrap(), parse(new).unwrap());
    changes(&old, &new).into_iter().map(|c| c.text).collect()
}

fn list(old: &str, new: &str) -> Vec<Change> {
    changes(&parse(old).unwrap(), &parse(new).unwrap())
}

const BLANKS: &str = r#"<lesson>
  <h1 id="h-1">Verbs</h1>
  <p id="p-1">Most verbs follow a pattern.</p>
  <exercise id="ex-1" type="true-false"><statement id="st-1" answer="true">Sky is blue.</statement></exercise>
  <exercise id="ex-2" type="fill-blanks">
    <instructions>Fill in the verb.</instructions>
    <p id="p-2">I <blank id="bl-1" answer="am"/> here and you <blank id="bl-2" answer="are" hint="be"/> there.</p>
    <p id="p-3">Yesterday he <blank id="bl-3" answer="ran" alts="sprinted"/> home.</p>
  </exercise>
</lesson>"#;

#[test]
fn the_same_lesson_has_no_changes() {
    assert!(lines(BLANKS, BLANKS).is_empty());
    // Spaces between blocks are layout, not a change.
    let squeezed = BLANKS.replace("\n  ", "");
    assert!(lines(BLANKS, &squeezed).is_empty());
}

#[test]
fn fill_blanks_answers_hints_and_alternatives() {
    let new = BLANKS
        .replace(r#"answer="ran" alts="sprinted""#, r#"answer="run" alts="sprinted, raced""#)
        .replace(r#"hint="be""#, r#"hint="to be""#)
        .replace(r#"<blank id="bl-1" answer="am"/>"#, r#"<blank id="bl-1" answer="am" hint="be"/>"#);
    assert_eq!(
        lines(BLANKS, &new),
        vec![
            "Exercise 2 (Fill in the blanks), blank 1: new hint “be”",
            "Exercise 2 (Fill in the blanks), blank 2: hint “be” → “to be”",
            "Exercise 2 (Fill in the blanks), blank 3: answer “ran” → “run”",
            "Exercise 2 (Fill in the blanks), blank 3: other accepted answers “sprinted” → “sprinted, raced”",
        ]
    );
    let c = list(BLANKS, &new);
    assert!(c.iter().all(|c| c.kind == ChangeKind::Edited && c.block.as_deref() == Some("ex-2")));
}

#[test]
fn fill_blanks_sentences_and_blanks_added_and_removed() {
    let new = BLANKS
        .replace(r#"<p id="p-3">Yesterday he <blank id="bl-3" answer="ran" alts="sprinted"/> home.</p>"#, "")
        .replace("and you <blank", "and they <blank")
        .replace("</exercise>\n</lesson>", "<p>We <blank answer=\"were\"/> late.</p></exercise>\n</lesson>");
    assert_eq!(
        lines(BLANKS, &new),
        vec![
            "Exercise 2 (Fill in the blanks), sentence 1: “you” → “they”",
            "Exercise 2 (Fill in the blanks): added sentence 2 “We ___ late.”",
            "Exercise 2 (Fill in the blanks): removed sentence 2 “Yesterday he ___ home.”",
            "Exercise 2 (Fill in the blanks): added blank 3 (answer “were”)",
            "Exercise 2 (Fill in the blanks): removed blank 3 (answer “ran”)",
        ]
    );
}

#[test]
fn a_word_turned_into_a_blank_shows_in_its_sentence() {
    let new = BLANKS.replace("home.", "<blank id=\"bl-4\" answer=\"home\"/>.");
    assert_eq!(
        lines(BLANKS, &new),
        vec![
            "Exercise 2 (Fill in the blanks), sentence 2: “home.” → “___ .”",
            "Exercise 2 (Fill in the blanks): added blank 4 (answer “home”)",
        ]
    );
}

#[test]
fn instructions_and_title() {
    let new = BLANKS.replace("Fill in the verb.", "Write the right verb.").replace(r#"type="fill-blanks">"#, r#"type="fill-blanks" title="Be">"#);
    assert_eq!(
        lines(BLANKS, &new),
        vec![
            "Exercise 2 (Fill in the blanks): new title “Be”",
            "Exercise 2 (Fill in the blanks), instructions: “Fill in” → “Write”; added “right”",
        ]
    );
    let without = BLANKS.replace("<instructions>Fill in the verb.</instructions>", "");
    assert_eq!(lines(BLANKS, &without), vec!["Exercise 2 (Fill in the blanks): removed instructions “Fill in the verb.”"]);
}

const CHOICE: &str = r#"<lesson>
  <exercise id="ex-1" type="multiple-choice">
    <question id="q-1"><prompt>Which is a verb?</prompt>
      <option id="o-1" correct="true">manger</option><option id="o-2">la table</option><option id="o-3">rouge</option></question>
    <question id="q-2"><prompt>Which means "to eat"?</prompt>
      <option id="o-4" correct="true">boire</option><option id="o-5">manger</option></question>
  </exercise>
</lesson>"#;

#[test]
fn multiple_choice_correct_option_text_and_options() {
    let new = CHOICE
        .replace(r#"<option id="o-4" correct="true">boire</option><option id="o-5">manger</option>"#, r#"<option id="o-4">boire</option><option id="o-5" correct="true">manger</option>"#)
        .replace(r#"<option id="o-3">rouge</option>"#, r#"<option>courir</option>"#)
        .replace("la table", "une table");
    assert_eq!(
        lines(CHOICE, &new),
        vec![
            "Exercise 1 (Multiple choice), question 1, option “la table”: “la” → “une”",
            "Exercise 1 (Multiple choice), question 1: added the option “courir”",
            "Exercise 1 (Multiple choice), question 1: removed the option “rouge”",
            "Exercise 1 (Multiple choice), question 2: the correct option is now “manger”",
        ]
    );
}

#[test]
fn multiple_choice_questions_prompts_several_correct_and_order() {
    let new = r#"<lesson>
  <exercise id="ex-1" type="multiple-choice">
    <question id="q-2"><prompt>Which means "to eat"?</prompt>
      <option id="o-4" correct="true">boire</option><option id="o-5">manger</option></question>
    <question id="q-1" multiple="true"><prompt>Which are verbs?</prompt>
      <option id="o-1" correct="true">manger</option><option id="o-3" correct="true">rouge</option><option id="o-2">la table</option></question>
    <question><prompt>Pick a colour</prompt><option correct="true">rouge</option><option>vite</option></question>
  </exercise>
</lesson>"#;
    assert_eq!(
        lines(CHOICE, new),
        vec![
            "Exercise 1 (Multiple choice), question 2, prompt: “is a verb?” → “are verbs?”",
            "Exercise 1 (Multiple choice), question 2: more than one option may now be correct",
            "Exercise 1 (Multiple choice), question 2: “rouge” is now marked correct",
            "Exercise 1 (Multiple choice), question 2: the options are in a new order",
            "Exercise 1 (Multiple choice): added question 3 “Pick a colour”",
            "Exercise 1 (Multiple choice): the questions are in a new order",
        ]
    );
}

#[test]
fn true_false_answers_text_and_statements() {
    let old = r#"<lesson><exercise id="ex-1" type="true-false">
      <statement id="st-1" answer="true">The sun is a star.</statement>
      <statement id="st-2" answer="true">The moon shines by itself.</statement>
      <statement id="st-3" answer="false">Fish fly.</statement></exercise></lesson>"#;
    let new = r#"<lesson><exercise id="ex-1" type="true-false">
      <statement id="st-1" answer="false">The sun is a planet.</statement>
      <statement id="st-2" answer="false">The moon shines by itself.</statement>
      <statement answer="true">Water is wet.</statement></exercise></lesson>"#;
    assert_eq!(
        lines(old, new),
        vec![
            "Exercise 1 (True or false), statement 1: true → false",
            "Exercise 1 (True or false), statement 1: “star.” → “planet.”",
            "Exercise 1 (True or false), statement 2: true → false",
            "Exercise 1 (True or false): added statement 3 “Water is wet.” (true)",
            "Exercise 1 (True or false): removed statement 3 “Fish fly.”",
        ]
    );
}

#[test]
fn sequencing_order_items_and_display_order() {
    let old = r#"<lesson><exercise id="ex-1" type="sequencing">
      <item id="it-1" position="2">Boil water</item><item id="it-2" position="1">Fill the kettle</item><item id="it-3" position="3">Pour</item></exercise></lesson>"#;
    let renumbered = old.replace(r#"id="it-1" position="2""#, r#"id="it-1" position="3""#).replace(r#"id="it-3" position="3""#, r#"id="it-3" position="2""#);
    assert_eq!(lines(old, &renumbered), vec!["Exercise 1 (Put in order): the right order is now “Fill the kettle”, “Pour”, “Boil water”"]);
    let shuffled = r#"<lesson><exercise id="ex-1" type="sequencing">
      <item id="it-3" position="3">Pour the tea</item><item id="it-1" position="2">Boil water</item><item id="it-2" position="1">Fill the kettle</item></exercise></lesson>"#;
    assert_eq!(
        lines(old, shuffled),
        vec!["Exercise 1 (Put in order), item “Pour”: added “the tea”", "Exercise 1 (Put in order): the items are shown in a new order"]
    );
    let fewer = r#"<lesson><exercise id="ex-1" type="sequencing">
      <item id="it-2" position="1">Fill the kettle</item><item id="it-1" position="2">Boil water</item><item position="3">Drink</item></exercise></lesson>"#;
    assert_eq!(
        lines(old, fewer),
        vec![
            "Exercise 1 (Put in order): added the item “Drink”",
            "Exercise 1 (Put in order): removed the item “Pour”",
            "Exercise 1 (Put in order): the items are shown in a new order",
        ]
    );
}

#[test]
fn short_answer_prompts_and_model_answers() {
    let old = r#"<lesson><exercise id="ex-1" type="short-answer">
      <question id="q-1"><prompt>Why is the sky blue?</prompt><answer>Light scatters.</answer></question>
      <question id="q-2"><prompt>Name a gas.</prompt></question></exercise></lesson>"#;
    let new = r#"<lesson><exercise id="ex-1" type="short-answer">
      <question id="q-1"><prompt>Why is the sky blue?</prompt><answer>Blue light scatters most.</answer></question>
      <question id="q-2"><prompt>Name a gas.</prompt><answer>Oxygen.</answer></question></exercise></lesson>"#;
    assert_eq!(
        lines(old, new),
        vec![
            "Exercise 1 (Short answer), question 1, model answer: “Light scatters.” → “Blue light scatters most.”",
            "Exercise 1 (Short answer), question 2: added model answer “Oxygen.”",
        ]
    );
}

#[test]
fn writing_task_and_area() {
    let old = r#"<lesson><exercise id="ex-1" type="writing"><prompt>Describe your town.</prompt><writing-area id="wa-1" lines="5"/></exercise></lesson>"#;
    let new = r#"<lesson><exercise id="ex-1" type="writing"><prompt>Describe your village.</prompt><writing-area id="wa-1" lines="10" placeholder="Start here"/></exercise></lesson>"#;
    assert_eq!(
        lines(old, new),
        vec![
            "Exercise 1 (Writing), task: “town.” → “village.”",
            "Exercise 1 (Writing), writing area: lines “5” → “10”",
            "Exercise 1 (Writing), writing area: new placeholder “Start here”",
        ]
    );
    let bare = r#"<lesson><exercise id="ex-1" type="writing"><prompt>Describe your town.</prompt></exercise></lesson>"#;
    assert_eq!(lines(old, bare), vec!["Exercise 1 (Writing): removed the writing area"]);
}

#[test]
fn blocks_added_removed_and_edited_in_the_teachers_words() {
    let new = r#"<lesson>
  <h2 id="h-1">Verbs</h2>
  <p id="p-1">Most verbs follow a <em>simple</em> rule.</p>
  <note>Plan ten minutes.</note>
  <exercise id="ex-2" type="fill-blanks">
    <instructions>Fill in the verb.</instructions>
    <p id="p-2">I <blank id="bl-1" answer="am"/> here and you <blank id="bl-2" answer="are" hint="be"/> there.</p>
    <p id="p-3">Yesterday he <blank id="bl-3" answer="ran" alts="sprinted"/> home.</p>
  </exercise>
  <exercise type="multiple-choice"><question><prompt>Pick</prompt><option correct="true">a</option><option>b</option></question>
    <question><prompt>Again</prompt><option correct="true">a</option><option>b</option></question>
    <question><prompt>Once more</prompt><option correct="true">a</option><option>b</option></question></exercise>
  <writing-area lines="3"/>
</lesson>"#;
    let c = list(BLANKS, new);
    let texts: Vec<&str> = c.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "The heading “Verbs” is now a level 2 heading (was level 1)",
            "The paragraph “Most verbs follow a pattern.”: “pattern.” → “simple rule.”",
            "Added a teacher's note “Plan ten minutes.”",
            "Removed exercise 1 (True or false, 1 statement)",
            "Added exercise 2 (Multiple choice, 3 questions)",
            "Added a writing area",
        ]
    );
    assert_eq!(c[0].block.as_deref(), Some("h-1"));
    assert_eq!(c[2].block, None, "a block without an id yet");
    assert_eq!((c[3].kind, c[3].block.as_deref()), (ChangeKind::Removed, Some("ex-1")));
    assert_eq!(c[4].kind, ChangeKind::Added);
}

#[test]
fn only_the_emphasis_changed() {
    let old = r#"<lesson><p id="p-1">Read this now.</p></lesson>"#;
    let new = r#"<lesson><p id="p-1">Read <strong>this</strong> now.</p></lesson>"#;
    assert_eq!(lines(old, new), vec!["The paragraph “Read this now.”: emphasis changed"]);
}

#[test]
fn removed_paragraphs_quote_their_start() {
    let old = r#"<lesson><h1 id="h-1">T</h1><p id="p-1">Most verbs in French end in -er and follow one pattern, which we learn today.</p></lesson>"#;
    let new = r#"<lesson><h1 id="h-1">T</h1></lesson>"#;
    assert_eq!(lines(old, new), vec!["Removed the paragraph “Most verbs in French end in -er and …”"]);
}

#[test]
fn moves_name_the_block_they_now_stand_above() {
    let old = r#"<lesson><h1 id="h-1">T</h1>
      <exercise id="ex-1" type="true-false"><statement id="s1" answer="true">A</statement></exercise>
      <exercise id="ex-2" type="true-false"><statement id="s2" answer="true">B</statement></exercise>
      <exercise id="ex-3" type="true-false"><statement id="s3" answer="true">C</statement></exercise></lesson>"#;
    let new = r#"<lesson><h1 id="h-1">T</h1>
      <exercise id="ex-1" type="true-false"><statement id="s1" answer="true">A</statement></exercise>
      <exercise id="ex-3" type="true-false"><statement id="s3" answer="true">C</statement></exercise>
      <exercise id="ex-2" type="true-false"><statement id="s2" answer="true">B</statement></exercise></lesson>"#;
    let c = list(old, new);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].kind, ChangeKind::Moved);
    // One of the two moved; either way the sentence says where it went.
    assert!(
        c[0].text == "Moved exercise 3 above exercise 2" || c[0].text == "Moved exercise 2 to the end",
        "{}",
        c[0].text
    );
    let to_top = r#"<lesson><p id="p-9">Intro</p><h1 id="h-1">T</h1></lesson>"#;
    let was = r#"<lesson><h1 id="h-1">T</h1><p id="p-9">Intro</p></lesson>"#;
    let texts = lines(was, to_top);
    assert!(texts == vec!["Moved the paragraph “Intro” above the heading “T”"] || texts == vec!["Moved the heading “T” to the end"], "{texts:?}");
}

#[test]
fn a_changed_kind_of_exercise_is_one_line() {
    let old = r#"<lesson><exercise id="ex-1" type="true-false"><statement id="s1" answer="true">A</statement></exercise></lesson>"#;
    let new = r#"<lesson><exercise id="ex-1" type="sequencing"><item position="1">A</item><item position="2">B</item></exercise></lesson>"#;
    assert_eq!(lines(old, new), vec!["Exercise 1 is now Put in order (was True or false)"]);
}

#[test]
fn the_lessons_title_and_language() {
    let old = r#"<lesson title="Verbs"><p id="p-1">x</p></lesson>"#;
    let new = r#"<lesson title="French verbs" lang="fr"><p id="p-1">x</p></lesson>"#;
    let c = list(old, new);
    assert_eq!(
        c.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        vec!["The lesson: title “Verbs” → “French verbs”", "The lesson: new language “fr”"]
    );
    assert!(c.iter().all(|c| c.block.is_none()));
}

#[test]
fn long_edits_are_summed_up() {
    let old = r#"<lesson><p id="p-1">one two three four five six seven eight nine ten</p></lesson>"#;
    let new = r#"<lesson><p id="p-1">uno two tres four cinco six siete eight nueve ten</p></lesson>"#;
    assert_eq!(
        lines(old, new),
        vec!["The paragraph “one two three four five six seven eight …”: “one” → “uno”; “three” → “tres”; “five” → “cinco”; and 2 more changes"]
    );
}

#[test]
fn new_ids_never_reuse_a_removed_blocks_id() {
    // The old lesson had p-2; the new one drops it and adds a paragraph
    // without an id. Given ids against the old lesson, the new paragraph is
    // told as added, not as p-2 rewritten.
    let old = normalize(r#"<lesson><p id="p-1">Keep</p><p id="p-2">Drop me</p></lesson>"#).unwrap();
    let mut new = parse(r#"<lesson><p id="p-1">Keep</p><p>Brand new</p></lesson>"#).unwrap();
    crate::assign_ids_after(&mut new, &old);
    let texts: Vec<String> = changes(&old, &new).into_iter().map(|c| c.text).collect();
    assert_eq!(texts, vec!["Added a paragraph “Brand new”", "Removed the paragraph “Drop me”"]);
}

#[test]
fn every_difference_gets_a_line() {
    // A student's answer and a placeholder are attributes too.
    let old = r#"<lesson><exercise id="ex-1" type="fill-blanks"><p id="p-1">A <blank id="b1" answer="x"/></p></exercise><writing-area id="wa-1"/></lesson>"#;
    let new = r#"<lesson><exercise id="ex-1" type="fill-blanks"><p id="p-1">A <blank id="b1" answer="x" student-answer="y"/></p></exercise><writing-area id="wa-1" placeholder="Write here"/></lesson>"#;
    assert_eq!(
        lines(old, new),
        vec!["Exercise 1 (Fill in the blanks), blank 1: new student's answer “y”", "The writing area: new placeholder “Write here”"]
    );
}

#[test]
fn standards_named_and_no_longer_named_are_told_code_by_code() {
    let old = r#"<lesson standards="RL.4.1"><exercise id="e1" type="writing" standards="W.4.1 RL.4.2"><prompt>Write.</prompt></exercise></lesson>"#;
    let new = r#"<lesson><exercise id="e1" type="writing" standards="RL.4.2 RL.4.3 W.4.2"><prompt>Write.</prompt></exercise></lesson>"#;
    assert_eq!(
        lines(old, new),
        vec![
            "The lesson: no longer names standard RL.4.1",
            "Exercise 1 (Writing): now names standard RL.4.3, W.4.2",
            "Exercise 1 (Writing): no longer names standard W.4.1",
        ]
    );
}
