//! "Download for Word": a lesson with every exercise kind as a .docx
//! worksheet and answer key, the owner's only, and the way back. No part of
//! a worksheet holds what students must not see; it imports as the same
//! lesson for its teacher, and as the text it shows for a teacher of
//! another school. A file changed in Word, or not made here, is refused
//! with a sentence and creates nothing.
#![cfg(feature = "ssr")]

use crate::common;

use std::io::{Cursor, Read};

use axum::http::{header, StatusCode};
use common::{classes::{save_xml, LESSON}, teacher, Auth};

/// Every part of a .docx, unpacked, as text.
fn every_part(docx: &[u8]) -> Vec<(String, String)> {
    let mut zip = zip::ZipArchive::new(Cursor::new(docx)).expect("a zip archive");
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            (f.name().to_string(), String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect()
}

fn document_text(docx: &[u8]) -> String {
    let mut zip = zip::ZipArchive::new(Cursor::new(docx)).expect("a zip archive");
    let mut xml = String::new();
    zip.by_name("word/document.xml").unwrap().read_to_string(&mut xml).unwrap();
    xml
}

async fn lessons(app: &common::TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM lessons").fetch_one(&app.state.db).await.unwrap()
}

#[tokio::test]
async fn a_lesson_goes_to_word_and_back() {
    let app = common::app().await;
    let t = teacher(&app, "word@x.org").await;
    save_xml(&app, &t.token, &t.lesson_id, LESSON).await;
    let original = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json()["documentXml"].as_str().unwrap().to_string();

    let r = app.get_bytes(&format!("/api/lessons/{}/docx", t.lesson_id), Auth::Cookie(&t.token)).await;
    assert_eq!(r.0, StatusCode::OK);
    assert_eq!(r.1[header::CONTENT_TYPE], "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    assert_eq!(r.1[header::CONTENT_DISPOSITION], "attachment; filename=\"Verbs (worksheet).docx\"");
    let worksheet = r.2;
    let shown = document_text(&worksheet);
    assert!(shown.contains("Fill in the blanks") && shown.contains("Être is regular."), "the exercises are there");
    for secret in ["serai", "Model answer kept secret", "Secret: spend ten minutes"] {
        assert!(!shown.contains(secret), "{secret} on the worksheet");
    }
    let r = app.get_bytes(&format!("/api/lessons/{}/docx?key=1", t.lesson_id), Auth::Bearer(&t.token)).await;
    assert_eq!(r.1[header::CONTENT_DISPOSITION], "attachment; filename=\"Verbs (answer key).docx\"");
    let r_key = r.2.clone();
    let key = document_text(&r.2);
    assert!(key.contains("serai") && key.contains("Model answer kept secret") && !key.contains("Secret: spend ten minutes"));

    // Strangers and the signed-out get nothing.
    let stranger = teacher(&app, "s@y.org").await;
    let r = app.get(&format!("/api/lessons/{}/docx", t.lesson_id), Auth::Bearer(&stranger.token)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let r = app.get(&format!("/api/lessons/{}/docx", t.lesson_id), Auth::None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);

    // No part of the worksheet, seen or unseen, holds an answer, an
    // alternative, a note or a model answer, nor the lesson in any form.
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&original);
    for (name, text) in every_part(&worksheet) {
        for secret in ["serai", "serais", "Model answer kept secret", "Secret: spend ten minutes", "correct=", "answer=", "position=", "<lesson", &encoded[..32]] {
            assert!(!text.contains(secret), "{secret:?} in the worksheet's {name}");
        }
    }
    // Downloaded again, the same reference: one per version of the lesson.
    let again = app.get_bytes(&format!("/api/lessons/{}/docx", t.lesson_id), Auth::Cookie(&t.token)).await.2;
    let references = || async { sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM worksheets").fetch_one(&app.state.db).await.unwrap() };
    assert_eq!(references().await, 1);
    assert_eq!(every_part(&again).into_iter().filter(|(n, _)| n.starts_with("customXml/item1")).collect::<Vec<_>>(), every_part(&worksheet).into_iter().filter(|(n, _)| n.starts_with("customXml/item1")).collect::<Vec<_>>());

    // Back in, for its teacher: the same lesson, ids and answers included.
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("Verbs (worksheet).docx", &worksheet)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let id = r.location().strip_prefix("/lessons/").unwrap_or_else(|| panic!("to the new lesson, not {}", r.location())).to_string();
    let back = app.get(&format!("/api/lessons/{id}"), Auth::Bearer(&t.token)).await.json();
    assert_eq!(back["documentXml"].as_str().unwrap(), original);
    assert_eq!(lessons(&app).await, 3);

    // The key back in: the same lesson too.
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("Verbs (answer key).docx", &r_key)]).await;
    let id = r.location().strip_prefix("/lessons/").unwrap_or_else(|| panic!("to the new lesson, not {}", r.location())).to_string();
    assert_eq!(app.get(&format!("/api/lessons/{id}"), Auth::Bearer(&t.token)).await.json()["documentXml"].as_str().unwrap(), original);
    assert_eq!(lessons(&app).await, 4);

    // A teacher of another school who is handed the worksheet (by a student,
    // say) gets what it shows, and is told so: no answer comes with it.
    let schools: Vec<Option<String>> = sqlx::query_scalar("SELECT school_id FROM users WHERE email IN ('word@x.org', 's@y.org')").fetch_all(&app.state.db).await.unwrap();
    assert!(schools.len() == 2 && schools[0].is_some() && schools[0] != schools[1], "two schools: {schools:?}");
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&stranger.token), &[("Verbs (worksheet).docx", &worksheet)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert!(r.location().starts_with("/?import="), "to the list, with what happened: {}", r.location());
    let page = app.get(r.location(), Auth::Cookie(&stranger.token)).await;
    assert!(page.body.contains("holds none of its answers"), "{}", page.body);
    let theirs: Vec<(String, String)> = sqlx::query_as("SELECT id, document_xml FROM lessons WHERE owner_id = (SELECT id FROM users WHERE email = 's@y.org') AND id <> $1").bind(&stranger.lesson_id).fetch_all(&app.state.db).await.unwrap();
    assert_eq!(theirs.len(), 1);
    let (_, shown_xml) = &theirs[0];
    assert!(shown_xml.contains("Être is regular.") && shown_xml.contains("Why learn être?"), "{shown_xml}");
    for secret in ["serai", "Model answer kept secret", "Secret: spend ten minutes", "correct=", "<blank", "position="] {
        assert!(!shown_xml.contains(secret), "{secret:?} in what the worksheet showed: {shown_xml}");
    }
    assert_eq!(lessons(&app).await, 5);

    // Changed in Word: refused, nothing made, and the page says why.
    let changed = {
        let mut zip = zip::ZipArchive::new(Cursor::new(worksheet.as_slice())).unwrap();
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for i in 0..zip.len() {
            let mut f = zip.by_index(i).unwrap();
            let name = f.name().to_string();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            if name == "word/document.xml" {
                bytes = String::from_utf8(bytes).unwrap().replace("Être is regular.", "Avoir is regular.").into_bytes();
            }
            out.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
            std::io::Write::write_all(&mut out, &bytes).unwrap();
        }
        out.finish().unwrap().into_inner()
    };
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("Verbs.docx", &changed)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert!(r.location().starts_with("/?import="), "{}", r.location());
    let page = app.get(r.location(), Auth::Cookie(&t.token)).await;
    assert!(page.body.contains("changed after Margin made it"), "{}", page.body);
    assert_eq!(lessons(&app).await, 5, "nothing was imported");
    // Any other zip is not a lesson.
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("notes.docx", b"PK\x03\x04 not really")]).await;
    let page = app.get(r.location(), Auth::Cookie(&t.token)).await;
    assert!(page.body.contains("not a Word document"), "{}", page.body);
    assert_eq!(lessons(&app).await, 5);
}
