//! QTI items turned into exercises: each item's interaction read as the
//! kind of exercise Margin has (choice, text entry, order, extended text),
//! items of one kind in a row gathered into one exercise, and what cannot
//! come in named in a sentence (`Reader::left_out`). One cohesive thing, the
//! item reader, which is why it runs past 400 lines.

use std::collections::HashSet;

use super::{
    budget::{over_budget, past_items},
    el, first,
    inline::{has_rubric_table, inline_of, inline_with, prompt, text_blocks, tidy, tidy_text},
    write,
    xml_tree::{descendants, parse},
    Build,
};
use crate::archive::{Budgeted, PartError};
use crate::{schema::valid_id, Element, ExerciseKind, Node};

/// A lesson read from a package: its exercises as lesson XML (ids that could
/// not be kept are left for `normalize` to assign), a title if the package
/// has one, and what could not be brought in.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Imported {
    pub title: Option<String>,
    pub xml: String,
    pub left_out: Vec<String>,
}

impl Imported {
    /// The lesson under a heading with `title`, as every new lesson starts.
    pub fn titled(&self, title: &str) -> String {
        match crate::parse(&self.xml) {
            Ok(mut root) => {
                root.children.insert(0, Node::Element(el("h1").with_text(title)));
                root.to_xml()
            }
            Err(_) => self.xml.clone(),
        }
    }
}

/// A section of the test, or a lone item.
#[derive(Default)]
pub(super) struct Group {
    pub id: Option<String>,
    pub title: Option<String>,
    pub instructions: Option<Vec<Node>>,
    pub items: Vec<Element>,
}

#[derive(Default)]
pub(super) struct Reader {
    pub(super) title: Option<String>,
    pub(super) left_out: Vec<String>,
    used: HashSet<String>,
    /// Items named more than once, told once each.
    named_again: HashSet<String>,
}

/// What one item brings: elements to put in an exercise of a kind
/// (questions, statements, paragraphs, items, …), and the exercise's id
/// when the item names it.
pub(super) struct Part(ExerciseKind, Vec<Element>, Option<String>);

impl Reader {
    /// The next item of the package, at `path` (named `href`): `None`, and
    /// a line in `left_out`, when it is missing, not XML, named before (it
    /// comes in once), or past `MAX_ITEMS`; an error when the package's
    /// budget is spent.
    pub(super) fn next_part(&mut self, zip: &mut Budgeted, path: &str, href: &str, items_left: &mut usize) -> Result<Option<Element>, String> {
        if *items_left == 0 {
            past_items(&mut self.left_out);
            return Ok(None);
        }
        let item = match zip.part(path) {
            Ok(text) => parse(&text),
            Err(PartError::Again) => {
                if self.named_again.insert(path.to_string()) {
                    self.left_out.push(format!("The item {href} is named more than once in the package; it came in once."));
                }
                return Ok(None);
            }
            Err(e @ (PartError::TooLarge | PartError::Spent)) => return Err(over_budget(e)),
            Err(_) => None,
        };
        if item.is_none() {
            self.left_out.push(format!("The item {href} is missing from the package or is not XML."));
        }
        *items_left -= 1;
        Ok(item)
    }

    pub(super) fn finish(mut self, groups: Vec<Group>) -> Result<Imported, String> {
        let mut exercises: Vec<Element> = Vec::new();
        for group in groups {
            let mut first_of_group = true;
            let mut last_kind: Option<ExerciseKind> = None;
            for item in &group.items {
                let Some(Part(kind, parts, item_exercise)) = self.item(item) else {
                    last_kind = None;
                    continue;
                };
                let joins = last_kind == Some(kind) && !matches!(kind, ExerciseKind::Sequencing | ExerciseKind::Writing);
                if !joins {
                    let mut ex = el("exercise");
                    let id = if first_of_group { group.id.clone() } else { None }.or(item_exercise);
                    if let Some(id) = id.and_then(|i| self.keep(&i)) {
                        ex = ex.with_attr("id", id);
                    }
                    ex = ex.with_attr("type", kind.name());
                    if let Some(t) = group.title.as_deref().map(tidy_text).filter(|t| first_of_group && !t.is_empty() && t.as_str() != kind.label()) {
                        ex = ex.with_attr("title", t.chars().take(120).collect::<String>());
                    }
                    if first_of_group {
                        if let Some(i) = group.instructions.clone().filter(|i| !i.is_empty()) {
                            ex = ex.child(el("instructions").nodes(i));
                        }
                    }
                    exercises.push(ex);
                    first_of_group = false;
                }
                if let Some(ex) = exercises.last_mut() {
                    ex.children.extend(parts.into_iter().map(Node::Element));
                }
                last_kind = Some(kind);
            }
        }
        // Only exercises the lesson format takes: one that is not (a crafted
        // rubric, a sequence of gaps with no gap) loses its rubrics, or is left out.
        let exercises: Vec<Element> = exercises.into_iter().filter_map(|ex| self.valid(ex)).collect();
        if exercises.is_empty() {
            let why = if self.left_out.is_empty() { String::new() } else { format!(" {}", self.left_out.join(" ")) };
            return Err(format!("Nothing in this package is a kind of question Margin has, so no lesson was made.{why}"));
        }
        let root = el("lesson").children(exercises);
        Ok(Imported { title: self.title.map(|t| tidy_text(&t)).filter(|t| !t.is_empty()), xml: root.to_xml(), left_out: self.left_out })
    }

