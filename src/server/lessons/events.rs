//! Live updates of a lesson: `GET /api/lessons/{id}/events` (SSE, the
//! owner's only) tells an open page when a version is saved, a reply starts
//! or ends, a chat is created, renamed or deleted, or the lesson is renamed
//! or trashed, whichever tab or instance did it. Writers call `tell` after
//! the change is stored; the note travels on the bus (`bus::LESSONS`), so a
//! page served by one instance hears of a change made through another.

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::State,
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
    routing::get,
    Router,
};
use futures::Stream;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::server::{
    bus::{self, Bus, Note},
    accounts::current_user::CurrentUser,
    db::Db,
    http::error::Result,
    http::extractors::ApiPath,
    lessons,
    state::AppState,
};
use crate::models::{LessonEvent, SaveOutcome};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/lessons/{id}/events", get(events))
}

/// A note on the bus: which lesson, what happened.
#[derive(Serialize, Deserialize)]
struct LessonNote {
    lesson: String,
    event: LessonEvent,
}

/// Tells every page open on `lesson_id` (any tab, any instance) of `event`,
/// which is already stored.
pub async fn tell(bus: &Bus, db: &Db, lesson_id: &str, event: LessonEvent) {
    let note = LessonNote { lesson: lesson_id.to_string(), event };
    if let Ok(payload) = serde_json::to_string(&note) {
        bus.publish(db, bus::LESSONS, &payload).await;
    }
}

/// Tells of a saved version, if `outcome` is one.
pub async fn tell_saved(bus: &Bus, db: &Db, lesson_id: &str, outcome: &SaveOutcome) {
    if let SaveOutcome::Saved { revision, .. } = outcome {
        tell(bus, db, lesson_id, LessonEvent::Revision { revision: *revision }).await;
    }
}

async fn events(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Response> {
    // Subscribed before the lesson is read, so nothing between the two is missed.
    let notes = state.bus.subscribe();
    let lesson = lessons::get_owned(&state.db, &user.id, &id).await?;
    let first = LessonEvent::Revision { revision: lesson.revision };
    let keepalive = Duration::from_secs(state.config.keepalive_secs);
    let body = Sse::new(follow(state.db.clone(), user.id, id, first, notes)).keep_alive(KeepAlive::new().interval(keepalive).text("keepalive"));
    let mut res = body.into_response();
    res.headers_mut().insert("cache-control", axum::http::HeaderValue::from_static("no-cache"));
    res.headers_mut().insert("x-accel-buffering", axum::http::HeaderValue::from_static("no"));
    Ok(res)
}

fn sse(event: &LessonEvent) -> Event {
    Event::default().event(event.name()).data(serde_json::to_string(event).unwrap_or_else(|_| "{}".into()))
}

/// The lesson's current revision first (what the page compares its own
/// with), then each change as it is told. Ends when the lesson is no longer
/// the owner's to see (trashed or deleted).
///
/// Notes can be lost (another instance's, while the bus reconnects), so the
/// lesson's revision is also read every `bus::POLL` without one: a saved
/// version is never missed for longer than that.
fn follow(db: Db, owner: String, lesson: String, first: LessonEvent, notes: broadcast::Receiver<Note>) -> impl Stream<Item = std::result::Result<Event, Infallible>> {
    struct S {
        db: Db,
        owner: String,
        lesson: String,
        first: Option<LessonEvent>,
        notes: broadcast::Receiver<Note>,
        /// The revision last told.
        revision: i64,
        over: bool,
    }
    let revision = match first {
        LessonEvent::Revision { revision } => revision,
        _ => 0,
    };
    let s = S { db, owner, lesson, first: Some(first), notes, revision, over: false };
    futures::stream::unfold(s, |mut s| async move {
        if s.over {
            return None;
        }
        if let Some(first) = s.first.take() {
            return Some((Ok(sse(&first)), s));
        }
        loop {
            let Ok(received) = tokio::time::timeout(bus::POLL, s.notes.recv()).await else {
                match lessons::revision_of(&s.db, &s.owner, &s.lesson).await {
                    Ok(Some(revision)) if revision != s.revision => {
                        s.revision = revision;
                        return Some((Ok(sse(&LessonEvent::Revision { revision })), s));
                    }
                    Ok(Some(_)) | Err(_) => continue,
                    Ok(None) => {
                        s.over = true;
                        return Some((Ok(sse(&LessonEvent::Lesson)), s));
                    }
                }
            };
            match received {
                Ok(note) if note.channel == bus::LESSONS => {
                    let Ok(note) = serde_json::from_str::<LessonNote>(&note.payload) else { continue };
                    if note.lesson != s.lesson {
                        continue;
                    }
                    if let LessonEvent::Revision { revision } = note.event {
                        if revision <= s.revision {
                            continue; // already told (by the poll)
                        }
                        s.revision = revision;
                    }
                    if note.event == LessonEvent::Lesson && !lessons::is_owned(&s.db, &s.owner, &s.lesson).await.unwrap_or(false) {
                        s.over = true;
                    }
                    return Some((Ok(sse(&note.event)), s));
                }
                Ok(_) => {}
                // Fell behind: the page reloads what it shows.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let revision = lessons::revision_of(&s.db, &s.owner, &s.lesson).await.ok().flatten().unwrap_or(s.revision);
                    s.revision = revision;
                    s.first = Some(LessonEvent::Chats);
                    return Some((Ok(sse(&LessonEvent::Revision { revision })), s));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
}
