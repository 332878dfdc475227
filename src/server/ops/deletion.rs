//! A person's account deleted (issue #70): what a school does when a
//! student leaves, a parent asks, or a teacher goes. Two steps: `preview`
//! says in one sentence what will go; `delete` does it, in one
//! transaction.
//!
//! - A student: their account, sign-ins, answers, checks, feedback, chats
//!   with the tutor, flags about them and class places go. Each lesson they
//!   answered counts a deleted student, which its results say.
//! - A teacher: their account, sign-ins and chats with the assistant go;
//!   their lessons (with versions, material and students' answers) and
//!   classes go to the school's admin, or are deleted, as the admin
//!   chooses.
//!
//! Nothing that names them stays: their replies' stored events, proposals,
//! refused calls and shared rate-limit rows go; the audit log, the usage
//! records, invitations, credits and links they made keep what happened
//! without them (`person_id` NULL, `user_id` 'deleted'). What the database
//! cascades from the account (sessions, identities, LMS links, class
//! places) goes with its row. An admin's account is not deleted here: a
//! school keeps its admin.

use crate::{
    models::UserInfo,
    server::{
        db::{self, Db},
        error::{AppError, Result},
    },
};

/// What becomes of a teacher's lessons and classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TheirLessons {
    /// They go to the school's admin, with their students' answers.
    ToAdmin,
    /// They are deleted, with everything in them.
    Delete,
}

impl TheirLessons {
    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "admin" | "to-admin" => Some(Self::ToAdmin),
            "delete" => Some(Self::Delete),
            _ => None,
        }
    }
}

/// What deleting an account takes with it, counted before it goes.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhatGoes {
    pub email: String,
    pub student: bool,
    /// A student's: the lessons they answered, and their answers.
    pub answered_lessons: i64,
    pub answers: i64,
    /// Their chats (with the tutor, or with the assistant).
    pub chats: i64,
    /// A student's: flags their conversations raised.
    pub flags: i64,
    /// A student's: the classes they are in.
    pub class_places: i64,
    /// A teacher's: their lessons (the trash's too) and classes.
    pub lessons: i64,
    pub classes: i64,
}

