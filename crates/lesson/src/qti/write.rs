//! The QTI 2.1 package: `imsmanifest.xml`, `assessment.xml` (one section
//! per exercise, in lesson order, its instructions as the section's rubric
//! block) and one item per question, statement, paragraph of blanks,
//! sequence or writing task under `items/`.
//!
//! The lesson's ids travel as QTI identifiers (section = exercise, item =
//! question, statement or paragraph, choice = option or sequence item,
//! text entry = blank, extended text of a writing task = its writing area)
//! and each item's `label` names its exercise kind, so that a package made
//! here reads back as the same exercises (`read`). Headings, paragraphs and
//! notes outside exercises are not assessment content and stay out (the
//! cartridge carries them on its page); so do standards codes, which only
//! mean something in the school's own frameworks.

use super::{accepted_answers, document, el, first, inline, inline_gapped, zip, Build, XSI};
use crate::{walk::exercise_head, Element, ExerciseKind, Node};

pub(super) const NS: &str = "http://www.imsglobal.org/xsd/imsqti_v2p1";
const XSD: &str = "http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_v2p1.xsd";
const CP_NS: &str = "http://www.imsglobal.org/xsd/imscp_v1p1";
const CP_XSD: &str = "http://www.imsglobal.org/xsd/imscp_v1p1.xsd";
const MATCH_CORRECT: &str = "http://www.imsglobal.org/question/qti_v2p1/rptemplates/match_correct";
/// The label that marks an item as one of Margin's exercise kinds.
pub(super) const LABEL_PREFIX: &str = "margin:";
/// Where a model answer and a rubric are told apart in a rubric block.
pub(super) const ANSWER_CLASS: &str = "margin-answer";
pub(super) const RUBRIC_CLASS: &str = "margin-rubric";
pub(super) const POINTS_CLASS: &str = "margin-points";
/// The same gap for every blank, so that none gives its answer's length away.
const GAP_CHARS: &str = "12";
/// Lines for a short answer (as on paper).
const SHORT_ANSWER_LINES: &str = "3";

/// One exercise as a section of the test.
pub(super) struct Section {
    pub id: String,
    pub title: String,
    pub instructions: Option<Element>,
    pub items: Vec<Item>,
}

pub(super) struct Item {
    pub id: String,
    pub xml: Element,
}

/// The lesson `root` titled `title` as a zipped QTI 2.1 package.
pub fn to_qti_package(root: &Element, title: &str) -> Result<Vec<u8>, String> {
    let sections = sections(root);
    let mut files = vec![("imsmanifest.xml".to_string(), document(&manifest(&sections))), ("assessment.xml".to_string(), document(&test(title, &sections)))];
    for item in sections.iter().flat_map(|s| &s.items) {
        files.push((href(&item.id), document(&item.xml)));
    }
    zip(&files)
}

fn href(item: &str) -> String {
    format!("items/{item}.xml")
}

/// Every exercise of the lesson as a section.
pub(super) fn sections(root: &Element) -> Vec<Section> {
    let mut out = Vec::new();
    for (n, ex) in root.elements().filter(|e| e.name == "exercise").enumerate() {
        let (kind, head) = exercise_head(n as u32 + 1, ex);
        let Some(kind) = kind else { continue };
        let id = ex.id().unwrap_or_default().to_string();
        let title = ex.attr("title").map(str::to_string).unwrap_or_else(|| kind.label().to_string());
        let mut items = Vec::new();
        let mut number = 0;
        let mut next_title = || {
            number += 1;
            format!("{head} ({number})")
        };
        match kind {
            ExerciseKind::MultipleChoice => {
                for q in ex.elements().filter(|c| c.name == "question") {
                    items.push(choice_question(q, next_title()));
                }
            }
            ExerciseKind::TrueFalse => {
                for s in ex.elements().filter(|c| c.name == "statement") {
                    items.push(statement(s, next_title()));
                }
            }
            ExerciseKind::FillBlanks => {
                for p in ex.elements().filter(|c| c.name == "p") {
                    items.push(blanks(p, next_title()));
                }
            }
            ExerciseKind::Sequencing => items.push(sequence(ex, &id, next_title())),
            ExerciseKind::ShortAnswer => {
                for q in ex.elements().filter(|c| c.name == "question") {
                    items.push(open_question(q, next_title()));
                }
            }
            ExerciseKind::Writing => items.push(writing(ex, &id, next_title())),
        }
        out.push(Section { id, title, instructions: first(ex, "instructions").cloned(), items });
    }
    out
}

