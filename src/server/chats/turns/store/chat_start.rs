//! The one query on the way to a reply's first word: the account behind a
//! session (or an id) and, if it is theirs, the chat with its lesson, its
//! last messages, its proposals and the lesson's sources, gathered into JSON
//! by the database so that it is one round trip.

use std::sync::LazyLock;

use crate::{
    chat::message::{model_text, Attachments, ChatSession, MessageStatus, Role, StoredMessage},
    chat::turn::TurnRecord,
    models::UserInfo,
    server::{
        chats::{role, steps, with_marks},
        classes::STUDENT_SEES,
        db::{self, Db},
        error::Result,
        lessons::proposals,
    },
};

/// A chat a new turn is about to run in: its lesson as it is now, and its
/// last messages, oldest first.
pub struct ChatStart {
    pub session: ChatSession,
    pub document_xml: String,
    pub revision: i64,
    /// How the assistant's edits reach the lesson.
    pub edit_mode: crate::models::EditMode,
    pub history: Vec<StoredMessage>,
    /// The lesson's sources (the teacher's material), oldest first.
    pub sources: Vec<crate::models::SourceSummary>,
}

/// The row of `user_and_chat`: the chat's columns are empty when the chat is
/// not the teacher's (or does not exist).
#[derive(sqlx::FromRow)]
struct UserAndChat {
    user_id: String,
    email: String,
    school_id: String,
    role: String,
    id: Option<String>,
    lesson_id: Option<String>,
    title: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    document_xml: Option<String>,
    revision: Option<i64>,
    edit_mode: Option<String>,
    /// `[[seq, role, content, tool_calls, status, attachments], …]`, newest first.
    history: String,
    /// `[[id, status, applied revision, reason], …]`: the chat's proposals.
    proposals: String,
    /// `[[id, name, size, chars, opening], …]`: the lesson's sources.
    sources: String,
}

/// The query of `user_and_chat`, written once per backend (they gather
/// rows into JSON differently).
fn user_and_chat_sql(backend: db::Backend, by: Key) -> &'static str {
    static SQLITE: LazyLock<String> = LazyLock::new(|| user_and_chat_query(db::Backend::Sqlite, Key::Session));
    static POSTGRES: LazyLock<String> = LazyLock::new(|| user_and_chat_query(db::Backend::Postgres, Key::Session));
    static SQLITE_USER: LazyLock<String> = LazyLock::new(|| user_and_chat_query(db::Backend::Sqlite, Key::User));
    static POSTGRES_USER: LazyLock<String> = LazyLock::new(|| user_and_chat_query(db::Backend::Postgres, Key::User));
    match (backend, by) {
        (db::Backend::Sqlite, Key::Session) => &SQLITE,
        (db::Backend::Postgres, Key::Session) => &POSTGRES,
        (db::Backend::Sqlite, Key::User) => &SQLITE_USER,
        (db::Backend::Postgres, Key::User) => &POSTGRES_USER,
    }
}

/// What `user_and_chat` finds the teacher by: a request's session token, or
/// (for a turn the server starts itself) the account's id.
#[derive(Clone, Copy)]
enum Key {
    Session,
    User,
}

fn user_and_chat_query(backend: db::Backend, by: Key) -> String {
    let (from, teacher) = match by {
        Key::Session => ("sessions s JOIN users u ON u.id = s.user_id", "s.token_hash = $1 AND s.expires_at > $4"),
        Key::User => ("users u", "u.id = $1 AND $4::TEXT IS NOT NULL"),
    };
    let history = backend.json_rows("m.seq, m.role, m.content, m.tool_calls, m.status, m.attachments");
    let proposals = backend.json_rows("p.id, p.status, p.applied_revision, p.reason");
    let sources = backend.json_rows("ls.id, ls.name, ls.size, ls.chars, ls.opening");
    format!(
        "SELECT u.id AS user_id, u.email, COALESCE(u.school_id, '') AS school_id, u.role, c.id, c.lesson_id, c.title, c.created_at, c.updated_at,
           CASE WHEN u.role = 'student'
             THEN (SELECT r.document_xml FROM lesson_revisions r WHERE r.lesson_id = l.id AND r.number = l.published_revision)
             ELSE l.document_xml END AS document_xml,
           CASE WHEN u.role = 'student' THEN l.published_revision ELSE l.revision END AS revision,
           l.edit_mode,
           (SELECT {history}
              FROM (SELECT seq, role, content, tool_calls, status, attachments FROM chat_messages
                    WHERE session_id = c.id ORDER BY seq DESC LIMIT $3) m) AS history,
           (SELECT {proposals}
              FROM proposals p JOIN chat_messages pm ON pm.id = p.message_id WHERE pm.session_id = c.id) AS proposals,
           (SELECT {sources}
              FROM (SELECT id, name, size, chars, opening FROM lesson_sources
                    WHERE lesson_id = l.id ORDER BY seq, id) ls) AS sources
         FROM {from}
         LEFT JOIN chat_sessions c ON c.id = $2 AND c.owner_id = u.id
         LEFT JOIN lessons l ON l.id = c.lesson_id AND l.deleted_at IS NULL AND ({editable} OR (u.role = 'student' AND {STUDENT_SEES}))
         WHERE {teacher}",
        editable = crate::server::lessons::editable_by("l", "u.id")
    )
}