fn plural(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl WhatGoes {
    /// The sentence the admin reads before deleting; `heir` is who gets a
    /// teacher's lessons when they are kept.
    pub fn sentence(&self, theirs: TheirLessons, heir: &str) -> String {
        if self.student {
            return format!(
                "Deleting {} removes their account and sign-ins, their answers to {} ({}), the feedback on them, {}, {} about them, and their place in {}. The lessons' results will count a deleted student. This cannot be undone.",
                self.email,
                plural(self.answered_lessons, "lesson", "lessons"),
                plural(self.answers, "answer", "answers"),
                plural(self.chats, "chat with the tutor", "chats with the tutor"),
                plural(self.flags, "flag", "flags"),
                plural(self.class_places, "class", "classes"),
            );
        }
        let work = format!("{} and {}", plural(self.lessons, "lesson", "lessons"), plural(self.classes, "class", "classes"));
        let lessons = match theirs {
            TheirLessons::ToAdmin => format!("Their {work} go to {heir}, with every version, their material and the students' answers."),
            TheirLessons::Delete => format!("Their {work} are deleted too, with every version, their material and the students' answers to them."),
        };
        format!(
            "Deleting {} removes their account and sign-ins and {}. {lessons} This cannot be undone.",
            self.email,
            plural(self.chats, "chat with the assistant", "chats with the assistant"),
        )
    }
}

async fn count(db: &Db, sql: &str, id: &str) -> Result<i64> {
    Ok(sqlx::query_scalar::<_, i64>(sql).bind(id).fetch_one(db).await?)
}

/// What deleting `person` would take, and whether it may be deleted here.
pub async fn preview(db: &Db, person: &UserInfo) -> Result<WhatGoes> {
    if person.is_admin() {
        return Err(AppError::Forbidden("A school's admin is not deleted from here: the school keeps its admin. Whoever runs the server can move the school to another admin first.".into()));
    }
    let id = person.id.as_str();
    Ok(WhatGoes {
        email: person.email.clone(),
        student: person.is_student(),
        answered_lessons: count(db, "SELECT COUNT(*) FROM student_sheets WHERE student_id = $1", id).await?,
        answers: count(db, "SELECT COUNT(*) FROM student_answers WHERE student_id = $1", id).await?,
        chats: count(db, "SELECT COUNT(*) FROM chat_sessions WHERE owner_id = $1", id).await?,
        flags: count(db, "SELECT COUNT(*) FROM safety_flags WHERE student_id = $1", id).await?,
        class_places: count(db, "SELECT COUNT(*) FROM class_members WHERE user_id = $1", id).await?,
        lessons: count(db, "SELECT COUNT(*) FROM lessons WHERE owner_id = $1", id).await?,
        classes: count(db, "SELECT COUNT(*) FROM classes WHERE owner_id = $1", id).await?,
    })
}

/// Deletes `person` (after `preview`'s checks). A teacher's lessons and
/// classes go to `heir` (the school's admin) or are deleted, as `theirs`
/// says. Refused while a reply of theirs is running.
pub async fn delete(db: &Db, person: &UserInfo, theirs: TheirLessons, heir: &UserInfo) -> Result<WhatGoes> {
    let what = preview(db, person).await?;
    if theirs == TheirLessons::ToAdmin && (heir.school_id != person.school_id || !heir.is_admin()) {
        return Err(AppError::BadRequest("A teacher's lessons go to their own school's admin.".into()));
    }
    let id = person.id.as_str();
    let running = count(
        db,
        "SELECT COUNT(*) FROM chat_messages m JOIN chat_sessions c ON c.id = m.session_id WHERE c.owner_id = $1 AND m.status IN ('running', 'awaiting')",
        id,
    )
    .await?;
    if running > 0 {
        return Err(AppError::Conflict("A reply of theirs is still running. Try again in a minute.".into()));
    }
    let mut tx = db::begin_write(db).await?;
    let run = |sql: &'static str| sqlx::query(sql).bind(id);
    // Each lesson they answered counts a deleted student on its results.
    run("UPDATE lessons SET deleted_students = deleted_students + 1 WHERE id IN (SELECT lesson_id FROM student_sheets WHERE student_id = $1)").execute(&mut *tx).await?;
    // Their replies' events kept for other instances, and their refused calls.
    run("DELETE FROM turn_events WHERE turn_id IN (SELECT m.turn_id FROM chat_messages m JOIN chat_sessions c ON c.id = m.session_id WHERE c.owner_id = $1 AND m.turn_id IS NOT NULL)")
        .execute(&mut *tx)
        .await?;
    run("DELETE FROM refused_tool_calls WHERE user_id = $1").execute(&mut *tx).await?;
    run("DELETE FROM chat_sessions WHERE owner_id = $1").execute(&mut *tx).await?;
    run("DELETE FROM proposals WHERE owner_id = $1").execute(&mut *tx).await?;
    if !what.student {
        match theirs {
            TheirLessons::ToAdmin => {
                // The lessons' bytes move with them, as the storage triggers would count them.
                sqlx::query("UPDATE users SET stored_bytes = stored_bytes + (SELECT stored_bytes FROM users WHERE id = $1) WHERE id = $2")
                    .bind(id)
                    .bind(&heir.id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM lesson_editors WHERE user_id = $2 AND lesson_id IN (SELECT id FROM lessons WHERE owner_id = $1)")
                    .bind(id)
                    .bind(&heir.id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("UPDATE lessons SET owner_id = $2 WHERE owner_id = $1").bind(id).bind(&heir.id).execute(&mut *tx).await?;
                sqlx::query("UPDATE classes SET owner_id = $2 WHERE owner_id = $1").bind(id).bind(&heir.id).execute(&mut *tx).await?;
            }
            TheirLessons::Delete => {
                run("DELETE FROM classes WHERE owner_id = $1").execute(&mut *tx).await?;
                run("DELETE FROM lessons WHERE owner_id = $1").execute(&mut *tx).await?;
            }
        }
    }
    // What happened stays; who it was does not.
    run("UPDATE lesson_revisions SET author_id = NULL WHERE author_id = $1").execute(&mut *tx).await?;
    run("UPDATE audit_events SET person_id = NULL WHERE person_id = $1").execute(&mut *tx).await?;
    run("UPDATE ai_calls SET user_id = 'deleted' WHERE user_id = $1").execute(&mut *tx).await?;
    run("UPDATE invites SET used_by = NULL WHERE used_by = $1").execute(&mut *tx).await?;
    run("UPDATE invites SET created_by = 'deleted' WHERE created_by = $1").execute(&mut *tx).await?;
    run("UPDATE credit_grants SET added_by = NULL WHERE added_by = $1").execute(&mut *tx).await?;
    run("UPDATE school_sso SET created_by = NULL WHERE created_by = $1").execute(&mut *tx).await?;
    run("UPDATE safety_flags SET acknowledged_by = NULL WHERE acknowledged_by = $1").execute(&mut *tx).await?;
    // The account; the database takes what hangs from it.
    run("DELETE FROM users WHERE id = $1").execute(&mut *tx).await?;
    tx.commit().await?;
    // Logged without who it was: the log is written after.
    tracing::info!(student = what.student, "deleted an account and its data");
    Ok(what)
}
