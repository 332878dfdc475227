//! The lesson as the agent edits it: every successful edit becomes a revision
//! by the agent at once, on top of the revision the turn last saw, or a
//! proposal made on that revision when it must be reviewed. Rejections are
//! said as `SaveRejection`s; the agent's tool words them for the model.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::gate::Stored;
use crate::{
    agent::tools::{DocumentStore, Proposed, SaveRejection, SourcePage},
    chat::events::MadeLesson,
    lesson::Change,
    models::{Author, LessonEvent, SaveOutcome, SourceSummary},
    server::{
        bus::Bus,
        db::Db,
        lessons::events,
        lessons,
        material,
        lessons::proposals::{self, NewProposal},
        standards,
    },
};

pub struct DbDocument {
    db: Db,
    /// Pages open on the lesson hear of each edit through it.
    bus: Arc<Bus>,
    owner_id: String,
    lesson_id: String,
    /// The reply the turn writes: its steps name the proposals they make.
    message_id: String,
    /// The document the turn works on, and its revision.
    state: Mutex<(String, i64)>,
    /// The document as the turn began (`DocumentStore::found`).
    found: String,
    /// The lesson's "Review edits before applying", as the turn began.
    review_edits: bool,
    /// A turn the teacher did not ask for (`TurnKind::Suggest`): no edits.
    suggest_only: bool,
    /// The lesson's sources, as the turn began.
    sources: Vec<SourceSummary>,
    stored: Stored,
    /// Lessons this turn has made (`create_lesson`), against `MADE_PER_TURN`.
    made: std::sync::atomic::AtomicUsize,
    /// The turn has read the students' results: its edits are all held.
    read_results: std::sync::atomic::AtomicBool,
    /// What a held edit's digest is dated by.
    shown: crate::server::clock::ShownClock,
}

/// The most lessons one reply may make. The teacher's own lesson limit is
/// per request, and a reply is one request: this keeps a runaway reply
/// (or an injected instruction) from filling the lesson list.
const MADE_PER_TURN: usize = 3;

/// Where a turn's edits go: the lesson, and how the teacher wants them.
pub struct DocumentTarget {
    pub owner_id: String,
    pub lesson_id: String,
    pub message_id: String,
    /// The lesson as the turn starts, and its revision.
    pub document: (String, i64),
    pub review_edits: bool,
    pub suggest_only: bool,
    pub sources: Vec<SourceSummary>,
}

impl DbDocument {
    pub fn new(db: Db, bus: Arc<Bus>, target: DocumentTarget, stored: Stored, shown: crate::server::clock::ShownClock) -> Self {
        let DocumentTarget { owner_id, lesson_id, message_id, document, review_edits, suggest_only, sources } = target;
        Self { db, bus, owner_id, lesson_id, message_id, found: document.0.clone(), state: Mutex::new(document), review_edits, suggest_only, sources, stored, made: Default::default(), read_results: Default::default(), shown }
    }

    fn set(&self, xml: String, revision: i64) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = (xml, revision);
    }
}

impl DocumentStore for DbDocument {
    fn current(&self) -> String {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    fn found(&self) -> String {
        self.found.clone()
    }

    fn linked_ids(&self) -> BoxFuture<'_, Result<std::collections::HashSet<String>, String>> {
        Box::pin(async move {
            lessons::linked::linked_ids(&self.db, &self.lesson_id).await.map_err(|e| {
                tracing::error!(error = %e, "could not read the ids of a lesson's versions");
                "The lesson could not be saved just now. Try again in a moment.".to_string()
            })
        })
    }

