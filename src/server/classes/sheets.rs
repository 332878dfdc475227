//! What students answer, kept as they type, checked when they ask, and read
//! by their teacher.
//!
//! Saving is per item and last write wins, but never blindly: each save
//! says which version of the sheet it last saw (`seen`), and an item changed
//! since then by another tab or device is not overwritten with a different
//! answer; it comes back as a conflict for the student to see.

use std::collections::HashMap;

use serde::Serialize;

use crate::{
    lesson::answers::{items, Answers, Item},
    server::{
        db::{self, Db},
        error::{AppError, Result},
    },
};

/// Longest answer to one item, in characters (a piece of writing).
pub const MAX_ANSWER_CHARS: usize = 20_000;

/// A student's sheet for one lesson, as stored.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sheet {
    pub answers: Answers,
    pub version: i64,
    /// The marks of the last check, by item.
    pub marks: HashMap<String, bool>,
    pub checked_at: Option<String>,
    pub right: Option<i64>,
    pub graded: Option<i64>,
}

pub async fn load(db: &Db, lesson_id: &str, student: &str) -> Result<Sheet> {
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT item_id, value FROM student_answers WHERE lesson_id = $1 AND student_id = $2")
        .bind(lesson_id)
        .bind(student)
        .fetch_all(db)
        .await?;
    let head: Option<(i64, String, Option<String>, Option<i64>, Option<i64>)> =
        sqlx::query_as("SELECT version, marks, checked_at, right_count, graded FROM student_sheets WHERE lesson_id = $1 AND student_id = $2")
            .bind(lesson_id)
            .bind(student)
            .fetch_optional(db)
            .await?;
    let mut sheet = Sheet { answers: rows.into_iter().collect(), ..Sheet::default() };
    if let Some((version, marks, checked_at, right, graded)) = head {
        sheet.version = version;
        sheet.marks = serde_json::from_str(&marks).unwrap_or_default();
        sheet.checked_at = checked_at;
        sheet.right = right;
        sheet.graded = graded;
    }
    Ok(sheet)
}

/// What a save did.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Saved {
    /// The sheet's version now: what the next save has seen.
    pub seen: i64,
    /// Items changed since `seen` elsewhere, with their newer answers; they
    /// were not overwritten.
    pub conflicts: Vec<Conflict>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Conflict {
    pub id: String,
    pub value: String,
}

/// Answers as a form sends them: one field per input, several for a
/// sequence (in order) or for the boxes of a question. Fields that are not
/// items of the lesson are left out; the values of one item are joined by
/// commas, empty ones dropped.
pub fn from_fields(lesson: &[Item], fields: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, value) in fields {
        if !lesson.iter().any(|i| &i.id == name) {
            continue;
        }
        match out.iter_mut().find(|(n, _)| n == name) {
            Some((_, values)) => values.push(value),
            None => out.push((name.clone(), vec![value])),
        }
    }
    out.into_iter()
        .map(|(name, values)| {
            let joined = if values.len() == 1 { values[0].to_string() } else { values.into_iter().filter(|v| !v.is_empty()).collect::<Vec<_>>().join(",") };
            (name, joined)
        })
        .collect()
}

