//! Live updates of a lesson: `GET /api/lessons/{id}/events` (SSE, the
//! owner's only) tells an open page when a version is saved, a reply starts
//! or ends, a chat is created, renamed or deleted, or the lesson is renamed
//! or trashed, whichever tab or instance did it. Writers call `tell` after
//! the change is stored; the note travels on the bus (`bus::LESSONS`), so a
//! page served by one instance hears of a change made through another; each
//! instance reads the notes once for all its open pages (`live`).

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
use tokio::sync::broadcast;

use super::live::{LessonNote, Page};
use crate::server::{
    bus::{self, Bus},
    accounts::current_user::CurrentUser,
    db::Db,
    error::Result,
    http::extractors::ApiPath,
    lessons,
    state::AppState,
};
use crate::models::{LessonEvent, SaveOutcome};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/lessons/{id}/events", get(events))
}

/// Tells every page open on `lesson_id` (any tab, any instance) of `event`,
/// which is already stored.
pub async fn tell(bus: &Bus, db: &Db, lesson_id: &str, event: LessonEvent) {
    let note = LessonNote { lesson: lesson_id.to_string(), event };
    if let Ok(payload) = serde_json::to_string(&note) {
        bus.publish(db, bus::LESSONS, &payload).await;
    }
}

/// After a save, if `outcome` is one: the lesson's open pages hear of the
/// new version, and its listeners of the change (`changed`).
pub async fn saved(state: &AppState, lesson_id: &str, outcome: &SaveOutcome) {
    if let SaveOutcome::Saved { revision, .. } = outcome {
        tell(&state.bus, &state.db, lesson_id, LessonEvent::Revision { revision: *revision }).await;
        changed(state, lesson_id).await;
    }
}

/// `lesson_id`'s content changed (a save, a restore, an applied proposal,
/// or a reply that edited it, once it ended): its listener hears of it
/// (`announce`).
pub async fn changed(state: &AppState, lesson_id: &str) {
    state.lesson_listener.changed(state, lesson_id).await;
}

async fn events(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Response> {
    // Opened before the lesson is read, so nothing between the two is missed
    // (and given back at once if the lesson is not the teacher's), and after
    // the notes already sent are dealt with, so none from before is told.
    state.lesson_pages.caught_up(&state.bus).await;
    let page = state.lesson_pages.open(&user.id, &id)?;
    let lesson = lessons::get_editable(&state.db, &user.id, &id).await?;
    state.lesson_pages.seen(&id, lesson.revision);
    let first = LessonEvent::Revision { revision: lesson.revision };
    let keepalive = Duration::from_secs(state.config.keepalive_secs);
    let body = Sse::new(follow(state.db.clone(), user.id, id, first, page)).keep_alive(KeepAlive::new().interval(keepalive).text("keepalive"));
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
/// the owner's to see (trashed or deleted). The page reads nothing on a
/// timer: what it is told comes from the instance's one subscription
/// (`live`), which also makes up for lost notes.
fn follow(db: Db, owner: String, lesson: String, first: LessonEvent, page: Page) -> impl Stream<Item = std::result::Result<Event, Infallible>> {
    struct S {
        db: Db,
        owner: String,
        lesson: String,
        first: Option<LessonEvent>,
        page: Page,
        /// The revision last told.
        revision: i64,
        over: bool,
    }
    let revision = match first {
        LessonEvent::Revision { revision } => revision,
        _ => 0,
    };
    let s = S { db, owner, lesson, first: Some(first), page, revision, over: false };
    futures::stream::unfold(s, |mut s| async move {
        if s.over {
            return None;
        }
        if let Some(first) = s.first.take() {
            return Some((Ok(sse(&first)), s));
        }
        loop {
            match s.page.events.recv().await {
                Ok(event) => {
                    if let LessonEvent::Revision { revision } = event {
                        if revision <= s.revision {
                            continue; // already told
                        }
                        s.revision = revision;
                    }
                    if event == LessonEvent::Lesson && !lessons::is_editable(&s.db, &s.owner, &s.lesson).await.unwrap_or(false) {
                        s.over = true;
                    }
                    return Some((Ok(sse(&event)), s));
                }
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