fn assessment_item(id: &str, title: String, kind: ExerciseKind) -> Element {
    el("assessmentItem")
        .with_attr("xmlns", NS)
        .with_attr("xmlns:xsi", XSI)
        .with_attr("xsi:schemaLocation", format!("{NS} {XSD}"))
        .with_attr("identifier", id)
        .with_attr("title", title)
        .with_attr("label", format!("{LABEL_PREFIX}{}", kind.name()))
        .with_attr("adaptive", "false")
        .with_attr("timeDependent", "false")
}

fn response(id: &str, cardinality: &str, base: &str) -> Element {
    el("responseDeclaration").with_attr("identifier", id).with_attr("cardinality", cardinality).with_attr("baseType", base)
}

fn correct(values: impl IntoIterator<Item = String>) -> Element {
    el("correctResponse").children(values.into_iter().map(|v| el("value").with_text(v)))
}

/// `SCORE`, starting at 0; `most` points when they are known.
fn score(most: Option<u32>) -> Element {
    let s = el("outcomeDeclaration").with_attr("identifier", "SCORE").with_attr("cardinality", "single").with_attr("baseType", "float");
    let s = match most {
        Some(m) => s.with_attr("normalMaximum", m.to_string()),
        None => s,
    };
    s.child(el("defaultValue").child(el("value").with_text("0")))
}

fn match_correct() -> Element {
    el("responseProcessing").with_attr("template", MATCH_CORRECT)
}

fn prompt_of(holder: &Element) -> Element {
    el("prompt").nodes(first(holder, "prompt").map(inline_gapped).unwrap_or_default())
}

fn simple_choice(id: &str, content: Vec<Node>) -> Element {
    el("simpleChoice").with_attr("identifier", id).nodes(content)
}

fn choice_question(q: &Element, title: String) -> Item {
    let multiple = q.attr("multiple") == Some("true");
    let options: Vec<&Element> = q.elements().filter(|c| c.name == "option").collect();
    let right = options.iter().filter(|o| o.attr("correct") == Some("true")).map(|o| o.id().unwrap_or_default().to_string()).collect();
    let choices = options.iter().map(|o| simple_choice(o.id().unwrap_or_default(), inline_gapped(o))).collect();
    choice_item(q, title, ExerciseKind::MultipleChoice, multiple, prompt_of(q), choices, right)
}

fn statement(s: &Element, title: String) -> Item {
    let answer = if s.attr("answer") == Some("true") { "true" } else { "false" };
    let choices = vec![simple_choice("true", vec![Node::Text("True".into())]), simple_choice("false", vec![Node::Text("False".into())])];
    choice_item(s, title, ExerciseKind::TrueFalse, false, el("prompt").nodes(inline_gapped(s)), choices, vec![answer.to_string()])
}

/// An item of one choice interaction (several choices when `multiple`),
/// scored by matching the right choices exactly.
fn choice_item(of: &Element, title: String, kind: ExerciseKind, multiple: bool, prompt: Element, choices: Vec<Element>, right: Vec<String>) -> Item {
    let id = of.id().unwrap_or_default();
    let interaction = el("choiceInteraction")
        .with_attr("responseIdentifier", "RESPONSE")
        .with_attr("shuffle", "false")
        .with_attr("maxChoices", if multiple { "0" } else { "1" })
        .child(prompt)
        .children(choices);
    let xml = assessment_item(id, title, kind)
        .child(response("RESPONSE", if multiple { "multiple" } else { "single" }, "identifier").child(correct(right)))
        .child(score(None))
        .child(el("itemBody").child(interaction))
        .child(match_correct());
    Item { id: id.to_string(), xml }
}

