//! Feedback on students' open answers: drafted by the assistant, decided
//! by the teacher. A draft (`answer_feedback.draft`) waits in the Results
//! page's review queue; approved (as written or edited), it becomes the
//! feedback the student's sheet shows (`feedback`, `points`); discarded, it
//! is gone. Only the approved columns are ever read for a student: the
//! queries a student's page, sheet or tutor reach are `for_student` and
//! `notice` below, and neither selects a draft.
//!
//! Students are told to the model by their number in the Results list
//! (`sheets::results`), never by name or email; the numbers are turned
//! back into accounts here.

use std::collections::HashMap;

use super::sheets;
use crate::{
    agent::tools::{FeedbackDraft as Draft, OpenAnswers},
    lesson::{open::open_items, open::OpenItem, ItemFeedback},
    models::FeedbackDraft,
    server::{
        db::{self, Db},
        error::{AppError, Result},
    },
};

/// The lesson students have, parsed (`owner`'s, else `NotFound`).
async fn published(db: &Db, owner: &str, lesson_id: &str) -> Result<crate::lesson::Element> {
    let (_, xml) = super::published_xml(db, owner, lesson_id).await?;
    crate::lesson::parse(&xml).map_err(|_| AppError::Conflict("The lesson students have cannot be read.".into()))
}

/// The published lesson's open items, and the Results list of its students.
async fn lesson_and_students(db: &Db, owner: &str, lesson_id: &str) -> Result<(Vec<OpenItem>, Vec<sheets::ResultRow>)> {
    let root = published(db, owner, lesson_id).await?;
    let rows = sheets::results(db, owner, lesson_id, &crate::lesson::answers::items(&root)).await?;
    Ok((open_items(&root), rows))
}

/// Every student's answer to `item_id`, by student.
async fn answers_to(db: &Db, lesson_id: &str, item_id: &str) -> Result<HashMap<String, String>> {
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT student_id, value FROM student_answers WHERE lesson_id = $1 AND item_id = $2 AND value <> ''")
        .bind(lesson_id)
        .bind(item_id)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().collect())
}

/// The open item `item_id` of `owner`'s lesson and every student's answer
/// to it, in Results order; `None` when the lesson has no such item.
pub async fn open_answers(db: &Db, owner: &str, lesson_id: &str, item_id: &str) -> Result<Option<OpenAnswers>> {
    let (items, rows) = lesson_and_students(db, owner, lesson_id).await?;
    let Some(item) = items.into_iter().find(|i| i.id == item_id) else { return Ok(None) };
    let mut by_student = answers_to(db, lesson_id, item_id).await?;
    let answers = rows.iter().map(|r| by_student.remove(&r.student_id)).collect();
    Ok(Some(OpenAnswers { item, answers }))
}

