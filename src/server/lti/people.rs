//! Who a verified launch is, and where it opens. The platform speaks for
//! the school that registered it, so:
//! - its person is the account it launched before (`lti_users`: platform
//!   and subject), else a new account in that school: a teacher for an
//!   instructor of the course, a student for anyone else. Never an account
//!   found by email: whoever sets the email claim (the platform's admin, or
//!   anyone who edits a profile in the LMS) would become that person. The
//!   new account's address is one that names the platform's person and can
//!   receive nothing, so it claims nobody's email either; the subject is
//!   bound to it only once every check has passed;
//! - its course is a class (`lti_contexts`): an instructor's first launch
//!   makes one, named after the course; a student joins it, and is refused
//!   with a sentence while no instructor has opened Margin in the course;
//! - a link to a lesson (the custom parameter `lesson`, which Deep Linking
//!   sets) opens that lesson: the teacher's, added to the class, or the
//!   student's published copy; otherwise the class, or the student's classes.

use std::net::IpAddr;

use super::{
    launch::{Launch, LtiError},
    platforms::Platform,
};
use crate::{
    models::{UserInfo, ROLE_STUDENT, ROLE_TEACHER},
    refusals::AccountRefusal,
    server::{classes, db, ids, state::AppState},
};

/// The course-context roles Margin counts as teaching. Institution and
/// system roles (`…/institution/person#Faculty`, `…/system/person#Administrator`)
/// say what someone is at the school, not in this course: a faculty member
/// who takes a course as a learner is a learner there.
const INSTRUCTOR_ROLES: &[&str] = &[
    "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
    "http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator",
    "http://purl.imsglobal.org/vocab/lis/v2/membership#ContentDeveloper",
    "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant",
];

/// Whether a course role is one Margin counts as teaching.
pub fn is_instructor_role(role: &str) -> bool {
    INSTRUCTOR_ROLES.contains(&role) || role == "Instructor"
}

/// Whether the launch's roles make its person a teacher.
pub fn teaches(launch: &Launch) -> bool {
    launch.lti("roles").as_array().is_some_and(|roles| roles.iter().filter_map(|r| r.as_str()).any(is_instructor_role))
}

/// The account and the page a resource-link launch opens.
pub async fn land(state: &AppState, client: IpAddr, launch: &Launch) -> Result<(UserInfo, String), LtiError> {
    let teacher = teaches(launch);
    let context = launch.lti("context")["id"].as_str().filter(|c| !c.is_empty()).map(str::to_string);
    let class = match &context {
        Some(c) => class_of(state, &launch.platform.id, c).await?,
        None => None,
    };
    if !teacher && context.is_some() && class.is_none() {
        return Err(LtiError::Refused(AccountRefusal::LtiNoClass, "a student's launch into a course with no class yet".into()));
    }
    let user = account(state, client, launch, teacher).await?;
    let lesson = launch.lti("custom")["lesson"].as_str().map(str::to_string);
    if teacher {
        if user.is_student() {
            return Err(LtiError::failed("an instructor's launch for a student's account"));
        }
        let class_id = match (class, &context) {
            (Some(c), _) => Some(c),
            (None, Some(context_id)) => Some(make_class(state, launch, &user, context_id).await?),
            (None, None) => None,
        };
        let owned = match &lesson {
            Some(l) => sqlx::query_scalar::<_, String>("SELECT id FROM lessons WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL")
                .bind(l)
                .bind(&user.id)
                .fetch_optional(&state.db)
                .await?,
            None => None,
        };
        let owner_of_class = match &class_id {
            Some(c) => sqlx::query_scalar::<_, String>("SELECT owner_id FROM classes WHERE id = $1").bind(c).fetch_optional(&state.db).await?.is_some_and(|o| o == user.id),
            None => false,
        };
        let to = match (owned, class_id) {
            (Some(l), Some(c)) if owner_of_class => {
                sqlx::query("INSERT INTO class_lessons (class_id, lesson_id, added_at) VALUES ($1, $2, $3) ON CONFLICT (class_id, lesson_id) DO NOTHING")
                    .bind(&c)
                    .bind(&l)
                    .bind(db::time::now())
                    .execute(&state.db)
                    .await?;
                format!("/lessons/{l}")
            }
            (Some(l), _) => format!("/lessons/{l}"),
            (None, Some(c)) if owner_of_class => format!("/classes/{c}"),
            (None, _) => "/classes".to_string(),
        };
        return Ok((user, to));
    }
    if !user.is_student() {
        return Err(LtiError::failed("a learner's launch for a teacher's account"));
    }
    if let Some(c) = &class {
        classes::add_member(&state.db, c, &user.id).await?;
    }
    let to = match (lesson, &class) {
        (Some(l), Some(c)) => {
            let visible: Option<String> = sqlx::query_scalar(
                "SELECT l.id FROM lessons l JOIN class_lessons cl ON cl.lesson_id = l.id
                 WHERE l.id = $1 AND cl.class_id = $2 AND l.published_revision IS NOT NULL AND l.deleted_at IS NULL",
            )
            .bind(&l)
            .bind(c)
            .fetch_optional(&state.db)
            .await?;
            match visible {
                Some(l) => {
                    super::grades::remember(&state.db, launch, &l).await?;
                    format!("/learn/lessons/{l}")
                }
                None => "/learn".into(),
            }
        }
        _ => "/learn".into(),
    };
    Ok((user, to))
}

