//! Lessons for learning platforms: a lesson with every exercise kind as a
//! QTI 2.1 package and as a Common Cartridge, the owner's only; the QTI
//! package imports back as the same exercises; a foreign package becomes a
//! lesson of what Margin has, and the lessons page lists what did not come
//! in; a package with nothing Margin has makes nothing and says why.
#![cfg(feature = "ssr")]

use crate::common;

use std::io::{Cursor, Read, Write};

use axum::http::{header, StatusCode};
use common::{classes::{save_xml, LESSON}, teacher, Auth};
use margin::lesson::{normalize, Node};

fn files(zip: &[u8]) -> Vec<(String, String)> {
    let mut z = zip::ZipArchive::new(Cursor::new(zip)).expect("a zip archive");
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut text = String::new();
            f.read_to_string(&mut text).unwrap();
            (f.name().to_string(), text)
        })
        .collect()
}

fn zipped(files: &[(&str, &str)]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, text) in files {
        out.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        out.write_all(text.as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

async fn lessons(app: &common::TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM lessons").fetch_one(&app.state.db).await.unwrap()
}

#[tokio::test]
async fn a_lesson_goes_to_a_platform_and_its_exercises_come_back() {
    let app = common::app().await;
    let t = teacher(&app, "lms@x.org").await;
    save_xml(&app, &t.token, &t.lesson_id, LESSON).await;
    let original = app.get(&format!("/api/lessons/{}", t.lesson_id), Auth::Bearer(&t.token)).await.json()["documentXml"].as_str().unwrap().to_string();

    let (status, headers, package) = app.get_bytes(&format!("/api/lessons/{}/qti", t.lesson_id), Auth::Cookie(&t.token)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "application/zip");
    assert_eq!(headers[header::CONTENT_DISPOSITION], "attachment; filename=\"Verbs (QTI).zip\"");
    let inside = files(&package);
    assert!(inside.iter().any(|(n, _)| n == "imsmanifest.xml") && inside.iter().any(|(n, _)| n == "assessment.xml"));
    assert_eq!(inside.iter().filter(|(n, _)| n.starts_with("items/")).count(), 7, "q1, q2, s1, p2, the sequence, q3 and the writing task");
    assert!(!inside.iter().any(|(_, t)| t.contains("Secret: spend ten minutes")), "no teacher note");

    let (status, headers, cartridge) = app.get_bytes(&format!("/api/lessons/{}/cartridge", t.lesson_id), Auth::Bearer(&t.token)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "application/vnd.ims.imsccv1p1");
    assert_eq!(headers[header::CONTENT_DISPOSITION], "attachment; filename=\"Verbs.imscc\"");
    let inside = files(&cartridge);
    let page = &inside.iter().find(|(n, _)| n == "lesson/index.html").expect("the lesson page").1;
    assert!(page.contains("The verb to be."), "{page}");
    let quiz = &inside.iter().find(|(n, _)| n == "quiz/assessment.xml").expect("the quiz").1;
    assert!(quiz.contains("cc.multiple_response.v0p1") && quiz.contains(">serai<"), "the quiz scores the blank's answer");
    for secret in ["Secret: spend ten minutes", "Model answer kept secret"] {
        assert!(!page.contains(secret) && !quiz.contains(secret), "{secret} where students see it");
    }

    // Strangers and the signed-out get nothing.
    let stranger = teacher(&app, "s@y.org").await;
    for route in ["qti", "cartridge"] {
        let r = app.get(&format!("/api/lessons/{}/{route}", t.lesson_id), Auth::Bearer(&stranger.token)).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{route}: {}", r.body);
        let r = app.get(&format!("/api/lessons/{}/{route}", t.lesson_id), Auth::None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{route}: {}", r.body);
    }

    // Back in: the same exercises, ids and answers included, titled as the package.
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("Verbs (QTI).zip", &package)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let id = r.location().strip_prefix("/lessons/").unwrap_or_else(|| panic!("to the new lesson, not {}", r.location())).to_string();
    let back = app.get(&format!("/api/lessons/{id}"), Auth::Bearer(&t.token)).await.json();
    let mut exercises = normalize(&original).unwrap();
    exercises.children.retain(|n| matches!(n, Node::Element(e) if e.name == "exercise"));
    let mut heading = margin::lesson::Element::new("h1");
    heading.children.push(Node::Text("Verbs".into()));
    exercises.children.insert(0, Node::Element(heading));
    let expected = normalize(&exercises.to_xml()).unwrap().to_xml();
    assert_eq!(back["documentXml"].as_str().unwrap(), expected, "the exercises under the lesson's title");
    assert_eq!(back["title"], "Verbs");
    assert_eq!(lessons(&app).await, 3);
}

const MANIFEST: &str = r#"<manifest xmlns="http://www.imsglobal.org/xsd/imscp_v1p1" identifier="M"><resources>
<resource identifier="R1" type="imsqti_item_xmlv2p1" href="planets.xml"><file href="planets.xml"/></resource>
<resource identifier="R2" type="imsqti_item_xmlv2p1" href="pairs.xml"><file href="pairs.xml"/></resource>
</resources></manifest>"#;
const PLANETS: &str = r#"<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="planets" title="Planets" adaptive="false" timeDependent="false">
<responseDeclaration identifier="RESPONSE" cardinality="single" baseType="identifier"><correctResponse><value>B</value></correctResponse></responseDeclaration>
<itemBody><choiceInteraction responseIdentifier="RESPONSE" maxChoices="1"><prompt>Which planet is <em>red</em>?</prompt><simpleChoice identifier="A">Venus</simpleChoice><simpleChoice identifier="B">Mars</simpleChoice></choiceInteraction></itemBody></assessmentItem>"#;
const PAIRS: &str = r#"<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="pairs" title="Moons and planets" adaptive="false" timeDependent="false">
<itemBody><matchInteraction responseIdentifier="RESPONSE"/></itemBody></assessmentItem>"#;

#[tokio::test]
async fn a_foreign_package_becomes_a_lesson_and_the_list_says_what_did_not_come_in() {
    let app = common::app().await;
    let t = teacher(&app, "import@x.org").await;
    let package = zipped(&[("imsmanifest.xml", MANIFEST), ("planets.xml", PLANETS), ("pairs.xml", PAIRS)]);
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("Space quiz.zip", &package)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let to = r.location().to_string();
    assert!(to.starts_with("/?import="), "to the list with the report, not {to}");
    let page = app.get(&to, Auth::Cookie(&t.token)).await;
    assert!(page.body.contains("“Space quiz.zip” was imported as"), "{}", page.body);
    assert!(page.body.contains("“Moons and planets”: a matching question (matchInteraction) has no exercise like it in Margin."), "{}", page.body);
    let id: String = sqlx::query_scalar("SELECT id FROM lessons WHERE title = 'Space quiz'").fetch_one(&app.state.db).await.expect("the lesson, titled by the file");
    assert!(page.body.contains(&format!("href=\"/lessons/{id}\"")), "a link to it");
    let xml = app.get(&format!("/api/lessons/{id}"), Auth::Bearer(&t.token)).await.json()["documentXml"].as_str().unwrap().to_string();
    assert!(xml.contains("<prompt>Which planet is <em>red</em>?</prompt>") && xml.contains(r#"<option id="B" correct="true">Mars</option>"#), "{xml}");
    // Nobody else reads the report.
    let other = app.sign_up("nosy@x.org").await;
    let theirs = app.get(&to, Auth::Cookie(&other)).await;
    assert!(!theirs.body.contains("was imported as"));

    // One item, as a file of its own.
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("planets.xml", PLANETS.as_bytes())]).await;
    assert!(r.location().starts_with("/lessons/"), "straight to the lesson when everything came in: {}", r.location());

    // Nothing Margin has: nothing made, and the sentence says why.
    let before = lessons(&app).await;
    let package = zipped(&[("imsmanifest.xml", MANIFEST), ("planets.xml", PAIRS), ("pairs.xml", PAIRS)]);
    let r = common::upload(&app, "/lessons/import", Auth::Cookie(&t.token), &[("Pairs.zip", &package)]).await;
    let page = app.get(r.location(), Auth::Cookie(&t.token)).await;
    assert!(page.body.contains("“Pairs.zip” was not imported") && page.body.contains("Nothing in this package is a kind of question Margin has"), "{}", page.body);
    assert_eq!(lessons(&app).await, before);
}
