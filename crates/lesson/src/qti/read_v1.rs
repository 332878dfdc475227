//! QTI 1.2 quizzes: what a Common Cartridge carries (Margin's own included)
//! and what Canvas's classic quizzes export. Each question is translated
//! into the QTI 2.1 item it stands for (choice, text entry, extended text)
//! and read by the same reader as every other item (`read`), so the rules
//! for what comes in are one.
//!
//! Kinds are told by the question's `cc_profile` (or Canvas's
//! `question_type`); a kind Margin has no exercise for is listed. Question
//! text is HTML inside `mattext`: read as XML where it is well formed, as
//! plain text where it is not. A fill-in question's gap goes where the text
//! marks it (a run of underscores), or at its end.

use super::{
    el,
    budget::past_items,
    inline::tidy_text,
    items::Group,
    xml_tree::{descendants, parse},
    Build,
};
use crate::{Element, Node};

/// The quiz `root` (a parsed `questestinterop`): its title and its sections, each question as a QTI
/// 2.1 item, at most `items_left` of them (counted down, across all the
/// quizzes of a package); what cannot come in is said in `left_out`.
pub(super) fn quiz(root: &Element, left_out: &mut Vec<String>, items_left: &mut usize) -> Option<(Option<String>, Vec<Group>)> {
    if root.name != "questestinterop" {
        return None;
    }
    let title = descendants(root).into_iter().find(|e| e.name == "assessment").and_then(|a| a.attr("title")).map(str::to_string);
    let mut groups = Vec::new();
    let holders: Vec<&Element> = descendants(root).into_iter().filter(|e| e.elements().any(|c| c.name == "item")).collect();
    for holder in holders {
        let mut group = Group::default();
        for item in holder.elements().filter(|c| c.name == "item") {
            if *items_left == 0 {
                past_items(left_out);
                break;
            }
            *items_left -= 1;
            match translated(item) {
                Ok(i) => group.items.push(i),
                Err(why) => {
                    left_out.push(why);
                    // An item left out ends a run of the same kind, as in QTI 2.
                    groups.push(std::mem::take(&mut group));
                }
            }
        }
        groups.push(group);
    }
    Some((title, groups))
}

/// The kind a question's metadata names.
fn profile(item: &Element) -> String {
    let fields = descendants(item).into_iter().filter(|e| e.name == "qtimetadatafield");
    for f in fields {
        let label = f.elements().find(|c| c.name == "fieldlabel").map(|l| l.text()).unwrap_or_default();
        if label.trim() == "cc_profile" || label.trim() == "question_type" {
            return f.elements().find(|c| c.name == "fieldentry").map(|e| e.text().trim().to_string()).unwrap_or_default();
        }
    }
    String::new()
}

/// `item` as the QTI 2.1 item it stands for, or why it cannot be one.
fn translated(item: &Element) -> Result<Element, String> {
    let id = item.attr("ident").unwrap_or("item").to_string();
    let title = item.attr("title").map(str::to_string).unwrap_or_else(|| id.clone());
    let profile = profile(item);
    let presentation = item.elements().find(|c| c.name == "presentation");
    let text = presentation.and_then(|p| p.elements().find(|c| c.name == "material" || c.name == "flow")).map(material).unwrap_or_default();
    let lid = presentation.and_then(|p| descendants(p).into_iter().find(|e| e.name == "response_lid"));
    let typed = presentation.and_then(|p| descendants(p).into_iter().find(|e| e.name == "response_str"));
    let right = right_answers(item);
    let base = el("assessmentItem").with_attr("identifier", id.as_str()).with_attr("title", title.as_str());
    let kind = match profile.as_str() {
        "cc.multiple_choice.v0p1" | "cc.multiple_response.v0p1" | "cc.true_false.v0p1" | "multiple_choice_question" | "multiple_answers_question" | "true_false_question" => "choice",
        "cc.fib.v0p1" | "short_answer_question" => "fill",
        "cc.essay.v0p1" | "essay_question" => "essay",
        "" if lid.is_some() => "choice",
        "" if typed.is_some() && !right.is_empty() => "fill",
        "" if typed.is_some() => "essay",
        other => return Err(format!("“{}”: {} has no exercise like it in Margin.", tidy_text(&title), words(other))),
    };
    match kind {
        "choice" => {
            let Some(lid) = lid else { return Err(format!("“{}” has no choices, so it was left out.", tidy_text(&title))) };
            let multiple = lid.attr("rcardinality") == Some("Multiple");
            let choices = descendants(lid).into_iter().filter(|e| e.name == "response_label").map(|l| {
                let content = l.elements().find(|c| c.name == "material" || c.name == "flow_mat").map(material).unwrap_or_default();
                el("simpleChoice").with_attr("identifier", l.attr("ident").unwrap_or_default()).nodes(content)
            });
            let interaction = el("choiceInteraction").with_attr("responseIdentifier", "RESPONSE").with_attr("maxChoices", if multiple { "0" } else { "1" }).child(el("prompt").nodes(text)).children(choices);
            let declaration = el("responseDeclaration").with_attr("identifier", "RESPONSE").with_attr("cardinality", if multiple { "multiple" } else { "single" }).with_attr("baseType", "identifier").child(el("correctResponse").children(right.into_iter().map(|v| el("value").with_text(v))));
            Ok(base.child(declaration).child(el("itemBody").child(interaction)))
        }
        "fill" => {
            let mut first = true;
            let mapping = el("mapping").with_attr("defaultValue", "0").children(right.iter().map(|a| el("mapEntry").with_attr("mapKey", a.as_str()).with_attr("mappedValue", if std::mem::take(&mut first) { "2" } else { "1" })));
            // The gap answers as the question itself, so its blank keeps the question's id.
            let declaration = el("responseDeclaration").with_attr("identifier", id.as_str()).with_attr("cardinality", "single").with_attr("baseType", "string").child(mapping);
            let mut nodes = text;
            let gap = el("textEntryInteraction").with_attr("responseIdentifier", id.as_str());
            if !place_gap(&mut nodes, &gap) {
                nodes.push(Node::Text(" ".into()));
                nodes.push(Node::Element(gap));
            }
            Ok(base.child(declaration).child(el("itemBody").child(el("p").nodes(nodes))))
        }
        _ => {
            let interaction = el("extendedTextInteraction").with_attr("responseIdentifier", "RESPONSE").child(el("prompt").nodes(text));
            Ok(base.child(el("itemBody").child(interaction)))
        }
    }
}