/// Keeps the assistant's drafts for `item_id`, replacing earlier drafts
/// for the same answers (approved feedback stays until the teacher
/// approves a new one). `Err(why)`, for the model, when a draft does not
/// fit: a student who is not listed or did not answer, points without a
/// rubric or beyond it. Nothing is kept unless all fit.
pub async fn save_drafts(db: &Db, owner: &str, lesson_id: &str, item_id: &str, drafts: Vec<Draft>) -> Result<std::result::Result<usize, String>> {
    let (items, rows) = lesson_and_students(db, owner, lesson_id).await?;
    let Some(item) = items.into_iter().find(|i| i.id == item_id) else {
        return Ok(Err(format!("The lesson has no open item \"{item_id}\": call read_open_answers for a short-answer question or a writing area.")));
    };
    let max = item.rubric.as_ref().map(|r| r.max_points());
    let answers = answers_to(db, lesson_id, item_id).await?;
    let mut kept: Vec<(&str, &str, Draft)> = Vec::new();
    for d in drafts {
        let Some(row) = d.student.checked_sub(1).and_then(|i| rows.get(i)) else {
            return Ok(Err(format!("There is no student {} (the list has {}).", d.student, rows.len())));
        };
        let Some(answer) = answers.get(&row.student_id) else {
            return Ok(Err(format!("Student {} did not answer {item_id}: leave them out.", d.student)));
        };
        match (max, d.points) {
            (None, Some(_)) => return Ok(Err(format!("{item_id} has no rubric, so no points: leave `points` out."))),
            (Some(m), None) => return Ok(Err(format!("{item_id} has a rubric (up to {m} points): give `points` for student {}.", d.student))),
            (Some(m), Some(p)) if p > m => return Ok(Err(format!("Student {} gets {p} points, but the rubric gives at most {m}.", d.student))),
            _ => {}
        }
        kept.push((row.student_id.as_str(), answer.as_str(), d));
    }
    let now = db::time::now();
    let mut tx = db.begin().await?;
    for (student, answer, d) in &kept {
        sqlx::query(
            "INSERT INTO answer_feedback (lesson_id, student_id, item_id, draft, draft_points, draft_answer, drafted_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (lesson_id, student_id, item_id) DO UPDATE SET draft = excluded.draft, draft_points = excluded.draft_points,
               draft_answer = excluded.draft_answer, drafted_at = excluded.drafted_at",
        )
        .bind(lesson_id)
        .bind(*student)
        .bind(item_id)
        .bind(d.feedback.trim())
        .bind(d.points.map(i64::from))
        .bind(*answer)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(Ok(kept.len()))
}

/// The drafts waiting for the teacher on `owner`'s lesson, in Results
/// order and then the lesson's order of items.
pub async fn queue(db: &Db, owner: &str, lesson_id: &str) -> Result<Vec<FeedbackDraft>> {
    let (items, rows) = lesson_and_students(db, owner, lesson_id).await?;
    queue_of(db, lesson_id, &items, &rows).await
}

/// `queue` for a caller that has the lesson's open items and its Results
/// rows already (the Results page).
pub async fn queue_of(db: &Db, lesson_id: &str, items: &[OpenItem], rows: &[sheets::ResultRow]) -> Result<Vec<FeedbackDraft>> {
    let drafts: Vec<(String, String, String, Option<i64>, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT f.student_id, f.item_id, f.draft, f.draft_points, f.draft_answer, a.value FROM answer_feedback f
         LEFT JOIN student_answers a ON a.lesson_id = f.lesson_id AND a.student_id = f.student_id AND a.item_id = f.item_id
         WHERE f.lesson_id = $1 AND f.draft IS NOT NULL",
    )
    .bind(lesson_id)
    .fetch_all(db)
    .await?;
    let drafts: HashMap<(&str, &str), _> = drafts.iter().map(|(student, item, draft, points, drafted, now)| ((student.as_str(), item.as_str()), (draft, points, drafted, now))).collect();
    let mut out = Vec::new();
    for row in rows {
        for item in items {
            let Some((draft, points, drafted, now)) = drafts.get(&(row.student_id.as_str(), item.id.as_str())) else { continue };
            let answer = (*now).clone().unwrap_or_default();
            out.push(FeedbackDraft {
                student_id: row.student_id.clone(),
                email: row.email.clone(),
                item_id: item.id.clone(),
                prompt: item.prompt.clone(),
                answer_changed: drafted.as_deref() != Some(answer.as_str()),
                answer,
                feedback: (*draft).clone(),
                points: **points,
                max_points: item.rubric.as_ref().map(|r| i64::from(r.max_points())),
            });
        }
    }
    Ok(out)
}

/// The teacher's decision on one draft.
pub enum Decision {
    /// Approve, with the teacher's own text and points when they edited it.
    Approve { feedback: Option<String>, points: Option<i64> },
    Discard,
}

/// Approves or discards the draft on `student`'s answer to `item_id`.
/// `NotFound` when there is no such draft on one of `owner`'s lessons.
pub async fn decide(db: &Db, owner: &str, lesson_id: &str, student: &str, item_id: &str, decision: Decision) -> Result<()> {
    let root = published(db, owner, lesson_id).await?;
    let draft: Option<(String, Option<i64>)> =
        sqlx::query_as("SELECT draft, draft_points FROM answer_feedback WHERE lesson_id = $1 AND student_id = $2 AND item_id = $3 AND draft IS NOT NULL")
            .bind(lesson_id)
            .bind(student)
            .bind(item_id)
            .fetch_optional(db)
            .await?;
    let (draft, draft_points) = draft.ok_or(AppError::NotFound)?;
    match decision {
        Decision::Discard => {
            sqlx::query("UPDATE answer_feedback SET draft = NULL, draft_points = NULL, draft_answer = NULL, drafted_at = NULL WHERE lesson_id = $1 AND student_id = $2 AND item_id = $3")
                .bind(lesson_id)
                .bind(student)
                .bind(item_id)
                .execute(db)
                .await?;
        }
        Decision::Approve { feedback, points } => {
            let text = feedback.map(|f| f.trim().to_string()).unwrap_or(draft);
            if text.is_empty() {
                return Err(AppError::BadRequest("The feedback is empty. Write something for the student, or discard the draft.".into()));
            }
            let chars = text.chars().count();
            let most = crate::agent::tools::FEEDBACK_CHARS * 2;
            if chars > most {
                return Err(AppError::BadRequest(format!("The feedback is {chars} characters long; keep it under {most}.")));
            }
            let max = open_items(&root).into_iter().find(|i| i.id == item_id).and_then(|i| i.rubric).map(|r| i64::from(r.max_points()));
            let points = points.or(draft_points);
            let points = match (max, points) {
                (None, _) => None,
                (Some(m), Some(p)) if (0..=m).contains(&p) => Some(p),
                (Some(m), Some(p)) => return Err(AppError::BadRequest(format!("{p} points is outside the rubric's 0 to {m}."))),
                (Some(_), None) => None,
            };
            sqlx::query(
                "UPDATE answer_feedback SET feedback = $4, points = $5, max_points = $6, approved_at = $7,
                   draft = NULL, draft_points = NULL, draft_answer = NULL, drafted_at = NULL
                 WHERE lesson_id = $1 AND student_id = $2 AND item_id = $3",
            )
            .bind(lesson_id)
            .bind(student)
            .bind(item_id)
            .bind(&text)
            .bind(points)
            .bind(max.filter(|_| points.is_some()))
            .bind(db::time::now())
            .execute(db)
            .await?;
        }
    }
    Ok(())
}

/// The feedback a student is shown on their sheet of `lesson_id`: only
/// what their teacher approved.
pub async fn for_student(db: &Db, lesson_id: &str, student: &str) -> Result<HashMap<String, ItemFeedback>> {
    let rows: Vec<(String, String, Option<i64>, Option<i64>)> =
        sqlx::query_as("SELECT item_id, feedback, points, max_points FROM answer_feedback WHERE lesson_id = $1 AND student_id = $2 AND feedback IS NOT NULL")
            .bind(lesson_id)
            .bind(student)
            .fetch_all(db)
            .await?;
    Ok(rows.into_iter().map(|(item, text, points, max_points)| (item, ItemFeedback { text, points, max_points })).collect())
}

/// "Your teacher left feedback on N of your answers.", when feedback was
/// approved since the student last opened the lesson; opening it now
/// counts as seeing it.
pub async fn notice(db: &Db, lesson_id: &str, student: &str) -> Result<Option<String>> {
    let new: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM answer_feedback f LEFT JOIN student_sheets s ON s.lesson_id = f.lesson_id AND s.student_id = f.student_id
         WHERE f.lesson_id = $1 AND f.student_id = $2 AND f.feedback IS NOT NULL AND (s.feedback_seen_at IS NULL OR f.approved_at > s.feedback_seen_at)",
    )
    .bind(lesson_id)
    .bind(student)
    .fetch_one(db)
    .await?;
    if new == 0 {
        return Ok(None);
    }
    sqlx::query(
        "INSERT INTO student_sheets (lesson_id, student_id, version, updated_at, feedback_seen_at) VALUES ($1, $2, 0, $3, $3)
         ON CONFLICT (lesson_id, student_id) DO UPDATE SET feedback_seen_at = excluded.feedback_seen_at",
    )
    .bind(lesson_id)
    .bind(student)
    .bind(db::time::now())
    .execute(db)
    .await?;
    Ok(Some(if new == 1 { "Your teacher left feedback on one of your answers.".to_string() } else { format!("Your teacher left feedback on {new} of your answers.") }))
}
