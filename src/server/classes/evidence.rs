//! A lesson's results as evidence for the teacher's assistant
//! (`read_results`): per item, how many answered and were right, and the
//! commonest wrong answers; per student, by place in the Results list.
//! Read from the same rows as the Results page (current and former
//! students), against the published version.

use std::collections::HashMap;

use super::sheets;
use crate::{
    agent::tools::{ClassResults, ItemResults},
    lesson::answers::{Item, Key},
    server::{db::Db, error::Result},
};

/// The results of `owner`'s lesson; `None` when no class of theirs has it
/// and nobody answered it.
pub async fn of_lesson(db: &Db, owner: &str, lesson_id: &str) -> Result<Option<ClassResults>> {
    let (_, xml) = super::published_xml(db, owner, lesson_id).await?;
    let items = sheets::items_of(&xml);
    let rows = sheets::results(db, owner, lesson_id, &items).await?;
    if rows.is_empty() {
        let in_class: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM class_lessons cl JOIN classes c ON c.id = cl.class_id AND c.owner_id = $2 WHERE cl.lesson_id = $1 LIMIT 1",
        )
        .bind(lesson_id)
        .bind(owner)
        .fetch_optional(db)
        .await?;
        if in_class.is_none() {
            return Ok(None);
        }
    }
    let answers: Vec<(String, String, String)> = sqlx::query_as("SELECT student_id, item_id, value FROM student_answers WHERE lesson_id = $1 AND value <> ''")
        .bind(lesson_id)
        .fetch_all(db)
        .await?;
    let students: std::collections::HashSet<&str> = rows.iter().map(|r| r.student_id.as_str()).collect();
    let mut by_item: HashMap<&str, Vec<&str>> = HashMap::new();
    for (student, item, value) in &answers {
        if students.contains(student.as_str()) {
            by_item.entry(item.as_str()).or_default().push(value.as_str());
        }
    }
    let items = items.iter().map(|item| item_results(item, by_item.get(item.id.as_str()).map_or(&[][..], Vec::as_slice))).collect();
    let per_student = rows.iter().map(|r| (usize::try_from(r.answered).unwrap_or(0), r.right.and_then(|n| usize::try_from(n).ok()), r.checked_at.is_some())).collect();
    Ok(Some(ClassResults { students: rows.len(), items, per_student }))
}

/// One item's counts from its answers.
fn item_results(item: &Item, values: &[&str]) -> ItemResults {
    let mut out = ItemResults { id: item.id.clone(), graded: item.graded(), ..ItemResults::default() };
    let mut wrong: HashMap<String, usize> = HashMap::new();
    for value in values {
        match item.mark(value) {
            Some(true) => out.right += 1,
            Some(false) => *wrong.entry(as_said(item, value)).or_default() += 1,
            None => {}
        }
        out.answered += 1;
    }
    out.wrong = wrong.into_iter().collect();
    out.wrong.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// A wrong answer as it is counted: a blank's words in lower case with
/// single spaces (as marking compares them), anything else trimmed.
fn as_said(item: &Item, value: &str) -> String {
    match item.key {
        Key::Blank { .. } => value.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase(),
        _ => value.trim().to_string(),
    }
}
