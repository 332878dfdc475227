//! Colleagues editing a lesson together: the owner invites a teacher of the
//! same school (nobody else: not another school's teacher, not a student,
//! not by anyone but the owner); the colleague finds the lesson in their
//! list, opens and edits it, has chats of their own, and History says who
//! made each version; sharing, inviting, publishing, versions, renaming,
//! the review setting and deleting stay the owner's; removed, the colleague
//! has nothing again.
#![cfg(feature = "ssr")]

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{
    classes::{save_xml, student, LESSON},
    teacher, Auth, TestApp,
};
use http_body_util::BodyExt;
use margin::chat::sse::SseParser;
use serde_json::{json, Value};
use tower::ServiceExt;

async fn revisions(app: &TestApp, token: &str, lesson: &str) -> Vec<Value> {
    let r = app.get(&format!("/api/lessons/{lesson}/revisions"), Auth::Bearer(token)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json().as_array().unwrap().clone()
}

#[tokio::test]
async fn a_colleague_edits_with_the_owner_and_every_version_says_who() {
    let app = common::app().await;
    let head = teacher(&app, "head@x.org").await;
    let lesson = head.lesson_id.clone();
    save_xml(&app, &head.token, &lesson, LESSON).await;
    let colleague = common::colleague(&app, &head.token, "t@x.org").await;
    let other = common::colleague(&app, &head.token, "u@x.org").await;
    let outsider = teacher(&app, "o@y.org").await;
    let r = app.post_json("/api/classes", Auth::Bearer(&head.token), json!({"name": "7B"})).await;
    student(&app, "s@x.org", r.json()["joinCode"].as_str().unwrap()).await;
    let editors = format!("/api/lessons/{lesson}/editors");

    // Before any invitation the colleague has nothing.
    let r = app.get(&format!("/api/lessons/{lesson}"), Auth::Bearer(&colleague)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // Only teachers of the owner's school, and only by the owner.
    for who in ["o@y.org", "s@x.org", "nobody@x.org"] {
        let r = app.post_json(&editors, Auth::Bearer(&head.token), json!({"email": who})).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{who}: {}", r.body);
        assert!(r.body.contains("is not a teacher at your school"), "{}", r.body);
    }
    let r = app.post_json(&editors, Auth::Bearer(&colleague), json!({"email": "u@x.org"})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.post_json(&editors, Auth::Bearer(&head.token), json!({"email": "  T@X.org "})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json().as_array().unwrap().iter().map(|e| e["email"].as_str().unwrap()).collect::<Vec<_>>(), ["t@x.org"]);
    let colleague_id = app.user_id(&colleague).await;

    // The colleague finds it, opens it and edits it.
    let page = app.get("/", Auth::Cookie(&colleague)).await;
    assert!(page.body.contains("Editing with colleagues") && page.body.contains(&format!("/lessons/{lesson}")) && page.body.contains("head@x.org’s lesson"), "{}", page.body);
    let r = app.get(&format!("/api/lessons/{lesson}"), Auth::Bearer(&colleague)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let edited = LESSON.replace("The verb to be.", "The verb to be, by a colleague.");
    save_xml(&app, &colleague, &lesson, &edited).await;
    let owner_sees = app.get(&format!("/api/lessons/{lesson}"), Auth::Bearer(&head.token)).await.json();
    assert!(owner_sees["documentXml"].as_str().unwrap().contains("by a colleague"));
    let page = app.get(&format!("/lessons/{lesson}"), Auth::Cookie(&colleague)).await;
    assert!(page.body.contains("You edit this lesson with head@x.org."), "the colleague's page says whose it is");
    assert!(!page.body.contains("Publish</button>"), "and offers no publishing");

    // History: each version says who made it, as each of them reads it.
    let by_owner = revisions(&app, &head.token, &lesson).await;
    assert_eq!(by_owner[0]["by"], "t@x.org", "the colleague's version, as the owner reads it: {by_owner:?}");
    assert_eq!(by_owner[1].get("by"), None, "the owner's own");
    let by_colleague = revisions(&app, &colleague, &lesson).await;
    assert_eq!(by_colleague[0].get("by"), None, "their own, as the colleague reads it");
    assert_eq!(by_colleague[1]["by"], "head@x.org");
    let author: Option<String> = sqlx::query_scalar("SELECT author_id FROM lesson_revisions WHERE lesson_id = $1 ORDER BY number DESC LIMIT 1").bind(&lesson).fetch_one(&app.state.db).await.unwrap();
    assert_eq!(author.as_deref(), Some(colleague_id.as_str()));

    // Chats of their own: neither sees the other's.
    let r = app.post_json(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(&colleague), json!({"title": "Mine"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let titles = |v: Value| v.as_array().unwrap().iter().map(|c| c["title"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(titles(app.get(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(&colleague)).await.json()), ["Mine"]);
    assert_eq!(titles(app.get(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(&head.token)).await.json()), ["First chat"]);
    let r = app.get(&format!("/api/chats/{}/messages", head.session_id), Auth::Bearer(&colleague)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "the owner's chat is the owner's");

    // What stays the owner's.
    let owner_only: [(Method, String, Value); 8] = [
        (Method::PUT, format!("/api/lessons/{lesson}/share"), json!({"subject": "", "grade": ""})),
        (Method::GET, editors.clone(), json!(null)),
        (Method::POST, format!("/api/lessons/{lesson}/publish"), json!({})),
        (Method::POST, format!("/api/lessons/{lesson}/versions"), json!({"kind": "grade", "grade": 4})),
        (Method::PATCH, format!("/api/lessons/{lesson}"), json!({"title": "Mine now"})),
        (Method::PUT, format!("/api/lessons/{lesson}/review"), json!({"reviewEdits": true})),
        (Method::DELETE, format!("/api/lessons/{lesson}"), json!(null)),
        (Method::DELETE, format!("{editors}/{colleague_id}"), json!(null)),
    ];
    for (method, path, body) in owner_only {
        let r = app.send_json(method.clone(), &path, Auth::Bearer(&colleague), body).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {path}: {}", r.body);
    }
    let still = app.get(&format!("/api/lessons/{lesson}"), Auth::Bearer(&head.token)).await.json();
    assert_eq!(still["title"], "Verbs", "nothing of the owner's changed");

    // Others have nothing, before and after.
    for who in [&other, &outsider.token] {
        let r = app.get(&format!("/api/lessons/{lesson}"), Auth::Bearer(who)).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
        let r = app.put_json(&format!("/api/lessons/{lesson}/document"), Auth::Bearer(who), json!({"xml": LESSON, "baseRevision": 3})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    }

    // Removed, the colleague has nothing again; their chat no longer reaches it.
    let r = app.send_json(Method::DELETE, &format!("{editors}/{colleague_id}"), Auth::Bearer(&head.token), json!(null)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json(), json!([]));
    let r = app.get(&format!("/api/lessons/{lesson}"), Auth::Bearer(&colleague)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.put_json(&format!("/api/lessons/{lesson}/document"), Auth::Bearer(&colleague), json!({"xml": LESSON, "baseRevision": 3})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.get(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(&colleague)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
}

#[tokio::test]
async fn the_share_page_invites_and_removes_by_form() {
    let app = common::app().await;
    let head = teacher(&app, "head@x.org").await;
    let lesson = head.lesson_id.clone();
    common::colleague(&app, &head.token, "t@x.org").await;
    let form = format!("/lessons/{lesson}/editors");
    let r = app.post_form(&form, Auth::Cookie(&head.token), &[("action", "invite"), ("email", "o@y.org")]).await;
    assert_eq!(r.location(), format!("/lessons/{lesson}/share?editors_error=1"));
    let page = app.get(r.location(), Auth::Cookie(&head.token)).await;
    assert!(page.body.contains("That colleague could not be invited."), "{}", page.body);
    let r = app.post_form(&form, Auth::Cookie(&head.token), &[("action", "invite"), ("email", "t@x.org")]).await;
    assert_eq!(r.location(), format!("/lessons/{lesson}/share"));
    let page = app.get(r.location(), Auth::Cookie(&head.token)).await;
    assert!(page.body.contains("Edit together") && page.body.contains("t@x.org") && page.body.contains("Stop t@x.org editing"), "{}", page.body);
}

/// Runs one turn of `token`'s chat to its end; the edit's `tool_end`.
async fn edit_turn(app: &TestApp, token: &str, chat: &str) -> Value {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/chat/stream")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({"sessionId": chat, "content": "Add a fill-in-the-blank exercise about French verbs"}).to_string()))
        .unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let events = SseParser::new().push(&res.into_body().collect().await.unwrap().to_bytes());
    assert_eq!(events.last().unwrap().event, "done", "{events:?}");
    events.iter().filter(|e| e.event == "tool_end").map(|e| serde_json::from_str::<Value>(&e.data).unwrap()).find(|d| d["id"] == "call_edit").expect("an edit")
}

#[tokio::test]
async fn the_assistant_edits_for_whoever_asked_and_only_they_decide_on_its_proposals() {
    let app = common::app_with(margin::server::config::Config { approval_wait_secs: 1, ..Default::default() }).await;
    let head = teacher(&app, "head@x.org").await;
    let lesson = head.lesson_id.clone();
    let colleague = common::colleague(&app, &head.token, "t@x.org").await;
    let r = app.post_json(&format!("/api/lessons/{lesson}/editors"), Auth::Bearer(&head.token), json!({"email": "t@x.org"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let chat = app.post_json(&format!("/api/lessons/{lesson}/chats"), Auth::Bearer(&colleague), json!({"title": "Mine"})).await.json()["id"].as_str().unwrap().to_string();

    // Landed at once: the assistant's version, made for the colleague.
    let end = edit_turn(&app, &colleague, &chat).await;
    assert_eq!(end["status"], "success", "{end}");
    let newest = revisions(&app, &head.token, &lesson).await[0].clone();
    assert_eq!((newest["author"].as_str(), newest["by"].as_str()), (Some("agent"), Some("t@x.org")), "{newest}");

    // Held for review: only the colleague, whose chat proposed it, decides.
    let r = app.put_json(&format!("/api/lessons/{lesson}/review"), Auth::Bearer(&head.token), json!({"reviewEdits": true})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let end = edit_turn(&app, &colleague, &chat).await;
    assert_eq!(end["status"], "proposed", "{end}");
    let id = end["proposalId"].as_str().unwrap().to_string();
    for r in [
        app.get(&format!("/api/proposals/{id}"), Auth::Bearer(&head.token)).await,
        app.decide(&format!("/api/proposals/{id}/apply"), Auth::Bearer(&head.token), json!({})).await,
        app.decide(&format!("/api/proposals/{id}/discard"), Auth::Bearer(&head.token), json!({})).await,
    ] {
        assert_eq!(r.status, StatusCode::NOT_FOUND, "the owner does not decide on a colleague's proposal: {}", r.body);
    }
    let r = app.decide(&format!("/api/proposals/{id}/apply"), Auth::Bearer(&colleague), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let newest = revisions(&app, &head.token, &lesson).await[0].clone();
    assert_eq!((newest["author"].as_str(), newest["reviewed"].as_bool(), newest["by"].as_str()), (Some("agent"), Some(true), Some("t@x.org")), "{newest}");
}
