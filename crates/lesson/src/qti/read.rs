//! A QTI package (2.1, 2.2 or 3.0; or one item file) read into a new lesson;
//! a package's QTI 1.2 quizzes (a cartridge's, Canvas's classic quizzes)
//! are translated to 2.1 items first (`read_v1`).
//!
//! What Margin has comes in: choice (multiple choice; true/false when the
//! two choices are True and False), text entry (fill in the blanks, with
//! every accepted answer), order (sequencing), extended text (short answer,
//! or a writing task for items Margin made). The test's sections become
//! exercises, items of the same kind in a row one exercise. Anything else
//! (matching, hotspots, sliders, uploads, …, pictures and formulas in text)
//! is listed, a sentence each, in `Imported::left_out`.
//!
//! QTI 3.0's names (`qti-choice-interaction`, `response-identifier`) are
//! read as 2.x's (`choiceInteraction`, `responseIdentifier`), so one reader
//! serves both. Archives are read with limits: a crafted package costs its
//! sender a refusal.
//!
//! This file reads the package (its manifest, test and sections); the rest
//! stands beside it: what one import may read (`budget`), XML as a tree
//! (`xml_tree`), items as exercises (`items`), an item's words (`inline`).

use std::io::Cursor;

use super::{
    budget::{over_budget, MAX_ENTRIES, MAX_ITEMS, MAX_PART_BYTES, PACKAGE_BYTES, PACKAGE_READS},
    first,
    inline::{inline_of, tidy, tidy_text},
    items::{ident, Group, Imported, Reader},
    xml_tree::{descendants, parse, MAX_DEPTH},
};
use crate::archive::{Budgeted, PartError};
use crate::{Element, Node};

/// Whether `bytes` is a zip archive with a content package's manifest.
pub fn is_package(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04") && zip::ZipArchive::new(Cursor::new(bytes)).is_ok_and(|z| z.file_names().take(MAX_ENTRIES).any(|n| n.eq_ignore_ascii_case("imsmanifest.xml")))
}

/// A zipped QTI package as a lesson, or why not as a sentence. The whole
/// package is read under one budget (`PACKAGE_BYTES`, `PACKAGE_READS`,
/// `MAX_ITEMS`): each part once and each quiz once, however often they are
/// named.
pub fn lesson_of_package(bytes: &[u8]) -> Result<Imported, String> {
    let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| "The file is not a package (.zip) that can be opened.".to_string())?;
    if zip.len() > MAX_ENTRIES {
        return Err("The package holds far more files than a quiz: it cannot be imported.".into());
    }
    let mut zip = Budgeted::new(zip, MAX_PART_BYTES, PACKAGE_BYTES, PACKAGE_READS);
    let manifest_name = zip.names().find(|n| n.eq_ignore_ascii_case("imsmanifest.xml")).map(str::to_string).ok_or_else(|| "The package has no imsmanifest.xml, so it is not a QTI package or cartridge.".to_string())?;
    let manifest = parse(&part(&mut zip, &manifest_name)?).ok_or_else(|| "The package's imsmanifest.xml cannot be read as XML.".to_string())?;
    let resources: Vec<&Element> = descendants(&manifest).into_iter().filter(|e| e.name == "resource").collect();
    let kind_of = |r: &Element| r.attr("type").unwrap_or_default().to_ascii_lowercase();
    let href_of = |r: &Element| r.attr("href").map(str::to_string).or_else(|| first(r, "file").and_then(|f| f.attr("href")).map(str::to_string));
    let mut reader = Reader::default();
    let mut groups: Vec<Group> = Vec::new();
    let tests: Vec<String> = resources.iter().filter(|r| kind_of(r).starts_with("imsqti_test_xmlv2") || kind_of(r).starts_with("imsqti_test_xmlv3")).filter_map(|r| href_of(r)).collect();
    let old_quizzes: Vec<String> = resources.iter().filter(|r| kind_of(r).starts_with("imsqti_xmlv1")).filter_map(|r| href_of(r)).collect();
    let mut items_left = MAX_ITEMS;
    if let Some(test_href) = tests.first() {
        let test = parse(&part(&mut zip, test_href)?).ok_or_else(|| "The package's test cannot be read as XML.".to_string())?;
        reader.title = test.attr("title").map(str::to_string);
        for section in sections(&test) {
            let mut group = Group { id: ident(section).map(str::to_string), title: section.attr("title").map(str::to_string), instructions: section_instructions(section), items: Vec::new() };
            for r in section.elements().filter(|e| e.name == "assessmentItemRef") {
                let Some(href) = r.attr("href") else { continue };
                if let Some(item) = reader.next_part(&mut zip, &joined(test_href, href), href, &mut items_left)? {
                    group.items.push(item);
                }
            }
            groups.push(group);
        }
    } else {
        let items: Vec<String> = resources.iter().filter(|r| kind_of(r).starts_with("imsqti_item_xmlv2") || kind_of(r).starts_with("imsqti_item_xmlv3")).filter_map(|r| href_of(r)).collect();
        for href in items {
            if let Some(item) = reader.next_part(&mut zip, &joined(&manifest_name, &href), &href, &mut items_left)? {
                groups.push(Group { items: vec![item], ..Group::default() });
            }
        }
    }
    // QTI 1.2: a cartridge's quizzes, or Canvas's classic quizzes.
    let mut quiz_title = None;
    for href in old_quizzes {
        let root = match zip.part(&joined(&manifest_name, &href)) {
            Err(PartError::Again) => continue,
            Err(e @ (PartError::TooLarge | PartError::Spent)) => return Err(over_budget(e)),
            read => read.ok().and_then(|t| parse(&t)),
        };
        match root.and_then(|root| super::read_v1::quiz(&root, &mut reader.left_out, &mut items_left)) {
            Some((title, more)) => {
                quiz_title = quiz_title.or(title);
                groups.extend(more);
            }
            None => reader.left_out.push(format!("The quiz {href} is missing from the package or is not QTI.")),
        }
    }
    if reader.title.is_none() {
        // The quiz's own title names the lesson (a platform's manifest may
        // be titled by the tool that wrote it), unless it is the manifest's
        // title and more (Margin's "Lesson: exercises").
        let named = descendants(&manifest).into_iter().find(|e| e.name == "title").map(|t| tidy_text(&t.text())).filter(|t| !t.is_empty());
        let quiz_title = quiz_title.map(|t| tidy_text(&t)).filter(|t| !t.is_empty());
        reader.title = match (named, quiz_title) {
            (Some(named), Some(quiz)) if quiz.starts_with(&named) => Some(named),
            (named, quiz) => quiz.or(named),
        };
    }
    reader.finish(groups)
}

