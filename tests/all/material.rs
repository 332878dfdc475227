//! The teacher's material: text read from each kind of file, clear refusals
//! for files that cannot be used (and nothing half-stored), the API and the
//! lesson page's forms with their owner checks, and the assistant reading a
//! source a page at a time.
#![cfg(feature = "ssr")]

use crate::common;
use crate::material_files;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{app, teacher, upload, Auth};
use margin::server::material::extract::{text_of, MAX_FILE_BYTES};
use material_files::{docx, pdf, pdf_with_password, zip_of};
use serde_json::Value;

const READING: &str = "Rivers begin in the hills as small streams.\nThey join and grow as they flow to the sea.";

#[test]
fn each_kind_of_file_gives_its_text() {
    assert_eq!(text_of("r.txt", READING.as_bytes()).unwrap(), READING);
    assert_eq!(text_of("r.md", b"# Rivers\n\n- Source\n- Mouth\n").unwrap(), "# Rivers\n\n- Source\n- Mouth");
    let html = "<h1>Rivers</h1><p>Water &amp; rock</p><script>alert(1)</script>";
    assert_eq!(text_of("r.html", html.as_bytes()).unwrap(), "Rivers\nWater & rock");
    let word = text_of("Chapter 5.docx", &docx(&["Rivers", "Source\tMouth", "Deltas & estuaries"])).unwrap();
    assert_eq!(word, "Rivers\nSource\tMouth\nDeltas & estuaries");
    let two_pages = text_of("Chapter 5.pdf", &pdf(&["Rivers begin in the hills.\nThey flow to the sea.", "Deltas form at the mouth."])).unwrap();
    for line in ["Rivers begin in the hills.", "They flow to the sea.", "Deltas form at the mouth."] {
        assert!(two_pages.contains(line), "{line} in {two_pages:?}");
    }
    assert!(two_pages.find("hills").unwrap() < two_pages.find("Deltas").unwrap(), "pages in order");
}

#[test]
fn files_that_cannot_be_used_are_refused_in_words() {
    let said = |name: &str, bytes: &[u8]| text_of(name, bytes).unwrap_err();
    assert!(said("slides.pptx", b"PK").contains("not a kind of file"));
    assert!(said("scan.pdf", &pdf(&[""])).contains("scanned pages"));
    assert!(said("locked.pdf", &pdf_with_password(&["Secret"])).contains("protected by a password"));
    assert!(said("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog").contains("could not be read as a PDF"));
    assert!(said("fake.pdf", b"hello").contains("not a PDF file"));
    assert!(said("broken.docx", b"not a zip at all").contains("could not be read as a Word document"));
    assert!(said("empty.docx", &zip_of(&[("readme.txt", "hi")])).contains("could not be read as a Word document"));
    let big = vec![b'a'; MAX_FILE_BYTES + 1];
    assert!(said("huge.txt", &big).contains("larger than 10 MB"));
}

