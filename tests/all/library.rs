//! The JSON API for lessons as a collection: list and search, create (from
//! XML too), read, rename, duplicate, the trash and its purge.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{app, teacher, Auth, TestApp};
use margin::server::lessons::library;
use serde_json::{json, Value};

async fn create(app: &TestApp, token: &str, body: Value) -> Value {
    let r = app.post_json("/api/lessons", Auth::Bearer(token), body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.json()
}

fn doc(title: &str, text: &str) -> String {
    format!("<lesson><h1>{title}</h1><p>{text}</p></lesson>")
}

fn titles(page: &Value) -> Vec<&str> {
    page["lessons"].as_array().unwrap().iter().map(|l| l["title"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn lessons_are_listed_searched_sorted_and_paged() {
    let app = app().await;
    let t = app.sign_up("list@x.org").await;
    for (title, text) in [("Gamma rays", "light"), ("alpha decay", "atoms"), ("Beta blockers", "the heart and atoms")] {
        create(&app, &t, json!({"title": title, "xml": doc(title, text)})).await;
    }
    let all = app.get("/api/lessons", Auth::Bearer(&t)).await.json();
    assert_eq!(all["total"], 3);
    assert_eq!(titles(&all), vec!["Beta blockers", "alpha decay", "Gamma rays"], "most recently changed first");
    let by_title = app.get("/api/lessons?sort=title", Auth::Bearer(&t)).await.json();
    assert_eq!(titles(&by_title), vec!["alpha decay", "Beta blockers", "Gamma rays"]);
    // Titles and the lesson's text, any case; LIKE's wildcards are plain text.
    let atoms = app.get("/api/lessons?q=ATOMS&sort=title", Auth::Bearer(&t)).await.json();
    assert_eq!((titles(&atoms), atoms["total"].as_i64()), (vec!["alpha decay", "Beta blockers"], Some(2)));
    assert_eq!(app.get("/api/lessons?q=%25", Auth::Bearer(&t)).await.json()["total"], 0);
    // The lesson's words, not its markup.
    assert_eq!(app.get("/api/lessons?q=lesson", Auth::Bearer(&t)).await.json()["total"], 0);
    assert_eq!(app.get("/api/lessons?q=id%3D", Auth::Bearer(&t)).await.json()["total"], 0);
    let page = app.get("/api/lessons?sort=title&limit=1&offset=1", Auth::Bearer(&t)).await.json();
    assert_eq!((titles(&page), page["total"].as_i64()), (vec!["Beta blockers"], Some(3)));
    // Another teacher sees none of them.
    let other = app.sign_up("other@x.org").await;
    assert_eq!(app.get("/api/lessons", Auth::Bearer(&other)).await.json()["total"], 0);
}

#[tokio::test]
async fn a_lesson_is_created_empty_or_from_xml_and_invalid_xml_creates_nothing() {
    let app = app().await;
    let t = app.sign_up("make@x.org").await;
    let empty = create(&app, &t, json!({"title": "Fractions"})).await;
    assert_eq!((empty["title"].as_str(), empty["revision"].as_i64()), (Some("Fractions"), Some(1)));
    assert!(empty["html"]["teacher"].as_str().unwrap().contains("Fractions"));
    // From XML, named by its first heading when no title is given.
    let imported = create(&app, &t, json!({"xml": doc("Photosynthesis", "Plants make sugar.")})).await;
    assert_eq!(imported["title"], "Photosynthesis");
    assert!(imported["documentXml"].as_str().unwrap().contains("Plants make sugar."));
    let read = app.get(&format!("/api/lessons/{}", imported["id"].as_str().unwrap()), Auth::Bearer(&t)).await;
    assert_eq!(read.json()["documentXml"], imported["documentXml"]);
    // Every problem with its line; nothing created.
    let bad = app.post_json("/api/lessons", Auth::Bearer(&t), json!({"title": "Bad", "xml": "<lesson>\n<p>open\n</lesson>"})).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    assert_eq!(bad.json()["code"], "invalid_lesson");
    assert!(bad.json()["errors"][0]["line"].as_u64().unwrap() >= 1, "{}", bad.body);
    assert_eq!(app.get("/api/lessons", Auth::Bearer(&t)).await.json()["total"], 2);
    let blank = app.post_json("/api/lessons", Auth::Bearer(&t), json!({"title": "  "})).await;
    assert_eq!(blank.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn rename_and_duplicate_and_another_teachers_ids_are_not_found() {
    let app = app().await;
    let t = teacher(&app, "dup@x.org").await;
    let r = app.send_json(Method::PATCH, &format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token), json!({"title": " Verbs,  revised "})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["title"], "Verbs, revised");
    let blank = app.send_json(Method::PATCH, &format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token), json!({"title": ""})).await;
    assert_eq!(blank.status, StatusCode::BAD_REQUEST);

    let copy = app.post_json(&format!("/api/lessons/{}/duplicate", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(copy.status, StatusCode::CREATED, "{}", copy.body);
    let copy = copy.json();
    let original = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(copy["title"], "Copy of Verbs, revised");
    assert_eq!(copy["documentXml"], original["documentXml"]);
    assert_eq!(copy["revision"], 1);
    let copy_chats = app.get(&format!("/api/lessons/{}/chats", copy["id"].as_str().unwrap()), Auth::Bearer(&t.token)).await;
    assert_eq!(copy_chats.json().as_array().unwrap().len(), 0, "a copy has no chats");

    let stranger = app.sign_up("stranger@x.org").await;
    let id = &t.lesson_id;
    for (method, path) in [
        (Method::GET, format!("/api/lessons/{id}")),
        (Method::PATCH, format!("/api/lessons/{id}")),
        (Method::DELETE, format!("/api/lessons/{id}")),
        (Method::POST, format!("/api/lessons/{id}/duplicate")),
        (Method::POST, format!("/api/lessons/{id}/restore")),
        (Method::DELETE, format!("/api/trash/{id}")),
    ] {
        let r = app.send_json(method.clone(), &path, Auth::Bearer(&stranger), json!({"title": "Mine now"})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {path}: {}", r.body);
    }
    assert_eq!(app.get(&format!("/api/lessons/{id}"), Auth::Bearer(&t.token)).await.json()["title"], "Verbs, revised");
}

#[tokio::test]
async fn the_trash_hides_a_lesson_with_its_chats_and_restore_brings_everything_back() {
    let app = app().await;
    let t = teacher(&app, "trash@x.org").await;
    let bearer = Auth::Bearer(&t.token);
    let save = app
        .put_json(&format!("/api/lessons/{}/document", t.lesson_id), bearer, json!({"xml": doc("Verbs", "Run, ran."), "baseRevision": 1}))
        .await;
    assert_eq!(save.status, StatusCode::OK, "{}", save.body);

    let r = app.send_json(Method::DELETE, &format!("/api/lessons/{}", t.lesson_id), bearer, json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["days"], 30);
    assert_eq!(app.get("/api/lessons", bearer).await.json()["total"], 0);
    for path in [
        format!("/api/lessons/{}", t.lesson_id),
        format!("/api/lessons/{}/revisions", t.lesson_id),
        format!("/api/lessons/{}/chats", t.lesson_id),
        format!("/api/chats/{}/messages", t.session_id),
    ] {
        assert_eq!(app.get(&path, bearer).await.status, StatusCode::NOT_FOUND, "{path}");
    }
    let stream = app.post_json("/api/chat/stream", bearer, json!({"sessionId": t.session_id, "content": "hello"})).await;
    assert_eq!(stream.status, StatusCode::NOT_FOUND);
    let trash = app.get("/api/trash", bearer).await.json();
    assert_eq!(trash[0]["id"], t.lesson_id.as_str());
    assert_eq!(trash[0]["title"], "Verbs");

    let back = app.post_json(&format!("/api/lessons/{}/restore", t.lesson_id), bearer, json!({})).await;
    assert_eq!(back.status, StatusCode::OK, "{}", back.body);
    assert_eq!(back.json()["revision"], 2);
    let revisions = app.get(&format!("/api/lessons/{}/revisions", t.lesson_id), bearer).await.json();
    assert_eq!(revisions.as_array().unwrap().len(), 2);
    let chats = app.get(&format!("/api/lessons/{}/chats", t.lesson_id), bearer).await.json();
    assert_eq!(chats[0]["id"], t.session_id.as_str());
    assert_eq!(app.get("/api/trash", bearer).await.json().as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn delete_forever_works_only_from_the_trash_and_the_purge_takes_what_is_30_days_old() {
    let app = app().await;
    let t = teacher(&app, "purge@x.org").await;
    let bearer = Auth::Bearer(&t.token);
    let path = format!("/api/trash/{}", t.lesson_id);
    assert_eq!(app.send_json(Method::DELETE, &path, bearer, json!({})).await.status, StatusCode::NOT_FOUND, "not in the trash yet");
    app.send_json(Method::DELETE, &format!("/api/lessons/{}", t.lesson_id), bearer, json!({})).await;
    assert_eq!(app.send_json(Method::DELETE, &path, bearer, json!({})).await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.post_json(&format!("/api/lessons/{}/restore", t.lesson_id), bearer, json!({})).await.status, StatusCode::NOT_FOUND);
    let chats: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_sessions").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(chats, 0, "its chats went with it");

    // The purge, on a clock the test sets.
    let other = create(&app, &t.token, json!({"title": "Old"})).await;
    let id = other["id"].as_str().unwrap();
    app.send_json(Method::DELETE, &format!("/api/lessons/{id}"), bearer, json!({})).await;
    let deleted_at: String = sqlx::query_scalar("SELECT deleted_at FROM lessons WHERE id = $1").bind(id).fetch_one(&app.state.db).await.unwrap();
    let day = |n: u64| margin::server::db::time::shifted(&deleted_at, std::time::Duration::from_secs(n * 86_400), true).unwrap();
    assert_eq!(library::purge(&app.state.db, &day(29)).await.unwrap(), 0);
    assert_eq!(app.get("/api/trash", bearer).await.json().as_array().unwrap().len(), 1);
    assert_eq!(library::purge(&app.state.db, &day(30)).await.unwrap(), 1);
    assert_eq!(app.get("/api/trash", bearer).await.json().as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn deleting_a_lesson_stops_its_running_turn_first() {
    let app = app().await;
    let t = teacher(&app, "busy@x.org").await;
    let bearer = Auth::Bearer(&t.token);
    let res = common::start_turn(&app, &t.token, &t.session_id, "hold on").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(app.state.turns.running_in(&t.session_id).is_some());
    let r = app.send_json(Method::DELETE, &format!("/api/lessons/{}", t.lesson_id), bearer, json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(app.state.turns.running_in(&t.session_id).is_none());
    let status: String = sqlx::query_scalar("SELECT status FROM chat_messages WHERE role = 'assistant'").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(status, "cancelled");
    drop(res);
}

/// The "Import lesson" form posting `xml` as the file `name`.
async fn import_file(app: &TestApp, token: &str, name: &str, xml: &str) -> common::Reply {
    let body = format!(
        "--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/xml\r\n\r\n{xml}\r\n--b0undary--\r\n"
    );
    let req = axum::http::Request::builder()
        .method(Method::POST)
        .uri("/lessons/import")
        .header("cookie", format!("margin_session={token}"))
        .header("origin", common::OWN_ORIGIN)
        .header("content-type", "multipart/form-data; boundary=b0undary")
        .body(axum::body::Body::from(body))
        .unwrap();
    app.send(req).await
}

#[tokio::test]
async fn the_import_form_makes_a_lesson_or_reports_every_problem_and_makes_nothing() {
    use leptos::server_fn::ServerFn;
    let app = app().await;
    let t = app.sign_up("import@x.org").await;
    let ok = import_file(&app, &t, "tides.xml", &doc("Tides", "The moon pulls the sea.")).await;
    assert!(ok.status.is_redirection(), "{}", ok.body);
    let id = ok.location().strip_prefix("/lessons/").expect("to the new lesson").to_string();
    let made = app.get(&format!("/api/lessons/{id}"), Auth::Bearer(&t)).await.json();
    assert_eq!(made["title"], "Tides");

    let bad = import_file(&app, &t, "broken.xml", "<lesson>\n<h1>Broken</h1>\n<p>never closed\n</lesson>").await;
    let token = bad.location().strip_prefix("/?import=").expect("back to the list with a report").to_string();
    assert_eq!(app.get("/api/lessons", Auth::Bearer(&t)).await.json()["total"], 1, "nothing created");
    let path = <margin::api::lessons::FindImportReport as ServerFn>::PATH;
    let report = app.post_form(path, Auth::Cookie(&t), &[("token", token.as_str())]).await;
    let report = report.json();
    assert_eq!(report["file"], "broken.xml");
    assert!(report["problems"][0].as_str().unwrap().starts_with("Line "), "{report}");
    // The list page shows it.
    let page = app.get(&format!("/?import={token}"), Auth::Cookie(&t)).await;
    assert!(page.body.contains("“broken.xml” was not imported"), "{}", page.body);
    // Another teacher cannot read it.
    let other = app.sign_up("nosy@x.org").await;
    let theirs = app.post_form(path, Auth::Cookie(&other), &[("token", token.as_str())]).await;
    assert_eq!(theirs.body, "null");
}

#[tokio::test]
async fn an_import_report_is_kept_in_the_database_for_its_teacher_only_and_briefly() {
    use margin::{
        models::ImportReport,
        server::{db::time, lessons::import_reports},
    };
    let app = app().await;
    let ana = app.user_id(&app.sign_up("ana@x.org").await).await;
    let ben = app.user_id(&app.sign_up("ben@x.org").await).await;
    let report = ImportReport { file: "verbs.xml".into(), problems: vec!["Line 2: <marquee> is not a lesson element".into()], made: None };
    let token = import_reports::keep(&app.state.db, &ana, &report).await.unwrap();

    // Read through any instance: the database, not one process, holds it.
    let now = time::now();
    assert_eq!(import_reports::find(&app.state.db, &ana, &token, &now).await.unwrap(), Some(report));
    assert_eq!(import_reports::find(&app.state.db, &ben, &token, &now).await.unwrap(), None);
    assert_eq!(import_reports::find(&app.state.db, &ana, "no-such-token", &now).await.unwrap(), None);
    // Ten minutes on, it is gone, and the purge forgets it.
    let later = time::shifted(&now, std::time::Duration::from_secs(601), true).unwrap();
    assert_eq!(import_reports::find(&app.state.db, &ana, &token, &later).await.unwrap(), None);
    assert_eq!(import_reports::purge(&app.state.db, &later).await.unwrap(), 1);
}

#[tokio::test]
async fn search_is_full_text_and_follows_every_change() {
    let app = app().await;
    let t = app.sign_up("search@x.org").await;
    let volcanoes = create(&app, &t, json!({"title": "Volcanoes", "xml": doc("Volcanoes", "Lava and ash from Iceland")})).await;
    create(&app, &t, json!({"title": "Islands", "xml": doc("Islands", "Volcanoes made Iceland; glaciers shaped it")})).await;
    create(&app, &t, json!({"title": "Rivers", "xml": doc("Rivers", "Water runs downhill")})).await;
    let search = |q: &str, sort: &str| {
        let url = format!("/api/lessons?q={}&sort={sort}", q.replace(' ', "%20"));
        let app = &app;
        let t = t.clone();
        async move { app.get(&url, Auth::Bearer(&t)).await.json() }
    };
    // A word is found by its beginning, in the title or the text, any case.
    assert_eq!(titles(&search("VOLCAN", "title").await), vec!["Islands", "Volcanoes"]);
    // Every word must be there.
    assert_eq!(titles(&search("iceland glaciers", "title").await), vec!["Islands"]);
    assert_eq!(search("iceland rivers", "title").await["total"], 0);
    // Best match: a lesson named for the word comes before one that only mentions it.
    assert_eq!(titles(&search("volcanoes", "relevance").await), vec!["Volcanoes", "Islands"]);
    // What is typed is never query syntax.
    for odd in ["\"", "(lava", "lava OR", "*", "NEAR(lava ash)", "-lava", "lava^"] {
        let r = app.get(&format!("/api/lessons?q={}", odd.replace('"', "%22").replace('^', "%5E").replace(' ', "%20")), Auth::Bearer(&t)).await;
        assert_eq!(r.status, StatusCode::OK, "{odd}: {}", r.body);
    }
    assert_eq!(search("(lava", "title").await["total"], 1);
    // A rename, a save and a deletion reach the index at once.
    let id = volcanoes["id"].as_str().unwrap();
    let r = app.send_json(axum::http::Method::PATCH, &format!("/api/lessons/{id}"), Auth::Bearer(&t), json!({"title": "Fire mountains"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(titles(&search("fire", "title").await), vec!["Fire mountains"]);
    let r = app
        .put_json(&format!("/api/lessons/{id}/document"), Auth::Bearer(&t), json!({"xml": doc("Fire mountains", "Magma rises"), "baseRevision": volcanoes["revision"]}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("Saved"), "{}", r.body);
    assert_eq!(search("lava", "title").await["total"], 0);
    assert_eq!(titles(&search("magma", "title").await), vec!["Fire mountains"]);
    assert_eq!(app.send_json(axum::http::Method::DELETE, &format!("/api/lessons/{id}"), Auth::Bearer(&t), json!({})).await.status, StatusCode::OK);
    assert_eq!(search("magma", "title").await["total"], 0, "the trash is not searched");
    assert_eq!(app.send_json(axum::http::Method::DELETE, &format!("/api/trash/{id}"), Auth::Bearer(&t), json!({})).await.status, StatusCode::NO_CONTENT);
    // Another teacher's lessons are never found.
    let other = app.sign_up("other-search@x.org").await;
    assert_eq!(app.get("/api/lessons?q=iceland", Auth::Bearer(&other)).await.json()["total"], 0);
}

#[tokio::test]
async fn a_lesson_prints_as_a_worksheet_or_a_key_for_its_owner_only() {
    let app = app().await;
    let t = app.sign_up("print@x.org").await;
    let xml = "<lesson><h1>Verbs</h1><note>Quiet group first.</note><exercise type=\"fill-blanks\"><p>She <blank answer=\"ran\"/> home.</p></exercise></lesson>";
    let lesson = create(&app, &t, json!({"title": "Verbs & <i>nouns</i>", "xml": xml})).await;
    let id = lesson["id"].as_str().unwrap();
    let sheet = app.get(&format!("/lessons/{id}/print"), Auth::Cookie(&t)).await;
    assert_eq!(sheet.status, StatusCode::OK);
    // The title as text, escaped once, in the window's title and on the sheet.
    assert!(sheet.body.contains("<title>Verbs &amp; &lt;i&gt;nouns&lt;/i&gt; · Worksheet · Margin</title>"), "{}", sheet.body);
    assert!(sheet.body.contains("Verbs &amp; &lt;i&gt;nouns&lt;/i&gt;</h1>"), "{}", sheet.body);
    assert!(sheet.headers[axum::http::header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    assert!(sheet.body.contains("Name:") && sheet.body.contains("1. Fill in the blanks"), "{}", sheet.body);
    assert!(!sheet.body.contains(">ran<") && !sheet.body.contains("Quiet group"), "{}", sheet.body);
    assert!(!sheet.body.contains("<script"), "a print page needs no script");
    let key = app.get(&format!("/lessons/{id}/print?key=1"), Auth::Cookie(&t)).await;
    assert!(key.body.contains(">ran<") && key.body.contains("Answer key"), "{}", key.body);
    assert!(!key.body.contains("Quiet group"));
    // Another teacher, and nobody signed in, get no lesson.
    let other = app.sign_up("other-print@x.org").await;
    let theirs = app.get(&format!("/lessons/{id}/print?key=1"), Auth::Cookie(&other)).await;
    assert!(!theirs.body.contains(">ran<"));
    assert_eq!(theirs.location(), "/lessons/not-found");
    let nobody = app.get(&format!("/lessons/{id}/print"), Auth::None).await;
    assert!(nobody.location().starts_with("/signin"), "{:?}", nobody.location());
}