/// One QTI item (or test-less XML) as a lesson; `None` when `text` is not
/// a QTI item at all (so the caller reads it as Margin's own XML).
pub fn lesson_of_qti_xml(text: &str) -> Option<Result<Imported, String>> {
    let root = parse(text)?;
    if root.name == "questestinterop" {
        let mut reader = Reader::default();
        let (title, groups) = super::read_v1::quiz(&root, &mut reader.left_out, &mut { MAX_ITEMS })?;
        reader.title = title;
        return Some(reader.finish(groups));
    }
    (root.name == "assessmentItem").then(|| {
        let mut reader = Reader::default();
        reader.title = root.attr("title").map(str::to_string);
        reader.finish(vec![Group { items: vec![root], ..Group::default() }])
    })
}

/// The test's sections, nested ones in order, each with its own items.
pub(super) fn sections(test: &Element) -> Vec<&Element> {
    fn walk<'a>(e: &'a Element, out: &mut Vec<&'a Element>, depth: usize) {
        for c in e.elements() {
            if depth > MAX_DEPTH {
                return;
            }
            match c.name.as_str() {
                "assessmentSection" => {
                    out.push(c);
                    walk(c, out, depth + 1);
                }
                "testPart" => walk(c, out, depth + 1),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(test, &mut out, 0);
    out
}

/// A section's instructions: the text of its candidate rubric blocks.
pub(super) fn section_instructions(section: &Element) -> Option<Vec<Node>> {
    let blocks: Vec<&Element> = section.elements().filter(|b| b.name == "rubricBlock" && b.attr("view").is_none_or(|v| v.contains("candidate"))).collect();
    let mut nodes = Vec::new();
    for b in blocks {
        nodes.push(Node::Text(" ".into()));
        nodes.extend(inline_of(b));
    }
    let nodes = tidy(nodes);
    (!nodes.is_empty()).then_some(nodes)
}

/// `href` as a path in the archive, relative to the file `from`.
pub(super) fn joined(from: &str, href: &str) -> String {
    let href = href.split(['#', '?']).next().unwrap_or_default().replace("%20", " ");
    let mut parts: Vec<&str> = from.rsplit_once('/').map(|(dir, _)| dir.split('/').collect()).unwrap_or_default();
    for seg in href.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// One part of the archive as text, read to `MAX_PART_BYTES` at most.
pub(super) fn part(zip: &mut Budgeted, name: &str) -> Result<String, String> {
    zip.part(name).map_err(|e| match e {
        PartError::Missing => format!("The package names {name}, which is not in it."),
        PartError::Unreadable => format!("{name} in the package cannot be unpacked."),
        PartError::NotText => format!("{name} in the package is not text in UTF-8."),
        PartError::Again => format!("The package names {name} twice where it may once."),
        e @ (PartError::TooLarge | PartError::Spent) => over_budget(e),
    })
}
