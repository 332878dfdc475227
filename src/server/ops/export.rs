//! A person's data, exported (issue #70): what a school answers when a
//! student, a parent or a teacher asks for everything Margin keeps about
//! them. The school's admin downloads it from the School page
//! (`GET /api/school/members/{id}/export`); whoever runs the server with
//! `margin export --email <email> <file.zip>`.
//!
//! One zip: `person.json`, a `README.txt` saying what is where, and
//! - for a student, each lesson they answered (`answers.json`: their answers,
//!   the last check's marks and score, the feedback their teacher approved)
//!   and their chats with the tutor;
//! - for a teacher, each of their lessons (the current XML, every version,
//!   the material's text) and their chats with the assistant.
//!
//! Each chat comes twice: as JSON, and as Markdown to read. Nobody else's
//! data is in it: another student's answers, a colleague's lessons. The
//! safety flags about a student are not in it either: they are their
//! teachers' safeguarding notes, which a school hands over by its own rules.

use std::io::{Cursor, Write};

use axum::{
    extract::State,
    http::header,
    response::{IntoResponse, Response},
    routing::get,
    Router,
};
use serde_json::{json, Value};

use crate::{
    chat::message::Role,
    models::UserInfo,
    server::{
        accounts::{current_user::CurrentUser, schools},
        chats,
        classes::{feedback, sheets},
        db::{time, Db},
        error::{AppError, Result},
        http::extractors::ApiPath,
        state::AppState,
    },
};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/school/members/{id}/export", get(api_export))
}

/// The admin's download of one member of their school; anyone else's is not found.
async fn api_export(State(state): State<AppState>, CurrentUser(admin): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Response> {
    let school = schools::admin_school(&admin)?;
    let person = person(&state.db, &id).await?.filter(|p| p.school_id == school).ok_or(AppError::NotFound)?;
    let bytes = export(&state.db, &person).await?;
    let name = format!("margin-{}.zip", person.email.replace(|c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '@', "-"));
    Ok((
        [(header::CONTENT_TYPE, "application/zip".to_string()), (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\""))],
        bytes,
    )
        .into_response())
}

/// The account `id`, if there is one.
pub async fn person(db: &Db, id: &str) -> Result<Option<UserInfo>> {
    Ok(sqlx::query_as("SELECT id, email, COALESCE(school_id, '') AS school_id, role FROM users WHERE id = $1").bind(id).fetch_optional(db).await?)
}

/// The account with `email`, if there is one (for the command line).
pub async fn person_by_email(db: &Db, email: &str) -> Result<Option<UserInfo>> {
    Ok(sqlx::query_as("SELECT id, email, COALESCE(school_id, '') AS school_id, role FROM users WHERE email = $1").bind(email).fetch_optional(db).await?)
}

/// A name safe in a zip: letters, digits and dashes, not too long.
fn slug(text: &str) -> String {
    let s: String = text.chars().map(|c| if c.is_alphanumeric() { c } else { '-' }).collect();
    let s = s.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-");
    let s: String = s.chars().take(40).collect();
    if s.is_empty() { "untitled".into() } else { s }
}

struct Zip(zip::ZipWriter<Cursor<Vec<u8>>>);

impl Zip {
    fn put(&mut self, path: &str, text: &str) -> Result<()> {
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        self.0.start_file(path, options).map_err(|e| AppError::Internal(format!("writing the export: {e}")))?;
        self.0.write_all(text.as_bytes()).map_err(|e| AppError::Internal(format!("writing the export: {e}")))
    }

    fn json(&mut self, path: &str, value: &Value) -> Result<()> {
        self.put(path, &serde_json::to_string_pretty(value).unwrap_or_default())
    }
}