    fn lessons(&self) -> BoxFuture<'_, Result<Vec<(String, String)>, String>> {
        Box::pin(async move {
            sqlx::query_as("SELECT id, title FROM lessons WHERE owner_id = $1 AND deleted_at IS NULL ORDER BY updated_at DESC, id LIMIT 200")
                .bind(&self.owner_id)
                .fetch_all(&self.db)
                .await
                .map_err(|e| {
                    tracing::error!(error = %e, "could not list the teacher's lessons");
                    "The lessons could not be listed just now. Try again in a moment.".to_string()
                })
        })
    }

    fn lesson(&self, id: &str) -> BoxFuture<'_, Result<Option<(String, String)>, String>> {
        let id = id.to_string();
        Box::pin(async move {
            match lessons::get_editable(&self.db, &self.owner_id, &id).await {
                Ok(l) => Ok(Some((l.title, l.document_xml))),
                Err(crate::server::error::AppError::NotFound) => Ok(None),
                Err(e) => {
                    tracing::error!(error = %e, "could not read a lesson");
                    Err("The lesson could not be read just now. Try again in a moment.".to_string())
                }
            }
        })
    }

    fn sources(&self) -> Vec<SourceSummary> {
        self.sources.clone()
    }

    fn reload(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let l = lessons::get_editable(&self.db, &self.owner_id, &self.lesson_id).await.map_err(|e| e.to_string())?;
            self.set(l.document_xml, l.revision);
            Ok(())
        })
    }

    fn create_lesson(&self, title: String, xml: String) -> BoxFuture<'_, Result<MadeLesson, String>> {
        Box::pin(async move {
            use std::sync::atomic::Ordering;
            if self.made.fetch_add(1, Ordering::SeqCst) >= MADE_PER_TURN {
                return Err(format!("One reply may make at most {MADE_PER_TURN} lessons. Tell the teacher what you made, and they can ask for more."));
            }
            if !self.stored.wait().await {
                return Err("The lesson could not be made just now. Try again in a moment.".into());
            }
            match lessons::create_by_agent(&self.db, &self.owner_id, &title, &xml).await {
                Ok(l) => Ok(MadeLesson { id: l.id, title: l.title }),
                Err(crate::server::error::AppError::Title(_)) => Err("That title cannot be used. Call create_lesson again with a short title.".into()),
                Err(crate::server::error::AppError::InvalidLesson(errors)) => {
                    let list: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
                    Err(format!("Nothing was made: the lesson has problems. Fix each and call create_lesson again.\n{}", list.join("\n")))
                }
                Err(e) => {
                    tracing::error!(error = ?e, "could not make the agent's lesson");
                    Err("The lesson could not be made just now. Try again in a moment.".into())
                }
            }
        })
    }

    fn read_source(&self, id: &str, from: usize, most: usize) -> BoxFuture<'_, Result<Option<SourcePage>, String>> {
        let id = id.to_string();
        Box::pin(async move {
            material::sources::read(&self.db, &self.lesson_id, &id, from, most).await.map_err(|e| {
                tracing::error!(error = ?e, "could not read a source");
                "The material could not be read just now. Try again in a moment.".to_string()
            })
        })
    }

    fn save(&self, xml: String, summary: String) -> BoxFuture<'_, Result<i64, SaveRejection>> {
        Box::pin(async move {
            if !self.stored.wait().await {
                return Err(SaveRejection::Unavailable);
            }
            let base = self.state.lock().unwrap_or_else(|p| p.into_inner()).1;
            // The teacher may have typed (or a colleague saved) since the
            // reply began: the edit is merged block by block into what is
            // there now, and only a block both changed sends it back.
            let saved = lessons::save_merged(&self.db, &self.owner_id, &self.lesson_id, &xml, base, Author::Agent, &summary).await;
            match saved {
                Ok(SaveOutcome::Saved { revision, document_xml }) => {
                    self.set(document_xml, revision);
                    events::tell(&self.bus, &self.db, &self.lesson_id, LessonEvent::Revision { revision }).await;
                    Ok(revision)
                }
                Ok(SaveOutcome::Conflict { .. }) => {
                    let latest = lessons::get_editable(&self.db, &self.owner_id, &self.lesson_id).await.map_err(|e| {
                        tracing::error!(error = ?e, "could not read the lesson after a conflict");
                        SaveRejection::Unavailable
                    })?;
                    self.set(latest.document_xml.clone(), latest.revision);
                    Err(SaveRejection::Conflict { revision: latest.revision, current: latest.document_xml })
                }
                Ok(SaveOutcome::Invalid { errors }) => Err(SaveRejection::Invalid(errors)),
                Err(e) => {
                    tracing::error!(error = ?e, "could not store the agent's edit");
                    Err(SaveRejection::Unavailable)
                }
            }
        })
    }

    fn reviews_edits(&self) -> bool {
        self.review_edits || self.read_results.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn suggests_only(&self) -> bool {
        self.suggest_only
    }

    fn has_read_results(&self) -> bool {
        self.read_results.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn find_standards(&self, query: String) -> BoxFuture<'_, Result<Option<Vec<crate::models::StandardHit>>, String>> {
        Box::pin(async move {
            let school = standards::frameworks::school_of(&self.db, &self.owner_id).await;
            let found = match school {
                Ok(school) => standards::frameworks::search(&self.db, &school, &query, standards::routes::MAX_HITS).await,
                Err(e) => Err(e),
            };
            found.map_err(|e| {
                tracing::error!(error = ?e, "could not search the standards");
                "The standards could not be searched just now. Try again in a moment.".to_string()
            })
        })
    }

    fn results(&self) -> BoxFuture<'_, Result<Option<crate::agent::tools::ClassResults>, String>> {
        Box::pin(async move {
            // Changes made from students' answers are always the teacher's to approve.
            self.read_results.store(true, std::sync::atomic::Ordering::SeqCst);
            crate::server::classes::evidence::of_lesson(&self.db, &self.owner_id, &self.lesson_id).await.map_err(|e| {
                tracing::error!(error = %e, "could not read a lesson's results");
                "The results could not be read just now. Try again in a moment.".to_string()
            })
        })
    }

    fn open_answers(&self, item_id: String) -> BoxFuture<'_, Result<Option<crate::agent::tools::OpenAnswers>, String>> {
        Box::pin(async move {
            crate::server::classes::feedback::open_answers(&self.db, &self.owner_id, &self.lesson_id, &item_id).await.map_err(|e| {
                tracing::error!(error = %e, "could not read students' open answers");
                "The answers could not be read just now. Try again in a moment.".to_string()
            })
        })
    }

    fn draft_feedback(&self, item_id: String, drafts: Vec<crate::agent::tools::FeedbackDraft>) -> BoxFuture<'_, Result<usize, String>> {
        Box::pin(async move {
            match crate::server::classes::feedback::save_drafts(&self.db, &self.owner_id, &self.lesson_id, &item_id, drafts).await {
                Ok(kept) => kept,
                Err(e) => {
                    tracing::error!(error = %e, "could not keep drafted feedback");
                    Err("The drafts could not be kept just now. Try again in a moment.".to_string())
                }
            }
        })
    }

    fn propose(&self, xml: String, summary: String, changes: Vec<Change>) -> BoxFuture<'_, Result<Proposed, SaveRejection>> {
        Box::pin(async move {
            if !self.stored.wait().await {
                return Err(SaveRejection::Unavailable);
            }
            if let Ok(root) = crate::lesson::parse(&xml) {
                let errors = standards::frameworks::problems(&self.db, &self.owner_id, &root).await.map_err(|e| {
                    tracing::error!(error = ?e, "could not check the proposal's standard codes");
                    SaveRejection::Unavailable
                })?;
                if !errors.is_empty() {
                    return Err(SaveRejection::Invalid(errors));
                }
            }
            let base_revision = self.state.lock().unwrap_or_else(|p| p.into_inner()).1;
            let proposal = NewProposal {
                lesson_id: &self.lesson_id,
                owner_id: &self.owner_id,
                message_id: &self.message_id,
                base_revision,
                document_xml: &xml,
                summary: &summary,
                changes: &changes,
            };
            let (id, digest) = proposals::create(&self.db, proposal, &self.shown).await.map_err(|e| {
                tracing::error!(error = ?e, "could not store the agent's proposal");
                SaveRejection::Unavailable
            })?;
            Ok(Proposed { id, digest })
        })
    }
}