/// A paragraph of blanks: one text entry per blank, its answer and every
/// accepted alternative mapped to a point (case and spacing aside, as
/// Margin's own check), the score their sum.
fn blanks(p: &Element, title: String) -> Item {
    let id = p.id().unwrap_or_default();
    let mut declarations = Vec::new();
    let mut ids = Vec::new();
    let text = inline(p, &mut |b| {
        let bid = b.id().unwrap_or_default().to_string();
        let answer = b.attr("answer").unwrap_or_default().to_string();
        let mapping = el("mapping").with_attr("defaultValue", "0").with_attr("lowerBound", "0").with_attr("upperBound", "1").children(
            accepted_answers(b).into_iter().map(|a| el("mapEntry").with_attr("mapKey", a).with_attr("mappedValue", "1").with_attr("caseSensitive", "false")),
        );
        declarations.push(response(&bid, "single", "string").child(correct([answer])).child(mapping));
        let mut entry = el("textEntryInteraction").with_attr("responseIdentifier", bid.as_str()).with_attr("expectedLength", GAP_CHARS);
        if let Some(hint) = b.attr("hint") {
            entry = entry.with_attr("placeholderText", hint);
        }
        ids.push(bid);
        Node::Element(entry)
    });
    let mut xml = assessment_item(id, title, ExerciseKind::FillBlanks).children(declarations).child(score(Some(ids.len() as u32))).child(el("itemBody").child(el("p").nodes(text)));
    if !ids.is_empty() {
        let sum = el("sum").children(ids.iter().map(|b| el("mapResponse").with_attr("identifier", b.as_str())));
        xml = xml.child(el("responseProcessing").child(el("setOutcomeValue").with_attr("identifier", "SCORE").child(sum)));
    }
    Item { id: id.to_string(), xml }
}

/// What a sequencing exercise's one item adds to the exercise's id (read
/// back to give the exercise its id again).
pub(super) const SEQUENCE_SUFFIX: &str = "-order";
/// What a writing exercise's one item adds to the exercise's id.
pub(super) const WRITING_SUFFIX: &str = "-writing";

/// The item id of a sequencing exercise's one item.
pub(super) fn sequence_item_id(exercise: &str) -> String {
    format!("{exercise}{SEQUENCE_SUFFIX}")
}

/// The item id of a writing exercise's one item.
pub(super) fn writing_item_id(exercise: &str) -> String {
    format!("{exercise}{WRITING_SUFFIX}")
}

fn sequence(ex: &Element, exercise: &str, title: String) -> Item {
    let id = sequence_item_id(exercise);
    let items: Vec<&Element> = ex.elements().filter(|c| c.name == "item").collect();
    let mut order: Vec<(u32, String)> = items.iter().map(|i| (i.attr("position").and_then(|p| p.parse().ok()).unwrap_or(0), i.id().unwrap_or_default().to_string())).collect();
    order.sort();
    let interaction = el("orderInteraction")
        .with_attr("responseIdentifier", "RESPONSE")
        .with_attr("shuffle", "false")
        .child(el("prompt").with_text("Put these in the right order."))
        .children(items.iter().map(|i| simple_choice(i.id().unwrap_or_default(), inline_gapped(i))));
    let xml = assessment_item(&id, title, ExerciseKind::Sequencing)
        .child(response("RESPONSE", "ordered", "identifier").child(correct(order.into_iter().map(|(_, i)| i))))
        .child(score(None))
        .child(el("itemBody").child(interaction))
        .child(match_correct());
    Item { id, xml }
}

fn open_question(q: &Element, title: String) -> Item {
    let id = q.id().unwrap_or_default();
    let interaction = el("extendedTextInteraction").with_attr("responseIdentifier", "RESPONSE").with_attr("expectedLines", SHORT_ANSWER_LINES).child(prompt_of(q));
    let mut body = el("itemBody").child(interaction);
    if let Some(a) = first(q, "answer") {
        body = body.child(el("rubricBlock").with_attr("view", "scorer").with_attr("class", ANSWER_CLASS).child(el("p").nodes(inline_gapped(a))));
    }
    let rubric = first(q, "rubric");
    if let Some(r) = rubric {
        body = body.child(rubric_block(r));
    }
    let most = rubric.map(|r| crate::rubric::Rubric::from_element(r).max_points());
    let xml = assessment_item(id, title, ExerciseKind::ShortAnswer).child(response("RESPONSE", "single", "string")).child(score(most)).child(body);
    Item { id: id.to_string(), xml }
}

/// A writing task: the extended text answers for its writing area (its id,
/// lines and placeholder), or for `RESPONSE` when it has none.
fn writing(ex: &Element, exercise: &str, title: String) -> Item {
    let id = writing_item_id(exercise);
    let area = first(ex, "writing-area");
    let mut interaction = el("extendedTextInteraction").with_attr("responseIdentifier", area.and_then(Element::id).unwrap_or("RESPONSE"));
    if let Some(lines) = area.and_then(|a| a.attr("lines")) {
        interaction = interaction.with_attr("expectedLines", lines);
    }
    if let Some(placeholder) = area.and_then(|a| a.attr("placeholder")) {
        interaction = interaction.with_attr("placeholderText", placeholder);
    }
    let mut body = el("itemBody").child(interaction.child(prompt_of(ex)));
    let rubric = first(ex, "rubric");
    if let Some(r) = rubric {
        body = body.child(rubric_block(r));
    }
    let most = rubric.map(|r| crate::rubric::Rubric::from_element(r).max_points());
    let responding = area.and_then(Element::id).unwrap_or("RESPONSE");
    let xml = assessment_item(&id, title, ExerciseKind::Writing).child(response(responding, "single", "string")).child(score(most)).child(body);
    Item { id, xml }
}