    /// `ex` as the format takes it: as it is, else without its rubrics,
    /// else `None` and a sentence saying why.
    fn valid(&mut self, ex: Element) -> Option<Element> {
        let check = |e: &Element| crate::normalize(&el("lesson").child(e.clone()).to_xml()).err();
        let Some(errors) = check(&ex) else { return Some(ex) };
        let kind = ex.attr("type").and_then(ExerciseKind::from_name).map(|k| k.label()).unwrap_or("An exercise");
        let mut plain = ex.clone();
        drop_rubrics(&mut plain);
        if plain != ex && check(&plain).is_none() {
            self.left_out.push(format!("{kind}: a rubric could not be read, so it was left out; the questions came in."));
            return Some(plain);
        }
        let why = errors.first().map(|e| e.message.clone()).unwrap_or_default();
        self.left_out.push(format!("{kind}: could not be made into a Margin exercise ({why}), so it was left out."));
        None
    }

    /// `id` if it is well formed and not yet taken (then taken).
    fn keep(&mut self, id: &str) -> Option<String> {
        (valid_id(id) && self.used.insert(id.to_string())).then(|| id.to_string())
    }

    fn with_id(&mut self, e: Element, id: Option<&str>) -> Element {
        match id.and_then(|i| self.keep(i)) {
            Some(i) => e.with_attr("id", i),
            None => e,
        }
    }

    fn item(&mut self, item: &Element) -> Option<Part> {
        let name = item.attr("title").map(tidy_text).filter(|t| !t.is_empty()).or_else(|| ident(item).map(str::to_string)).unwrap_or_else(|| "An item".into());
        if item.name != "assessmentItem" {
            self.left_out.push(format!("“{name}” is not a QTI item."));
            return None;
        }
        let label = item.attr("label").and_then(|l| l.strip_prefix(write::LABEL_PREFIX)).and_then(ExerciseKind::from_name);
        let Some(body) = first(item, "itemBody") else {
            self.left_out.push(format!("“{name}” has no question in it."));
            return None;
        };
        let interactions: Vec<&Element> = descendants(body).into_iter().filter(|e| e.name.ends_with("Interaction")).collect();
        if let Some(other) = interactions.iter().find(|i| !matches!(i.name.as_str(), "choiceInteraction" | "orderInteraction" | "textEntryInteraction" | "extendedTextInteraction")) {
            self.left_out.push(format!("“{name}”: {} has no exercise like it in Margin.", interaction_words(&other.name)));
            return None;
        }
        let kinds: HashSet<&str> = interactions.iter().map(|i| i.name.as_str()).collect();
        if kinds.len() > 1 || (interactions.len() > 1 && !kinds.contains("textEntryInteraction")) {
            self.left_out.push(format!("“{name}” asks several questions of different kinds in one item, which Margin cannot split."));
            return None;
        }
        let pictures = descendants(body).iter().any(|e| matches!(e.name.as_str(), "img" | "object" | "math" | "audio" | "video" | "picture" | "figure"));
        let part = match interactions.first().map(|i| (i.name.as_str(), *i)) {
            Some(("choiceInteraction", i)) => self.choice(item, body, i, label, &name),
            Some(("orderInteraction", i)) => self.order(item, i, &name),
            Some(("extendedTextInteraction", i)) => self.open(item, body, i, label, &name),
            Some(_) => self.blanks(item, body, &name),
            None if label == Some(ExerciseKind::FillBlanks) => self.blanks(item, body, &name),
            None => {
                self.left_out.push(format!("“{name}” asks nothing (it has no interaction), so it was left out."));
                None
            }
        };
        if pictures && part.is_some() {
            self.left_out.push(format!("“{name}”: its pictures or formulas were left out; the text came in."));
        }
        part
    }

