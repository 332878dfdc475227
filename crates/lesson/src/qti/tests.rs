use std::io::{Cursor, Read};

use super::*;
use super::budget::MAX_ITEMS as MAX_ITEMS_READ;
use crate::normalize;

/// Every exercise kind, with what each can carry: a title and
/// instructions, several right options, alternatives and a hint, emphasis,
/// a model answer, a rubric kept from students and one shared with them, a
/// writing area with its lines and placeholder. Around them, a heading, a
/// paragraph and a teacher's note.
const LESSON: &str = r#"<lesson lang="en">
<h1 id="h1">Verbs</h1>
<p id="p0">We practise <strong>verbs</strong> in <em>the past</em>.</p>
<note id="n1">Go slowly with this class.</note>
<exercise id="e1" type="fill-blanks" title="Gaps"><instructions>Fill in <em>each</em> gap.</instructions><p id="p1">She <blank id="b1" answer="ran" alts="run, Ran" hint="run"/> fast and <blank id="b2" answer="jumped"/>.</p><p id="p2">They <blank id="b3" answer="went"/> <strong>home</strong>.</p></exercise>
<exercise id="e2" type="multiple-choice" title="Past forms"><question id="q1"><prompt>Pick the <em>past</em> form</prompt><option id="o1" correct="true">went</option><option id="o2">goed</option><option id="o3">gone</option></question><question id="q3" multiple="true"><prompt>Pick every verb</prompt><option id="o4" correct="true">run</option><option id="o5">table</option><option id="o6" correct="true">sing</option></question></exercise>
<exercise id="e3" type="true-false"><statement id="s1" answer="false">Fish can fly.</statement><statement id="s2" answer="true">Birds can fly.</statement></exercise>
<exercise id="e4" type="sequencing"><item id="t1" position="2">Then</item><item id="t2" position="1">First</item><item id="t3" position="3">Last</item></exercise>
<exercise id="e5" type="short-answer"><question id="q2"><prompt>Why?</prompt><answer>Because it rains.</answer><rubric id="r1"><criterion id="c1" name="Reason"><level points="2">Clear <em>reason</em> given.</level><level points="0">No reason.</level></criterion></rubric></question><question id="q4"><prompt>Where?</prompt></question></exercise>
<exercise id="e6" type="writing"><prompt>Write a letter.</prompt><writing-area id="w1" lines="8" placeholder="Dear …"/><rubric id="r2" shared="true"><criterion id="c2" name="Greeting"><level points="1">Opens with a greeting.</level><level points="0">No greeting.</level></criterion></rubric></exercise>
<exercise id="e7" type="writing"><prompt>Draw and label.</prompt></exercise>
</lesson>"#;

fn root() -> Element {
    normalize(LESSON).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The files of a zip archive, by name.
fn files(zip: &[u8]) -> Vec<(String, String)> {
    let mut z = zip::ZipArchive::new(Cursor::new(zip)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut text = String::new();
            f.read_to_string(&mut text).unwrap();
            (f.name().to_string(), text)
        })
        .collect()
}

fn file<'a>(files: &'a [(String, String)], name: &str) -> &'a str {
    files.iter().find(|(n, _)| n == name).map(|(_, t)| t.as_str()).unwrap_or_else(|| panic!("{name} not in {:?}", files.iter().map(|f| &f.0).collect::<Vec<_>>()))
}

