//! Students safe with the tutor (issue #69), through the real routes on
//! both databases: a student's message raises flags that their lesson's
//! teacher and the school's admin see (harm and abuse) and that another
//! teacher of the school, a hostile school and the student are told do not
//! exist; a message about harm is answered with care and the school's help
//! sentence; a lesson's tutor policy turns the tutor off, or keeps an
//! answer the model gives from the student under "hints only".

use axum::http::{Method, StatusCode};
use margin::server::{
    accounts::help::DEFAULT_HELP,
    config::Config,
    safety::{guard::HELD, opinion},
};
use serde_json::{json, Value};

use crate::common::{
    self, app_with, colleague,
    classes::{ask_tutor, save_xml, student, LESSON},
    Auth, TestApp,
};

const METRICS: &str = "scrape-flags-1c9e";

/// A class of `teacher`'s (a session token) with the tests' lesson,
/// published; its lesson's id and its join code.
async fn class_of(app: &TestApp, teacher: &str) -> (String, String) {
    let owner = app.user_id(teacher).await;
    let lesson = margin::server::lessons::create(&app.state.db, &owner, "Être").await.unwrap().id;
    save_xml(app, teacher, &lesson, LESSON).await;
    let c = app.post_json("/api/classes", Auth::Bearer(teacher), json!({"name": "Year 7 French"})).await.json();
    let (class, code) = (c["id"].as_str().unwrap().to_string(), c["joinCode"].as_str().unwrap().to_string());
    let r = app.send_json(Method::PUT, &format!("/api/classes/{class}/lessons/{lesson}"), Auth::Bearer(teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let r = app.post_json(&format!("/api/lessons/{lesson}/publish"), Auth::Bearer(teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    (lesson, code)
}

/// A new chat of the student's with the tutor on `lesson`.
async fn tutor_chat(app: &TestApp, student: &str, lesson: &str) -> String {
    let r = app.post_json(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(student), json!({})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.json()["id"].as_str().unwrap().to_string()
}

/// A student's message to the tutor, read to its end (the reply as JSON),
/// or the refusal.
async fn ask(app: &TestApp, student: &str, chat: &str, content: &str) -> common::Reply {
    ask_tutor(app, student, chat, content, true).await
}

async fn flags(app: &TestApp, token: &str, all: bool) -> Vec<Value> {
    let r = app.get(if all { "/api/flags?all=1" } else { "/api/flags" }, Auth::Bearer(token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json().as_array().unwrap().clone()
}

#[tokio::test]
async fn a_students_message_raises_flags_for_their_teacher_and_the_admin_and_nobody_else_and_harm_is_answered_with_care() {
    let app = app_with(Config { metrics_token: Some(METRICS.into()), ..Config::default() }).await;
    // School A: its admin, the class's teacher, and another teacher.
    let admin = app.sign_up("admin@a.org").await;
    let teacher = colleague(&app, &admin, "teacher@a.org").await;
    let other = colleague(&app, &admin, "other@a.org").await;
    let (lesson, code) = class_of(&app, &teacher).await;
    let s = student(&app, "pupil@a.org", &code).await;
    // School B, hostile: its admin teaches a class of their own.
    let hostile = app.sign_up("admin@b.org").await;
    class_of(&app, &hostile).await;

    let chat = tutor_chat(&app, &s, &lesson).await;
    let said = "I don't want to do this anymore. Everyone would be better off without me.";
    let r = ask(&app, &s, &chat, said).await;
    assert_eq!(r.status, StatusCode::OK, "a flag never stops the student: {}", r.body);
    let reply = r.json();
    assert_eq!(reply["status"], "complete", "{reply}");
    let text = reply["text"].as_str().unwrap();
    // The model was told to answer with care, and the reply ends with where to find help.
    assert!(text.starts_with("I'm really sorry"), "{text}");
    assert!(text.ends_with(DEFAULT_HELP), "{text}");
    let llm = app.state.ai.scripted().unwrap();
    let last = llm.requests().last().unwrap().to_string();
    assert!(last.contains("A note from Margin"), "the care note reached the model: {last}");

    // The teacher sees it, with the student, the lesson and the words.
    let seen = flags(&app, &teacher, false).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    let f = &seen[0];
    assert_eq!((f["category"].as_str(), f["fromStudent"].as_bool()), (Some("harm"), Some(true)), "{f}");
    assert_eq!(f["excerpt"], said);
    assert_eq!((f["studentEmail"].as_str(), f["lessonTitle"].as_str()), (Some("pupil@a.org"), Some("Être")));
    // The student's own words are what is stored; the note is the server's.
    let sid = app.user_id(&s).await;
    let work = app.get(&format!("/api/lessons/{lesson}/results/{sid}"), Auth::Bearer(&teacher)).await.json();
    assert_eq!(work["chats"][0]["messages"][0]["content"], said, "{work}");

    // Personal data: the teacher's, not the admin's (not a safeguarding flag).
    let r = ask(&app, &s, &chat, "ok. btw my password is hunter2, can you remember it?").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(!r.json()["text"].as_str().unwrap().contains(DEFAULT_HELP), "only harm and abuse add the help sentence");
    let seen = flags(&app, &teacher, false).await;
    assert_eq!(seen.iter().map(|f| f["category"].as_str().unwrap()).collect::<Vec<_>>(), ["personal", "harm"]);
    let admin_sees = flags(&app, &admin, false).await;
    assert_eq!(admin_sees.iter().map(|f| f["category"].as_str().unwrap()).collect::<Vec<_>>(), ["harm"]);
    assert_eq!((seen[1]["yours"].as_bool(), admin_sees[0]["yours"].as_bool()), (Some(true), Some(false)));

    // Nobody else: another teacher of the school, the hostile school, the student.
    let harm = seen[1]["id"].as_str().unwrap().to_string();
    for (who, token) in [("another teacher", &other), ("a hostile school", &hostile)] {
        assert!(flags(&app, token, true).await.is_empty(), "{who} saw a flag");
        let r = app.post_json(&format!("/api/flags/{harm}/acknowledge"), Auth::Bearer(token), json!({})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{who}: {}", r.body);
    }
    assert_eq!(app.get("/api/flags", Auth::Bearer(&s)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.post_json(&format!("/api/flags/{harm}/acknowledge"), Auth::Bearer(&s), json!({})).await.status, StatusCode::NOT_FOUND);

    // The count on the teacher's pages, and none on the others'.
    let page = app.get("/classes", Auth::Cookie(&teacher)).await;
    assert!(page.body.contains("Flags (2)"), "{}", page.body);
    let page = app.get("/classes", Auth::Cookie(&other)).await;
    assert!(!page.body.contains("Flags ("), "{}", page.body);
    let page = app.get("/flags", Auth::Cookie(&teacher)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Risk of harm") && page.body.contains("Everyone would be better off without me") && page.body.contains("pupil@a.org"), "{}", page.body);

    // Acknowledged, never deleted; the admin's list follows.
    let r = app.post_form(&format!("/flags/{harm}/acknowledge"), Auth::Cookie(&teacher), &[]).await;
    assert_eq!((r.status, r.location()), (StatusCode::SEE_OTHER, "/flags"), "{}", r.body);
    assert_eq!(flags(&app, &teacher, false).await.len(), 1);
    let all = flags(&app, &teacher, true).await;
    let done = all.iter().find(|f| f["id"] == harm.as_str()).unwrap();
    assert_eq!(done["acknowledgedBy"], "teacher@a.org", "{done}");
    assert!(flags(&app, &admin, false).await.is_empty());
    assert_eq!(flags(&app, &admin, true).await.len(), 1);

    // /metrics counts them by category, with no text.
    let scraped = app.get("/metrics", Auth::Bearer(METRICS)).await.body;
    for category in ["harm", "personal"] {
        let line = scraped.lines().find(|l| l.starts_with(&format!("margin_safety_flags_total{{category=\"{category}\"}}"))).unwrap_or_else(|| panic!("{category} in:\n{scraped}"));
        assert!(line.rsplit(' ').next().unwrap().parse::<f64>().unwrap() >= 1.0, "{line}");
    }
    assert!(!scraped.contains("hunter2") && !scraped.contains("better off"), "no words in the numbers");
}

#[tokio::test]
async fn the_schools_help_sentence_is_its_admins_and_ends_a_reply_about_harm() {
    let app = common::app().await;
    let admin = app.sign_up("admin@a.org").await;
    let teacher = colleague(&app, &admin, "teacher@a.org").await;
    let (lesson, code) = class_of(&app, &teacher).await;
    let s = student(&app, "pupil@a.org", &code).await;
    let own = "Talk to Ms Okafor in room 12, or call the school counsellor on extension 204.";
    assert_eq!(app.put_json("/api/school/help", Auth::Bearer(&teacher), json!({"sentence": own})).await.status, StatusCode::FORBIDDEN);
    let r = app.put_json("/api/school/help", Auth::Bearer(&admin), json!({"sentence": own})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["shown"], own);
    let long = "x".repeat(700);
    assert_eq!(app.put_json("/api/school/help", Auth::Bearer(&admin), json!({"sentence": long})).await.status, StatusCode::PAYLOAD_TOO_LARGE);

    let chat = tutor_chat(&app, &s, &lesson).await;
    let reply = ask(&app, &s, &chat, "my dad hits me when he is angry").await.json();
    let text = reply["text"].as_str().unwrap();
    assert!(text.ends_with(own) && !text.contains(DEFAULT_HELP), "{text}");
    assert_eq!(flags(&app, &admin, false).await[0]["category"], "abuse");
}

#[tokio::test]
async fn a_lessons_tutor_policy_is_its_teachers_and_off_refuses_the_students_turn_with_the_sentence() {
    let app = common::app().await;
    let teacher = app.sign_up("teacher@a.org").await;
    let (lesson, code) = class_of(&app, &teacher).await;
    let s = student(&app, "pupil@a.org", &code).await;
    let hostile = app.sign_up("admin@b.org").await;
    let chat = tutor_chat(&app, &s, &lesson).await;

    // Only its teacher sets it.
    let path = format!("/api/lessons/{lesson}/tutor");
    assert_eq!(app.put_json(&path, Auth::Bearer(&hostile), json!({"policy": "off"})).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.put_json(&path, Auth::Bearer(&s), json!({"policy": "off"})).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.put_json(&path, Auth::Bearer(&teacher), json!({"policy": "sometimes"})).await.status.as_u16() / 100, 4);
    assert_eq!(app.put_json(&path, Auth::Bearer(&teacher), json!({"policy": "off"})).await.status, StatusCode::NO_CONTENT);

    let calls = app.state.ai.scripted().unwrap().requests().len();
    let r = ask(&app, &s, &chat, "Help me with this exercise").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(r.body.contains("Your teacher has turned the tutor off for this lesson."), "{}", r.body);
    assert_eq!(app.state.ai.scripted().unwrap().requests().len(), calls, "the model was not called");
    assert_eq!(app.get(&format!("/api/learn/lessons/{lesson}"), Auth::Bearer(&s)).await.json()["tutor"], "off");
    let page = app.get(&format!("/learn/lessons/{lesson}"), Auth::Cookie(&s)).await;
    assert!(page.body.contains("Your teacher has turned the tutor off for this lesson.") && !page.body.contains("Ask the tutor"), "{}", page.body);

    // Changed later from the lesson page's form, without publishing again.
    let r = app.post_form(&format!("/lessons/{lesson}/publish"), Auth::Cookie(&teacher), &[("action", "tutor"), ("tutor", "hints")]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let page = app.get(&format!("/learn/lessons/{lesson}"), Auth::Cookie(&s)).await;
    assert!(page.body.contains("hints only") && page.body.contains("Ask the tutor"), "{}", page.body);
    let lesson_page = app.get(&format!("/lessons/{lesson}"), Auth::Cookie(&teacher)).await;
    let at = lesson_page.body.find(r#"<option value="hints""#).expect("the tutor's choices on the lesson page");
    assert!(lesson_page.body[at..at + 40].contains("selected"), "{}", &lesson_page.body[at..at + 40]);
    let r = ask(&app, &s, &chat, "Help me with this exercise").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn hints_only_keeps_an_answer_the_model_gives_from_the_student_and_from_the_stored_chat() {
    let app = common::app().await;
    let teacher = app.sign_up("teacher@a.org").await;
    let (lesson, code) = class_of(&app, &teacher).await;
    let s = student(&app, "pupil@a.org", &code).await;
    let sid = app.user_id(&s).await;

    // Full help: the scripted model gives the first gap's answer away (so
    // the check below could fail), and asking for it is a misuse flag.
    let chat = tutor_chat(&app, &s, &lesson).await;
    let reply = ask(&app, &s, &chat, "Just tell me the answer to the first gap").await.json();
    assert!(reply["text"].as_str().unwrap().contains("serai"), "{reply}");
    assert_eq!(flags(&app, &teacher, false).await[0]["category"], "misuse");

    // Hints only: the same answer never reaches the student, live or stored.
    let r = app.put_json(&format!("/api/lessons/{lesson}/tutor"), Auth::Bearer(&teacher), json!({"policy": "hints"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let chat = tutor_chat(&app, &s, &lesson).await;
    let r = ask_tutor(&app, &s, &chat, "Just tell me the answer to the first gap", false).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(!r.body.contains("serai"), "the answer was streamed: {}", r.body);
    assert!(r.body.contains("hints only"), "{}", r.body);
    let work = app.get(&format!("/api/lessons/{lesson}/results/{sid}"), Auth::Bearer(&teacher)).await.json();
    let stored = work["chats"].to_string();
    assert_eq!(stored.matches("serai").count(), 1, "only the full-help chat's reply holds it: {stored}");
    let reply = ask(&app, &s, &chat, "Help me with this exercise").await.json();
    let text = reply["text"].as_str().unwrap();
    assert!(text.contains("être, future") && !text.contains(HELD), "a hint still goes through: {text}");
}

#[tokio::test]
async fn where_the_rules_are_unsure_the_model_decides_and_its_call_is_metered() {
    let app = common::app().await;
    let teacher = app.sign_up("teacher@a.org").await;
    let (lesson, code) = class_of(&app, &teacher).await;
    let s = student(&app, "pupil@a.org", &code).await;
    let sid = app.user_id(&s).await;
    let chat = tutor_chat(&app, &s, &lesson).await;
    let llm = app.state.ai.scripted().unwrap();
    let asked = |llm: &margin::scripted::ScriptedLlm| {
        llm.requests().iter().filter(|r| r["messages"][0]["content"].as_str().is_some_and(|c| c == opinion::PROMPT)).cloned().collect::<Vec<Value>>()
    };
    let calls = || async { sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM ai_calls WHERE user_id = $1").bind(&sid).fetch_one(&app.state.db).await.unwrap() };

    // An innocent "die": the model is asked, says none, and nothing is raised.
    let reply = ask(&app, &s, &chat, "Why do the cells die without water?").await.json();
    assert_eq!(reply["status"], "complete", "{reply}");
    let opinions = asked(llm);
    assert_eq!(opinions.len(), 1, "the model gave its opinion once");
    assert_eq!(opinions[0]["messages"][1]["content"], "Why do the cells die without water?");
    assert!(opinions[0].get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), "no tools: {}", opinions[0]);
    assert!(!opinions[0].to_string().contains("serai"), "no lesson, no key");
    assert!(flags(&app, &teacher, true).await.is_empty());
    assert!(!reply["text"].as_str().unwrap().contains(DEFAULT_HELP));
    assert_eq!(calls().await, 2, "the opinion and the reply are both the school's calls");

    // A worrying one: the model confirms, the flag is raised and the reply cares.
    let said = "I hate myself and I wish I could disappear";
    let reply = ask(&app, &s, &chat, said).await.json();
    assert_eq!(asked(llm).len(), 2);
    let text = reply["text"].as_str().unwrap();
    assert!(text.starts_with("I'm really sorry") && text.ends_with(DEFAULT_HELP), "{text}");
    let seen = flags(&app, &teacher, false).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!((seen[0]["category"].as_str(), seen[0]["excerpt"].as_str()), (Some("harm"), Some(said)));

    // Sure words need no opinion.
    ask(&app, &s, &chat, "my password is hunter2").await;
    assert_eq!(asked(llm).len(), 2, "the rules were sure");
}
