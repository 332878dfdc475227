//! Grades back to the LMS (Assignment and Grade Services). A student's
//! launch of a lesson names the line item its scores go to (kept in
//! `lti_line_items` when the platform granted the score scope); each
//! "Check answers" then posts the score of the answers Margin marks to every
//! line item of that lesson on a platform the student came from, in the
//! background: the student's check never waits on the LMS. Margin proves
//! itself to the platform's token address (`tokens`).
//! Every passback is logged without its tokens.

use serde_json::json;

use super::{launch::Launch, platforms};
use crate::server::{
    classes::sheets::Checked,
    db::{self, Db},
    error::AppError,
    state::AppState,
};

pub const AGS_CLAIM: &str = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint";
pub const SCORE_SCOPE: &str = "https://purl.imsglobal.org/spec/lti-ags/scope/score";

/// Keeps the line item a launch of `lesson` named, when the platform lets
/// Margin post scores to it.
pub async fn remember(db: &Db, launch: &Launch, lesson_id: &str) -> Result<(), AppError> {
    let endpoint = &launch.claims[AGS_CLAIM];
    let may_score = endpoint["scope"].as_array().is_some_and(|s| s.iter().any(|s| s.as_str() == Some(SCORE_SCOPE)));
    let Some(line_item) = endpoint["lineitem"].as_str().filter(|l| may_score && (l.starts_with("https://") || l.starts_with("http://")) && l.len() <= 2000) else {
        return Ok(());
    };
    if !launch.platform.serves(line_item) {
        tracing::warn!(platform = %launch.platform.id, "a launch named a line item outside the registration's origins; scores will not go there");
        return Ok(());
    }
    sqlx::query("INSERT INTO lti_line_items (platform_id, lesson_id, line_item) VALUES ($1, $2, $3) ON CONFLICT (platform_id, lesson_id, line_item) DO NOTHING")
        .bind(&launch.platform.id)
        .bind(lesson_id)
        .bind(line_item)
        .execute(db)
        .await?;
    Ok(())
}

/// Where a student's score for a lesson goes: (platform, line item, the
/// student's id there) for each line item of the lesson on a platform the
/// student came from. None for a student who joined with a class code.
pub async fn targets(db: &Db, lesson_id: &str, student_id: &str) -> Result<Vec<(String, String, String)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT li.platform_id, li.line_item, x.subject FROM lti_line_items li JOIN lti_users x ON x.platform_id = li.platform_id
         WHERE li.lesson_id = $1 AND x.user_id = $2",
    )
    .bind(lesson_id)
    .bind(student_id)
    .fetch_all(db)
    .await
}

/// After a student's check: their score to every line item of the lesson on
/// the platforms they came from, in the background.
pub async fn after_check(state: &AppState, lesson_id: &str, student_id: &str, checked: &Checked) {
    if checked.graded == 0 {
        return;
    }
    let targets = targets(&state.db, lesson_id, student_id).await;
    let targets = match targets {
        Ok(t) if !t.is_empty() => t,
        Ok(_) => return,
        Err(e) => {
            tracing::error!(error = %e, "looking up where scores go failed");
            return;
        }
    };
    let score = json!({
        "scoreGiven": checked.right,
        "scoreMaximum": checked.graded,
        "activityProgress": "Completed",
        "gradingProgress": if checked.for_teacher > 0 { "PendingManual" } else { "FullyGraded" },
        "timestamp": db::time::now(),
    });
    let state = state.clone();
    let (lesson, student) = (lesson_id.to_string(), student_id.to_string());
    tokio::spawn(async move {
        for (platform_id, line_item, subject) in targets {
            let mut body = score.clone();
            body["userId"] = json!(subject);
            match send(&state, &platform_id, &line_item, &body).await {
                Ok(()) => tracing::info!(platform = %platform_id, lesson = %lesson, student = %student, "score sent to the LMS"),
                Err(why) => tracing::warn!(platform = %platform_id, lesson = %lesson, student = %student, reason = %why, "score not sent to the LMS"),
            }
        }
    });
}

async fn send(state: &AppState, platform_id: &str, line_item: &str, body: &serde_json::Value) -> Result<(), String> {
    let platform = platforms::get(&state.db, platform_id).await.map_err(|e| e.to_string())?.ok_or("the platform was removed")?;
    let token = state.lti_tokens.for_service(&state.db, &platform, SCORE_SCOPE, line_item).await?;
    let url = match line_item.split_once('?') {
        Some((path, query)) => format!("{}/scores?{query}", path.trim_end_matches('/')),
        None => format!("{}/scores", line_item.trim_end_matches('/')),
    };
    let answer = state
        .lti_tokens
        .http
        .request(reqwest::Method::POST, &url)?
        .bearer_auth(token)
        .header(reqwest::header::CONTENT_TYPE, "application/vnd.ims.lis.v1.score+json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| e.without_url().to_string())?;
    if answer.status().is_success() {
        Ok(())
    } else {
        Err(format!("the platform answered {}", answer.status()))
    }
}