/// A rubric as a table in a rubric block: a row per criterion, a cell per
/// level with its points first. Scorers see it; candidates too when it is shared.
fn rubric_block(r: &Element) -> Element {
    let shared = r.attr("shared") == Some("true");
    let rows = r.elements().filter(|c| c.name == "criterion").map(|c| {
        let levels = c.elements().filter(|l| l.name == "level").map(|l| {
            let points = el("span").with_attr("class", POINTS_CLASS).with_text(l.attr("points").unwrap_or("0"));
            el("td").child(points).with_text(" ").nodes(inline_gapped(l))
        });
        with_id(el("tr"), c).child(el("th").with_text(c.attr("name").unwrap_or_default())).children(levels)
    });
    let table = with_id(el("table"), r).with_attr("class", RUBRIC_CLASS).child(el("tbody").children(rows));
    el("rubricBlock").with_attr("view", if shared { "candidate scorer" } else { "scorer" }).child(table)
}

fn with_id(e: Element, of: &Element) -> Element {
    match of.id() {
        Some(id) => e.with_attr("id", id),
        None => e,
    }
}

fn test(title: &str, sections: &[Section]) -> Element {
    let parts = sections.iter().map(|s| {
        let mut section = el("assessmentSection").with_attr("identifier", s.id.as_str()).with_attr("title", s.title.as_str()).with_attr("visible", "true");
        if let Some(i) = &s.instructions {
            section = section.child(el("rubricBlock").with_attr("view", "candidate").child(el("p").nodes(inline_gapped(i))));
        }
        section.children(s.items.iter().map(|i| el("assessmentItemRef").with_attr("identifier", i.id.as_str()).with_attr("href", href(&i.id))))
    });
    let total = el("setOutcomeValue").with_attr("identifier", "SCORE").child(el("sum").child(el("testVariables").with_attr("variableIdentifier", "SCORE")));
    el("assessmentTest")
        .with_attr("xmlns", NS)
        .with_attr("xmlns:xsi", XSI)
        .with_attr("xsi:schemaLocation", format!("{NS} {XSD}"))
        .with_attr("identifier", "margin-test")
        .with_attr("title", title)
        .child(el("outcomeDeclaration").with_attr("identifier", "SCORE").with_attr("cardinality", "single").with_attr("baseType", "float"))
        .child(el("testPart").with_attr("identifier", "margin-part").with_attr("navigationMode", "nonlinear").with_attr("submissionMode", "simultaneous").children(parts))
        .child(el("outcomeProcessing").child(total))
}

fn manifest(sections: &[Section]) -> Element {
    let items: Vec<&Item> = sections.iter().flat_map(|s| &s.items).collect();
    let res = |id: &str| format!("res-{id}");
    let test = el("resource")
        .with_attr("identifier", "res-margin-test")
        .with_attr("type", "imsqti_test_xmlv2p1")
        .with_attr("href", "assessment.xml")
        .child(el("file").with_attr("href", "assessment.xml"))
        .children(items.iter().map(|i| el("dependency").with_attr("identifierref", res(&i.id))));
    let item_resources = items.iter().map(|i| {
        el("resource").with_attr("identifier", res(&i.id)).with_attr("type", "imsqti_item_xmlv2p1").with_attr("href", href(&i.id)).child(el("file").with_attr("href", href(&i.id)))
    });
    el("manifest")
        .with_attr("xmlns", CP_NS)
        .with_attr("xmlns:xsi", XSI)
        .with_attr("xsi:schemaLocation", format!("{CP_NS} {CP_XSD}"))
        .with_attr("identifier", "margin-qti-package")
        .child(el("metadata").child(el("schema").with_text("QTIv2.1 Package")).child(el("schemaversion").with_text("1.0.0")))
        .child(el("organizations"))
        .child(el("resources").child(test).children(item_resources))
}