/// Stores the answers a student sent, having seen version `seen`.
pub async fn save(db: &Db, lesson_id: &str, student: &str, lesson: &[Item], sent: &[(String, String)], seen: i64) -> Result<Saved> {
    for (id, value) in sent {
        if !lesson.iter().any(|i| &i.id == id) {
            return Err(AppError::BadRequest(format!("This lesson has no question with id {id:?}. Reload the page to get the current lesson.")));
        }
        let chars = value.chars().count();
        if chars > MAX_ANSWER_CHARS {
            return Err(AppError::PayloadTooLarge(format!("An answer is too long ({chars} characters). Keep each answer under {MAX_ANSWER_CHARS}.")));
        }
    }
    let now = db::time::now();
    let mut tx = db::begin_write(db).await?;
    sqlx::query("INSERT INTO student_sheets (lesson_id, student_id, version, updated_at) VALUES ($1, $2, 0, $3) ON CONFLICT (lesson_id, student_id) DO NOTHING")
        .bind(lesson_id)
        .bind(student)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    // The sheet's row is locked until this save commits (SQLite's write
    // transaction holds the whole file already): two saves at once read the
    // answers one after the other, so the second sees what the first wrote
    // and cannot overwrite it unseen.
    let lock = match db::Backend::of(db) {
        db::Backend::Postgres => " FOR UPDATE",
        db::Backend::Sqlite => "",
    };
    let version: i64 = sqlx::query_scalar(&format!("SELECT version FROM student_sheets WHERE lesson_id = $1 AND student_id = $2{lock}"))
        .bind(lesson_id)
        .bind(student)
        .fetch_one(&mut *tx)
        .await?;
    let stored: Vec<(String, String, i64)> = sqlx::query_as("SELECT item_id, value, version FROM student_answers WHERE lesson_id = $1 AND student_id = $2")
        .bind(lesson_id)
        .bind(student)
        .fetch_all(&mut *tx)
        .await?;
    let mut conflicts = Vec::new();
    let mut changed = Vec::new();
    for (id, value) in sent {
        // A sequence sent as the sheet first showed it, never moved, is not
        // an answer yet (once moved, any order is, even that one).
        let untouched = || lesson.iter().any(|i| &i.id == id && i.untouched(value));
        match stored.iter().find(|(i, _, _)| i == id) {
            Some((_, now, _)) if now == value => {}
            Some((_, now, v)) if *v > seen => conflicts.push(Conflict { id: id.clone(), value: now.clone() }),
            None if value.is_empty() || untouched() => {}
            _ => changed.push((id, value)),
        }
    }
    let next = version + 1;
    for (id, value) in &changed {
        sqlx::query(
            "INSERT INTO student_answers (lesson_id, student_id, item_id, value, version, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (lesson_id, student_id, item_id) DO UPDATE SET value = excluded.value, version = excluded.version, updated_at = excluded.updated_at",
        )
        .bind(lesson_id)
        .bind(student)
        .bind(id)
        .bind(value)
        .bind(next)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    }
    let seen = if changed.is_empty() {
        version
    } else {
        sqlx::query("UPDATE student_sheets SET version = $1, updated_at = $2 WHERE lesson_id = $3 AND student_id = $4")
            .bind(next)
            .bind(&now)
            .bind(lesson_id)
            .bind(student)
            .execute(&mut *tx)
            .await?;
        next
    };
    tx.commit().await?;
    Ok(Saved { seen, conflicts })
}

/// The marks of a check, and the score.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    /// Right or not, by item; items left empty and items the teacher marks
    /// are not here.
    pub marks: HashMap<String, bool>,
    pub right: i64,
    /// Items marked automatically (answered or not).
    pub graded: i64,
    /// Short answers and writing, left for the teacher.
    pub for_teacher: i64,
}

/// Marks what is stored and keeps the result with the sheet; with the
/// answers marked and how many times the student has checked it, this one
/// included.
pub async fn check(db: &Db, lesson_id: &str, student: &str, lesson: &[Item]) -> Result<(Checked, Answers, i64)> {
    let sheet = load(db, lesson_id, student).await?;
    let checked = mark(lesson, &sheet.answers);
    let now = db::time::now();
    let checks: i64 = sqlx::query_scalar(
        "INSERT INTO student_sheets (lesson_id, student_id, version, updated_at, checked_at, right_count, graded, marks, checks) VALUES ($1, $2, 0, $3, $3, $4, $5, $6, 1)
         ON CONFLICT (lesson_id, student_id) DO UPDATE SET checked_at = excluded.checked_at, right_count = excluded.right_count, graded = excluded.graded, marks = excluded.marks,
           checks = student_sheets.checks + 1
         RETURNING checks",
    )
    .bind(lesson_id)
    .bind(student)
    .bind(&now)
    .bind(checked.right)
    .bind(checked.graded)
    .bind(serde_json::to_string(&checked.marks).unwrap_or_else(|_| "{}".into()))
    .fetch_one(db)
    .await?;
    Ok((checked, sheet.answers, checks))
}

pub fn mark(lesson: &[Item], answers: &Answers) -> Checked {
    let mut marks = HashMap::new();
    for item in lesson {
        if let Some(right) = answers.get(&item.id).and_then(|v| item.mark(v)) {
            marks.insert(item.id.clone(), right);
        }
    }
    let graded = lesson.iter().filter(|i| i.graded()).count() as i64;
    Checked { right: marks.values().filter(|r| **r).count() as i64, graded, for_teacher: lesson.len() as i64 - graded, marks }
}