/// Plain words for a kind of question Margin does not have.
fn words(kind: &str) -> String {
    let what = match kind {
        "matching_question" | "cc.matching.v0p1" => "a matching question",
        "numerical_question" | "calculated_question" => "a question with a number to work out",
        "file_upload_question" => "a file upload",
        "fill_in_multiple_blanks_question" | "multiple_dropdowns_question" => "a question with several gaps or drop-downs",
        "text_only_question" => "a text without a question",
        "cc.pattern_match.v0p1" => "a pattern-matched answer",
        _ => "a kind of question",
    };
    format!("{what} ({kind})")
}

/// The values a condition that scores points accepts, its `not`s aside.
fn right_answers(item: &Element) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for cond in descendants(item).into_iter().filter(|e| e.name == "respcondition") {
        let scores = cond.elements().any(|s| s.name == "setvar" && s.attr("action").is_none_or(|a| a == "Set" || a == "Add") && s.text().trim().parse::<f64>().is_ok_and(|v| v > 0.0));
        let Some(var) = cond.elements().find(|c| c.name == "conditionvar") else { continue };
        if !scores {
            continue;
        }
        collect(var, &mut out);
    }
    out
}

fn collect(e: &Element, out: &mut Vec<String>) {
    for c in e.elements() {
        match c.name.as_str() {
            "not" => {}
            "varequal" => {
                let v = c.text().trim().to_string();
                if !v.is_empty() && !out.contains(&v) {
                    out.push(v);
                }
            }
            _ => collect(c, out),
        }
    }
}

/// A `material`'s text: its `mattext`s, HTML read as markup where it is well formed.
fn material(m: &Element) -> Vec<Node> {
    let mut out = Vec::new();
    for t in descendants(m).into_iter().filter(|e| e.name == "mattext") {
        let text = t.text();
        if t.attr("texttype") == Some("text/html") {
            out.push(Node::Text(" ".into()));
            out.extend(html(&text));
        } else {
            out.push(Node::Text(text));
        }
    }
    out
}

/// An HTML fragment as nodes: as XML when it is (with HTML's named
/// entities, which XML does not know, and bare `<br>`), else its text with
/// the tags taken out.
fn html(fragment: &str) -> Vec<Node> {
    let xmlish = named_entities(fragment).replace("<br>", "<br/>");
    match parse(&format!("<div>{xmlish}</div>")) {
        Some(div) => div.children,
        None => vec![Node::Text(html_escape::decode_html_entities(&strip_tags(fragment)).into_owned())],
    }
}

/// `html` with each of HTML's named entities but XML's own five written as
/// the character it names (`&ldquo;` as “), so that it reads as XML.
fn named_entities(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let name_end = rest[1..].find(|c: char| !c.is_ascii_alphanumeric()).map(|i| i + 1);
        match name_end.filter(|&end| end > 1 && rest[end..].starts_with(';')) {
            Some(end) if !matches!(&rest[1..end], "amp" | "lt" | "gt" | "quot" | "apos") => {
                let entity = &rest[..=end];
                let decoded = html_escape::decode_html_entities(entity);
                // An unknown name stays as written (and the fragment is then read as text).
                out.push_str(&decoded);
                rest = &rest[end + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for ch in s.chars() {
        match ch {
            '<' => {
                in_tag = true;
                out.push(' ');
            }
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Puts `gap` where the text marks it: Margin's own marked gap (`[1] ___`
/// in bold), else the first run of three or more underscores. False when
/// the text marks none.
fn place_gap(nodes: &mut Vec<Node>, gap: &Element) -> bool {
    marked(nodes, gap) || underscores(nodes, gap)
}

/// Margin's cartridge marks the asked gap in bold: `[1] _____`.
fn marked(nodes: &mut [Node], gap: &Element) -> bool {
    for n in nodes.iter_mut() {
        if let Node::Element(e) = n {
            let t = e.text();
            if e.name == "strong" && t.starts_with('[') && t.trim_end().ends_with("___") {
                *n = Node::Element(gap.clone());
                return true;
            }
            if marked(&mut e.children, gap) {
                return true;
            }
        }
    }
    false
}

fn underscores(nodes: &mut Vec<Node>, gap: &Element) -> bool {
    for i in 0..nodes.len() {
        match &mut nodes[i] {
            Node::Text(t) => {
                if let Some(at) = t.find("___") {
                    let end = at + t[at..].find(|c: char| c != '_').unwrap_or(t.len() - at);
                    let (before, after) = (t[..at].to_string(), t[end..].to_string());
                    nodes.splice(i..=i, [Node::Text(before), Node::Element(gap.clone()), Node::Text(after)]);
                    return true;
                }
            }
            Node::Element(e) => {
                if underscores(&mut e.children, gap) {
                    return true;
                }
            }
        }
    }
    false
}