/// Everything Margin keeps about `person`, as a zip.
pub async fn export(db: &Db, person: &UserInfo) -> Result<Vec<u8>> {
    let mut zip = Zip(zip::ZipWriter::new(Cursor::new(Vec::new())));
    let created: Option<String> = sqlx::query_scalar("SELECT created_at FROM users WHERE id = $1").bind(&person.id).fetch_optional(db).await?;
    let school: Option<String> = sqlx::query_scalar("SELECT name FROM schools WHERE id = $1").bind(&person.school_id).fetch_optional(db).await?;
    zip.json(
        "person.json",
        &json!({"id": person.id, "email": person.email, "role": person.role, "school": school, "createdAt": created, "exportedAt": time::now()}),
    )?;
    let student = person.is_student();
    let mut lines = vec![format!("Everything Margin keeps about {}, exported {}.", person.email, time::now()), String::new(), "person.json: the account.".into()];
    if student {
        let lessons: Vec<(String, String)> = sqlx::query_as(
            "SELECT l.id, l.title FROM lessons l WHERE l.id IN (SELECT lesson_id FROM student_sheets WHERE student_id = $1
               UNION SELECT lesson_id FROM student_answers WHERE student_id = $1) ORDER BY l.title, l.id",
        )
        .bind(&person.id)
        .fetch_all(db)
        .await?;
        for (n, (id, title)) in lessons.iter().enumerate() {
            let sheet = sheets::load(db, id, &person.id).await?;
            let approved = feedback::for_student(db, id, &person.id).await?;
            let approved: serde_json::Map<String, Value> =
                approved.into_iter().map(|(item, f)| (item, json!({"feedback": f.text, "points": f.points, "maxPoints": f.max_points}))).collect();
            let dir = format!("lessons/{}-{}", n + 1, slug(title));
            zip.json(
                &format!("{dir}/answers.json"),
                &json!({"lessonId": id, "title": title, "answers": sheet.answers, "marks": sheet.marks, "checkedAt": sheet.checked_at, "right": sheet.right, "graded": sheet.graded, "feedback": approved}),
            )?;
        }
        lines.push("lessons/<lesson>/answers.json: the answers given, the last check's marks and score, and the feedback the teacher approved.".into());
        lines.push("chats/: the chats with the tutor, as JSON and as Markdown to read.".into());
    } else {
        let lessons: Vec<(String, String, String)> =
            sqlx::query_as("SELECT id, title, document_xml FROM lessons WHERE owner_id = $1 ORDER BY created_at, id").bind(&person.id).fetch_all(db).await?;
        for (n, (id, title, xml)) in lessons.iter().enumerate() {
            let dir = format!("lessons/{}-{}", n + 1, slug(title));
            zip.put(&format!("{dir}/lesson.xml"), xml)?;
            let versions: Vec<(i64, String)> =
                sqlx::query_as("SELECT number, document_xml FROM lesson_revisions WHERE lesson_id = $1 ORDER BY number").bind(id).fetch_all(db).await?;
            for (number, xml) in versions {
                zip.put(&format!("{dir}/versions/{number}.xml"), &xml)?;
            }
            let material: Vec<(String, String)> = sqlx::query_as("SELECT name, text FROM lesson_sources WHERE lesson_id = $1 ORDER BY seq").bind(id).fetch_all(db).await?;
            for (k, (name, text)) in material.iter().enumerate() {
                zip.put(&format!("{dir}/material/{}-{}.txt", k + 1, slug(name)), text)?;
            }
        }
        lines.push("lessons/<lesson>/: each lesson as it is now (lesson.xml), every saved version (versions/), and the text of its material (material/).".into());
        lines.push("chats/: the chats with the assistant, as JSON and as Markdown to read.".into());
    }
    let found: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT c.id, c.title, COALESCE(l.title, '') FROM chat_sessions c LEFT JOIN lessons l ON l.id = c.lesson_id WHERE c.owner_id = $1 ORDER BY c.created_at, c.id",
    )
    .bind(&person.id)
    .fetch_all(db)
    .await?;
    for (n, (id, title, lesson)) in found.iter().enumerate() {
        let messages = chats::list_messages(db, &person.id, id).await?;
        let name = format!("chats/{}-{}", n + 1, slug(&format!("{lesson} {title}")));
        let listed: Vec<Value> = messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect();
        zip.json(&format!("{name}.json"), &json!({"chatId": id, "title": title, "lesson": lesson, "messages": listed}))?;
        let mut md = format!("# {title}\n\nLesson: {lesson}\n\n");
        for m in &messages {
            let who = if m.role == Role::User { if student { "Student" } else { "Teacher" } } else if student { "Tutor" } else { "Assistant" };
            md.push_str(&format!("**{who}:** {}\n\n", m.content));
        }
        zip.put(&format!("{name}.md"), &md)?;
    }
    zip.put("README.txt", &(lines.join("\n") + "\n"))?;
    let out = zip.0.finish().map_err(|e| AppError::Internal(format!("writing the export: {e}")))?;
    Ok(out.into_inner())
}