    fn choice(&mut self, item: &Element, body: &Element, i: &Element, label: Option<ExerciseKind>, name: &str) -> Option<Part> {
        let right = right_answers(item, i.attr("responseIdentifier").unwrap_or("RESPONSE"));
        let is_right = |c: &Element| ident(c).is_some_and(|id| right.iter().any(|r| r == id));
        let choices: Vec<&Element> = i.elements().filter(|c| c.name == "simpleChoice").collect();
        let prompt = prompt(body, i);
        let words: Vec<String> = choices.iter().map(|c| tidy_text(&c.text()).to_lowercase()).collect();
        let true_false = label == Some(ExerciseKind::TrueFalse) || (label.is_none() && (words == ["true", "false"] || words == ["false", "true"]));
        if prompt.is_empty() {
            self.left_out.push(format!("“{name}” has no question text, so it was left out."));
            return None;
        }
        if true_false && choices.len() == 2 {
            let Some(answer) = choices.iter().find(|c| is_right(c)).map(|c| tidy_text(&c.text()).to_lowercase() == "true") else {
                self.left_out.push(format!("“{name}”: neither True nor False is marked right, so it was left out."));
                return None;
            };
            let s = self.with_id(el("statement"), ident(item)).with_attr("answer", if answer { "true" } else { "false" }).nodes(prompt);
            return Some(Part(ExerciseKind::TrueFalse, vec![s], None));
        }
        if choices.len() < 2 || choices.iter().any(|c| tidy_text(&c.text()).is_empty()) {
            self.left_out.push(format!("“{name}” needs at least two choices with text, so it was left out."));
            return None;
        }
        let correct = choices.iter().filter(|c| is_right(c)).count();
        if correct == 0 {
            self.left_out.push(format!("“{name}”: no choice is marked right, so it was left out."));
            return None;
        }
        let multiple = correct > 1 || i.attr("maxChoices").is_some_and(|m| m != "1") && cardinality(item, i.attr("responseIdentifier").unwrap_or("RESPONSE")) == Some("multiple");
        let mut q = self.with_id(el("question"), ident(item));
        if multiple {
            q = q.with_attr("multiple", "true");
        }
        q = q.child(el("prompt").nodes(prompt));
        for c in choices {
            let marked = is_right(c);
            let mut o = self.with_id(el("option"), ident(c));
            if marked {
                o = o.with_attr("correct", "true");
            }
            q = q.child(o.nodes(tidy(inline_of(c))));
        }
        Some(Part(ExerciseKind::MultipleChoice, vec![q], None))
    }

    fn order(&mut self, item: &Element, i: &Element, name: &str) -> Option<Part> {
        let right = right_answers(item, i.attr("responseIdentifier").unwrap_or("RESPONSE"));
        let choices: Vec<&Element> = i.elements().filter(|c| c.name == "simpleChoice").collect();
        let place = |c: &Element| ident(c).and_then(|id| right.iter().position(|r| r == id));
        if choices.len() < 2 || right.len() != choices.len() || choices.iter().any(|c| place(c).is_none()) || choices.iter().any(|c| tidy_text(&c.text()).is_empty()) {
            self.left_out.push(format!("“{name}”: its right order is not given for every item, so it was left out."));
            return None;
        }
        let items = choices.iter().map(|c| {
            let position = place(c).unwrap_or(0) + 1;
            self.with_id(el("item"), ident(c)).with_attr("position", position.to_string()).nodes(tidy(inline_of(c)))
        });
        let items: Vec<Element> = items.collect();
        let exercise = ident(item).and_then(|id| id.strip_suffix(write::SEQUENCE_SUFFIX)).map(str::to_string);
        Some(Part(ExerciseKind::Sequencing, items, exercise))
    }