/// The items of a lesson's XML (none when it cannot be read).
pub fn items_of(xml: &str) -> Vec<Item> {
    crate::lesson::parse(xml).map(|root| items(&root)).unwrap_or_default()
}

pub use crate::models::ResultRow;

/// Whether student `s.student_id` is in a class of teacher `$1` that has
/// lesson `s.lesson_id` (`s` a row of `student_sheets`).
const IN_CLASS: &str = "EXISTS (SELECT 1 FROM class_lessons cl JOIN classes c ON c.id = cl.class_id AND c.owner_id = $1
     JOIN class_members m ON m.class_id = c.id AND m.user_id = s.student_id WHERE cl.lesson_id = s.lesson_id)";


/// Every student of the teacher's classes that have the lesson, with how
/// far they got, measured against the published version; then the former
/// ones (`ResultRow::former`): students with a sheet for the lesson who are
/// in none of those classes any more.
pub async fn results(db: &Db, owner: &str, lesson_id: &str, lesson: &[Item]) -> Result<Vec<ResultRow>> {
    let rows: Vec<(String, String, Option<i64>, Option<i64>, Option<String>, i64)> = sqlx::query_as(&format!(
        "SELECT DISTINCT u.id, COALESCE((SELECT MIN(x.email) FROM lti_users x WHERE x.user_id = u.id), u.email) AS email, s.right_count, s.graded, s.checked_at, CAST(0 AS BIGINT) AS former FROM class_lessons cl
           JOIN classes c ON c.id = cl.class_id AND c.owner_id = $1
           JOIN class_members m ON m.class_id = c.id JOIN users u ON u.id = m.user_id
           LEFT JOIN student_sheets s ON s.lesson_id = cl.lesson_id AND s.student_id = u.id
         WHERE cl.lesson_id = $2
         UNION
         SELECT u.id, COALESCE((SELECT MIN(x.email) FROM lti_users x WHERE x.user_id = u.id), u.email) AS email, s.right_count, s.graded, s.checked_at, CAST(1 AS BIGINT) AS former FROM student_sheets s
           JOIN users u ON u.id = s.student_id
           JOIN lessons l ON l.id = s.lesson_id AND l.owner_id = $1
         WHERE s.lesson_id = $2 AND NOT ({IN_CLASS})
         ORDER BY 6, 2"
    ))
    .bind(owner)
    .bind(lesson_id)
    .fetch_all(db)
    .await?;
    let answered: Vec<(String, String)> = sqlx::query_as("SELECT student_id, item_id FROM student_answers WHERE lesson_id = $1 AND value <> ''")
        .bind(lesson_id)
        .fetch_all(db)
        .await?;
    // Answers to items the published version still has, by student.
    let ids: std::collections::HashSet<&str> = lesson.iter().map(|i| i.id.as_str()).collect();
    let mut counts: HashMap<String, i64> = HashMap::new();
    for (student, _) in answered.into_iter().filter(|(_, item)| ids.contains(item.as_str())) {
        *counts.entry(student).or_default() += 1;
    }
    Ok(rows
        .into_iter()
        .map(|(student_id, email, right, graded, checked_at, former)| {
            let answered = counts.get(&student_id).copied().unwrap_or(0);
            ResultRow { student_id, email, answered, total: lesson.len() as i64, right, graded, checked_at, former: former == 1 }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::{answers::items, parse};

    #[test]
    fn form_fields_become_one_answer_per_item() {
        let lesson = items(&parse(r#"<lesson><exercise id="e1" type="sequencing"><item id="i1" position="1">A</item><item id="i2" position="2">B</item></exercise>
            <exercise id="e2" type="multiple-choice"><question id="q1" multiple="true"><prompt>P</prompt><option id="o1" correct="true">A</option><option id="o2">B</option></question></exercise></lesson>"#).unwrap());
        let f = |a: &str, b: &str| (a.to_string(), b.to_string());
        let fields = [f("_seen", "3"), f("e1", "i2"), f("e1", "i1"), f("q1", ""), f("q1", "o2"), f("other", "x")];
        assert_eq!(from_fields(&lesson, &fields), vec![f("e1", "i2,i1"), f("q1", "o2")]);
        assert_eq!(from_fields(&lesson, &[f("q1", "")]), vec![f("q1", "")]);
    }
}
