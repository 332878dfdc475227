//! Hostile input from one account (issue #36): files made to crash or
//! exhaust a reader, large bodies sent without a session, budgets and
//! credits with open sign-up, guessed join codes, storms of events, forged
//! page messages, two saves at once, and storage without end. Each costs its
//! sender a refusal in words and nobody else anything.
#![cfg(feature = "ssr")]

use crate::common;
use crate::material_files;

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{app, app_with, teacher, upload, Auth, TestApp};
use margin::server::{
    config::Config,
    material::sandbox::{ChildLimits, Extractor, Refusal},
};
use material_files::{docx, docx_bomb, pdf_flate_bomb, pdf_nested, qti_one_part_named, qti_over_budget, qti_quiz_listed, worksheet_bomb};
use serde_json::json;

fn sources(lesson: &str) -> String {
    format!("/api/lessons/{lesson}/sources")
}

async fn healthy(app: &TestApp) {
    let r = app.get("/healthz", Auth::None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn hostile_files_cost_one_refused_upload_while_the_server_and_other_turns_go_on() {
    let app = app().await;
    let t = teacher(&app, "hostile@school.test").await;
    let other = teacher(&app, "other@school.test").await;
    let kelvin = format!("<p>Before</p>{}<script>\u{212A}</script><p>After</p>", "<script>x</script><style>y</style>".repeat(50_000));
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        // Arrays nested 200,000 deep: the PDF reader's recursion runs out of stack.
        ("nested.pdf", pdf_nested(200_000), "could not be read safely"),
        // 64 MB of zeros packed twice over into a few hundred bytes.
        ("bomb.pdf", pdf_flate_bomb(64 * 1024 * 1024, 2), "could not be read safely"),
        // 40 MB of XML packed into a small zip.
        ("bomb.docx", docx_bomb(40 * 1024 * 1024), "unpacks to far more than its text"),
        // 20 MB of XML under the size cap, but millions of elements.
        ("nodes.docx", docx_bomb(20 * 1024 * 1024), "unpacks to far more than its text"),
    ];
    for (name, bytes, said) in cases {
        assert!(bytes.len() < 1024 * 1024, "{name} is small: {} bytes", bytes.len());
        // The upload and another teacher's reply at once.
        let (path, files) = (sources(&t.lesson_id), [(name, bytes.as_slice())]);
        let (r, reply) = tokio::join!(
            upload(&app, &path, Auth::Bearer(&t.token), &files),
            app.post_json("/api/chat/stream", Auth::Bearer(&other.token), json!({"sessionId": other.session_id, "content": "test"})),
        );
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{name}: {}", r.body);
        let sentence = r.json()["error"].as_str().unwrap().to_string();
        assert!(sentence.contains(said) && sentence.contains(name), "{name}: {sentence}");
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert!(reply.body.contains("event: done"), "{}", reply.body);
        healthy(&app).await;
    }
    // A page of 100,000 scripts and styles and an odd letter inside one:
    // read in one pass, no panic.
    let r = upload(&app, &sources(&t.lesson_id), Auth::Bearer(&t.token), &[("page.html", kelvin.as_bytes())]).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.json()[0]["opening"], "Before After");
    // Nothing of the refused files was kept, and the teacher can go on.
    let list = app.get(&sources(&t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let r = upload(&app, &sources(&t.lesson_id), Auth::Bearer(&t.token), &[("Rivers.docx", &docx(&["Rivers run."]))]).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}

#[tokio::test]
async fn a_reader_is_held_to_its_memory_and_its_time() {
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_margin"));
    // 16 MB of memory cannot hold the 800,000 XML nodes of a Word document
    // of 200,000 paragraphs (1 MB of text).
    let big = docx(&vec!["River"; 200_000]);
    let small = Extractor::new(Some(bin.clone()), ChildLimits { memory_bytes: 16 * 1024 * 1024, ..ChildLimits::default() }, 1);
    // Where the reader runs out decides how it ends: an allocation the
    // reader cannot go without stops the process (Unsafe); one the reader
    // asked for with a way out (unpacking the text part) is refused in words.
    let refused = small.text_of("big.docx", &big).await.unwrap_err();
    match &refused {
        Refusal::Unsafe(name) => assert_eq!(name, "big.docx"),
        Refusal::File(why) => assert!(why.contains("“big.docx”") && why.contains("more memory"), "{why}"),
        other => panic!("{other:?}"),
    }
    // With room, the same file is read.
    let roomy = Extractor::new(Some(bin), ChildLimits::default(), 1);
    assert!(roomy.text_of("big.docx", &big).await.unwrap().starts_with("River\nRiver\n"));

    // A reader that never answers is stopped at its time limit.
    let dir = tempfile::tempdir().unwrap();
    let stuck = dir.path().join("stuck.sh");
    std::fs::write(&stuck, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(&mut std::fs::metadata(&stuck).unwrap().permissions(), 0o755);
    std::fs::set_permissions(&stuck, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let slow = Extractor::new(Some(stuck), ChildLimits { wall: Duration::from_millis(500), ..ChildLimits::default() }, 1);
    assert_eq!(slow.text_of("notes.txt", b"Rivers").await.unwrap_err(), Refusal::Unsafe("notes.txt".into()));
}

#[tokio::test]
async fn the_lesson_and_the_accounts_turn_are_checked_before_anything_is_read() {
    // No reader can start here: any file that got as far as reading would be
    // refused as the server's trouble, not with the sentences below.
    let app = app_with(Config { extractor_program: Some("/nonexistent/margin".into()), ..Config::default() }).await;
    let t = teacher(&app, "full@school.test").await;
    for n in 0..20 {
        sqlx::query("INSERT INTO lesson_sources (id, lesson_id, seq, name, size, chars, opening, text, created_at) VALUES ($1, $2, $3, 'a.txt', 1, 1, 'a', 'a', '2026-11-25T00:00:00.000Z')")
            .bind(format!("s{n}"))
            .bind(&t.lesson_id)
            .bind(n)
            .execute(&app.state.db)
            .await
            .unwrap();
    }
    let r = upload(&app, &sources(&t.lesson_id), Auth::Bearer(&t.token), &[("more.pdf", b"%PDF-1.4")]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("at most 20 sources"), "{}", r.body);
    // An account whose storage is full: refused before reading too.
    let full = teacher(&app, "no-room@school.test").await;
    let full_id = app.user_id(&full.token).await;
    sqlx::query("UPDATE users SET stored_bytes = $2 WHERE id = $1").bind(&full_id).bind(600i64 * 1024 * 1024).execute(&app.state.db).await.unwrap();
    let r = upload(&app, &sources(&full.lesson_id), Auth::Bearer(&full.token), &[("notes.txt", b"Rivers")]).await;
    assert_eq!(r.status, StatusCode::INSUFFICIENT_STORAGE, "{}", r.body);
    // Another batch of the same account's still being read: refused at once.
    let other = teacher(&app, "busy@school.test").await;
    let user = app.user_id(&other.token).await;
    let held = app.state.extractor.account_turn(&user).unwrap();
    let r = upload(&app, &sources(&other.lesson_id), Auth::Bearer(&other.token), &[("a.txt", b"Rivers")]).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("still reading the files you added"), "{}", r.body);
    drop(held);
    // Once it is done, the upload goes as far as reading (here: no reader).
    let r = upload(&app, &sources(&other.lesson_id), Auth::Bearer(&other.token), &[("a.txt", b"Rivers")]).await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.body);
}

/// A request body that counts how much of it the server pulled.
fn counted_body(total: usize, pulled: Arc<AtomicUsize>) -> Body {
    let chunks = (0..total / 65_536).map(move |_| {
        pulled.fetch_add(65_536, Ordering::SeqCst);
        Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b'x'; 65_536]))
    });
    Body::from_stream(futures::stream::iter(chunks))
}

