//! Classes: a teacher's groups of students, the lessons handed to them and
//! which version of each lesson they see. Who may do what is decided here,
//! from the database, never from what a client says: a class is its
//! teacher's (anyone else's is `NotFound`), and a student sees a lesson only
//! when it is published and in one of their classes.
//!
//! `sheets` keeps what students answer; `routes` and `learn` are the
//! teacher's and the students' doors; their pages are Leptos components
//! (`components::classes`), fed by server functions (`api::classes`).

pub mod coverage;
pub mod evidence;
pub mod feedback;
pub mod feedback_routes;
pub mod improve;
pub mod learn;
pub mod routes;
pub mod sheets;
pub mod wrong_answers;

use argon2::password_hash::rand_core::{OsRng, RngCore};

pub use crate::models::{ClassDetail, ClassLesson, ClassStudent, ClassSummary, StudentClass, StudentLessonSummary};
use crate::server::{
    db::{self, Db},
    error::{AppError, Result},
    ids,
    lessons,
};

/// The one rule of what a student sees, as a condition on the lesson `l`
/// and the account `u`: the lesson is published and in one of the
/// account's classes. Only students join classes, so for a teacher it is
/// always false. (The chat's queries use it too.)
pub const STUDENT_SEES: &str = "l.published_revision IS NOT NULL AND EXISTS (SELECT 1 FROM class_lessons cl JOIN class_members cm ON cm.class_id = cl.class_id WHERE cl.lesson_id = l.id AND cm.user_id = u.id)";

/// Longest class name, in characters.
pub const MAX_CLASS_NAME_CHARS: usize = 80;
/// Letters of a join code: no 0/O or 1/I/L, which are easily misread.
const CODE_LETTERS: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_LEN: usize = 8;

/// A new join code.
fn new_code() -> String {
    let mut bytes = [0u8; CODE_LEN];
    OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| CODE_LETTERS[*b as usize % CODE_LETTERS.len()] as char).collect()
}

/// A code as a student may type it: spaces and dashes dropped, any case.
pub fn tidy_code(code: &str) -> String {
    code.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_uppercase()).take(32).collect()
}

/// A class name as typed, tidied; blank is refused.
fn clean_name(name: &str) -> Result<String> {
    let name: String = name.split_whitespace().collect::<Vec<_>>().join(" ");
    if name.is_empty() {
        return Err(AppError::BadRequest("Give the class a name.".into()));
    }
    let chars = name.chars().count();
    if chars > MAX_CLASS_NAME_CHARS {
        return Err(AppError::BadRequest(format!("The name is too long ({chars} characters). Keep it under {MAX_CLASS_NAME_CHARS}.")));
    }
    Ok(name)
}