fn names(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn sources_are_added_listed_and_removed_by_their_teacher_only() {
    let app = app().await;
    let t = teacher(&app, "material@school.test").await;
    let other = teacher(&app, "other@school.test").await;
    let path = format!("/api/lessons/{}/sources", t.lesson_id);

    let word = docx(&["Rivers", "They flow to the sea."]);
    let r = upload(&app, &path, Auth::Bearer(&t.token), &[("Notes.txt", READING.as_bytes()), ("Chapter 5.docx", &word)]).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let added = r.json();
    assert_eq!(names(&added), ["Notes.txt", "Chapter 5.docx"]);
    assert_eq!(added[0]["size"], READING.len());
    assert_eq!(added[0]["chars"], READING.chars().count());
    assert_eq!(added[0]["opening"], "Rivers begin in the hills as small streams. They join and grow as they flow to the sea.");

    let list = app.get(&path, Auth::Bearer(&t.token)).await;
    assert_eq!(names(&list.json()), ["Notes.txt", "Chapter 5.docx"]);

    // A batch with one file that cannot be used adds none of it.
    let r = upload(&app, &path, Auth::Bearer(&t.token), &[("More.txt", b"More rivers."), ("scan.pdf", &pdf(&[""]))]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.json()["error"].as_str().unwrap().contains("“scan.pdf”"), "{}", r.body);
    assert_eq!(names(&app.get(&path, Auth::Bearer(&t.token)).await.json()).len(), 2);
    let r = upload(&app, &path, Auth::Bearer(&t.token), &[]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    // Another teacher sees nothing, adds nothing and removes nothing.
    assert_eq!(app.get(&path, Auth::Bearer(&other.token)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(upload(&app, &path, Auth::Bearer(&other.token), &[("x.txt", b"x")]).await.status, StatusCode::NOT_FOUND);
    let first = added[0]["id"].as_str().unwrap();
    let one = format!("{path}/{first}");
    let r = app.send(Request::builder().method(Method::DELETE).uri(&one).header(header::AUTHORIZATION, format!("Bearer {}", other.token)).body(Body::empty()).unwrap()).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    // Nor through their own lesson's address.
    let theirs = format!("/api/lessons/{}/sources/{first}", other.lesson_id);
    let r = app.send(Request::builder().method(Method::DELETE).uri(&theirs).header(header::AUTHORIZATION, format!("Bearer {}", other.token)).body(Body::empty()).unwrap()).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(upload(&app, &path, Auth::None, &[("x.txt", b"x")]).await.status, StatusCode::UNAUTHORIZED);

    let r = app.send(Request::builder().method(Method::DELETE).uri(&one).header(header::AUTHORIZATION, format!("Bearer {}", t.token)).body(Body::empty()).unwrap()).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(names(&app.get(&path, Auth::Bearer(&t.token)).await.json()), ["Chapter 5.docx"]);
}

#[tokio::test]
async fn a_duplicated_lesson_keeps_its_material_in_order() {
    let app = app().await;
    let t = teacher(&app, "dup@school.test").await;
    let r = upload(&app, &format!("/api/lessons/{}/sources", t.lesson_id), Auth::Bearer(&t.token), &[("A.txt", b"First."), ("B.md", b"Second.")]).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let owner = app.user_id(&t.token).await;
    let copy = margin::server::lessons::library::duplicate(&app.state.db, &owner, &t.lesson_id).await.unwrap();
    let listed = app.get(&format!("/api/lessons/{}/sources", copy.id), Auth::Bearer(&t.token)).await.json();
    assert_eq!(names(&listed), ["A.txt", "B.md"]);
    assert_ne!(listed[0]["id"], r.json()[0]["id"], "copies have ids of their own");
    // Removing one from the copy leaves the original's.
    let one = format!("/api/lessons/{}/sources/{}", copy.id, listed[0]["id"].as_str().unwrap());
    let gone = app.send(Request::builder().method(Method::DELETE).uri(&one).header(header::AUTHORIZATION, format!("Bearer {}", t.token)).body(Body::empty()).unwrap()).await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    assert_eq!(names(&app.get(&format!("/api/lessons/{}/sources", t.lesson_id), Auth::Bearer(&t.token)).await.json()), ["A.txt", "B.md"]);
    // A failure to copy the material leaves no half copy behind.
    app.refuse_inserts("lesson_sources").await;
    let refused = margin::server::lessons::library::duplicate(&app.state.db, &owner, &t.lesson_id).await.unwrap_err();
    assert!(format!("{refused:?}").contains("disk full"), "the material's copy is what failed: {refused:?}");
    app.allow_inserts("lesson_sources").await;
    let lessons = app.get("/api/lessons", Auth::Bearer(&t.token)).await.json();
    let titles: Vec<&str> = lessons["lessons"].as_array().unwrap().iter().map(|l| l["title"].as_str().unwrap()).collect();
    assert_eq!(titles.iter().filter(|t| t.starts_with("Copy of")).count(), 1, "{titles:?}");
}

#[tokio::test]
async fn the_lesson_pages_forms_answer_with_the_page_and_say_what_went_wrong() {
    let app = app().await;
    let t = teacher(&app, "forms@school.test").await;
    let path = format!("/lessons/{}/sources", t.lesson_id);
    let r = upload(&app, &path, Auth::Cookie(&t.token), &[("Notes.md", b"# Rivers")]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(r.location(), format!("/lessons/{}#material", t.lesson_id));
    let r = upload(&app, &path, Auth::Cookie(&t.token), &[("slides.pptx", b"PK")]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    // The address carries a token, never the sentence; the page finds the
    // sentence on the server, for this teacher only.
    let refused_at = r.location().to_string();
    let token = refused_at.strip_prefix(&format!("/lessons/{}?material_error=", t.lesson_id)).and_then(|t| t.strip_suffix("#material"));
    assert!(token.is_some_and(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_hexdigit())), "{refused_at}");
    assert!(!refused_at.contains("pptx"), "{refused_at}");
    let page = app.get(refused_at.trim_end_matches("#material"), Auth::Cookie(&t.token)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("“slides.pptx” is not a kind of file Margin can read."), "{}", page.body);
    // Text in the address is not a token: the page says nothing of it.
    let forged = app.get(&format!("/lessons/{}?material_error=Your%20session%20ended", t.lesson_id), Auth::Cookie(&t.token)).await;
    assert_eq!(forged.status, StatusCode::OK);
    assert!(!forged.body.contains("Your session ended"));

    let list = app.get(&format!("/api/lessons/{}/sources", t.lesson_id), Auth::Bearer(&t.token)).await.json();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let r = app.post_form(&format!("/lessons/{}/sources/{id}/remove", t.lesson_id), Auth::Cookie(&t.token), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert!(app.get(&format!("/api/lessons/{}/sources", t.lesson_id), Auth::Bearer(&t.token)).await.json().as_array().unwrap().is_empty());
    // Signed out: to sign in.
    assert_eq!(upload(&app, &path, Auth::None, &[("a.txt", b"a")]).await.location(), "/signin");
}

#[tokio::test]
async fn the_assistant_sees_the_sources_listed_and_reads_one_a_page_at_a_time() {
    let app = app().await;
    let t = teacher(&app, "reader@school.test").await;
    let long: String = (1..=400).map(|n| format!("Line {n} of the river reading.\n")).collect();
    let r = upload(&app, &format!("/api/lessons/{}/sources", t.lesson_id), Auth::Bearer(&t.token), &[("River reading.txt", long.as_bytes())]).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()[0]["id"].as_str().unwrap().to_string();

    let r = app
        .send(
            Request::builder()
                .method(Method::POST)
                .uri("/api/chat/stream")
                .header(header::AUTHORIZATION, format!("Bearer {}", t.token))
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ACCEPT, "application/json")
                .body(Body::from(serde_json::json!({"sessionId": t.session_id, "content": "Build a quiz from my material"}).to_string()))
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let reply = r.json();
    assert_eq!(reply["status"], "complete", "{reply}");
    assert_eq!(reply["text"], "From your material: Line 1 of the river reading.", "{reply}");
    // The text as kept: tidied, so without the file's last line end.
    let total = long.trim_end().chars().count();
    let step = &reply["steps"][0];
    assert_eq!(step["tool"], "read_source");
    assert_eq!(step["summary"], format!("Read “River reading.txt” (1–300 of {total} characters)"));
    let output = step["output"].as_str().unwrap();
    assert!(output.starts_with(&format!("“River reading.txt”, characters 0 to 300 of {total}.")), "{output}");
    assert!(output.contains("Line 1 of the river reading.") && !output.contains("Line 20 of"), "one page only: {output}");
    assert!(output.ends_with("(More follows: call read_source with from=300.)"), "{output}");

    // Every call's prompt listed the source: its id, name, length and first words, fenced as material.
    let requests = app.state.ai.scripted().unwrap().requests();
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    let listed = format!("- id {id}: \"River reading.txt\", {total} characters, beginning \"Line 1 of the river reading. Line 2");
    assert!(system.contains("## The teacher's material") && system.contains(&listed), "{system}");
    assert!(system.find("## The teacher's material").unwrap() < system.find("## The lesson as it is now").unwrap());
    let tools: Vec<&str> = requests[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"read_source"));
}

#[tokio::test]
async fn reading_past_the_end_or_a_source_of_another_lesson_is_an_error_for_the_model() {
    let app = app().await;
    let t = teacher(&app, "pages@school.test").await;
    let other = teacher(&app, "elsewhere@school.test").await;
    let r = upload(&app, &format!("/api/lessons/{}/sources", other.lesson_id), Auth::Bearer(&other.token), &[("Theirs.txt", b"Not yours.")]).await;
    let theirs = r.json()[0]["id"].as_str().unwrap().to_string();
    upload(&app, &format!("/api/lessons/{}/sources", t.lesson_id), Auth::Bearer(&t.token), &[("Mine.txt", b"Short text.")]).await;
    let db = &app.state.db;
    use margin::server::material::sources::read;
    assert_eq!(read(db, &t.lesson_id, &theirs, 0, 100).await.unwrap(), None, "a source is read through its own lesson only");
    let mine = app.get(&format!("/api/lessons/{}/sources", t.lesson_id), Auth::Bearer(&t.token)).await.json()[0]["id"].as_str().unwrap().to_string();
    assert_eq!(read(db, &t.lesson_id, &mine, 6, 100).await.unwrap(), Some(("Mine.txt".to_string(), 11, "text.".to_string())));
}