    fn open(&mut self, item: &Element, body: &Element, i: &Element, label: Option<ExerciseKind>, name: &str) -> Option<Part> {
        let prompt = prompt(body, i);
        if prompt.is_empty() {
            self.left_out.push(format!("“{name}” has no question text, so it was left out."));
            return None;
        }
        let blocks: Vec<&Element> = descendants(body).into_iter().filter(|e| e.name == "rubricBlock").collect();
        let answer = blocks.iter().find(|b| b.attr("class") == Some(write::ANSWER_CLASS) || (b.attr("class").is_none() && b.attr("view").is_some_and(|v| v.contains("scorer")) && !has_rubric_table(b)));
        let answer = answer.map(|b| tidy(inline_of(b))).filter(|a| !a.is_empty());
        let rubric = blocks.iter().find_map(|b| self.rubric(b));
        if label == Some(ExerciseKind::Writing) {
            let mut parts = vec![el("prompt").nodes(prompt)];
            let responding = i.attr("responseIdentifier").filter(|r| *r != "RESPONSE");
            if let Some(area_id) = responding {
                let mut area = self.with_id(el("writing-area"), Some(area_id));
                if let Some(lines) = i.attr("expectedLines").and_then(|l| l.parse::<u32>().ok()) {
                    area = area.with_attr("lines", lines.clamp(1, 50).to_string());
                }
                if let Some(p) = i.attr("placeholderText") {
                    area = area.with_attr("placeholder", p);
                }
                parts.push(area);
            }
            parts.extend(rubric);
            let exercise = ident(item).and_then(|id| id.strip_suffix(write::WRITING_SUFFIX)).map(str::to_string);
            return Some(Part(ExerciseKind::Writing, parts, exercise));
        }
        let mut q = self.with_id(el("question"), ident(item)).child(el("prompt").nodes(prompt));
        if let Some(a) = answer {
            q = q.child(el("answer").nodes(a));
        }
        if let Some(r) = rubric {
            q = q.child(r);
        }
        Some(Part(ExerciseKind::ShortAnswer, vec![q], None))
    }

    /// A rubric table Margin wrote, as a rubric.
    fn rubric(&mut self, block: &Element) -> Option<Element> {
        let table = descendants(block).into_iter().find(|e| e.name == "table" && e.attr("class") == Some(write::RUBRIC_CLASS))?;
        let mut r = self.with_id(el("rubric"), table.id());
        if block.attr("view").is_some_and(|v| v.split_whitespace().any(|w| w == "candidate")) {
            r = r.with_attr("shared", "true");
        }
        for row in descendants(table).into_iter().filter(|e| e.name == "tr") {
            let name = row.elements().find(|c| c.name == "th").map(|h| tidy_text(&h.text())).unwrap_or_default();
            let mut c = self.with_id(el("criterion"), row.id()).with_attr("name", name);
            for cell in row.elements().filter(|c| c.name == "td") {
                let points = cell.elements().find(|s| s.attr("class") == Some(super::write::POINTS_CLASS)).map(|s| tidy_text(&s.text())).unwrap_or_else(|| "0".into());
                let mut text = cell.clone();
                text.children.retain(|n| !matches!(n, Node::Element(s) if s.attr("class") == Some(super::write::POINTS_CLASS)));
                c = c.child(el("level").with_attr("points", points).nodes(tidy(inline_of(&text))));
            }
            r = r.child(c);
        }
        Some(r)
    }

    /// Paragraphs with gaps: each text entry a blank with its answer, the
    /// other accepted answers and the hint.
    fn blanks(&mut self, item: &Element, body: &Element, name: &str) -> Option<Part> {
        let mut paragraphs = Vec::new();
        let mut missing = false;
        let holders = text_blocks(body);
        let single = holders.len() == 1;
        for holder in holders {
            let nodes = inline_with(holder, &mut |entry: &Element| {
                let rid = entry.attr("responseIdentifier").unwrap_or("RESPONSE");
                let (answer, alts) = accepted(item, rid);
                let Some(answer) = answer else {
                    missing = true;
                    return None;
                };
                let mut b = el("blank");
                // A platform's generic names (`RESPONSE`, `RESPONSE_2`) are not worth keeping.
                if let Some(id) = Some(rid).filter(|r| valid_id(r) && !r.starts_with("RESPONSE")) {
                    b = b.with_attr("id", id);
                }
                b = b.with_attr("answer", answer);
                if !alts.is_empty() {
                    b = b.with_attr("alts", alts.join(", "));
                }
                if let Some(h) = entry.attr("placeholderText").filter(|h| !h.trim().is_empty()) {
                    b = b.with_attr("hint", h);
                }
                Some(Node::Element(b))
            });
            let nodes = tidy(nodes);
            if nodes.is_empty() {
                continue;
            }
            // The blanks' ids first: a translated question names its one blank as itself.
            let p = self.keep_blank_ids(el("p").nodes(nodes));
            paragraphs.push(self.with_id(p, if single { ident(item) } else { None }));
        }
        if missing {
            self.left_out.push(format!("“{name}”: a gap has no right answer, so the item was left out."));
            return None;
        }
        if paragraphs.is_empty() {
            self.left_out.push(format!("“{name}” has no text, so it was left out."));
            return None;
        }
        Some(Part(ExerciseKind::FillBlanks, paragraphs, None))
    }

