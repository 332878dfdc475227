//! Every rule of the format and every kind of bad input, checked.

use super::*;

/// The messages of all errors, one per line.
fn errors_of(xml: &str) -> String {
    match normalize(xml) {
        Ok(_) => String::new(),
        Err(errs) => describe_errors(&errs),
    }
}

fn assert_error(xml: &str, expected: &str) {
    let errs = errors_of(xml);
    assert!(errs.contains(expected), "expected an error containing {expected:?}, got:\n{errs}");
}

fn assert_valid(xml: &str) -> Element {
    normalize(xml).unwrap_or_else(|e| panic!("expected valid, got:\n{}", describe_errors(&e)))
}

const FULL: &str = r#"<lesson>
  <h1 id="title">Les verbes</h1>
  <p>Read <em>carefully</em> and <strong>answer</strong>.</p>
  <note>Teacher only: 20 minutes.</note>
  <exercise id="ex-1" type="fill-blanks" title="Être">
    <instructions>Fill in the verb.</instructions>
    <p>Je <blank answer="suis" alts="suis," hint="être"/> content.</p>
  </exercise>
  <exercise type="multiple-choice">
    <question>
      <prompt>Which is a verb?</prompt>
      <option correct="true">manger</option>
      <option>table</option>
    </question>
    <question multiple="true">
      <prompt>Which are verbs?</prompt>
      <option correct="true">aller</option>
      <option correct="true">venir</option>
      <option>chat</option>
    </question>
  </exercise>
  <exercise type="true-false">
    <statement answer="true">« Être » is irregular.</statement>
    <statement answer="false">« Parler » ends in -ir.</statement>
  </exercise>
  <exercise type="sequencing">
    <item position="2">Conjugate</item>
    <item position="1">Find the stem</item>
    <item position="3">Check the ending</item>
  </exercise>
  <exercise type="short-answer">
    <question><prompt>Why is « aller » irregular?</prompt><answer>Its stem changes.</answer></question>
  </exercise>
  <exercise type="writing">
    <prompt>Describe your morning in five sentences.</prompt>
    <writing-area lines="8"/>
  </exercise>
  <writing-area/>
</lesson>"#;

#[test]
fn a_full_lesson_with_every_kind_is_valid() {
    let root = assert_valid(FULL);
    assert_eq!(root.name, "lesson");
}

