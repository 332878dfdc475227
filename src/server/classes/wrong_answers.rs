//! A student's wrong answers told to their teacher's assistant, when the
//! teacher asked for it ("Tell the assistant when students get answers
//! wrong", off until switched on): each check that finds answers wrong is
//! one event at the lesson's gate (`reactions`), so a class checking
//! together is gathered into one automatic turn, which suggests and never
//! edits. A failure here is logged: the student's check stands.

use crate::{
    lesson::answers::{Answers, Item},
    server::{
        error::Result,
        reactions::{self, intents},
        state::AppState,
    },
};

use super::sheets::Checked;

/// After a student's check of `lesson_id`: tells the teacher's assistant
/// of the answers marked wrong, if the teacher asked.
pub async fn after_check(state: &AppState, lesson_id: &str, items: &[Item], checked: &Checked, answers: &Answers, checks: i64) {
    if let Err(e) = tell(state, lesson_id, items, checked, answers, checks).await {
        tracing::warn!(error = %e, lesson = %lesson_id, "a student's wrong answers could not be told to the assistant");
    }
}

async fn tell(state: &AppState, lesson_id: &str, items: &[Item], checked: &Checked, answers: &Answers, checks: i64) -> Result<()> {
    let wrong: Vec<(&Item, &str)> = items
        .iter()
        .filter(|i| checked.marks.get(&i.id) == Some(&false))
        .filter_map(|i| Some((i, answers.get(&i.id)?.as_str())))
        .collect();
    if wrong.is_empty() {
        return Ok(());
    }
    let owner: Option<String> = sqlx::query_scalar("SELECT owner_id FROM lessons WHERE id = $1 AND deleted_at IS NULL").bind(lesson_id).fetch_optional(&state.db).await?;
    let Some(owner) = owner else { return Ok(()) };
    reactions::wrong_answers(state, &owner, lesson_id, intents::answers_wrong(&wrong, checks)).await?;
    Ok(())
}