#[tokio::test]
async fn a_large_body_without_a_session_is_refused_before_it_is_read() {
    let app = app().await;
    let t = teacher(&app, "big@school.test").await;
    let size = 24 * 1024 * 1024;
    for (path, auth, status) in [
        (sources(&t.lesson_id), None, StatusCode::UNAUTHORIZED),
        (sources(&t.lesson_id), Some("not-a-session"), StatusCode::UNAUTHORIZED),
        (format!("/lessons/{}/sources", t.lesson_id), None, StatusCode::SEE_OTHER),
        ("/lessons/import".to_string(), None, StatusCode::SEE_OTHER),
    ] {
        let pulled = Arc::new(AtomicUsize::new(0));
        let mut req = Request::builder()
            .method(Method::POST)
            .uri(&path)
            .header(header::CONTENT_TYPE, "multipart/form-data; boundary=x")
            .header(header::CONTENT_LENGTH, size.to_string());
        if let Some(token) = auth {
            req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let r = app.send(req.body(counted_body(size, pulled.clone())).unwrap()).await;
        assert_eq!(r.status, status, "{path}: {}", r.body);
        assert_eq!(pulled.load(Ordering::SeqCst), 0, "{path}: nothing of the body was read");
    }
    // Signed in, the same body is read (and refused for what it holds).
    let pulled = Arc::new(AtomicUsize::new(0));
    let req = Request::builder()
        .method(Method::POST)
        .uri(sources(&t.lesson_id))
        .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
        .header(header::CONTENT_TYPE, "multipart/form-data; boundary=x")
        .header(header::CONTENT_LENGTH, size.to_string());
    let r = app.send(req.body(counted_body(size, pulled.clone())).unwrap()).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(pulled.load(Ordering::SeqCst), size);
}

#[tokio::test]
async fn a_fresh_sign_up_cannot_mint_credits_or_lift_the_servers_allowance() {
    let app = app_with(Config { monthly_tokens: Some(100_000), ..Config::default() }).await;
    let t = teacher(&app, "self-made@school.test").await;
    let bearer = Auth::Bearer(&t.token);
    let r = app.post_json("/api/school/credits", bearer, json!({"tokens": 1_000_000_000_000i64})).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("whoever runs this Margin server"), "{}", r.body);
    for wanted in [json!(-1), json!(100_001), json!(9_000_000_000_000i64)] {
        let r = app.send_json(Method::PATCH, "/api/school", bearer, json!({"monthlyTokens": wanted})).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{wanted}: {}", r.body);
    }
    // The form says so too, and changes nothing.
    let r = app.post_form("/school/settings", Auth::Cookie(&t.token), &[("name", "Mine"), ("monthly_tokens", "5000000")]).await;
    assert_eq!(r.location(), "/school?error=allowance");
    let school = app.get("/api/school", bearer).await.json();
    assert_eq!((school["usage"]["credits"].as_i64(), school["usage"]["allowance"].as_i64()), (Some(0), Some(100_000)), "{school}");
    assert_eq!(school["operator"], false);
    // Lowering is the admin's to do.
    let r = app.send_json(Method::PATCH, "/api/school", bearer, json!({"monthlyTokens": 20_000})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["usage"]["allowance"], 20_000);
    // The page offers no credits form to the admin.
    let page = app.get("/school", Auth::Cookie(&t.token)).await;
    assert!(!page.body.contains("Tokens to add") && page.body.contains("Credits are added by whoever runs this Margin server"), "{}", page.body);

    // An operator may, within bounds that keep every sum in range.
    assert!(margin::server::accounts::operators::add(&app.state.db, "self-made@school.test").await.unwrap());
    let r = app.send_json(Method::PATCH, "/api/school", bearer, json!({"monthlyTokens": -1})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.json()["usage"]["allowance"].is_null(), "unlimited: {}", r.body);
    let r = app.post_json("/api/school/credits", bearer, json!({"tokens": 1_000_000})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    for tokens in [json!(i64::MAX), json!(i64::MAX - 5), json!(1_000_000_000_001i64)] {
        let r = app.post_json("/api/school/credits", bearer, json!({"tokens": tokens})).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{tokens}: {}", r.body);
    }
    let r = app.send_json(Method::PATCH, "/api/school", bearer, json!({"monthlyTokens": i64::MAX})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let school = app.get("/api/school", bearer).await;
    assert_eq!(school.status, StatusCode::OK);
    assert_eq!(school.json()["usage"]["credits"], 1_000_000);
    assert!(app.get("/school", Auth::Cookie(&t.token)).await.body.contains("Tokens to add"));
}

#[tokio::test]
async fn the_operators_are_named_on_the_command_line() {
    let app = app().await;
    teacher(&app, "runs-it@school.test").await;
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_margin")).args(args).env("DATABASE_URL", &app.database.url).output().unwrap()
    };
    let out = run(&["operators", "add", "runs-it@school.test"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&run(&["operators"]).stdout).trim(), "runs-it@school.test");
    assert!(!run(&["operators", "add", "nobody@school.test"]).status.success());
    let out = run(&["allowance", "set", "--school", "My school", "--tokens", "unlimited"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&["operators", "remove", "runs-it@school.test"]);
    assert!(out.status.success());
    assert!(margin::server::accounts::operators::list(&app.state.db).await.unwrap().is_empty());
}

#[tokio::test]
async fn no_page_prints_a_sentence_from_its_address() {
    let app = app().await;
    let t = teacher(&app, "pages@school.test").await;
    let forged = "Your%20account%20is%20locked.%20Sign%20in%20at%20evil.example";
    for path in [format!("/classes?error={forged}"), format!("/lessons/{}?material_error={forged}", t.lesson_id), format!("/school?error={forged}")] {
        let r = app.get(&path, Auth::Cookie(&t.token)).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        assert!(!r.body.contains("evil.example"), "{path}");
    }
    // A class name refused comes back as a code the page words.
    let r = app.post_form("/classes", Auth::Cookie(&t.token), &[("name", "")]).await;
    assert_eq!(r.location(), "/classes?error=name");
    assert!(app.get("/classes?error=name", Auth::Cookie(&t.token)).await.body.contains("Give the class a name"));
    // A lesson id with a line break in the material form answers a redirect, not a 500.
    let r = upload(&app, "/lessons/abc%0D%0ALocation:%20x/sources", Auth::Cookie(&t.token), &[("a.txt", b"a")]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert!(!r.location().contains('\n') && !r.location().contains('\r'), "{}", r.location());
    let r = app.post_form("/lessons/abc%0D%0A/sources/x/remove", Auth::Cookie(&t.token), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
}

#[tokio::test]
async fn join_codes_cannot_be_guessed_without_end() {
    let app = app().await;
    let mut refused = None;
    for n in 0..200 {
        let r = app.get(&format!("/join/GUESS{n:03}"), Auth::None).await;
        if r.status == StatusCode::TOO_MANY_REQUESTS {
            refused = Some(n);
            break;
        }
        assert_eq!(r.status, StatusCode::OK);
    }
    assert_eq!(refused, Some(60), "the page is a try of a code: 60 at once, then one every few seconds");
    // Signed in, each account has its own count too.
    let app = common::app().await;
    let t = teacher(&app, "c@school.test").await;
    let r = app.post_json("/api/classes", Auth::Bearer(&t.token), json!({"name": "Year 7"})).await;
    let code = r.json()["joinCode"].as_str().unwrap().to_string();
    let s = app
        .post_json("/api/auth/signup", Auth::None, json!({"email": "s@school.test", "password": "correct horse", "join": code}))
        .await
        .json()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let mut statuses = Vec::new();
    for n in 0..12 {
        statuses.push(app.post_json("/api/learn/join", Auth::Bearer(&s), json!({"code": format!("NOPE{n:04}")})).await.status);
    }
    assert_eq!(statuses.iter().filter(|s| **s == StatusCode::NOT_FOUND).count(), 10, "{statuses:?}");
    assert_eq!(statuses.last(), Some(&StatusCode::TOO_MANY_REQUESTS));
}

#[tokio::test]
async fn events_are_limited_per_account() {
    let app = app().await;
    let t = teacher(&app, "events@school.test").await;
    let mut statuses = Vec::new();
    for _ in 0..32 {
        statuses.push(app.post_json("/api/chat/events", Auth::Bearer(&t.token), json!({"lessonId": t.lesson_id, "intent": "sessionStart"})).await.status);
    }
    assert!(statuses[..30].iter().all(|s| *s == StatusCode::ACCEPTED), "{statuses:?}");
    assert_eq!(statuses[31], StatusCode::TOO_MANY_REQUESTS, "{statuses:?}");
}

#[test]
fn blanks_do_not_tell_the_length_of_their_answers() {
    let xml = r#"<lesson><exercise id="e1" type="fill-blanks"><p id="p1">A <blank id="b1" answer="a"/> and <blank id="b2" answer="extraordinarily"/>.</p></exercise></lesson>"#;
    let root = margin::lesson::parse(xml).unwrap();
    let html = margin::lesson::to_html(&root, margin::lesson::Audience::Student);
    let sizes: Vec<&str> = html.match_indices("size=\"").map(|(i, _)| &html[i + 6..i + 8]).collect();
    assert_eq!(sizes, ["16", "16"], "{html}");
}

#[tokio::test]
async fn a_teachers_storage_is_bounded_and_shown() {
    let app = app_with(Config { storage_mb: 1, ..Config::default() }).await;
    let t = teacher(&app, "hoarder@school.test").await;
    let chunk = "Rivers run to the sea. ".repeat(20_000); // 460 KB of text
    let mut statuses = Vec::new();
    for n in 0..4 {
        let r = upload(&app, &sources(&t.lesson_id), Auth::Bearer(&t.token), &[(&format!("part{n}.txt"), chunk.as_bytes())]).await;
        statuses.push(r.status);
        if r.status == StatusCode::INSUFFICIENT_STORAGE {
            assert!(r.json()["error"].as_str().unwrap().contains("storage is full"), "{}", r.body);
            assert_eq!(r.json()["code"], "storage_full");
        }
    }
    assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CREATED, StatusCode::INSUFFICIENT_STORAGE, StatusCode::INSUFFICIENT_STORAGE]);
    let list = app.get(&sources(&t.lesson_id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(list.as_array().unwrap().len(), 2, "nothing of a refused file is kept");
    let school = app.get("/api/school", Auth::Bearer(&t.token)).await.json();
    let stored = school["members"][0]["storedBytes"].as_i64().unwrap();
    assert!(stored > 2 * chunk.len() as i64 && stored < 1024 * 1024, "{stored}");
    assert!(app.get("/school", Auth::Cookie(&t.token)).await.body.contains("0.9 MB"));
    // Removing material makes room again, and the count follows.
    let id = list[0]["id"].as_str().unwrap();
    assert_eq!(app.send_json(Method::DELETE, &format!("{}/{id}", sources(&t.lesson_id)), Auth::Bearer(&t.token), json!(null)).await.status, StatusCode::NO_CONTENT);
    let r = upload(&app, &sources(&t.lesson_id), Auth::Bearer(&t.token), &[("again.txt", chunk.as_bytes())]).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    // A lesson deleted for good takes its versions and material off the count.
    let owner = app.user_id(&t.token).await;
    sqlx::query("DELETE FROM lessons WHERE id = $1").bind(&t.lesson_id).execute(&app.state.db).await.unwrap();
    let (stored, _) = margin::server::accounts::quota::usage(&app.state.db, &owner).await.unwrap();
    assert_eq!(stored, 0);
}

#[tokio::test]
async fn old_autosaves_are_thinned_and_every_version_undo_needs_is_kept() {
    let app = app().await;
    let t = teacher(&app, "saver@school.test").await;
    let owner = app.user_id(&t.token).await;
    let db = &app.state.db;
    // The assistant's one edit (the 31st save) adds a paragraph no later save touches.
    let doc = |n: usize| {
        let added = if n >= 30 { "<p id=\"a\">Added by the assistant.</p>" } else { "" };
        // The assistant's save changes nothing but its paragraph.
        let n = if n == 30 { 29 } else { n };
        format!("<lesson><h1 id=\"h\">Draft {n}</h1><p id=\"p\">Text {n}</p>{added}</lesson>")
    };
    let mut revision = 1;
    use margin::{
        models::{Author, SaveOutcome},
        server::lessons,
    };
    for n in 0..130 {
        let author = if n == 30 { Author::Agent } else { Author::Teacher };
        match lessons::save_document(db, &owner, &t.lesson_id, &doc(n), revision, author, "save").await.unwrap() {
            SaveOutcome::Saved { revision: r, .. } => revision = r,
            other => panic!("{other:?}"),
        }
    }
    let kept: Vec<(i64, String)> = sqlx::query_as("SELECT number, author FROM lesson_revisions WHERE lesson_id = $1 ORDER BY number").bind(&t.lesson_id).fetch_all(db).await.unwrap();
    let numbers: Vec<i64> = kept.iter().map(|k| k.0).collect();
    assert!(kept.len() < 60, "{} kept: {numbers:?}", kept.len());
    let agent = kept.iter().find(|k| k.1 == "agent").expect("the assistant's version is kept").0;
    assert!(numbers.contains(&1) && numbers.contains(&(agent - 1)), "the first, and the one before the assistant's: {numbers:?}");
    assert!(numbers.ends_with(&((revision - 49)..=revision).collect::<Vec<_>>()), "the newest 50: {numbers:?}");
    // Undoing the assistant's edit still works: its paragraph goes.
    let r = app.post_json(&format!("/api/lessons/{}/revisions/{agent}/undo", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let now: String = sqlx::query_scalar("SELECT document_xml FROM lessons WHERE id = $1").bind(&t.lesson_id).fetch_one(db).await.unwrap();
    assert!(!now.contains("Added by the assistant") && now.contains("Draft 129"), "{now}");
}

#[tokio::test]
async fn two_saves_of_one_sheet_at_once_cannot_lose_an_answer() {
    let app = app().await;
    let t = teacher(&app, "sheets@school.test").await;
    let xml = r#"<lesson><exercise id="e1" type="short-answer"><question id="q1"><prompt>Why?</prompt></question></exercise></lesson>"#;
    let r = app.put_json(&format!("/api/lessons/{}/document", t.lesson_id), Auth::Bearer(&t.token), json!({"xml": xml, "baseRevision": 1})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let class = app.post_json("/api/classes", Auth::Bearer(&t.token), json!({"name": "Year 9"})).await.json();
    let (class_id, code) = (class["id"].as_str().unwrap(), class["joinCode"].as_str().unwrap());
    app.send_json(Method::PUT, &format!("/api/classes/{class_id}/lessons/{}", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    app.post_json(&format!("/api/lessons/{}/publish", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    let s = app.post_json("/api/auth/signup", Auth::None, json!({"email": "pupil@school.test", "password": "correct horse", "join": code})).await.json()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/learn/lessons/{}/answers", t.lesson_id);
    for round in 0..5 {
        let seen: i64 = app.get(&format!("/api/learn/lessons/{}", t.lesson_id), Auth::Bearer(&s)).await.json()["seen"].as_i64().unwrap_or(0);
        let (a, b) = tokio::join!(
            app.put_json(&path, Auth::Bearer(&s), json!({"seen": seen, "answers": {"q1": format!("first {round}")}})),
            app.put_json(&path, Auth::Bearer(&s), json!({"seen": seen, "answers": {"q1": format!("second {round}")}})),
        );
        let statuses = [a.status, b.status];
        assert!(statuses.contains(&StatusCode::OK) && statuses.contains(&StatusCode::CONFLICT), "round {round}: {statuses:?} {} {}", a.body, b.body);
        let (kept, lost) = if a.status == StatusCode::OK { ("first", &b) } else { ("second", &a) };
        assert_eq!(lost.json()["conflicts"][0]["value"], format!("{kept} {round}"), "{}", lost.body);
    }
}

#[test]
fn the_database_password_never_reaches_a_log_line() {
    for args in [&[][..], &["schools"][..]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_margin"))
            .args(args)
            .env("DATABASE_URL", "postgres://margin:s3cret-pw@127.0.0.1:1/margin")
            .env("LEPTOS_SITE_ADDR", "127.0.0.1:0")
            .env("AI_PROVIDER", "demo")
            .output()
            .unwrap();
        assert!(!out.status.success());
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(said.contains("margin:***@127.0.0.1:1"), "{args:?}: {said}");
        assert!(!said.contains("s3cret-pw"), "{args:?}: {said}");
    }
}

use crate::common::server;

/// SQLite is one process's file: what a killed server had reserved is given
/// back when the next one starts. (On PostgreSQL, `instances.rs` shows another
/// instance giving it back once the lease runs out.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_killed_server_had_reserved_is_given_back_when_it_starts_again() {
    if common::database::postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/margin.db", dir.path().display());
    let mut first = server::Server::start(&url, dir.path(), &[]).await;
    let http = reqwest::Client::new();
    let auth = first.sign_up(&http, "killed@school.test").await;
    let lesson: serde_json::Value = http.post(format!("{}/api/lessons", first.base)).header("authorization", &auth).json(&json!({"title": "L"})).send().await.unwrap().json().await.unwrap();
    let chat: serde_json::Value = http
        .post(format!("{}/api/lessons/{}/chats", first.base, lesson["id"].as_str().unwrap()))
        .header("authorization", &auth)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let res = http
        .post(format!("{}/api/chat/stream", first.base))
        .header("authorization", &auth)
        .json(&json!({"sessionId": chat["id"], "content": "hold on"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let db = margin::server::db::connect(&url).await.unwrap();
    server::until_count(&db, "SELECT COUNT(*) FROM chat_messages WHERE status = 'running' AND content LIKE 'Thinking%'", 1).await;
    let held: i64 = sqlx::query_scalar("SELECT reserved FROM schools").fetch_one(&db).await.unwrap();
    assert!(held > 0);
    first.signal("-KILL");
    first.wait();
    drop(res);
    let held: i64 = sqlx::query_scalar("SELECT reserved FROM schools").fetch_one(&db).await.unwrap();
    assert!(held > 0, "left behind by the killed process");
    let _second = server::Server::start(&url, dir.path(), &[]).await;
    server::until_count(&db, "SELECT COUNT(*) FROM schools WHERE reserved = 0", 1).await;
    server::until_count(&db, "SELECT COUNT(*) FROM chat_messages WHERE reserved_tokens > 0", 0).await;
}

#[tokio::test]
async fn lessons_are_made_at_a_bounded_pace() {
    // The limit's clock stands still: a slow machine making the hundred
    // lessons (one every 3 s comes back) must not earn the 101st.
    let (app, _limits) = common::app_with_still_clock(Config::default()).await;
    let t = teacher(&app, "maker@school.test").await;
    let mut statuses = Vec::new();
    for n in 0..101 {
        statuses.push(app.post_json("/api/lessons", Auth::Bearer(&t.token), json!({"title": format!("L{n}")})).await.status);
    }
    assert!(statuses[..100].iter().all(|s| *s == StatusCode::CREATED), "{statuses:?}");
    assert_eq!(statuses[100], StatusCode::TOO_MANY_REQUESTS);
    let r = app.post_json(&format!("/api/lessons/{}/duplicate", t.lesson_id), Auth::Bearer(&t.token), json!({})).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
}

#[tokio::test]
async fn lessons_waiting_on_an_accounts_reply_limit_back_off_together() {
    let (app, _limits) = common::app_with_still_clock(Config { turns_per_minute_user: 1, ..Config::default() }).await;
    let t = teacher(&app, "many@school.test").await;
    let mut lessons = vec![t.lesson_id.clone()];
    for n in 0..4 {
        lessons.push(app.post_json("/api/lessons", Auth::Bearer(&t.token), json!({"title": format!("L{n}")})).await.json()["id"].as_str().unwrap().to_string());
    }
    for lesson in &lessons {
        let r = app.post_json("/api/chat/events", Auth::Bearer(&t.token), json!({"lessonId": lesson, "intent": "sessionStart"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    }
    let start = app.state.reactions.now_ms();
    app.state.reactions.advance(Duration::from_millis(2_000));
    // One turn starts; the other four lessons meet the account's limit and
    // wait, each until the limit lets a reply through, not every two seconds.
    let wanted = |n: i64| format!("SELECT COUNT(*) FROM lesson_event_gates WHERE due_ms > {}", start + 2_000 + n);
    let waited = async {
        loop {
            // Each lesson is put back in the database, then in this
            // instance's scheduler: both, before looking further.
            let n: i64 = sqlx::query_scalar(&wanted(2_000)).fetch_one(&app.state.db).await.unwrap();
            if n == 4 && app.state.scheduler.len() == 4 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), waited).await.expect("four lessons put back, due later, and waited on by this instance");
    assert_eq!(app.state.scheduler.len(), 4, "this instance waits on the four");
    let dues: Vec<i64> = sqlx::query_scalar("SELECT due_ms FROM lesson_event_gates WHERE due_ms IS NOT NULL").fetch_all(&app.state.db).await.unwrap();
    assert!(dues.iter().all(|d| *d >= start + 2_000 + 1_000), "{dues:?}");
}

#[tokio::test]
async fn no_more_readers_run_than_allowed() {
    // A reader that notes its start in a file and then never answers.
    let dir = tempfile::tempdir().unwrap();
    let (script, log) = (dir.path().join("stuck.sh"), dir.path().join("starts"));
    std::fs::write(&script, format!("#!/bin/sh\necho started >> {}\nexec sleep 600\n", log.display())).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let starts = || std::fs::read_to_string(&log).map(|s| s.lines().count()).unwrap_or(0);
    let one = Extractor::new(Some(script.clone()), ChildLimits { wall: Duration::from_secs(600), ..ChildLimits::default() }, 1);
    let first = tokio::spawn({
        let one = one.clone();
        async move { one.text_of("a.txt", b"Rivers").await }
    });
    tokio::time::timeout(Duration::from_secs(60), async {
        while starts() < 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the first reader started");
    // The second is polled as far as it can go: it waits for the one place.
    let second = one.text_of("b.txt", b"Rivers");
    tokio::pin!(second);
    assert!(futures::poll!(&mut second).is_pending());
    assert_eq!(starts(), 1, "no second reader while the first runs");
    // The first ends (its reader is killed with it); the second starts.
    first.abort();
    let _ = first.await;
    let _ = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            tokio::select! {
                _ = &mut second => return,
                () = tokio::time::sleep(Duration::from_millis(10)) => if starts() == 2 { return },
            }
        }
    })
    .await;
    assert_eq!(starts(), 2);
}

/// The sentence (or report) the lessons page shows after an import of `bytes` as `name`.
async fn imported(app: &TestApp, token: &str, name: &str, bytes: &[u8]) -> String {
    let r = upload(app, "/lessons/import", Auth::Cookie(token), &[(name, bytes)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let to = r.location().to_string();
    assert!(to.starts_with("/?import="), "to the list with what happened, not {to}");
    app.get(&to, Auth::Cookie(token)).await.body
}

#[tokio::test]
async fn hostile_packages_and_word_files_are_read_in_the_bounded_reader_once_each_and_refused_in_words() {
    let app = app().await;
    let t = teacher(&app, "packages@school.test").await;
    // One 7 MB item named 96 times (+736 MB once): read once, and said so.
    let page = imported(&app, &t.token, "repeats.zip", &qti_one_part_named(96, 7 * 1024 * 1024)).await;
    assert!(page.contains("The item item.xml is named more than once in the package; it came in once."), "{page}");
    // One quiz of 500 questions listed 300 times (+769 MB and 5.7 s once): read once, 500 questions.
    let r = upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("listed.imscc", &qti_quiz_listed(300, 500))]).await;
    let id = r.location().strip_prefix("/lessons/").unwrap_or_else(|| panic!("a lesson of the quiz, not {}", r.location())).to_string();
    let xml: String = sqlx::query_scalar("SELECT document_xml FROM lessons WHERE id = $1").bind(&id).fetch_one(&app.state.db).await.unwrap();
    assert_eq!(xml.matches("<question ").count(), 500);
    // Parts that together unpack past the package's budget: refused, naming it.
    let page = imported(&app, &t.token, "big.zip", &qti_over_budget(5, 7 * 1024 * 1024)).await;
    assert!(page.contains("unpacks to more than 32 MB"), "{page}");
    // A Word file made to look like a worksheet, 40 MB of text inside.
    let page = imported(&app, &t.token, "sheet.docx", &worksheet_bomb(40 * 1024 * 1024)).await;
    assert!(page.contains("far larger than any lesson"), "{page}");
    healthy(&app).await;

    // The reading happens in the child reader, never in the server: with no
    // reader to start, even a good package is not read here.
    let app = app_with(Config { extractor_program: Some("/nonexistent/margin".into()), ..Config::default() }).await;
    let t = teacher(&app, "no-reader@school.test").await;
    let page = imported(&app, &t.token, "good.imscc", &qti_quiz_listed(1, 2)).await;
    assert!(page.contains("could not read the file just now"), "{page}");
}

/// Deleting a class cannot be undone, so the class page's form deletes only
/// with its box ticked; another school's teacher deletes nothing, ticked or not.
#[tokio::test]
async fn a_class_is_deleted_from_its_page_only_when_the_teacher_confirms() {
    let app = app().await;
    let t = teacher(&app, "del@school.test").await;
    let bo = teacher(&app, "bo@other.test").await;
    let class = app.post_json("/api/classes", Auth::Bearer(&t.token), json!({"name": "Year 8"})).await.json();
    let id = class["id"].as_str().unwrap().to_string();
    let path = format!("/classes/{id}/delete");
    let exists = || async { app.get(&format!("/api/classes/{id}"), Auth::Bearer(&t.token)).await.status };

    let page = app.get(&format!("/classes/{id}"), Auth::Cookie(&t.token)).await;
    assert!(page.body.contains(r#"name="confirm" value="yes" required"#), "the box the browser asks for: {}", page.body);
    let r = app.post_form(&path, Auth::Cookie(&bo.token), &[("confirm", "yes")]).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.post_form(&path, Auth::Cookie(&t.token), &[]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(exists().await, StatusCode::OK, "not deleted without the box");
    let r = app.post_form(&path, Auth::Cookie(&t.token), &[("confirm", "yes")]).await;
    assert_eq!((r.status, r.location()), (StatusCode::SEE_OTHER, "/classes"), "{}", r.body);
    assert_eq!(exists().await, StatusCode::NOT_FOUND);
}
