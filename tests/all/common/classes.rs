//! A class to test with: a teacher whose lesson has an exercise of every
//! kind, published to a class, and students who join it by its code.

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::{teacher, Auth, TestApp};

/// A lesson with one exercise of every kind, and a teacher's note.
pub const LESSON: &str = r#"<lesson>
  <h1 id="h1">Être</h1>
  <p id="p1">The verb to be.</p>
  <note id="n1">Secret: spend ten minutes here.</note>
  <exercise id="e1" type="fill-blanks"><p id="p2">Demain, je <blank id="b1" answer="serai" alts="serais" hint="être, future"/> content.</p></exercise>
  <exercise id="e2" type="multiple-choice"><question id="q1"><prompt>Tu …</prompt><option id="o1">suis</option><option id="o2" correct="true">es</option></question>
    <question id="q2" multiple="true"><prompt>Forms of être</prompt><option id="o3" correct="true">sommes</option><option id="o4" correct="true">êtes</option><option id="o5">avons</option></question></exercise>
  <exercise id="e3" type="true-false"><statement id="s1" answer="false">Être is regular.</statement></exercise>
  <exercise id="e4" type="sequencing"><item id="i1" position="2">tu es</item><item id="i2" position="1">je suis</item><item id="i3" position="3">il est</item></exercise>
  <exercise id="e5" type="short-answer"><question id="q3"><prompt>Why learn être?</prompt><answer>Model answer kept secret</answer></question></exercise>
  <exercise id="e6" type="writing"><prompt>Describe yourself.</prompt><writing-area id="w1"/></exercise>
</lesson>"#;

pub struct Class {
    pub teacher: String,
    pub lesson: String,
    pub class: String,
    pub code: String,
    pub chat: String,
}

pub async fn save_xml(app: &TestApp, token: &str, lesson: &str, xml: &str) -> i64 {
    let revision: i64 = sqlx::query_scalar("SELECT revision FROM lessons WHERE id = $1").bind(lesson).fetch_one(&app.state.db).await.unwrap();
    let r = app.put_json(&format!("/api/lessons/{lesson}/document"), Auth::Bearer(token), json!({"xml": xml, "baseRevision": revision})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    revision + 1
}

/// A teacher with the lesson above, a class that has it, published.
pub async fn class(app: &TestApp, email: &str) -> Class {
    let t = teacher(app, email).await;
    save_xml(app, &t.token, &t.lesson_id, LESSON).await;
    let r = app.post_json("/api/classes", Auth::Bearer(&t.token), json!({"name": "  Year 7   French "})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let c = r.json();
    assert_eq!(c["name"], "Year 7 French");
    let (class, code) = (c["id"].as_str().unwrap().to_string(), c["joinCode"].as_str().unwrap().to_string());
    let r = app.send_json(Method::PUT, &format!("/api/classes/{class}/lessons/{}", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let r = app.post_json(&format!("/api/lessons/{}/publish", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    Class { teacher: t.token, lesson: t.lesson_id, class, code, chat: t.session_id }
}

/// Signs a student up through a join code; their token.
pub async fn student(app: &TestApp, email: &str, code: &str) -> String {
    let r = app.post_json("/api/auth/signup", Auth::None, json!({"email": email, "password": "correct horse", "join": code})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.json()["user"]["role"], "student");
    r.json()["token"].as_str().unwrap().to_string()
}


/// A student's message to the tutor in `chat`: the finished reply as JSON
/// (`json`), or its event stream read to the end.
pub async fn ask_tutor(app: &TestApp, token: &str, chat: &str, content: &str, json: bool) -> super::Reply {
    let mut request = axum::http::Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json");
    if json {
        request = request.header("accept", "application/json");
    }
    app.send(request.body(axum::body::Body::from(json!({"sessionId": chat, "content": content}).to_string())).unwrap()).await
}

/// A school at work, for the tests that move or keep a whole database: a
/// teacher's lesson with versions, a reply and material; a class with the
/// lesson published and a student's answer. Nobody's answers start an
/// automatic reply (the database stays quiet afterwards). The teacher.
pub async fn school_at_work(app: &TestApp, email: &str) -> super::Teacher {
    use margin::chat::sse::SseParser;
    let t = teacher(app, email).await;
    let xml = "<lesson>\n  <h1 id=\"b1\">Verbs</h1>\n  <exercise id=\"e1\" type=\"true-false\"><statement id=\"s1\" answer=\"true\">Être is a verb.</statement></exercise>\n</lesson>\n";
    let saved = app.put_json(&format!("/api/lessons/{}/document", t.lesson_id), Auth::Bearer(&t.token), json!({"xml": xml, "baseRevision": 1})).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    let mut body = super::start_turn(app, &t.token, &t.session_id, "test").await.into_body();
    assert_eq!(super::read_events(&mut body, &mut SseParser::new(), usize::MAX).await.last().unwrap().event, "done");
    let material = super::upload(app, &format!("/api/lessons/{}/sources", t.lesson_id), Auth::Bearer(&t.token), &[("notes.txt", "Être: to be.".as_bytes())]).await;
    assert!(material.status.is_success(), "{}", material.body);
    sqlx::query("UPDATE users SET react_to_events = $1").bind(false).execute(&app.state.db).await.unwrap();
    let class = app.post_json("/api/classes", Auth::Bearer(&t.token), json!({"name": "Year 7"})).await.json();
    let (class_id, code) = (class["id"].as_str().unwrap(), class["joinCode"].as_str().unwrap());
    assert_eq!(app.send_json(Method::PUT, &format!("/api/classes/{class_id}/lessons/{}", t.lesson_id), Auth::Bearer(&t.token), json!({})).await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.post_json(&format!("/api/lessons/{}/publish", t.lesson_id), Auth::Bearer(&t.token), json!({})).await.status, StatusCode::OK);
    let student = student(app, "pupil@x.org", code).await;
    let answered = app.put_json(&format!("/api/learn/lessons/{}/answers", t.lesson_id), Auth::Bearer(&student), json!({"seen": 0, "answers": {"s1": "true"}})).await;
    assert_eq!(answered.status, StatusCode::OK, "{}", answered.body);
    t
}
