//! The lesson as an IMS Common Cartridge 1.1: a page (the lesson as students
//! see it, without its exercises) and a quiz (the exercises), one after the
//! other in the cartridge's outline. 1.1 because it is the version Moodle's
//! cartridge import reads as well as Canvas and Schoology; the quiz is QTI
//! 1.2 in the cartridge's profile (`cc_profile` on every item), the only
//! kind of quiz a cartridge may carry.
//!
//! The profile has no ordering question and one blank per fill-in question,
//! so: a paragraph with several blanks becomes one question per blank (the
//! paragraph shown with that blank marked and the others as gaps), and a
//! sequence one "which place?" question per item. Model answers and rubrics
//! stay out of the quiz (a platform would show them to students as
//! feedback); the QTI 2.1 package carries them for scorers.

use super::{accepted_answers, document, el, first, html_of, inline, inline_gapped, xml_tree::descendants, zip, Build, XSI};
use crate::{to_html, walk::exercise_head, Audience, Element, ExerciseKind, Node};

const CC_NS: &str = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1";
const CC_XSD: &str = "http://www.imsglobal.org/profile/cc/ccv1p1/ccv1p1_imscp_v1p2_v1p0.xsd";
const LOM_NS: &str = "http://ltsc.ieee.org/xsd/imsccv1p1/LOM/manifest";
const LOM_XSD: &str = "http://www.imsglobal.org/profile/cc/ccv1p1/LOM/ccv1p1_lommanifest_v1p0.xsd";
const QTI12_NS: &str = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2";
const QTI12_XSD: &str = "http://www.imsglobal.org/profile/cc/ccv1p1/ccv1p1_qtiasiv1p2p1_v1p0.xsd";
pub(super) const ASSESSMENT_TYPE: &str = "imsqti_xmlv1p2/imscc_xmlv1p1/assessment";
pub(super) const PAGE: &str = "lesson/index.html";
pub(super) const QUIZ: &str = "quiz/assessment.xml";

/// The lesson `root` titled `title` as a zipped cartridge (`.imscc`).
pub fn to_cartridge(root: &Element, title: &str) -> Result<Vec<u8>, String> {
    let quiz_title = format!("{title}: exercises");
    let questions = questions(root);
    let mut files = vec![("imsmanifest.xml".to_string(), document(&manifest(title, &quiz_title, !questions.is_empty()))), (PAGE.to_string(), page(root, title, &quiz_title).into_bytes())];
    if !questions.is_empty() {
        files.push((QUIZ.to_string(), document(&quiz(&quiz_title, questions))));
    }
    zip(&files)
}

fn manifest(title: &str, quiz_title: &str, has_quiz: bool) -> Element {
    let lom = el("lomimscc:lom").child(el("lomimscc:general").child(el("lomimscc:title").child(el("lomimscc:string").with_text(title))));
    let mut outline = el("item").with_attr("identifier", "margin-root").child(el("item").with_attr("identifier", "item-page").with_attr("identifierref", "res-page").child(el("title").with_text(title)));
    let mut resources = el("resources").child(el("resource").with_attr("identifier", "res-page").with_attr("type", "webcontent").with_attr("href", PAGE).child(el("file").with_attr("href", PAGE)));
    if has_quiz {
        outline = outline.child(el("item").with_attr("identifier", "item-quiz").with_attr("identifierref", "res-quiz").child(el("title").with_text(quiz_title)));
        resources = resources.child(el("resource").with_attr("identifier", "res-quiz").with_attr("type", ASSESSMENT_TYPE).child(el("file").with_attr("href", QUIZ)));
    }
    el("manifest")
        .with_attr("xmlns", CC_NS)
        .with_attr("xmlns:lomimscc", LOM_NS)
        .with_attr("xmlns:xsi", XSI)
        .with_attr("xsi:schemaLocation", format!("{CC_NS} {CC_XSD} {LOM_NS} {LOM_XSD}"))
        .with_attr("identifier", "margin-cartridge")
        .child(el("metadata").child(el("schema").with_text("IMS Common Cartridge")).child(el("schemaversion").with_text("1.1.0")).child(lom))
        .child(el("organizations").child(el("organization").with_attr("identifier", "margin-organization").with_attr("structure", "rooted-hierarchy").child(outline)))
        .child(resources)
}