    /// Blank ids taken, or dropped when already used in the lesson.
    fn keep_blank_ids(&mut self, mut p: Element) -> Element {
        fn walk(e: &mut Element, reader: &mut Reader) {
            for n in &mut e.children {
                if let Node::Element(c) = n {
                    if c.name == "blank" {
                        if let Some(id) = c.id().map(str::to_string) {
                            if reader.keep(&id).is_none() {
                                c.attrs.retain(|(k, _)| k != "id");
                            }
                        }
                    } else {
                        walk(c, reader);
                    }
                }
            }
        }
        walk(&mut p, self);
        p
    }
}

pub(super) fn drop_rubrics(e: &mut Element) {
    e.children.retain(|n| !matches!(n, Node::Element(c) if c.name == "rubric"));
    for n in &mut e.children {
        if let Node::Element(c) = n {
            drop_rubrics(c);
        }
    }
}

/// Plain words for an interaction Margin does not have.
pub(super) fn interaction_words(name: &str) -> String {
    let what = match name {
        "matchInteraction" | "associateInteraction" => "a matching question",
        "inlineChoiceInteraction" => "a drop-down in the text",
        "gapMatchInteraction" => "a drag-into-the-gap question",
        "hotspotInteraction" | "hottextInteraction" | "selectPointInteraction" | "graphicOrderInteraction" | "graphicAssociateInteraction" | "graphicGapMatchInteraction" | "positionObjectInteraction" => "a question on a picture",
        "sliderInteraction" => "a slider",
        "uploadInteraction" => "a file upload",
        "drawingInteraction" => "a drawing",
        "mediaInteraction" => "a recording to play",
        _ => "a kind of question",
    };
    format!("{what} ({name})")
}

/// The right answers of response `id`: its correct response, or else the
/// choices its mapping scores above zero.
pub(super) fn right_answers(item: &Element, id: &str) -> Vec<String> {
    let Some(d) = declaration(item, id) else { return Vec::new() };
    let values: Vec<String> = first(d, "correctResponse").map(|c| c.elements().filter(|v| v.name == "value").map(|v| tidy_text(&v.text())).collect()).unwrap_or_default();
    if !values.is_empty() {
        return values;
    }
    mapped(d).into_iter().filter(|(_, v)| *v > 0.0).map(|(k, _)| k).collect()
}

/// A text entry's answer (the correct response, else the best mapped) and
/// the other answers it accepts.
pub(super) fn accepted(item: &Element, id: &str) -> (Option<String>, Vec<String>) {
    let Some(d) = declaration(item, id) else { return (None, Vec::new()) };
    let correct = first(d, "correctResponse").and_then(|c| c.elements().find(|v| v.name == "value")).map(|v| tidy_text(&v.text())).filter(|v| !v.is_empty());
    let mut scored: Vec<(String, f64)> = mapped(d).into_iter().filter(|(k, v)| *v > 0.0 && !k.trim().is_empty()).collect();
    scored.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    let answer = correct.or_else(|| scored.first().map(|(k, _)| k.clone()));
    let alts = scored
        .into_iter()
        .map(|(k, _)| k.replace(',', " "))
        .filter(|k| answer.as_deref() != Some(k.as_str()))
        .fold(Vec::<String>::new(), |mut all, k| {
            if !all.contains(&k) {
                all.push(k);
            }
            all
        });
    (answer, alts)
}

pub(super) fn declaration<'a>(item: &'a Element, id: &str) -> Option<&'a Element> {
    item.elements().find(|d| d.name == "responseDeclaration" && ident(d) == Some(id))
}

pub(super) fn cardinality<'a>(item: &'a Element, id: &str) -> Option<&'a str> {
    declaration(item, id).and_then(|d| d.attr("cardinality"))
}

pub(super) fn mapped(d: &Element) -> Vec<(String, f64)> {
    first(d, "mapping").map(|m| m.elements().filter(|e| e.name == "mapEntry").map(|e| (tidy_text(e.attr("mapKey").unwrap_or_default()), e.attr("mappedValue").and_then(|v| v.parse().ok()).unwrap_or(0.0))).collect()).unwrap_or_default()
}

/// QTI's `identifier` of `e` (what the lesson calls `id`).
pub(super) fn ident(e: &Element) -> Option<&str> {
    e.attr("identifier")
}