pub async fn create(db: &Db, owner: &str, name: &str) -> Result<ClassDetail> {
    let name = clean_name(name)?;
    let id = ids::new_id();
    sqlx::query("INSERT INTO classes (id, owner_id, name, join_code, created_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(&id)
        .bind(owner)
        .bind(&name)
        .bind(new_code())
        .bind(db::time::now())
        .execute(db)
        .await?;
    get(db, owner, &id).await
}

pub async fn list(db: &Db, owner: &str) -> Result<Vec<ClassSummary>> {
    Ok(sqlx::query_as(
        "SELECT c.id, c.name, c.join_code, c.created_at,
           (SELECT COUNT(*) FROM class_members m WHERE m.class_id = c.id) AS students,
           (SELECT COUNT(*) FROM class_lessons cl JOIN lessons l ON l.id = cl.lesson_id AND l.deleted_at IS NULL WHERE cl.class_id = c.id) AS lessons
         FROM classes c WHERE c.owner_id = $1 ORDER BY c.created_at, c.id",
    )
    .bind(owner)
    .fetch_all(db)
    .await?)
}

pub async fn get(db: &Db, owner: &str, id: &str) -> Result<ClassDetail> {
    let row: Option<(String, String, String)> = sqlx::query_as("SELECT id, name, join_code FROM classes WHERE id = $1 AND owner_id = $2")
        .bind(id)
        .bind(owner)
        .fetch_optional(db)
        .await?;
    let (id, name, join_code) = row.ok_or(AppError::NotFound)?;
    let lessons = sqlx::query_as(
        "SELECT l.id, l.title, l.revision, l.published_revision FROM class_lessons cl JOIN lessons l ON l.id = cl.lesson_id
         WHERE cl.class_id = $1 AND l.deleted_at IS NULL ORDER BY cl.added_at, l.id",
    )
    .bind(&id)
    .fetch_all(db)
    .await?;
    let students = sqlx::query_as(
        "SELECT u.id, COALESCE((SELECT MIN(x.email) FROM lti_users x WHERE x.user_id = u.id), u.email) AS email, m.joined_at
         FROM class_members m JOIN users u ON u.id = m.user_id WHERE m.class_id = $1 ORDER BY 2",
    )
    .bind(&id)
    .fetch_all(db)
    .await?;
    Ok(ClassDetail { id, name, join_code, lessons, students })
}

/// A new join code for the class; the old one stops working.
pub async fn renew_code(db: &Db, owner: &str, id: &str) -> Result<String> {
    let code = new_code();
    let done = sqlx::query("UPDATE classes SET join_code = $1 WHERE id = $2 AND owner_id = $3").bind(&code).bind(id).bind(owner).execute(db).await?;
    db::touched_one(&done)?;
    Ok(code)
}

/// Hands one of the teacher's lessons to one of their classes (again is
/// fine). Students see it once it is published.
pub async fn add_lesson(db: &Db, owner: &str, class_id: &str, lesson_id: &str) -> Result<()> {
    get_owned_class(db, owner, class_id).await?;
    lessons::get_own(db, owner, lesson_id).await?;
    sqlx::query("INSERT INTO class_lessons (class_id, lesson_id, added_at) VALUES ($1, $2, $3) ON CONFLICT (class_id, lesson_id) DO NOTHING")
        .bind(class_id)
        .bind(lesson_id)
        .bind(db::time::now())
        .execute(db)
        .await?;
    Ok(())
}

pub async fn remove_lesson(db: &Db, owner: &str, class_id: &str, lesson_id: &str) -> Result<()> {
    get_owned_class(db, owner, class_id).await?;
    sqlx::query("DELETE FROM class_lessons WHERE class_id = $1 AND lesson_id = $2").bind(class_id).bind(lesson_id).execute(db).await?;
    Ok(())
}

/// Takes a student out of one of the teacher's classes: they no longer see
/// its lessons (their answers are kept, for the teacher's results).
pub async fn remove_member(db: &Db, owner: &str, class_id: &str, student: &str) -> Result<()> {
    get_owned_class(db, owner, class_id).await?;
    let done = sqlx::query("DELETE FROM class_members WHERE class_id = $1 AND user_id = $2").bind(class_id).bind(student).execute(db).await?;
    db::touched_one(&done)?;
    Ok(())
}

/// Deletes one of the teacher's classes: its students no longer see its
/// lessons (the lessons, the accounts and their answers stay).
pub async fn delete(db: &Db, owner: &str, class_id: &str) -> Result<()> {
    let done = sqlx::query("DELETE FROM classes WHERE id = $1 AND owner_id = $2").bind(class_id).bind(owner).execute(db).await?;
    db::touched_one(&done)?;
    Ok(())
}

async fn get_owned_class(db: &Db, owner: &str, id: &str) -> Result<()> {
    let found: Option<(String,)> = sqlx::query_as("SELECT id FROM classes WHERE id = $1 AND owner_id = $2").bind(id).bind(owner).fetch_optional(db).await?;
    found.map(|_| ()).ok_or(AppError::NotFound)
}

/// Makes the lesson's current version the one students see; returns it.
pub async fn publish(db: &Db, owner: &str, lesson_id: &str) -> Result<i64> {
    let lesson = lessons::get_own(db, owner, lesson_id).await?;
    sqlx::query("UPDATE lessons SET published_revision = $1 WHERE id = $2 AND owner_id = $3")
        .bind(lesson.revision)
        .bind(lesson_id)
        .bind(owner)
        .execute(db)
        .await?;
    Ok(lesson.revision)
}

/// Hides the lesson from students (their answers are kept).
pub async fn unpublish(db: &Db, owner: &str, lesson_id: &str) -> Result<()> {
    lessons::get_own(db, owner, lesson_id).await?;
    sqlx::query("UPDATE lessons SET published_revision = NULL WHERE id = $1 AND owner_id = $2").bind(lesson_id).bind(owner).execute(db).await?;
    Ok(())
}

/// The revision students see (if any), the lesson's current revision, and
/// the classes the lesson is in.
pub async fn publication(db: &Db, owner: &str, lesson_id: &str) -> Result<(Option<i64>, i64, Vec<(String, String)>)> {
    let found: Option<(Option<i64>, i64)> = sqlx::query_as("SELECT published_revision, revision FROM lessons WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL")
        .bind(lesson_id)
        .bind(owner)
        .fetch_optional(db)
        .await?;
    let (published, revision) = found.ok_or(AppError::NotFound)?;
    let classes = sqlx::query_as("SELECT c.id, c.name FROM class_lessons cl JOIN classes c ON c.id = cl.class_id WHERE cl.lesson_id = $1 ORDER BY c.name, c.id")
        .bind(lesson_id)
        .fetch_all(db)
        .await?;
    Ok((published, revision, classes))
}

/// One of the teacher's lessons as students see it: its title and the
/// published version's XML (the current one while it is not published).
pub async fn published_xml(db: &Db, owner: &str, lesson_id: &str) -> Result<(String, String)> {
    let found: Option<(String, String)> = sqlx::query_as(
        "SELECT l.title, COALESCE(r.document_xml, l.document_xml) FROM lessons l
         LEFT JOIN lesson_revisions r ON r.lesson_id = l.id AND r.number = l.published_revision
         WHERE l.id = $1 AND l.owner_id = $2 AND l.deleted_at IS NULL",
    )
    .bind(lesson_id)
    .bind(owner)
    .fetch_optional(db)
    .await?;
    found.ok_or(AppError::NotFound)
}

/// The class a join code opens: its id, name and teacher's school.
pub async fn by_code(db: &Db, code: &str) -> Result<Option<(String, String, String)>> {
    let code = tidy_code(code);
    if code.is_empty() {
        return Ok(None);
    }
    Ok(sqlx::query_as(
        "SELECT c.id, c.name, COALESCE(u.school_id, '') FROM classes c JOIN users u ON u.id = c.owner_id WHERE c.join_code = $1",
    )
    .bind(code)
    .fetch_optional(db)
    .await?)
}

/// Adds a student to the class a code opens; returns the class's id and
/// name. Only student accounts join classes (a teacher tries the lesson with
/// "Student preview"), and only classes of their own school.
pub async fn join(db: &Db, user: &crate::models::UserInfo, code: &str) -> Result<(String, String)> {
    if !user.is_student() {
        return Err(AppError::Forbidden("This is a teacher's account. Students join a class with their own account.".into()));
    }
    let Some((class_id, name, school)) = by_code(db, code).await? else {
        return Err(AppError::NotFound);
    };
    if school != user.school_id {
        return Err(AppError::NotFound);
    }
    add_member(db, &class_id, &user.id).await?;
    Ok((class_id, name))
}

/// Makes `user_id` a member (again is fine); any executor, so sign-up can
/// do it in its transaction.
pub async fn add_member<'e, E: sqlx::Executor<'e, Database = sqlx::Any>>(db: E, class_id: &str, user_id: &str) -> Result<()> {
    sqlx::query("INSERT INTO class_members (class_id, user_id, joined_at) VALUES ($1, $2, $3) ON CONFLICT (class_id, user_id) DO NOTHING")
        .bind(class_id)
        .bind(user_id)
        .bind(db::time::now())
        .execute(db)
        .await?;
    Ok(())
}

/// A lesson as one student may see it: published and in one of their
/// classes. Its title, the published version's XML and that version.
pub struct StudentLesson {
    pub id: String,
    pub title: String,
    pub xml: String,
    pub revision: i64,
}

pub async fn student_lesson(db: &Db, student: &str, lesson_id: &str) -> Result<StudentLesson> {
    let row: Option<(String, String, String, i64)> = sqlx::query_as(&format!(
        "SELECT l.id, l.title, r.document_xml, r.number FROM lessons l
         JOIN users u ON u.id = $2
         JOIN lesson_revisions r ON r.lesson_id = l.id AND r.number = l.published_revision
         WHERE l.id = $1 AND l.deleted_at IS NULL AND {STUDENT_SEES}"
    ))
    .bind(lesson_id)
    .bind(student)
    .fetch_optional(db)
    .await?;
    let (id, title, xml, revision) = row.ok_or(AppError::NotFound)?;
    Ok(StudentLesson { id, title, xml, revision })
}

pub async fn student_classes(db: &Db, student: &str) -> Result<Vec<StudentClass>> {
    let rows: Vec<(String, String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT c.id, c.name, l.id, l.title FROM class_members m JOIN classes c ON c.id = m.class_id
         LEFT JOIN class_lessons cl ON cl.class_id = c.id
         LEFT JOIN lessons l ON l.id = cl.lesson_id AND l.deleted_at IS NULL AND l.published_revision IS NOT NULL
         WHERE m.user_id = $1 ORDER BY m.joined_at, c.id, cl.added_at, l.id",
    )
    .bind(student)
    .fetch_all(db)
    .await?;
    let mut out: Vec<StudentClass> = Vec::new();
    for (id, name, lesson, title) in rows {
        if out.last().is_none_or(|c| c.id != id) {
            out.push(StudentClass { id: id.clone(), name, lessons: Vec::new() });
        }
        if let (Some(lesson), Some(title), Some(class)) = (lesson, title, out.last_mut()) {
            class.lessons.push(StudentLessonSummary { id: lesson, title });
        }
    }
    Ok(out)
}

/// Whether the lesson is one of `owner`'s and `student` is in a class of
/// theirs that has it, or was (their sheet for it is kept: a former
/// student's work stays the teacher's to read).
pub async fn teaches(db: &Db, owner: &str, student: &str, lesson_id: &str) -> Result<bool> {
    let found: Option<(i64,)> = sqlx::query_as(
        "SELECT 1 FROM lessons l WHERE l.id = $3 AND l.owner_id = $1 AND l.deleted_at IS NULL
           AND (EXISTS (SELECT 1 FROM class_lessons cl JOIN classes c ON c.id = cl.class_id AND c.owner_id = $1
                          JOIN class_members m ON m.class_id = c.id AND m.user_id = $2 WHERE cl.lesson_id = l.id)
                OR EXISTS (SELECT 1 FROM student_sheets s WHERE s.lesson_id = l.id AND s.student_id = $2))",
    )
    .bind(owner)
    .bind(student)
    .bind(lesson_id)
    .fetch_optional(db)
    .await?;
    Ok(found.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_eight_unambiguous_letters_and_tidied_when_typed() {
        let code = new_code();
        assert_eq!(code.len(), CODE_LEN);
        assert!(code.bytes().all(|b| CODE_LETTERS.contains(&b)), "{code}");
        assert_eq!(tidy_code(" abcd-efgh "), "ABCDEFGH");
    }
}