/// The page: the lesson as students see it, without exercises (they are
/// in the quiz) and without teacher notes.
fn page(root: &Element, title: &str, quiz_title: &str) -> String {
    // The title is the page's heading: a first heading that says it again is left out.
    let mut reading = el("lesson");
    reading.attrs = root.attrs.clone();
    reading.children = crate::walk::blocks_under_title(root, title).filter(|e| e.name != "exercise" && e.name != "note").cloned().map(Node::Element).collect();
    let has_exercises = root.elements().any(|e| e.name == "exercise");
    let lang = root.attr("lang").unwrap_or("en");
    let closing = if has_exercises { format!("<p><em>The exercises are in the quiz “{}”.</em></p>", crate::escape_text(quiz_title)) } else { String::new() };
    format!(
        "<!DOCTYPE html>\n<html lang=\"{}\"><head><meta charset=\"utf-8\"><title>{}</title></head><body><h1>{}</h1>{}{closing}</body></html>\n",
        crate::escape_attr(lang),
        crate::escape_text(title),
        crate::escape_text(title),
        to_html(&reading, Audience::Student)
    )
}

/// One question of the cartridge's profile.
struct Question {
    id: String,
    title: String,
    profile: &'static str,
    /// The question's text, as HTML.
    text: String,
    answer: Answer,
}

enum Answer {
    /// Choices (id, HTML), the right ones' ids; several right ones: multiple response.
    Choice(Vec<(String, String)>, Vec<String>),
    /// A typed answer and its accepted alternatives.
    Typed(Vec<String>),
    /// Scored by the teacher.
    Essay,
}

fn questions(root: &Element) -> Vec<Question> {
    let mut out = Vec::new();
    for (n, ex) in root.elements().filter(|e| e.name == "exercise").enumerate() {
        let (kind, head) = exercise_head(n as u32 + 1, ex);
        let Some(kind) = kind else { continue };
        let intro = first(ex, "instructions").map(|i| format!("<p>{}</p>", html_of(inline_gapped(i)))).unwrap_or_default();
        let mut number = 0;
        let mut push = |id: &str, profile: &'static str, text: String, answer: Answer| {
            number += 1;
            out.push(Question { id: id.to_string(), title: format!("{head} ({number})"), profile, text: format!("{intro}{text}"), answer });
        };
        match kind {
            ExerciseKind::MultipleChoice => {
                for q in ex.elements().filter(|c| c.name == "question") {
                    let options: Vec<(String, String)> = q.elements().filter(|o| o.name == "option").map(|o| (o.id().unwrap_or_default().to_string(), html_of(inline_gapped(o)))).collect();
                    let right: Vec<String> = q.elements().filter(|o| o.name == "option" && o.attr("correct") == Some("true")).map(|o| o.id().unwrap_or_default().to_string()).collect();
                    let profile = if q.attr("multiple") == Some("true") { "cc.multiple_response.v0p1" } else { "cc.multiple_choice.v0p1" };
                    push(q.id().unwrap_or_default(), profile, prompt_html(q), Answer::Choice(options, right));
                }
            }
            ExerciseKind::TrueFalse => {
                for s in ex.elements().filter(|c| c.name == "statement") {
                    let id = s.id().unwrap_or_default();
                    let choices = vec![(format!("{id}-true"), "True".to_string()), (format!("{id}-false"), "False".to_string())];
                    let right = format!("{id}-{}", if s.attr("answer") == Some("true") { "true" } else { "false" });
                    push(id, "cc.true_false.v0p1", format!("<p>{}</p>", html_of(inline_gapped(s))), Answer::Choice(choices, vec![right]));
                }
            }
            ExerciseKind::FillBlanks => {
                for p in ex.elements().filter(|c| c.name == "p") {
                    let blanks: Vec<&Element> = descendants(p).into_iter().filter(|b| b.name == "blank").collect();
                    for (i, asked) in blanks.iter().enumerate() {
                        let asked_id = asked.id().unwrap_or_default();
                        let marked = inline(p, &mut |b| if b.id() == Some(asked_id) { Node::Element(el("strong").with_text(format!("[{}] _____", i + 1))) } else { Node::Text("_____".into()) });
                        let hint = asked.attr("hint").map(|h| format!(" ({})", crate::escape_text(h))).unwrap_or_default();
                        let text = format!("<p>{}</p><p>Fill in gap [{}]{hint}.</p>", html_of(marked), i + 1);
                        push(asked_id, "cc.fib.v0p1", text, Answer::Typed(accepted_answers(asked)));
                    }
                }
            }
            ExerciseKind::Sequencing => {
                let items: Vec<&Element> = ex.elements().filter(|c| c.name == "item").collect();
                let places: Vec<String> = (1..=items.len()).map(|p| p.to_string()).collect();
                for it in &items {
                    let id = it.id().unwrap_or_default();
                    let choices = places.iter().map(|p| (format!("{id}-place-{p}"), p.clone())).collect();
                    let right = format!("{id}-place-{}", it.attr("position").unwrap_or("1"));
                    let text = format!("<p>Put in order: which place does this take?</p><p>{}</p>", html_of(inline_gapped(it)));
                    push(id, "cc.multiple_choice.v0p1", text, Answer::Choice(choices, vec![right]));
                }
            }
            ExerciseKind::ShortAnswer => {
                for q in ex.elements().filter(|c| c.name == "question") {
                    push(q.id().unwrap_or_default(), "cc.essay.v0p1", prompt_html(q), Answer::Essay);
                }
            }
            ExerciseKind::Writing => {
                let id = super::write::writing_item_id(ex.id().unwrap_or_default());
                push(&id, "cc.essay.v0p1", prompt_html(ex), Answer::Essay);
            }
        }
    }
    out
}