async fn class_of(state: &AppState, platform: &str, context: &str) -> Result<Option<String>, LtiError> {
    Ok(sqlx::query_scalar("SELECT class_id FROM lti_contexts WHERE platform_id = $1 AND context_id = $2").bind(platform).bind(context).fetch_optional(&state.db).await?)
}

/// The course's class, made by its first instructor.
async fn make_class(state: &AppState, launch: &Launch, teacher: &UserInfo, context_id: &str) -> Result<String, LtiError> {
    let context = launch.lti("context");
    let name: String = [context["title"].as_str(), context["label"].as_str()]
        .into_iter()
        .flatten()
        .map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|n| !n.is_empty())
        .unwrap_or_else(|| format!("{} course", launch.platform.name))
        .chars()
        .take(classes::MAX_CLASS_NAME_CHARS)
        .collect();
    let class = classes::create(&state.db, &teacher.id, &name).await?;
    let linked = sqlx::query("INSERT INTO lti_contexts (platform_id, context_id, class_id) VALUES ($1, $2, $3) ON CONFLICT (platform_id, context_id) DO NOTHING")
        .bind(&launch.platform.id)
        .bind(context_id)
        .bind(&class.id)
        .execute(&state.db)
        .await?;
    if linked.rows_affected() == 0 {
        // Two instructors' first launches at once: the other's class stands.
        sqlx::query("DELETE FROM classes WHERE id = $1").bind(&class.id).execute(&state.db).await?;
        return class_of(state, &launch.platform.id, context_id).await?.ok_or_else(|| LtiError::failed("the course's class vanished"));
    }
    tracing::info!(class = %class.id, platform = %launch.platform.id, "class made for an LMS course");
    Ok(class.id)
}

/// The launch's person as an account of the platform's school.
pub async fn account(state: &AppState, client: IpAddr, launch: &Launch, teacher: bool) -> Result<UserInfo, LtiError> {
    account_of(state, Some(client), &launch.platform, &launch.subject, launch.email.as_deref(), teacher).await
}

/// The platform's person `subject` as an account of its school. The roster
/// (`roster`) makes them as launches do; a new account from a launch counts
/// against its client address's sign-up limit. The email the platform
/// gives (`shown`) is kept only to show their teacher: see the module's comment.
pub async fn account_of(state: &AppState, client: Option<IpAddr>, platform: &Platform, subject: &str, shown: Option<&str>, teacher: bool) -> Result<UserInfo, LtiError> {
    let shown = shown.map(str::trim).filter(|e| e.contains('@') && e.len() <= 254);
    let db = &state.db;
    let school = &platform.school_id;
    let known: Option<UserInfo> = sqlx::query_as(
        "SELECT u.id, u.email, COALESCE(u.school_id, '') AS school_id, u.role FROM lti_users x JOIN users u ON u.id = x.user_id
         WHERE x.platform_id = $1 AND x.subject = $2",
    )
    .bind(&platform.id)
    .bind(subject)
    .fetch_optional(db)
    .await?;
    if let Some(u) = known {
        if let Some(shown) = shown {
            sqlx::query("UPDATE lti_users SET email = $3 WHERE platform_id = $1 AND subject = $2").bind(&platform.id).bind(subject).bind(shown).execute(db).await?;
        }
        return match u.role.as_str() {
            crate::models::ROLE_REMOVED => Err(LtiError::Refused(AccountRefusal::AccountRemoved, "an account the school removed".into())),
            crate::models::ROLE_PENDING => Err(LtiError::Refused(AccountRefusal::SsoWaiting, "an account waiting for the school's admin".into())),
            _ => Ok(u),
        };
    }
    match client {
        Some(client) => state.limits.sign_up(client).await?,
        // A roster's member: against the school's budget for those.
        None => state.limits.roster_account(school).await?,
    }
    // An address that names the platform's person and can receive nothing.
    let email = format!("lti-{}@{}.invalid", &ids::token_hash(subject)[..16], platform.id.to_ascii_lowercase());
    let role = if teacher { ROLE_TEACHER } else { ROLE_STUDENT };
    let id = ids::new_id();
    let mut tx = db::begin_write(db).await?;
    sqlx::query("INSERT INTO users (id, email, password_hash, school_id, role) VALUES ($1, $2, '', $3, $4)")
        .bind(&id)
        .bind(&email)
        .bind(school)
        .bind(role)
        .execute(&mut *tx)
        .await?;
    remember(&mut *tx, &platform.id, subject, shown, &id).await?;
    tx.commit().await?;
    tracing::info!(user = %id, platform = %platform.id, role, "account made for an LMS person");
    Ok(UserInfo { id, email, school_id: school.clone(), role: role.into() })
}

async fn remember<'e, E: sqlx::Executor<'e, Database = sqlx::Any>>(db: E, platform_id: &str, subject: &str, shown: Option<&str>, user_id: &str) -> Result<(), LtiError> {
    sqlx::query("INSERT INTO lti_users (platform_id, subject, user_id, email) VALUES ($1, $2, $3, $4) ON CONFLICT (platform_id, subject) DO NOTHING")
        .bind(platform_id)
        .bind(subject)
        .bind(user_id)
        .bind(shown)
        .execute(db)
        .await?;
    Ok(())
}