/// The teacher a session token belongs to and, if it is theirs, the chat
/// `chat_id` with its lesson and its last `history_limit` messages. One
/// query, the conversation gathered into a JSON array, because this is on the
/// way to the first word of a reply. `None`: the token is unknown or expired.
pub async fn user_and_chat(db: &Db, token: &str, chat_id: &str, history_limit: usize) -> Result<Option<(UserInfo, Option<ChatStart>)>> {
    read_user_and_chat(db, Key::Session, &crate::server::ids::token_hash(token), chat_id, history_limit).await
}

/// The same, for the account `user_id` (a turn the server starts itself,
/// for something that happened to the lesson).
pub async fn owner_and_chat(db: &Db, user_id: &str, chat_id: &str, history_limit: usize) -> Result<Option<(UserInfo, Option<ChatStart>)>> {
    read_user_and_chat(db, Key::User, user_id, chat_id, history_limit).await
}

async fn read_user_and_chat(db: &Db, by: Key, key: &str, chat_id: &str, history_limit: usize) -> Result<Option<(UserInfo, Option<ChatStart>)>> {
    let row: Option<UserAndChat> = sqlx::query_as(user_and_chat_sql(db::Backend::of(db), by))
    .bind(key)
    .bind(chat_id)
    .bind(history_limit as i64)
    .bind(db::time::now())
    .fetch_optional(db)
    .await?;
    let Some(UserAndChat {
        user_id,
        email,
        school_id,
        role,
        id,
        lesson_id,
        title,
        created_at,
        updated_at,
        document_xml,
        revision,
        edit_mode,
        history,
        proposals,
        sources,
    }) = row
    else {
        return Ok(None);
    };
    let user = UserInfo { id: user_id, email, school_id, role };
    let (Some(id), Some(lesson_id), Some(title), Some(created_at), Some(updated_at), Some(document_xml), Some(revision)) =
        (id, lesson_id, title, created_at, updated_at, document_xml, revision)
    else {
        return Ok(Some((user, None)));
    };
    let mut rows: Vec<(i64, String, String, String, String, Option<String>)> = serde_json::from_str(&history).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not read the chat history; going on without it");
        Vec::new()
    });
    rows.sort_by_key(|r| r.0);
    let marks = proposals::marks(serde_json::from_str(&proposals).unwrap_or_default());
    let history = rows
        .into_iter()
        .map(|(_, role, content, tool_calls, status, attachments)| {
            let mut m = stored(&role, content, &tool_calls, &status, attachments.as_deref());
            if let StoredMessage::Assistant(record) = &mut m {
                with_marks(&mut record.tool_calls, &marks);
            }
            m
        })
        .collect();
    let session = ChatSession { id, lesson_id, title, created_at, updated_at };
    let edit_mode = edit_mode.map(|m| crate::models::EditMode::from_wire(&m).unwrap_or_default()).unwrap_or_default();
    let sources: Vec<(String, String, i64, i64, String)> = serde_json::from_str(&sources).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not read the lesson's sources; going on without them");
        Vec::new()
    });
    // The teacher's material is not the student's to read.
    let sources = if user.is_student() { Vec::new() } else { sources };
    let sources = sources.into_iter().map(|(id, name, size, chars, opening)| crate::models::SourceSummary { id, name, size, chars, opening }).collect();
    Ok(Some((user, Some(ChatStart { session, document_xml, revision, edit_mode, history, sources }))))
}

/// A message of the history a new turn is given (a teacher's, as the model
/// reads it: with what it asked about).
fn stored(role_name: &str, content: String, tool_calls: &str, status: &str, attachments: Option<&str>) -> StoredMessage {
    match role(role_name) {
        Role::User => StoredMessage::User(match Attachments::read(attachments) {
            Some(a) => model_text(&content, Some(&a)),
            None => content,
        }),
        Role::Assistant => StoredMessage::Assistant(TurnRecord {
            text: content,
            tool_calls: steps(tool_calls),
            status: MessageStatus::parse(status),
            ..TurnRecord::default()
        }),
    }
}