fn prompt_html(holder: &Element) -> String {
    format!("<p>{}</p>", first(holder, "prompt").map(|p| html_of(inline_gapped(p))).unwrap_or_default())
}

fn field(label: &str, entry: &str) -> Element {
    el("qtimetadatafield").child(el("fieldlabel").with_text(label)).child(el("fieldentry").with_text(entry))
}

fn mattext(html: &str) -> Element {
    el("material").child(el("mattext").with_attr("texttype", "text/html").with_text(html))
}

fn quiz(title: &str, questions: Vec<Question>) -> Element {
    let items = questions.into_iter().map(item);
    let assessment = el("assessment")
        .with_attr("ident", "margin-quiz")
        .with_attr("title", title)
        .child(el("qtimetadata").child(field("cc_profile", "cc.exam.v0p1")).child(field("qmd_assessmenttype", "Examination")).child(field("cc_maxattempts", "unlimited")))
        .child(el("section").with_attr("ident", "root_section").children(items));
    el("questestinterop").with_attr("xmlns", QTI12_NS).with_attr("xmlns:xsi", XSI).with_attr("xsi:schemaLocation", format!("{QTI12_NS} {QTI12_XSD}")).child(assessment)
}

fn item(q: Question) -> Element {
    let meta = el("itemmetadata").child(el("qtimetadata").child(field("cc_profile", q.profile)).child(field("cc_weighting", "1")));
    let outcomes = el("outcomes").child(el("decvar").with_attr("varname", "SCORE").with_attr("vartype", "Decimal").with_attr("minvalue", "0").with_attr("maxvalue", "100"));
    let full = || el("setvar").with_attr("varname", "SCORE").with_attr("action", "Set").with_text("100");
    let varequal = |v: &str| el("varequal").with_attr("respident", "response1").with_text(v);
    let (response, processing) = match q.answer {
        Answer::Choice(choices, right) => {
            let multiple = q.profile == "cc.multiple_response.v0p1";
            let labels = choices.iter().map(|(id, html)| el("response_label").with_attr("ident", id.as_str()).child(mattext(html)));
            let lid = el("response_lid").with_attr("ident", "response1").with_attr("rcardinality", if multiple { "Multiple" } else { "Single" }).child(el("render_choice").children(labels));
            let condition = if multiple {
                let all = choices.iter().map(|(id, _)| if right.contains(id) { varequal(id) } else { el("not").child(varequal(id)) });
                el("conditionvar").child(el("and").children(all))
            } else {
                el("conditionvar").child(varequal(right.first().map(String::as_str).unwrap_or_default()))
            };
            (lid, Some(el("resprocessing").child(outcomes).child(el("respcondition").with_attr("continue", "No").child(condition).child(full()))))
        }
        Answer::Typed(accepted) => {
            let str_ = el("response_str").with_attr("ident", "response1").with_attr("rcardinality", "Single").child(el("render_fib").child(el("response_label").with_attr("ident", "answer1")));
            // Every accepted answer in one condition, as Canvas writes it:
            // Open edX's importer (cc2olx) reads only the first condition.
            let answers = accepted.iter().map(|a| varequal(a).with_attr("case", "No"));
            let condition = el("respcondition").with_attr("continue", "No").child(el("conditionvar").children(answers)).child(full());
            (str_, Some(el("resprocessing").child(outcomes).child(condition)))
        }
        Answer::Essay => (el("response_str").with_attr("ident", "response1").with_attr("rcardinality", "Single").child(el("render_fib").child(el("response_label").with_attr("ident", "answer1").with_attr("rshuffle", "No"))), None),
    };
    let mut item = el("item").with_attr("ident", q.id).with_attr("title", q.title).child(meta).child(el("presentation").child(mattext(&q.text)).child(response));
    if let Some(p) = processing {
        item = item.child(p);
    }
    item
}