#[test]
fn serialize_then_parse_keeps_content_and_ids() {
    let root = assert_valid(FULL);
    let xml = root.to_xml();
    let again = assert_valid(&xml);
    assert_eq!(again.to_xml(), xml, "serializing is stable");
    assert!(xml.contains(r#"<h1 id="title">Les verbes</h1>"#), "{xml}");
    assert!(xml.contains(r#"<exercise id="ex-1" type="fill-blanks" title="Être">"#), "{xml}");
    assert!(xml.contains(r#"Read <em>carefully</em> and <strong>answer</strong>."#));
    assert!(xml.contains("« Être » is irregular."));
    assert_eq!(strip_positions(root), strip_positions(again));
}

fn strip_positions(mut e: Element) -> Element {
    e.line = 0;
    e.column = 0;
    e.children = e
        .children
        .into_iter()
        .filter(|n| !matches!(n, Node::Text(t) if t.trim().is_empty()))
        .map(|n| match n {
            Node::Element(c) => Node::Element(strip_positions(c)),
            t => t,
        })
        .collect();
    e
}

#[test]
fn missing_ids_are_assigned_and_existing_ids_kept() {
    let root = assert_valid(FULL);
    let xml = root.to_xml();
    assert!(xml.contains(r#"<h1 id="title">"#));
    assert!(xml.contains(r#"<exercise id="ex-1""#));
    // The second exercise skips ex-1, which is taken.
    assert!(xml.contains(r#"<exercise id="ex-2" type="multiple-choice">"#), "{xml}");
    assert!(xml.contains(r#"<blank id="bl-1" answer="suis""#), "{xml}");
    assert!(xml.contains(r#"<option id="opt-1" correct="true">manger</option>"#), "{xml}");
    assert!(xml.contains(r#"<statement id="st-1" answer="true">"#));
    assert!(xml.contains(r#"<item id="it-1" position="2">"#));
    assert!(xml.contains(r#"<writing-area id="wa-1" lines="8"/>"#), "{xml}");
    // Instructions, prompts and formatting carry no ids.
    assert!(xml.contains("<instructions>Fill in the verb.</instructions>"));
    assert!(xml.contains("<em>carefully</em>"));
    // Assigning again changes nothing.
    let mut again = assert_valid(&xml);
    assign_ids(&mut again);
    assert_eq!(again.to_xml(), xml);
}

#[test]
fn ids_taken_by_linked_lessons_are_never_given_out() {
    // A version added `p-1` and `p-2`; its core adds a paragraph of its own.
    let taken: std::collections::HashSet<String> = ["p-1", "p-2"].iter().map(|s| s.to_string()).collect();
    let before = crate::parse(r#"<lesson><h1 id="h1">Plants</h1></lesson>"#).unwrap();
    let root = crate::normalize_after(r#"<lesson><h1 id="h1">Plants</h1><p>Roots drink water.</p></lesson>"#, Some(&before), &taken).unwrap();
    assert_eq!(root.elements().nth(1).and_then(|p| p.id()), Some("p-3"), "{}", root.to_xml());
    // Without them, the first free one.
    let alone = crate::normalize_after(r#"<lesson><p>Roots drink water.</p></lesson>"#, None, &Default::default()).unwrap();
    assert_eq!(alone.elements().next().and_then(|p| p.id()), Some("p-1"));
}

#[test]
fn text_and_attributes_are_escaped_on_output() {
    let root = assert_valid(r#"<lesson><p id="a">Fish &amp; chips &lt;3</p><exercise type="fill-blanks"><p>x <blank answer="a&quot;b" hint="&lt;i&gt;"/></p></exercise></lesson>"#);
    let xml = root.to_xml();
    assert!(xml.contains("Fish &amp; chips &lt;3"), "{xml}");
    assert!(xml.contains(r#"answer="a&quot;b" hint="&lt;i&gt;""#), "{xml}");
    assert_valid(&xml);
}

#[test]
fn malformed_xml_is_reported_with_its_position() {
    let errs = normalize("<lesson>\n  <p>Hello</h2>\n</lesson>").unwrap_err();
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].line, 2);
    assert!(errs[0].message.contains("</h2>") && errs[0].message.contains("<p>"), "{}", errs[0]);
    assert_error("<lesson><p>never closed</lesson>", "does not match");
    assert_error("<lesson><p>a</p>", "ends before");
    assert_error("", "empty");
    assert_error("just text", "line 1");
}

#[test]
fn the_root_must_be_lesson() {
    assert_error("<document><p>x</p></document>", "must start with <lesson>, not <document>");
}

#[test]
fn unknown_elements_are_named_with_what_is_allowed() {
    let errs = normalize("<lesson>\n<p>ok</p>\n<div>no</div>\n</lesson>").unwrap_err();
    assert_eq!(errs[0].line, 3);
    assert_eq!(errs[0].path, "div");
    assert!(errs[0].message.contains("<div> is not a lesson element"));
    assert!(errs[0].message.contains("h1, h2, h3, p, note, writing-area, exercise"));
    assert_error("<lesson><p>a <b>bold</b></p></lesson>", "<b> cannot stand inside <p>. Text here may only use <em> and <strong>");
    assert_error("<lesson><p>a <script>x</script></p></lesson>", "<script> cannot stand inside <p>");
}

#[test]
fn unknown_attributes_are_refused() {
    assert_error(r#"<lesson><p onclick="x">a</p></lesson>"#, "unknown attribute `onclick`. <p> takes: id.");
    assert_error(r#"<lesson><p>a <em class="x">b</em></p></lesson>"#, "<em> takes no attributes");
}

#[test]
fn text_directly_in_the_lesson_must_be_in_a_block() {
    assert_error("<lesson>loose words<p>a</p></lesson>", "stands directly inside <lesson>");
}

#[test]
fn a_blank_without_answer_names_its_place_and_fix() {
    let xml = "<lesson>\n  <exercise id=\"ex-3\" type=\"fill-blanks\">\n    <p>Je <blank hint=\"x\"/> ici.</p>\n  </exercise>\n</lesson>";
    let errs = normalize(xml).unwrap_err();
    let e = &errs[0];
    assert_eq!((e.line, e.path.as_str()), (3, "exercise#ex-3 > p > blank"));
    assert_eq!(
        e.to_string(),
        "line 3, column 11, exercise#ex-3 > p > blank: missing required attribute `answer`: add answer=\"…\" with the word that fills the blank."
    );
}

#[test]
fn blank_rules() {
    assert_error(r#"<lesson><exercise type="fill-blanks"><p>a <blank answer=" "/></p></exercise></lesson>"#, "the answer is empty");
    assert_error(r#"<lesson><exercise type="fill-blanks"><p>a <blank answer="x">x</blank></p></exercise></lesson>"#, "a blank is written empty");
    assert_error(r#"<lesson><p>a <blank answer="x"/></p></lesson>"#, "only allowed in a <p> of an exercise");
    assert_error(r#"<lesson><exercise type="fill-blanks"><p>no blanks</p></exercise></lesson>"#, "needs at least one <blank");
}

#[test]
fn exercise_type_is_required_and_known() {
    assert_error("<lesson><exercise><p>a</p></exercise></lesson>", "missing required attribute `type`: add type=\"…\", one of: fill-blanks, multiple-choice");
    assert_error(r#"<lesson><exercise type="quiz"/></lesson>"#, "unknown exercise type \"quiz\"");
    assert_error(r#"<lesson><exercise type="true-false"><item position="1">x</item></exercise></lesson>"#, "<item> does not belong in a true-false exercise");
    assert_error(r#"<lesson><exercise type="true-false">loose<statement answer="true">x</statement></exercise></lesson>"#, "stands directly inside <exercise>");
    assert_error(r#"<lesson><exercise type="true-false"><statement answer="true">x</statement><instructions>i</instructions></exercise></lesson>"#, "<instructions> must come first");
}

#[test]
fn multiple_choice_rules() {
    let q = |body: &str| format!(r#"<lesson><exercise type="multiple-choice"><question{body}</question></exercise></lesson>"#);
    assert_error(&q(r#"><prompt>?</prompt><option correct="true">a</option></question><question>"#), "at least two <option>s (it has 1)");
    assert_error(&q(r#"><prompt>?</prompt><option>a</option><option>b</option>"#), "exactly one option must have correct=\"true\" (found 0)");
    assert_error(&q(r#"><prompt>?</prompt><option correct="true">a</option><option correct="true">b</option>"#), "(found 2). If several answers are right, add multiple=\"true\"");
    assert_valid(&q(r#" multiple="true"><prompt>?</prompt><option correct="true">a</option><option correct="true">b</option>"#));
    assert_error(&q(r#" multiple="true"><prompt>?</prompt><option>a</option><option>b</option>"#), "mark at least one option");
    assert_error(&q(r#"><option correct="true">a</option><option>b</option>"#), "exactly one <prompt> (it has 0)");
    assert_error(&q(r#"><prompt>?</prompt><option correct="yes">a</option><option>b</option>"#), "correct=\"yes\" must be \"true\" or \"false\"");
    assert_error(&q(r#"><prompt>?</prompt><option correct="true"></option><option>b</option>"#), "this option is empty");
    assert_error(r#"<lesson><exercise type="multiple-choice"/></lesson>"#, "needs at least one <question>");
}

#[test]
fn true_false_rules() {
    assert_error(r#"<lesson><exercise type="true-false"><statement>x</statement></exercise></lesson>"#, "missing required attribute `answer`: add answer=\"true\" or answer=\"false\"");
    assert_error(r#"<lesson><exercise type="true-false"><statement answer="yes">x</statement></exercise></lesson>"#, "answer=\"yes\" must be \"true\" or \"false\"");
    assert_error(r#"<lesson><exercise type="true-false"></exercise></lesson>"#, "needs at least one <statement");
}

#[test]
fn sequencing_positions_have_no_gaps_or_repeats() {
    let seq = |items: &str| format!(r#"<lesson><exercise type="sequencing">{items}</exercise></lesson>"#);
    assert_valid(&seq(r#"<item position="2">b</item><item position="1">a</item>"#));
    assert_error(&seq(r#"<item position="1">a</item><item position="1">b</item>"#), "position 1 is already used on line 1");
    assert_error(&seq(r#"<item position="1">a</item><item position="3">b</item>"#), "positions must run from 1 to 2 with no gaps: 2 missing, 3 too high");
    assert_error(&seq(r#"<item position="first">a</item><item position="2">b</item>"#), "position=\"first\" must be a whole number");
    assert_error(&seq(r#"<item>a</item><item position="1">b</item>"#), "missing required attribute `position`");
    assert_error(&seq(r#"<item position="1">a</item>"#), "at least two <item>s (it has 1)");
}

#[test]
fn short_answer_and_writing_rules() {
    assert_valid(r#"<lesson><exercise type="short-answer"><question><prompt>Why?</prompt></question></exercise></lesson>"#);
    assert_error(r#"<lesson><exercise type="short-answer"><question><prompt>Why?</prompt><answer>a</answer><answer>b</answer></question></exercise></lesson>"#, "at most one <answer>");
    assert_error(r#"<lesson><exercise type="short-answer"><question><prompt>Why?</prompt><option>a</option></question></exercise></lesson>"#, "<option> does not belong in a short-answer <question>");
    assert_error(r#"<lesson><exercise type="writing"><writing-area/></exercise></lesson>"#, "exactly one <prompt> (it has 0)");
    assert_error(r#"<lesson><writing-area lines="500"/></lesson>"#, "lines=\"500\" must be a whole number from 1 to 50");
    assert_error(r#"<lesson><writing-area>text</writing-area></lesson>"#, "is written empty");
}

#[test]
fn ids_must_be_unique_and_well_formed() {
    let errs = normalize("<lesson>\n<p id=\"a\">x</p>\n<p id=\"a\">y</p>\n</lesson>").unwrap_err();
    assert_eq!(errs[0].line, 3);
    assert!(errs[0].message.contains("the id \"a\" is already used on line 2"), "{}", errs[0]);
    assert_error(r#"<lesson><p id="1abc">x</p></lesson>"#, "the id \"1abc\" is not valid");
    assert_error(r#"<lesson><p id="a b">x</p></lesson>"#, "is not valid");
}

#[test]
fn entity_expansion_attacks_are_refused() {
    let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
]>
<lesson><p>&lol2;</p></lesson>"#;
    assert_error(bomb, "DOCTYPE and entity declarations are not allowed");
    assert_error(r#"<!DOCTYPE lesson SYSTEM "file:///etc/passwd"><lesson/>"#, "DOCTYPE");
    assert_error("<lesson><p>&nbsp;</p></lesson>", "unknown entity &nbsp;");
}

#[test]
fn oversize_and_too_deep_documents_are_refused() {
    let big = format!("<lesson><p>{}</p></lesson>", "a".repeat(MAX_BYTES));
    assert_error(&big, "too large");
    let deep = format!("<lesson><p>{}x{}</p></lesson>", "<em>".repeat(MAX_DEPTH + 2), "</em>".repeat(MAX_DEPTH + 2));
    assert_error(&deep, "nested more than");
}

#[test]
fn namespaces_are_refused() {
    assert_error(r#"<lesson xmlns:h="http://www.w3.org/1999/xhtml"><h:p>x</h:p></lesson>"#, "namespaces are not used");
}

#[test]
fn all_errors_are_reported_at_once() {
    let xml = r#"<lesson><div/><p onclick="x">a</p><exercise type="true-false"><statement>x</statement></exercise></lesson>"#;
    let errs = normalize(xml).unwrap_err();
    assert_eq!(errs.len(), 3, "{}", describe_errors(&errs));
}

#[test]
fn comments_are_dropped_and_text_around_them_joined() {
    let root = assert_valid("<lesson><p>a<!-- note -->b</p></lesson>");
    assert!(root.to_xml().contains(">ab</p>"));
}

#[test]
fn render_both_gives_each_audience_its_view_and_explains_a_broken_document() {
    let html = super::render_both(r#"<lesson><exercise type="true-false"><statement answer="true">Water is wet.</statement></exercise></lesson>"#);
    assert!(html.teacher.contains("Water is wet.") && html.student.contains("Water is wet."));
    assert_ne!(html.teacher, html.student, "the answer is shown to the teacher only");

    // The parser's message quotes the entity (`&eacute;`): it must reach the
    // page escaped, as text, not as the character it names.
    let broken = super::render_both("<lesson><p>caf&eacute;</p></lesson>");
    assert!(broken.teacher.starts_with(r#"<p class="form-error" role="alert">This lesson cannot be shown: "#), "{}", broken.teacher);
    assert!(broken.teacher.contains("unknown entity &amp;eacute;"), "{}", broken.teacher);
    assert_eq!(broken.teacher, broken.student);
}