fn xml(text: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn all<'a, 'i>(doc: &'a roxmltree::Document<'i>, name: &str) -> Vec<roxmltree::Node<'a, 'i>> {
    doc.descendants().filter(|n| n.tag_name().name() == name).collect()
}

/// The lesson's exercises only (what a QTI package carries), tidy.
fn exercises_of(root: &Element) -> String {
    let mut only = root.clone();
    only.attrs.clear();
    only.children.retain(|n| matches!(n, Node::Element(e) if e.name == "exercise"));
    only.to_xml()
}

#[test]
fn the_qti_package_has_a_test_of_sections_and_an_item_per_question() {
    let f = files(&to_qti_package(&root(), "Verbs").unwrap());
    let manifest = xml(file(&f, "imsmanifest.xml"));
    assert_eq!(manifest.root_element().tag_name().namespace(), Some("http://www.imsglobal.org/xsd/imscp_v1p1"));
    let resources = all(&manifest, "resource");
    let items: Vec<&str> = resources.iter().filter(|r| r.attribute("type") == Some("imsqti_item_xmlv2p1")).map(|r| r.attribute("href").unwrap()).collect();
    // 2 paragraphs of blanks, 2 + 2 questions, 2 statements, 1 sequence, 2 writing tasks.
    assert_eq!(items.len(), 11, "{items:?}");
    let test = resources.iter().find(|r| r.attribute("type") == Some("imsqti_test_xmlv2p1")).unwrap();
    assert_eq!(test.children().filter(|c| c.tag_name().name() == "dependency").count(), 11);
    for href in &items {
        let item = xml(file(&f, href));
        assert_eq!(item.root_element().tag_name().name(), "assessmentItem");
        assert_eq!(item.root_element().tag_name().namespace(), Some("http://www.imsglobal.org/xsd/imsqti_v2p1"));
    }
    let test = xml(file(&f, "assessment.xml"));
    let sections = all(&test, "assessmentSection");
    assert_eq!(sections.iter().map(|s| s.attribute("identifier").unwrap()).collect::<Vec<_>>(), ["e1", "e2", "e3", "e4", "e5", "e6", "e7"]);
    assert_eq!(sections[0].attribute("title"), Some("Gaps"));
    assert_eq!(sections[2].attribute("title"), Some("True or false"), "an untitled exercise is named by its kind");
    for s in &sections {
        for r in s.children().filter(|c| c.tag_name().name() == "assessmentItemRef") {
            assert!(items.contains(&r.attribute("href").unwrap()), "every reference is a file in the manifest");
        }
    }
    assert!(!file(&f, "assessment.xml").contains("Go slowly") && !f.iter().any(|(_, t)| t.contains("Go slowly")), "no teacher note anywhere");

    // Each kind in its own interaction, with its answers.
    let q3 = xml(file(&f, "items/q3.xml"));
    let choice = all(&q3, "choiceInteraction")[0];
    assert_eq!(choice.attribute("maxChoices"), Some("0"));
    let right: Vec<&str> = all(&q3, "correctResponse")[0].children().filter_map(|v| v.text()).collect();
    assert_eq!(right, ["o4", "o6"]);
    assert_eq!(all(&q3, "responseDeclaration")[0].attribute("cardinality"), Some("multiple"));

    let p1 = xml(file(&f, "items/p1.xml"));
    let entries = all(&p1, "textEntryInteraction");
    assert_eq!(entries.iter().map(|e| e.attribute("responseIdentifier").unwrap()).collect::<Vec<_>>(), ["b1", "b2"]);
    assert_eq!(entries[0].attribute("placeholderText"), Some("run"));
    assert!(entries.iter().all(|e| e.attribute("expectedLength") == Some("12")), "every gap the same length");
    let keys: Vec<&str> = all(&p1, "mapEntry").iter().map(|m| m.attribute("mapKey").unwrap()).collect();
    assert_eq!(keys, ["ran", "run", "Ran", "jumped"], "every accepted answer");
    assert_eq!(all(&p1, "mapResponse").len(), 2, "the score sums the gaps");

    let s1 = xml(file(&f, "items/s1.xml"));
    assert_eq!(all(&s1, "simpleChoice").iter().map(|c| c.text().unwrap()).collect::<Vec<_>>(), ["True", "False"]);
    assert_eq!(all(&s1, "correctResponse")[0].children().filter_map(|v| v.text()).collect::<Vec<_>>(), ["false"]);

    let order = xml(file(&f, "items/e4-order.xml"));
    assert_eq!(all(&order, "responseDeclaration")[0].attribute("cardinality"), Some("ordered"));
    assert_eq!(all(&order, "correctResponse")[0].children().filter_map(|v| v.text()).collect::<Vec<_>>(), ["t2", "t1", "t3"]);

    let q2 = xml(file(&f, "items/q2.xml"));
    assert_eq!(all(&q2, "extendedTextInteraction").len(), 1);
    let blocks = all(&q2, "rubricBlock");
    assert!(blocks.iter().all(|b| b.attribute("view") == Some("scorer")), "the model answer and a private rubric are for scorers");
    assert_eq!(all(&q2, "outcomeDeclaration")[0].attribute("normalMaximum"), Some("2"));

    let writing = xml(file(&f, "items/e6-writing.xml"));
    let area = all(&writing, "extendedTextInteraction")[0];
    assert_eq!((area.attribute("responseIdentifier"), area.attribute("expectedLines"), area.attribute("placeholderText")), (Some("w1"), Some("8"), Some("Dear …")));
    assert_eq!(all(&writing, "rubricBlock")[0].attribute("view"), Some("candidate scorer"), "a shared rubric is for students too");
}

#[test]
fn every_exercise_kind_comes_back_from_the_qti_package_as_it_was() {
    let root = root();
    let back = lesson_of_package(&to_qti_package(&root, "Verbs").unwrap()).unwrap();
    assert_eq!(back.title.as_deref(), Some("Verbs"));
    assert_eq!(back.left_out, Vec::<String>::new());
    let again = normalize(&back.xml).unwrap_or_else(|e| panic!("{e:?}\n{}", back.xml));
    assert_eq!(again.to_xml(), exercises_of(&root));
}

#[test]
fn the_cartridge_holds_the_page_and_a_quiz_in_the_cartridge_profile() {
    let f = files(&to_cartridge(&root(), "Verbs").unwrap());
    let manifest = xml(file(&f, "imsmanifest.xml"));
    assert_eq!(manifest.root_element().tag_name().namespace(), Some("http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"));
    assert_eq!(all(&manifest, "schemaversion")[0].text(), Some("1.1.0"));
    let types: Vec<&str> = all(&manifest, "resource").iter().map(|r| r.attribute("type").unwrap()).collect();
    assert_eq!(types, ["webcontent", "imsqti_xmlv1p2/imscc_xmlv1p1/assessment"]);
    let refs: Vec<&str> = all(&manifest, "item").iter().filter_map(|i| i.attribute("identifierref")).collect();
    assert_eq!(refs, ["res-page", "res-quiz"], "the outline has the page, then the quiz");
    for r in all(&manifest, "file") {
        file(&f, r.attribute("href").unwrap());
    }

    let page = file(&f, "lesson/index.html");
    assert!(page.contains("<h1>Verbs</h1>") && page.contains("We practise <strong>verbs</strong>"), "{page}");
    assert_eq!(page.matches("Verbs</h1>").count(), 1, "the title once, not again as the lesson's first heading: {page}");
    for hidden in ["Go slowly", "ran", "Because it rains", "goed"] {
        assert!(!page.contains(hidden), "{hidden} on the page: {page}");
    }
    assert!(page.contains("The exercises are in the quiz “Verbs: exercises”"));

    let quiz_text = file(&f, "quiz/assessment.xml");
    let quiz = xml(quiz_text);
    assert_eq!(quiz.root_element().tag_name().namespace(), Some("http://www.imsglobal.org/xsd/ims_qtiasiv1p2"));
    let items = all(&quiz, "item");
    let profile = |i: &roxmltree::Node| all_in(i, "fieldentry")[0].text().unwrap().to_string();
    let profiles: Vec<String> = items.iter().map(profile).collect();
    let count = |p: &str| profiles.iter().filter(|x| *x == p).count();
    // 3 blanks, 1 + 3 (the sequence's places) single choices, 1 multiple
    // response, 2 statements, 2 + 2 essays.
    assert_eq!((count("cc.fib.v0p1"), count("cc.multiple_choice.v0p1"), count("cc.multiple_response.v0p1"), count("cc.true_false.v0p1"), count("cc.essay.v0p1")), (3, 4, 1, 2, 4), "{profiles:?}");
    let b1 = items.iter().find(|i| i.attribute("ident") == Some("b1")).unwrap();
    let accepted: Vec<&str> = all_in(b1, "varequal").iter().filter_map(|v| v.text()).collect();
    assert_eq!(accepted, ["ran", "run", "Ran"], "the answer and each alternative score");
    let conditions = all_in(b1, "respcondition");
    assert_eq!(conditions.len(), 1, "every accepted answer in one condition, as Canvas writes it and Open edX reads it");
    assert_eq!(all_in(&conditions[0], "varequal").len(), 3);
    let t1 = items.iter().find(|i| i.attribute("ident") == Some("t1")).unwrap();
    assert_eq!(all_in(t1, "varequal")[0].text(), Some("t1-place-2"), "the item's place in the order is the right choice");
    assert!(!quiz_text.contains("Because it rains") && !quiz_text.contains("Clear"), "no model answer or rubric in the quiz students take");
}

fn all_in<'a, 'i>(n: &roxmltree::Node<'a, 'i>, name: &str) -> Vec<roxmltree::Node<'a, 'i>> {
    n.descendants().filter(|d| d.tag_name().name() == name).collect()
}

/// A package as another tool writes it: no test, items with their own
/// identifiers, the question text before the interaction, answers only in
/// a mapping, and kinds Margin does not have.
fn foreign_package() -> Vec<u8> {
    let manifest = r#"<?xml version="1.0"?>
<manifest xmlns="http://www.imsglobal.org/xsd/imscp_v1p1" identifier="M1"><organizations/><resources>
<resource identifier="R1" type="imsqti_item_xmlv2p1" href="capital.xml"><file href="capital.xml"/></resource>
<resource identifier="R2" type="imsqti_item_xmlv2p1" href="sub/gap.xml"><file href="sub/gap.xml"/></resource>
<resource identifier="R3" type="imsqti_item_xmlv2p1" href="match.xml"><file href="match.xml"/></resource>
<resource identifier="R4" type="imsqti_item_xmlv2p1" href="essay.xml"><file href="essay.xml"/></resource>
<resource identifier="R5" type="imsqti_item_xmlv2p1" href="tf.xml"><file href="tf.xml"/></resource>
</resources></manifest>"#;
    let capital = r#"<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="capital" title="Capital of France" adaptive="false" timeDependent="false">
<responseDeclaration identifier="RESPONSE" cardinality="single" baseType="identifier"><correctResponse><value>ChoiceB</value></correctResponse></responseDeclaration>
<itemBody><div><p>What is the capital of <i>France</i>?</p><img src="map.png" alt="a map"/></div>
<choiceInteraction responseIdentifier="RESPONSE" shuffle="true" maxChoices="1"><simpleChoice identifier="ChoiceA">Lyon</simpleChoice><simpleChoice identifier="ChoiceB">Paris</simpleChoice></choiceInteraction></itemBody></assessmentItem>"#;
    let gap = r#"<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="gap" title="Water" adaptive="false" timeDependent="false">
<responseDeclaration identifier="RESPONSE_1" cardinality="single" baseType="string"><mapping defaultValue="0"><mapEntry mapKey="H2O" mappedValue="2"/><mapEntry mapKey="h₂o" mappedValue="1"/><mapEntry mapKey="water" mappedValue="0"/></mapping></responseDeclaration>
<itemBody><p>Water is written
   <textEntryInteraction responseIdentifier="RESPONSE_1" expectedLength="5"/> in chemistry.</p></itemBody></assessmentItem>"#;
    let matching = r#"<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="match" title="Pairs" adaptive="false" timeDependent="false">
<itemBody><matchInteraction responseIdentifier="RESPONSE"/></itemBody></assessmentItem>"#;
    let essay = r#"<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="essay" title="Essay" adaptive="false" timeDependent="false">
<itemBody><extendedTextInteraction responseIdentifier="RESPONSE"><prompt>Describe your <b>holiday</b>.</prompt></extendedTextInteraction></itemBody></assessmentItem>"#;
    let tf = r#"<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="tf" title="Sun" adaptive="false" timeDependent="false">
<responseDeclaration identifier="RESPONSE" cardinality="single" baseType="identifier"><correctResponse><value>F</value></correctResponse></responseDeclaration>
<itemBody><choiceInteraction responseIdentifier="RESPONSE" maxChoices="1"><prompt>The sun is cold.</prompt><simpleChoice identifier="T">True</simpleChoice><simpleChoice identifier="F">False</simpleChoice></choiceInteraction></itemBody></assessmentItem>"#;
    zip(&[
        ("imsmanifest.xml".into(), manifest.into()),
        ("capital.xml".into(), capital.into()),
        ("sub/gap.xml".into(), gap.into()),
        ("match.xml".into(), matching.into()),
        ("essay.xml".into(), essay.into()),
        ("tf.xml".into(), tf.into()),
    ])
    .unwrap()
}

#[test]
fn a_foreign_item_set_comes_in_for_the_kinds_margin_has_and_says_what_did_not() {
    let bytes = foreign_package();
    assert!(is_package(&bytes));
    let back = lesson_of_package(&bytes).unwrap();
    let root = normalize(&back.xml).unwrap_or_else(|e| panic!("{e:?}\n{}", back.xml));
    let xml = root.to_xml();
    assert!(xml.contains(r#"<exercise id="ex-1" type="multiple-choice">"#), "{xml}");
    assert!(xml.contains(r#"<question id="capital">"#) && xml.contains("<prompt>What is the capital of <em>France</em>?</prompt>"), "the text before the interaction is the prompt: {xml}");
    assert!(xml.contains(r#"<option id="ChoiceB" correct="true">Paris</option>"#), "{xml}");
    assert!(xml.contains(r#"<p id="gap">Water is written <blank id="bl-"#) && xml.contains(r#" answer="H2O" alts="h₂o"/> in chemistry.</p>"#), "the best mapped answer, the others scoring above zero as alternatives; a generic response name is not kept as an id: {xml}");
    assert!(xml.contains(r#"type="short-answer""#) && xml.contains("<prompt>Describe your <strong>holiday</strong>.</prompt>"), "{xml}");
    assert!(xml.contains(r#"<statement id="tf" answer="false">The sun is cold.</statement>"#), "True and False choices are a statement: {xml}");
    assert_eq!(back.left_out.len(), 2, "{:?}", back.left_out);
    assert!(back.left_out[0].contains("Capital of France") && back.left_out[0].contains("pictures"), "{:?}", back.left_out);
    assert!(back.left_out[1].contains("“Pairs”: a matching question (matchInteraction)"), "{:?}", back.left_out);
}

#[test]
fn a_qti_3_item_reads_like_a_2_1_item() {
    let item = r#"<qti-assessment-item xmlns="http://www.imsglobal.org/xsd/imsqtiasi_v3p0" identifier="q-seasons" title="Seasons" adaptive="false" time-dependent="false">
<qti-response-declaration identifier="RESPONSE" cardinality="ordered" base-type="identifier"><qti-correct-response><qti-value>spring</qti-value><qti-value>summer</qti-value><qti-value>autumn</qti-value></qti-correct-response></qti-response-declaration>
<qti-item-body><qti-order-interaction response-identifier="RESPONSE"><qti-prompt>Put the seasons in order.</qti-prompt><qti-simple-choice identifier="summer">Summer</qti-simple-choice><qti-simple-choice identifier="autumn">Autumn</qti-simple-choice><qti-simple-choice identifier="spring">Spring</qti-simple-choice></qti-order-interaction></qti-item-body></qti-assessment-item>"#;
    let back = lesson_of_qti_xml(item).expect("a QTI item").unwrap();
    assert_eq!(back.title.as_deref(), Some("Seasons"));
    let xml = normalize(&back.xml).unwrap().to_xml();
    assert!(xml.contains(r#"<item id="summer" position="2">Summer</item>"#) && xml.contains(r#"<item id="spring" position="1">Spring</item>"#), "{xml}");
    assert!(lesson_of_qti_xml("<lesson><p>Hi</p></lesson>").is_none(), "Margin's own XML is not QTI");
}

#[test]
fn crafted_packages_cost_their_sender_a_refusal() {
    let refused = |bytes: Vec<u8>| lesson_of_package(&bytes).unwrap_err();
    assert!(refused(b"not a zip".to_vec()).contains("not a package"));
    let no_manifest = zip(&[("item.xml".into(), b"<assessmentItem/>".to_vec())]).unwrap();
    assert!(refused(no_manifest).contains("no imsmanifest.xml"));
    // A part that unpacks far beyond any quiz.
    let huge = zip(&[("imsmanifest.xml".into(), vec![b' '; 9 * 1024 * 1024])]).unwrap();
    assert!(huge.len() < 100_000, "deflated small");
    assert!(refused(huge).contains("far larger"));
    // A DTD (entities that expand) is never read.
    let laughs = r#"<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><manifest>&b;</manifest>"#;
    assert!(refused(zip(&[("imsmanifest.xml".into(), laughs.into())]).unwrap()).contains("cannot be read as XML"));
    // Nothing Margin has: a refusal that says what was there.
    let only_match = r#"<manifest><resources><resource type="imsqti_item_xmlv2p1" href="m.xml"/></resources></manifest>"#;
    let m = r#"<assessmentItem identifier="m" title="Pairs"><itemBody><matchInteraction responseIdentifier="R"/></itemBody></assessmentItem>"#;
    let why = refused(zip(&[("imsmanifest.xml".into(), only_match.into()), ("m.xml".into(), m.into())]).unwrap());
    assert!(why.starts_with("Nothing in this package") && why.contains("matching"), "{why}");
    // Deep nesting is cut, not followed to the end of the stack.
    let deep = format!("<assessmentItem identifier=\"d\" title=\"Deep\"><itemBody>{}{}</itemBody></assessmentItem>", "<div>".repeat(5_000), "</div>".repeat(5_000));
    assert!(lesson_of_qti_xml(&deep).is_some_and(|r| r.is_err()));
}

#[test]
fn a_cartridge_from_margin_comes_back_as_its_profile_allows() {
    let bytes = to_cartridge(&root(), "Verbs").unwrap();
    assert!(is_package(&bytes));
    let back = lesson_of_package(&bytes).unwrap();
    assert_eq!(back.title.as_deref(), Some("Verbs"), "the cartridge's own title, not the quiz's");
    assert_eq!(back.left_out, Vec::<String>::new());
    let xml = normalize(&back.xml).unwrap_or_else(|e| panic!("{e:?}\n{}", back.xml)).to_xml();
    // A question per gap, the asked gap in place, its accepted answers kept.
    assert!(xml.contains(r#"<blank id="b1" answer="ran" alts="run, Ran"/>"#) && xml.contains(r#"<blank id="b3" answer="went"/>"#), "{xml}");
    assert!(xml.contains(r#"<option id="o1" correct="true">went</option>"#) && xml.contains(r#"<question id="q3" multiple="true">"#), "{xml}");
    assert!(xml.contains(r#"<statement id="s1" answer="false">Fish can fly.</statement>"#), "{xml}");
    assert!(xml.contains(r#"<option id="t1-place-2" correct="true">2</option>"#), "a sequence comes back as the places it went out as: {xml}");
    assert!(xml.contains("<prompt>Write a letter.</prompt>"), "a writing task as an open question: {xml}");
    let kinds: Vec<&str> = xml.match_indices("type=\"").map(|(at, _)| xml[at + 6..].split('"').next().unwrap()).collect();
    assert_eq!(kinds, ["fill-blanks", "multiple-choice", "true-false", "multiple-choice", "short-answer"], "{xml}");
}

#[test]
fn a_canvas_classic_quiz_comes_in() {
    let quiz = r#"<?xml version="1.0" encoding="UTF-8"?>
<questestinterop xmlns="http://www.imsglobal.org/xsd/ims_qtiasiv1p2"><assessment ident="a1" title="Week 3 quiz"><section ident="root_section">
<item ident="i1" title="Question 1"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>multiple_choice_question</fieldentry></qtimetadatafield></qtimetadata></itemmetadata>
<presentation><material><mattext texttype="text/html">&lt;div&gt;&lt;p&gt;What is 2&amp;nbsp;+ 2?&lt;/p&gt;&lt;/div&gt;</mattext></material>
<response_lid ident="response1" rcardinality="Single"><render_choice>
<response_label ident="1001"><material><mattext texttype="text/plain">3</mattext></material></response_label>
<response_label ident="1002"><material><mattext texttype="text/plain">4</mattext></material></response_label></render_choice></response_lid></presentation>
<resprocessing><outcomes><decvar maxvalue="100" minvalue="0" varname="SCORE" vartype="Decimal"/></outcomes>
<respcondition continue="No"><conditionvar><varequal respident="response1">1002</varequal></conditionvar><setvar action="Set" varname="SCORE">100</setvar></respcondition></resprocessing></item>
<item ident="i2" title="Question 2"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>short_answer_question</fieldentry></qtimetadatafield></qtimetadata></itemmetadata>
<presentation><material><mattext texttype="text/html">&lt;p&gt;The capital of Italy is ____.&lt;br&gt;&lt;/p&gt;</mattext></material>
<response_str ident="response1" rcardinality="Single"><render_fib><response_label ident="answer1" rshuffle="No"/></render_fib></response_str></presentation>
<resprocessing><respcondition continue="No"><conditionvar><varequal respident="response1">Rome</varequal><varequal respident="response1">Roma</varequal></conditionvar><setvar action="Set" varname="SCORE">100</setvar></respcondition></resprocessing></item>
<item ident="i3" title="Question 3"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>matching_question</fieldentry></qtimetadatafield></qtimetadata></itemmetadata><presentation/></item>
</section></assessment></questestinterop>"#;
    let back = lesson_of_qti_xml(quiz).expect("QTI 1.2").unwrap();
    assert_eq!(back.title.as_deref(), Some("Week 3 quiz"));
    let xml = normalize(&back.xml).unwrap_or_else(|e| panic!("{e:?}\n{}", back.xml)).to_xml();
    assert!(xml.contains("<prompt>What is 2 + 2?</prompt>"), "{xml}");
    assert!(xml.contains(r#"correct="true">4</option>"#) && !xml.contains(r#"id="1002""#), "the right choice; an id that is not well formed is assigned anew: {xml}");
    assert!(xml.contains(r#"The capital of Italy is <blank id="i2" answer="Rome" alts="Roma"/>."#), "the gap where the underscores were: {xml}");
    assert_eq!(back.left_out, ["“Question 3”: a matching question (matching_question) has no exercise like it in Margin."]);
}

/// A QTI 1.2 quiz titled `title` of `n` multiple choice questions, numbered from `from`.
fn classic_quiz(title: &str, from: usize, n: usize) -> String {
    let items: String = (from..from + n)
        .map(|i| {
            format!(
                r#"<item ident="q{i}" title="Q{i}"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>cc_profile</fieldlabel><fieldentry>cc.multiple_choice.v0p1</fieldentry></qtimetadatafield></qtimetadata></itemmetadata>
<presentation><material><mattext texttype="text/plain">Question {i}</mattext></material><response_lid ident="r" rcardinality="Single"><render_choice>
<response_label ident="a{i}"><material><mattext>Yes</mattext></material></response_label><response_label ident="b{i}"><material><mattext>No</mattext></material></response_label></render_choice></response_lid></presentation>
<resprocessing><respcondition continue="No"><conditionvar><varequal respident="r">a{i}</varequal></conditionvar><setvar action="Set" varname="SCORE">100</setvar></respcondition></resprocessing></item>"#
            )
        })
        .collect();
    format!(r#"<questestinterop xmlns="http://www.imsglobal.org/xsd/ims_qtiasiv1p2"><assessment ident="a" title="{title}"><section ident="s">{items}</section></assessment></questestinterop>"#)
}

/// A manifest listing `hrefs` as QTI 1.2 quizzes, titled `title`.
fn classic_manifest(title: &str, hrefs: &[String]) -> String {
    let resources: String = hrefs.iter().enumerate().map(|(i, h)| format!(r#"<resource identifier="r{i}" type="imsqti_xmlv1p2/imscc_xmlv1p1/assessment"><file href="{h}"/></resource>"#)).collect();
    format!(r#"<manifest><metadata><lom><general><title><string>{title}</string></title></general></lom></metadata><resources>{resources}</resources></manifest>"#)
}

fn questions_in(imported: &Imported) -> usize {
    imported.xml.matches("<question").count()
}

#[test]
fn a_package_is_read_under_one_budget_however_often_it_names_a_part() {
    // One item named by 96 references (each once cost its own copy): read once.
    let item = r#"<assessmentItem identifier="one" title="One"><responseDeclaration identifier="R" cardinality="single"><correctResponse><value>A</value></correctResponse></responseDeclaration><itemBody><choiceInteraction responseIdentifier="R" maxChoices="1"><prompt>Pick</prompt><simpleChoice identifier="A">Yes</simpleChoice><simpleChoice identifier="B">No</simpleChoice></choiceInteraction></itemBody></assessmentItem>"#;
    let refs: String = (0..96).map(|i| format!(r#"<assessmentItemRef identifier="r{i}" href="item.xml"/>"#)).collect();
    let test = format!(r#"<assessmentTest identifier="t" title="Repeats"><testPart identifier="p"><assessmentSection identifier="s" title="S">{refs}</assessmentSection></testPart></assessmentTest>"#);
    let manifest = r#"<manifest><resources><resource identifier="t" type="imsqti_test_xmlv2p1" href="test.xml"/></resources></manifest>"#;
    let back = lesson_of_package(&zip(&[("imsmanifest.xml".into(), manifest.into()), ("test.xml".into(), test.into()), ("item.xml".into(), item.into())]).unwrap()).unwrap();
    assert_eq!(questions_in(&back), 1, "{}", back.xml);
    assert_eq!(back.left_out, ["The item item.xml is named more than once in the package; it came in once."]);

    // One quiz listed 300 times: read once.
    let hrefs: Vec<String> = (0..300).map(|_| "quiz.xml".to_string()).collect();
    let back = lesson_of_package(&zip(&[("imsmanifest.xml".into(), classic_manifest("Listed", &hrefs).into()), ("quiz.xml".into(), classic_quiz("Listed", 0, 2).into())]).unwrap()).unwrap();
    assert_eq!(questions_in(&back), 2, "{}", back.xml);

    // Items are counted across every quiz of the package, not per quiz.
    let names: Vec<String> = (0..3).map(|i| format!("quiz{i}.xml")).collect();
    let mut files = vec![("imsmanifest.xml".to_string(), classic_manifest("Many", &names).into_bytes())];
    files.extend(names.iter().enumerate().map(|(i, n)| (n.clone(), classic_quiz("Many", i * 200, 200).into_bytes())));
    let back = lesson_of_package(&zip(&files).unwrap()).unwrap();
    assert_eq!(questions_in(&back), MAX_ITEMS_READ, "{:?}", back.left_out);
    assert_eq!(back.left_out, [format!("Only the first {MAX_ITEMS_READ} questions came in: that is the most one import takes.")]);

    // Distinct parts that together unpack past the package's budget: refused, in words that name it.
    let padded = |i: usize| format!("{}{}", classic_quiz("Big", i, 1), " ".repeat(7 * 1024 * 1024)).into_bytes();
    let names: Vec<String> = (0..5).map(|i| format!("big{i}.xml")).collect();
    let mut files = vec![("imsmanifest.xml".to_string(), classic_manifest("Big", &names).into_bytes())];
    files.extend(names.iter().enumerate().map(|(i, n)| (n.clone(), padded(i))));
    let bytes = zip(&files).unwrap();
    assert!(bytes.len() < 1024 * 1024, "small on the wire: {}", bytes.len());
    let why = lesson_of_package(&bytes).unwrap_err();
    assert!(why.contains("unpacks to more than 32 MB"), "{why}");
}

#[test]
fn a_canvas_quiz_reads_as_written_under_the_quizs_own_title() {
    let quiz = r#"<questestinterop xmlns="http://www.imsglobal.org/xsd/ims_qtiasiv1p2"><assessment ident="a1" title="Reported speech"><section ident="root_section">
<item ident="i1" title="Question 1"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>true_false_question</fieldentry></qtimetadatafield></qtimetadata></itemmetadata>
<presentation><material><mattext texttype="text/html">&lt;p&gt;&amp;ldquo;we speak&amp;rdquo; is &amp;hellip; in the present&amp;nbsp;tense&lt;/p&gt;</mattext></material>
<response_lid ident="response1" rcardinality="Single"><render_choice>
<response_label ident="t"><material><mattext texttype="text/plain">True</mattext></material></response_label>
<response_label ident="f"><material><mattext texttype="text/plain">False</mattext></material></response_label></render_choice></response_lid></presentation>
<resprocessing><respcondition continue="No"><conditionvar><varequal respident="response1">t</varequal></conditionvar><setvar action="Set" varname="SCORE">100</setvar></respcondition></resprocessing></item>
<item ident="i2" title="Question 2"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>essay_question</fieldentry></qtimetadatafield></qtimetadata></itemmetadata>
<presentation><material><mattext texttype="text/html">&lt;p&gt;Say &amp;lsquo;why&amp;rsquo; &amp;mdash; &lt;b&gt;not well formed&lt;/p&gt;</mattext></material><response_str ident="response1" rcardinality="Single"><render_fib/></response_str></presentation></item>
</section></assessment></questestinterop>"#;
    let manifest = classic_manifest("QTI assessment generated by Canvas", &["quiz.xml".to_string()]);
    let back = lesson_of_package(&zip(&[("imsmanifest.xml".into(), manifest.into()), ("quiz.xml".into(), quiz.into())]).unwrap()).unwrap();
    assert_eq!(back.title.as_deref(), Some("Reported speech"), "the quiz's own title, not the tool's");
    let xml = normalize(&back.xml).unwrap_or_else(|e| panic!("{e:?}\n{}", back.xml)).to_xml();
    assert!(xml.contains("“we speak” is … in the present tense"), "{xml}");
    assert!(xml.contains("Say ‘why’ — not well formed"), "entities decoded in text that is not XML either: {xml} {:?}", back.left_out);
    assert!(!xml.contains("&amp;"), "{xml}");
}
