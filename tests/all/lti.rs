//! Margin as an LTI 1.3 tool, against an LMS platform the test runs
//! (`common::fake_lms`: published keys, an authorization endpoint that signs
//! launches with a real RSA key), on both databases: a school's admin
//! registers the platform; an instructor's launch makes the course's class
//! and opens it (or a lesson, added to it); a learner's joins it and opens
//! the published lesson; forged, foreign and replayed launches are refused
//! with a sentence and make nobody.

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{
    fake_lms::{FakeLms, Launcher, Posted, INSTRUCTOR, LEARNER},
    fake_sso::Twist,
    waits::count,
    Auth, Reply, TestApp,
};
use serde_json::json;

fn form(path: &str, origin: &str, cookie: Option<&str>, fields: &[(String, String)]) -> Request<Body> {
    let mut req = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        // The platform's page posts these: another site.
        .header(header::ORIGIN, origin);
    if let Some(c) = cookie {
        req = req.header(header::COOKIE, c);
    }
    req.body(Body::from(serde_urlencoded::to_string(fields).unwrap())).unwrap()
}

/// The platform's login initiation, Margin's authentication request to the
/// platform, and the platform's signed launch: what it would post, and the
/// state cookie Margin set.
async fn start(app: &TestApp, lms: &FakeLms, launcher: Launcher) -> (Posted, String) {
    let r = app.send(form("/lti/login", &lms.issuer, None, &lms.initiation(launcher))).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert!(r.location().starts_with(&format!("{}/authorize?", lms.issuer)), "{}", r.location());
    let state = r.cookie("margin_lti").expect("the state cookie");
    let answer = reqwest::get(r.location()).await.unwrap();
    assert_eq!(answer.status().as_u16(), 200, "{:?} {:?}", answer.text().await, lms.refusals());
    let posted = lms.take_posted().expect("the platform signed a launch");
    assert_eq!(posted.redirect_uri, "http://127.0.0.1:3000/lti/launch");
    (posted, state)
}

async fn post_launch(app: &TestApp, lms: &FakeLms, posted: &Posted, cookie: Option<&str>) -> Reply {
    let fields = [("id_token".to_string(), posted.id_token.clone()), ("state".to_string(), posted.state.clone())];
    app.send(form("/lti/launch", &lms.issuer, cookie.map(|c| format!("margin_lti={c}")).as_deref(), &fields)).await
}

async fn launch(app: &TestApp, lms: &FakeLms, launcher: Launcher) -> Reply {
    let (posted, state) = start(app, lms, launcher).await;
    post_launch(app, lms, &posted, Some(&state)).await
}

async fn me(app: &TestApp, session: &str) -> serde_json::Value {
    app.get("/api/auth/me", Auth::Bearer(session)).await.json()["user"].clone()
}

/// The school's admin registers the LMS, and the LMS's admin gives it the
/// keys address Margin shows for the registration: the admin's session.
async fn registered(app: &TestApp, lms: &FakeLms) -> String {
    registered_by(app, lms, "head@lincoln.example.org").await.0
}

/// As `registered`, by a new school's admin `email`: their session and the registration's id.
async fn registered_by(app: &TestApp, lms: &FakeLms, email: &str) -> (String, String) {
    let admin = app.sign_up(email).await;
    let r = app.post_json("/api/school/lti", Auth::Bearer(&admin), lms.registration()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_str().unwrap().to_string();
    let listed = app.get("/api/school/lti", Auth::Bearer(&admin)).await.json();
    assert_eq!(listed[0]["toolJwksUrl"], format!("http://127.0.0.1:3000/lti/jwks/{id}"));
    assert_eq!(listed[0]["ownKey"], true);
    lms.trust(&app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json());
    (admin, id)
}

#[tokio::test]
async fn a_schools_admin_registers_its_lms() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    let admin = app.sign_up("head@lincoln.example.org").await;
    // Every field is needed, each refusal a sentence.
    let mut missing = lms.registration();
    missing["jwksUrl"] = json!("");
    let r = app.post_json("/api/school/lti", Auth::Bearer(&admin), missing).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.json()["error"].as_str().unwrap().contains("keys (JWKS) address"), "{}", r.body);
    let mut no_deployment = lms.registration();
    no_deployment["deployments"] = json!("  ");
    assert_eq!(app.post_json("/api/school/lti", Auth::Bearer(&admin), no_deployment).await.status, StatusCode::BAD_REQUEST);
    // A teacher cannot; the admin can, once per platform and client id.
    let teacher = common::colleague(&app, &admin, "ada@lincoln.example.org").await;
    assert_eq!(app.post_json("/api/school/lti", Auth::Bearer(&teacher), lms.registration()).await.status, StatusCode::FORBIDDEN);
    let r = app.post_json("/api/school/lti", Auth::Bearer(&admin), lms.registration()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_str().unwrap().to_string();
    assert_eq!(app.post_json("/api/school/lti", Auth::Bearer(&admin), lms.registration()).await.status, StatusCode::CONFLICT);
    let list = app.get("/api/school/lti", Auth::Bearer(&admin)).await.json();
    assert_eq!(list[0]["deployments"], json!(["deployment-1"]));
    // The School page gives the values the LMS's admin enters, and lists it.
    let page = app.get("/school", Auth::Cookie(&admin)).await;
    assert!(page.body.contains("http://127.0.0.1:3000/lti/login") && page.body.contains("http://127.0.0.1:3000/lti/launch"), "{}", page.body);
    assert!(page.body.contains("Test LMS"), "{}", page.body);
    // Another school's admin cannot remove it.
    let other = app.sign_up("other@example.net").await;
    assert_eq!(app.send_json(Method::DELETE, &format!("/api/school/lti/{id}"), Auth::Bearer(&other), json!({})).await.status, StatusCode::NOT_FOUND);
    let r = app.post_form(&format!("/school/lti/{id}/remove"), Auth::Cookie(&admin), &[]).await;
    assert_eq!(r.location(), "/school?done=lti-removed#lms");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM lti_platforms").await, 0);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM lti_deployments").await, 0);
}

#[tokio::test]
async fn instructors_and_learners_launch_into_their_course() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    let admin = registered(&app, &lms).await;
    let school = me(&app, &admin).await["school_id"].clone();

    // A learner before any instructor: told to wait, no account made.
    let users = count(&app, "SELECT COUNT(*) FROM users").await;
    let r = launch(&app, &lms, Launcher::new("learner-1", "sam@lincoln.example.org", LEARNER)).await;
    assert_eq!(r.location(), "/refused/lti-class");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users);
    let page = app.get("/refused/lti-class", Auth::None).await;
    assert!(page.body.contains("Your teacher has not opened Margin in this course yet"), "{}", page.body);

    // The instructor's first launch makes the course's class, theirs, in the school.
    let r = launch(&app, &lms, Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR)).await;
    assert!(r.location().starts_with("/classes/"), "{}", r.location());
    let teacher = r.cookie("margin_session").expect("a session");
    let t = me(&app, &teacher).await;
    assert_eq!((t["role"].clone(), t["school_id"].clone()), (json!("teacher"), school.clone()));
    let class_id = r.location().trim_start_matches("/classes/").to_string();
    let class = app.get(&format!("/api/classes/{class_id}"), Auth::Bearer(&teacher)).await;
    assert_eq!(class.status, StatusCode::OK, "{}", class.body);
    assert_eq!(class.json()["name"], "Year 8 Science");

    // Their lesson, named by the link: opened, and added to the class.
    let lesson = margin::server::lessons::create(&app.state.db, t["id"].as_str().unwrap(), "Cells").await.unwrap();
    common::classes::save_xml(&app, &teacher, &lesson.id, r#"<lesson><h1 id="h">Cells</h1><p id="p">Every living thing is made of cells.</p></lesson>"#).await;
    let link = Launcher { custom: json!({"lesson": lesson.id}), ..Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR) };
    let r = launch(&app, &lms, link.clone()).await;
    assert_eq!(r.location(), format!("/lessons/{}", lesson.id));
    assert_eq!(count(&app, &format!("SELECT COUNT(*) FROM class_lessons WHERE class_id = '{class_id}' AND lesson_id = '{}'", lesson.id)).await, 1);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM classes").await, 1, "one class per course");
    let r = app.post_json(&format!("/api/lessons/{}/publish", lesson.id), Auth::Bearer(&teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // A learner's launch joins the class and opens the published lesson.
    let learner = Launcher { custom: json!({"lesson": lesson.id}), ..Launcher::new("learner-1", "sam@lincoln.example.org", LEARNER) };
    let r = launch(&app, &lms, learner.clone()).await;
    assert_eq!(r.location(), format!("/learn/lessons/{}", lesson.id));
    let sam = r.cookie("margin_session").unwrap();
    let s = me(&app, &sam).await;
    assert_eq!((s["role"].clone(), s["school_id"].clone()), (json!("student"), school));
    let opened = app.get(&format!("/api/learn/lessons/{}", lesson.id), Auth::Bearer(&sam)).await;
    assert_eq!(opened.status, StatusCode::OK, "{}", opened.body);
    assert!(opened.body.contains("Every living thing is made of cells."));
    // Again: the same account. Without a lesson: their classes.
    let r = launch(&app, &lms, Launcher::new("learner-1", "sam@lincoln.example.org", LEARNER)).await;
    assert_eq!(r.location(), "/learn");
    assert_eq!(me(&app, &r.cookie("margin_session").unwrap()).await["id"], s["id"]);
    // A platform that keeps emails back: an account all the same, named for the platform.
    let r = launch(&app, &lms, Launcher { email: None, ..Launcher::new("learner-2", "", LEARNER) }).await;
    assert_eq!(r.location(), "/learn");
    assert!(me(&app, &r.cookie("margin_session").unwrap()).await["email"].as_str().unwrap().ends_with(".invalid"));
    assert_eq!(count(&app, &format!("SELECT COUNT(*) FROM class_members WHERE class_id = '{class_id}'")).await, 2);

    // A learner cannot reach the teacher's doors; the teacher's account is not a student's.
    assert_eq!(app.get(&format!("/api/classes/{class_id}"), Auth::Bearer(&sam)).await.status, StatusCode::FORBIDDEN);
    let r = launch(&app, &lms, Launcher::new("instructor-1", "ms.ng@lincoln.example.org", LEARNER)).await;
    assert_eq!(r.location(), "/refused/lti");
}

#[tokio::test]
async fn forged_foreign_and_replayed_launches_are_refused() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    registered(&app, &lms).await;
    let teacher = || Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR);
    let users = count(&app, "SELECT COUNT(*) FROM users").await;

    for twist in [Twist::StrangerKey, Twist::OtherAudience, Twist::Expired, Twist::OtherNonce, Twist::OtherIssuer] {
        lms.twist_next(twist);
        let r = launch(&app, &lms, teacher()).await;
        assert_eq!(r.location(), "/refused/lti", "{twist:?}");
        assert_eq!(r.cookie("margin_session"), None, "{twist:?}");
    }
    // A deployment nobody registered, in the launch or in the initiation.
    let r = launch(&app, &lms, Launcher { deployment: "deployment-9".into(), ..teacher() }).await;
    assert_eq!(r.location(), "/refused/lti-unknown");
    let mut init = lms.initiation(teacher());
    init.iter_mut().find(|(k, _)| k == "lti_deployment_id").unwrap().1 = "deployment-9".into();
    assert_eq!(app.send(form("/lti/login", &lms.issuer, None, &init)).await.location(), "/refused/lti-unknown");
    // A platform nobody registered.
    let mut init = lms.initiation(teacher());
    init.iter_mut().find(|(k, _)| k == "iss").unwrap().1 = "https://unknown-lms.example".into();
    assert_eq!(app.send(form("/lti/login", &lms.issuer, None, &init)).await.location(), "/refused/lti-unknown");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users);

    // Another browser's state cookie; then the right one; then the same launch replayed.
    let (posted, state) = start(&app, &lms, teacher()).await;
    assert_eq!(post_launch(&app, &lms, &posted, Some("another-browsers-state")).await.location(), "/refused/lti-expired");
    let r = post_launch(&app, &lms, &posted, Some(&state)).await;
    assert!(r.cookie("margin_session").is_some(), "{}", r.location());
    let again = post_launch(&app, &lms, &posted, Some(&state)).await;
    assert_eq!(again.location(), "/refused/lti-expired");
    assert_eq!(again.cookie("margin_session"), None);
    // A state Margin never made.
    let forged = Posted { state: "made-up".into(), ..posted.clone() };
    assert_eq!(post_launch(&app, &lms, &forged, Some("made-up")).await.location(), "/refused/lti-expired");
    assert_eq!(lms.refusals(), Vec::<String>::new(), "Margin's authentication requests were all as LTI asks");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users + 1);
}

/// The claims of a JWT Margin signed, checked against the keys Margin
/// publishes for the school's registration (the only registration here).
async fn verified_by_margin(app: &TestApp, jwt: &str) -> serde_json::Value {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64, Engine};
    use rsa::{pkcs1v15::{Signature, VerifyingKey}, sha2::Sha256, signature::Verifier, BigUint, RsaPublicKey};
    let id: String = sqlx::query_scalar("SELECT id FROM lti_platforms").fetch_one(&app.state.db).await.unwrap();
    let jwks = app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json();
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: serde_json::Value = serde_json::from_slice(&B64.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(header["alg"], "RS256");
    let key = jwks["keys"].as_array().unwrap().iter().find(|k| k["kid"] == header["kid"]).expect("the signing key is published");
    let n = BigUint::from_bytes_be(&B64.decode(key["n"].as_str().unwrap()).unwrap());
    let e = BigUint::from_bytes_be(&B64.decode(key["e"].as_str().unwrap()).unwrap());
    let verifier = VerifyingKey::<Sha256>::new(RsaPublicKey::new(n, e).unwrap());
    let signature = Signature::try_from(B64.decode(parts[2]).unwrap().as_slice()).unwrap();
    verifier.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature).expect("signed by Margin's published key");
    serde_json::from_slice(&B64.decode(parts[1]).unwrap()).unwrap()
}

#[tokio::test]
async fn teachers_pick_a_lesson_for_their_course_by_deep_linking() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    registered(&app, &lms).await;
    let back = format!("{}/deep-link-return", lms.issuer);
    let teacher = || Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR);
    // The teacher's account, and a lesson of theirs.
    let r = launch(&app, &lms, teacher()).await;
    let session = r.cookie("margin_session").unwrap();
    let owner = me(&app, &session).await["id"].as_str().unwrap().to_string();
    let lesson = margin::server::lessons::create(&app.state.db, &owner, "Cells & <tissues>").await.unwrap();

    // The platform's Deep Linking request opens the picker.
    let r = launch(&app, &lms, Launcher { deep_link_return: Some(back.clone()), ..teacher() }).await;
    assert!(r.location().starts_with("/lti/pick/"), "{}", r.location());
    let pick = r.location().to_string();
    let session = r.cookie("margin_session").unwrap();
    let page = app.get(&pick, Auth::Cookie(&session)).await;
    assert!(page.body.contains("Choose a lesson for Test LMS") && page.body.contains("Cells &amp; &lt;tissues&gt;"), "{}", page.body);
    // Nobody else's: another teacher, or nobody signed in, finds nothing.
    let stranger = app.sign_up("stranger@example.net").await;
    assert!(app.get(&pick, Auth::Cookie(&stranger)).await.body.contains("This choice was made already"));
    let r = app.post_form(&format!("{pick}/choose"), Auth::Cookie(&stranger), &[("lesson", &lesson.id)]).await;
    assert_eq!(r.location(), pick);

    // The choice: a page whose form takes Margin's signed answer back, allowed by its policy.
    let r = app.post_form(&format!("{pick}/choose"), Auth::Cookie(&session), &[("lesson", &lesson.id)]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let policy = r.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_string();
    assert!(policy.ends_with(&format!("form-action 'self' {}", lms.issuer)), "{policy}");
    assert!(r.body.contains(&format!(r#"action="{back}""#)) && r.body.contains("Add it to Test LMS"), "{}", r.body);
    let jwt = r.body.split(r#"name="JWT" value=""#).nth(1).and_then(|rest| rest.split('"').next()).expect("the answer's JWT").to_string();
    let claims = verified_by_margin(&app, &jwt).await;
    assert_eq!(claims["iss"], "margin-lms-test");
    assert_eq!(claims["aud"], lms.issuer.as_str());
    assert_eq!(claims["https://purl.imsglobal.org/spec/lti/claim/message_type"], "LtiDeepLinkingResponse");
    assert_eq!(claims["https://purl.imsglobal.org/spec/lti/claim/version"], "1.3.0");
    assert_eq!(claims["https://purl.imsglobal.org/spec/lti/claim/deployment_id"], "deployment-1");
    assert_eq!(claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"], "platform-data-7");
    let item = &claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"][0];
    assert_eq!((item["type"].as_str(), item["title"].as_str()), (Some("ltiResourceLink"), Some("Cells & <tissues>")));
    assert_eq!(item["url"], "http://127.0.0.1:3000/lti/launch");
    assert_eq!(item["custom"]["lesson"], lesson.id.as_str());
    // Once only.
    let again = app.post_form(&format!("{pick}/choose"), Auth::Cookie(&session), &[("lesson", &lesson.id)]).await;
    assert_eq!(again.location(), pick);
    // A learner cannot ask to add Margin to a course.
    let r = launch(&app, &lms, Launcher { deep_link_return: Some(back), ..Launcher::new("learner-1", "sam@lincoln.example.org", LEARNER) }).await;
    assert_eq!(r.location(), "/refused/lti");
}

#[tokio::test]
async fn each_registration_has_its_own_key_and_those_made_before_move_off_the_shared_one() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    let rotate = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_margin")).args(["lti-key", "rotate"]).args(args).env("DATABASE_URL", &app.database.url).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).split_whitespace().find(|w| w.len() == 17 && w.ends_with(':') || w.len() == 16 && w.chars().all(|c| c.is_ascii_hexdigit())).unwrap().trim_end_matches(':').to_string()
    };
    let kids = |jwks: serde_json::Value| jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let (admin, id) = registered_by(&app, &lms, "head@lincoln.example.org").await;
    let (_, other_id) = registered_by(&app, &FakeLms::start().await, "head@other.example.net").await;
    let own = kids(app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json());
    let others = kids(app.get(&format!("/lti/jwks/{other_id}"), Auth::None).await.json());
    assert_eq!((own.len(), others.len()), (1, 1));
    assert_ne!(own, others, "no two registrations share a key");
    assert!(app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json()["keys"][0].get("d").is_none(), "no private part");
    assert_eq!(app.get("/lti/jwks", Auth::None).await.json()["keys"], json!([]), "the server-wide address lists no school's keys");
    assert_eq!(app.get("/lti/jwks/nobody", Auth::None).await.status, StatusCode::NOT_FOUND);

    // A registration made before keys were kept apart signs with the shared key.
    sqlx::query("DELETE FROM lti_tool_keys WHERE platform_id = $1").bind(&id).execute(&app.state.db).await.unwrap();
    let first = rotate(&[]);
    let second = rotate(&[]);
    assert_ne!(first, second);
    assert_eq!(kids(app.get("/lti/jwks", Auth::None).await.json()), vec![second.clone(), first.clone()], "the newest first, the one it replaced still published");
    assert_eq!(kids(app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json()), vec![second.clone(), first.clone()], "its own address serves the shared keys meanwhile");
    assert_eq!(margin::server::lti::keys::current(&app.state.db, &id).await.unwrap().0, second);
    let listed = app.get("/api/school/lti", Auth::Bearer(&admin)).await.json();
    assert_eq!(listed[0]["ownKey"], false);
    // A day after it was replaced, a key is no longer published.
    sqlx::query("UPDATE lti_tool_keys SET retired_at = $1 WHERE kid = $2").bind("2000-01-01T00:00:00.000Z").bind(&first).execute(&app.state.db).await.unwrap();
    assert_eq!(kids(app.get("/lti/jwks", Auth::None).await.json()), vec![second.clone()]);

    // Its admin (no other school's) gives it its own key: the shared one is then published for nobody.
    assert_eq!(app.post_json(&format!("/api/school/lti/{id}/own-key"), Auth::Bearer(&app.sign_up("x@elsewhere.example").await), json!({})).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.post_json(&format!("/api/school/lti/{id}/own-key"), Auth::Bearer(&admin), json!({})).await.status, StatusCode::NO_CONTENT);
    let own = kids(app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json());
    assert_eq!(own.len(), 1);
    assert!(!own.contains(&second));
    assert_eq!(margin::server::lti::keys::current(&app.state.db, &id).await.unwrap().0, own[0]);
    assert_eq!(app.get("/lti/jwks", Auth::None).await.json()["keys"], json!([]));
    assert_eq!(app.post_json(&format!("/api/school/lti/{id}/own-key"), Auth::Bearer(&admin), json!({})).await.status, StatusCode::CONFLICT);
    // One registration's key rotates from the command line; the old one stays published a day.
    let third = rotate(&[&id]);
    assert_eq!(kids(app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json()), vec![third, own[0].clone()]);
    assert_eq!(kids(app.get(&format!("/lti/jwks/{other_id}"), Auth::None).await.json()), others, "another registration's keys are untouched");
}

#[tokio::test]
async fn a_students_check_sends_their_score_to_the_lms() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    registered(&app, &lms).await;
    // The teacher's course, with a published lesson of every kind of exercise.
    let teacher = launch(&app, &lms, Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR)).await;
    let teacher = teacher.cookie("margin_session").unwrap();
    let owner = me(&app, &teacher).await["id"].as_str().unwrap().to_string();
    let lesson = margin::server::lessons::create(&app.state.db, &owner, "Être").await.unwrap();
    common::classes::save_xml(&app, &teacher, &lesson.id, common::classes::LESSON).await;
    let r = launch(&app, &lms, Launcher { custom: json!({"lesson": lesson.id}), ..Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR) }).await;
    assert_eq!(r.location(), format!("/lessons/{}", lesson.id));
    assert_eq!(app.post_json(&format!("/api/lessons/{}/publish", lesson.id), Auth::Bearer(&teacher), json!({})).await.status, StatusCode::OK);

    // The student opens it from the assignment, whose line item takes scores.
    let learner = Launcher { custom: json!({"lesson": lesson.id}), line_item: Some(lms.line_item(7)), ..Launcher::new("learner-1", "sam@lincoln.example.org", LEARNER) };
    let r = launch(&app, &lms, learner).await;
    assert_eq!(r.location(), format!("/learn/lessons/{}", lesson.id));
    let sam = r.cookie("margin_session").unwrap();
    let answers = json!({"answers": {"b1": "serai", "q1": "o2", "s1": "true"}, "seen": 0});
    let r = app.put_json(&format!("/api/learn/lessons/{}/answers", lesson.id), Auth::Bearer(&sam), answers).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let checked = app.post_json(&format!("/api/learn/lessons/{}/check", lesson.id), Auth::Bearer(&sam), json!({})).await;
    assert_eq!(checked.status, StatusCode::OK, "{}", checked.body);
    let checked = checked.json();

    // The score arrives, posted as AGS asks, with a token Margin got by proving itself.
    let mut waited = 0;
    while lms.scores().is_empty() {
        assert!(waited < 500, "no score arrived");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        waited += 1;
    }
    let scores = lms.scores();
    assert_eq!(scores.len(), 1);
    let s = &scores[0];
    assert_eq!(s.path, "/lineitems/7/lineitem/scores");
    assert_eq!(s.content_type, "application/vnd.ims.lis.v1.score+json");
    assert_eq!(s.authorization, "Bearer lms-access-1");
    assert_eq!(s.body["userId"], "learner-1");
    assert_eq!((s.body["scoreGiven"].clone(), s.body["scoreMaximum"].clone()), (checked["right"].clone(), checked["graded"].clone()));
    assert_eq!(s.body["scoreGiven"], 2, "two of the three answers are right: {checked}");
    assert_eq!(s.body["activityProgress"], "Completed");
    assert_eq!(s.body["gradingProgress"], "PendingManual", "short answers and writing wait for the teacher");
    let requests = lms.token_requests();
    assert_eq!(requests[0].1, "https://purl.imsglobal.org/spec/lti-ags/scope/score");
    let assertion = verified_by_margin(&app, &requests[0].0).await;
    assert_eq!((assertion["iss"].as_str(), assertion["sub"].as_str()), (Some("margin-lms-test"), Some("margin-lms-test")));
    assert_eq!(assertion["aud"], format!("{}/token", lms.issuer));

    // A second check uses the kept token; a student who did not come from the LMS sends nothing.
    app.post_json(&format!("/api/learn/lessons/{}/check", lesson.id), Auth::Bearer(&sam), json!({})).await;
    let mut waited = 0;
    while lms.scores().len() < 2 {
        assert!(waited < 500, "no second score arrived");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        waited += 1;
    }
    assert_eq!(lms.token_requests().len(), 1, "the access token was kept");
    let code: String = sqlx::query_scalar("SELECT join_code FROM classes").fetch_one(&app.state.db).await.unwrap();
    let kim = common::classes::student(&app, "kim@lincoln.example.org", &code).await;
    assert_eq!(app.post_json(&format!("/api/learn/lessons/{}/check", lesson.id), Auth::Bearer(&kim), json!({})).await.status, StatusCode::OK);
    // Nothing is queued for Kim: a score is sent only where the lookup below finds a line item.
    let (kim_id, sam_id) = (me(&app, &kim).await["id"].as_str().unwrap().to_string(), me(&app, &sam).await["id"].as_str().unwrap().to_string());
    assert!(margin::server::lti::grades::targets(&app.state.db, &lesson.id, &kim_id).await.unwrap().is_empty(), "a code-joined student's score goes nowhere");
    let sams = margin::server::lti::grades::targets(&app.state.db, &lesson.id, &sam_id).await.unwrap();
    assert_eq!(sams.iter().map(|(_, item, sub)| (item.as_str(), sub.as_str())).collect::<Vec<_>>(), [(format!("{}/lineitems/7/lineitem", lms.issuer).as_str(), "learner-1")]);
    // Sam checks once more after Kim: every score that arrives is Sam's.
    app.post_json(&format!("/api/learn/lessons/{}/check", lesson.id), Auth::Bearer(&sam), json!({})).await;
    let mut waited = 0;
    while lms.scores().len() < 3 {
        assert!(waited < 500, "no third score arrived");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        waited += 1;
    }
    assert!(lms.scores().iter().all(|s| s.body["userId"] == "learner-1"), "{:?}", lms.scores());
}

fn member(sub: &str, email: &str, role: &str, status: &str) -> serde_json::Value {
    json!({ "user_id": sub, "email": email, "roles": [role], "status": status, "name": sub })
}

#[tokio::test]
async fn the_courses_roster_fills_the_class_and_empties_it_of_who_left() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    registered(&app, &lms).await;
    lms.set_members(vec![
        member("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR, "Active"),
        member("learner-1", "sam@lincoln.example.org", LEARNER, "Active"),
        member("learner-2", "kim@lincoln.example.org", LEARNER, "Active"),
        member("learner-3", "lee@lincoln.example.org", LEARNER, "Inactive"),
        member("learner-4", "ana@lincoln.example.org", LEARNER, "Active"),
    ]);
    // The instructor's launch names the roster; Margin reads it in the background.
    let r = launch(&app, &lms, Launcher { roster: true, ..Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR) }).await;
    let teacher = r.cookie("margin_session").unwrap();
    let class_id = r.location().trim_start_matches("/classes/").to_string();
    let members = format!("SELECT COUNT(*) FROM class_members WHERE class_id = '{class_id}'");
    common::waits::until(&app, &members, 3).await;
    // Read as the roster asks: every page, with a token for its scope.
    let reads = lms.roster_reads();
    assert_eq!(reads.len(), 3, "three pages of two");
    assert!(reads.iter().all(|(auth, accept)| auth.starts_with("Bearer lms-access-") && accept == "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"), "{reads:?}");
    assert_eq!(lms.token_requests()[0].1, "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly");
    let class = app.get(&format!("/api/classes/{class_id}"), Auth::Bearer(&teacher)).await.json();
    let mut emails: Vec<String> = class["students"].as_array().unwrap().iter().map(|s| s["email"].as_str().unwrap().to_string()).collect();
    emails.sort();
    assert_eq!(emails, ["ana@lincoln.example.org", "kim@lincoln.example.org", "sam@lincoln.example.org"], "active learners only; the instructor is not a student");

    // A student who joined by the class's code stays whatever the roster says.
    let code = class["joinCode"].as_str().unwrap().to_string();
    common::classes::student(&app, "walk-in@lincoln.example.org", &code).await;
    // Kim leaves the course; Lee comes back; the teacher reads the roster again.
    lms.set_members(vec![
        member("learner-1", "sam@lincoln.example.org", LEARNER, "Active"),
        member("learner-3", "lee@lincoln.example.org", LEARNER, "Active"),
        member("learner-4", "ana@lincoln.example.org", LEARNER, "Active"),
    ]);
    let r = app.post_json(&format!("/api/classes/{class_id}/roster"), Auth::Bearer(&teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json(), json!({"added": 1, "removed": 1}));
    let class = app.get(&format!("/api/classes/{class_id}"), Auth::Bearer(&teacher)).await.json();
    let mut emails: Vec<String> = class["students"].as_array().unwrap().iter().map(|s| s["email"].as_str().unwrap().to_string()).collect();
    emails.sort();
    assert_eq!(emails, ["ana@lincoln.example.org", "lee@lincoln.example.org", "sam@lincoln.example.org", "walk-in@lincoln.example.org"]);
    // Kim's account stays; a later launch of hers is the same student, though out of the class until the roster says otherwise.
    assert_eq!(count(&app, "SELECT COUNT(*) FROM lti_users WHERE email = 'kim@lincoln.example.org'").await, 1);
    // Only the class's teacher may ask; a class with no course roster says so.
    let other = app.sign_up("other@example.net").await;
    assert_eq!(app.post_json(&format!("/api/classes/{class_id}/roster"), Auth::Bearer(&other), json!({})).await.status, StatusCode::NOT_FOUND);
    let plain = app.post_json("/api/classes", Auth::Bearer(&teacher), json!({"name": "Club"})).await.json();
    let r = app.post_json(&format!("/api/classes/{}/roster", plain["id"].as_str().unwrap()), Auth::Bearer(&teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_second_school_cannot_get_another_schools_lms_token_or_send_it_elsewhere() {
    // Lincoln's LMS trusts the keys of Lincoln's registration only.
    let victim = FakeLms::start().await;
    let app = common::app().await;
    registered(&app, &victim).await;
    // A hostile school with a platform of its own registers Lincoln's client
    // id at Lincoln's token address: the same address is refused outright…
    let hostile_lms = FakeLms::start().await;
    let hostile = app.sign_up("mallory@hostile.example").await;
    let mut theft = hostile_lms.registration();
    theft["tokenUrl"] = json!(victim.token_url());
    let r = app.post_json("/api/school/lti", Auth::Bearer(&hostile), theft.clone()).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    // …and the same address written otherwise is let through, but signs
    // with the hostile registration's own key, which Lincoln's LMS never trusted.
    theft["tokenUrl"] = json!(format!("{}?", victim.token_url()));
    let r = app.post_json("/api/school/lti", Auth::Bearer(&hostile), theft).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    hostile_lms.trust(&app.get(&format!("/lti/jwks/{}", r.json()["id"].as_str().unwrap()), Auth::None).await.json());
    // Its instructor's launch names a roster at its own platform: Margin asks
    // Lincoln's LMS for a token with the hostile key, and is refused.
    hostile_lms.set_members(vec![member("learner-1", "x@hostile.example", LEARNER, "Active")]);
    let r = launch(&app, &hostile_lms, Launcher { roster: true, ..Launcher::new("instructor-1", "m@hostile.example", INSTRUCTOR) }).await;
    let class_id = r.location().trim_start_matches("/classes/").to_string();
    let session = r.cookie("margin_session").unwrap();
    let synced = app.post_json(&format!("/api/classes/{class_id}/roster"), Auth::Bearer(&session), json!({})).await;
    assert_eq!(synced.status, StatusCode::SERVICE_UNAVAILABLE, "{}", synced.body);
    assert!(victim.token_requests().is_empty(), "Lincoln's LMS issued no token");
    assert!(victim.refusals().iter().any(|r| r.contains("a key this platform does not trust")), "{:?}", victim.refusals());
    assert!(hostile_lms.roster_reads().iter().all(|(auth, _)| !auth.contains("lms-access")), "no Lincoln token reached the hostile roster");

    // A roster or line item named off Lincoln's registration's origins: no
    // token is asked for, so none can be sent there.
    let elsewhere = FakeLms::start().await;
    let lincoln: String = sqlx::query_scalar("SELECT id FROM lti_platforms WHERE issuer = $1").bind(&victim.issuer).fetch_one(&app.state.db).await.unwrap();
    let platform = margin::server::lti::platforms::get(&app.state.db, &lincoln).await.unwrap().unwrap();
    assert!(platform.serves(&victim.line_item(1)));
    assert!(!platform.serves(&elsewhere.line_item(1)), "another origin is not the registration's");
    let stolen = app.state.lti_tokens.for_service(&app.state.db, &platform, "https://purl.imsglobal.org/spec/lti-ags/scope/score", &elsewhere.line_item(1)).await;
    assert!(stolen.is_err());
    assert!(victim.token_requests().is_empty(), "not even asked for");
}

#[tokio::test]
async fn a_launch_never_becomes_an_account_by_its_email_nor_a_teacher_by_a_school_role() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    let admin = registered(&app, &lms).await;
    let head = me(&app, &admin).await;
    // An instructor's launch carrying the admin's email is a new person, not the admin.
    let r = launch(&app, &lms, Launcher::new("instructor-7", "head@lincoln.example.org", INSTRUCTOR)).await;
    let impostor = me(&app, &r.cookie("margin_session").expect("a session")).await;
    assert_ne!(impostor["id"], head["id"]);
    assert_eq!(impostor["role"], "teacher");
    assert!(impostor["email"].as_str().unwrap().ends_with(".invalid"), "it claims nobody's address: {impostor}");
    // So is a learner's, and the admin still signs in with their password as themselves.
    let r = launch(&app, &lms, Launcher::new("learner-7", "head@lincoln.example.org", LEARNER)).await;
    let learner = me(&app, &r.cookie("margin_session").expect("a session")).await;
    assert_ne!(learner["id"], head["id"]);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users WHERE role = 'admin'").await, 1);
    // Another school's platform, naming this admin's email, reaches nobody here either.
    let hostile_lms = FakeLms::start().await;
    let (_, _) = registered_by(&app, &hostile_lms, "mallory@hostile.example").await;
    let r = launch(&app, &hostile_lms, Launcher::new("instructor-1", "head@lincoln.example.org", INSTRUCTOR)).await;
    let theirs = me(&app, &r.cookie("margin_session").unwrap()).await;
    assert_ne!(theirs["id"], head["id"]);
    assert_ne!(theirs["school_id"], head["school_id"]);

    // A faculty member (an institution role) is a learner in a course where they learn.
    let faculty = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Faculty";
    let r = launch(&app, &lms, Launcher { context: Some(("course-77".into(), "Staff training".into())), ..Launcher::new("faculty-1", "f@lincoln.example.org", faculty) }).await;
    assert_eq!(r.location(), "/refused/lti-class", "no instructor has opened this course: a learner waits");
    let admin_role = "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator";
    let r = launch(&app, &lms, Launcher::new("sysadmin-1", "s@lincoln.example.org", admin_role)).await;
    let sys = me(&app, &r.cookie("margin_session").expect("the course has a class: a learner joins")).await;
    assert_eq!(sys["role"], "student");
}

#[tokio::test]
async fn a_launch_is_bound_to_the_browser_that_started_it_across_sites() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    registered(&app, &lms).await;
    let teacher = || Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR);
    // The state cookie is one a cross-site form post carries.
    let r = app.send(form("/lti/login", &lms.issuer, None, &lms.initiation(teacher()))).await;
    let set = r.set_cookie();
    assert!(set.contains("SameSite=None") && set.contains("Secure") && set.contains("HttpOnly"), "{set}");
    // A launch posted into a browser without it (login CSRF, or an LMS frame
    // that blocks the cookie) is refused on a page of its own, which offers
    // the same launch again in a window of its own; it signs nobody in.
    let users = count(&app, "SELECT COUNT(*) FROM users").await;
    let (posted, _) = start(&app, &lms, teacher()).await;
    let r = post_launch(&app, &lms, &posted, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.cookie("margin_session"), None);
    assert!(r.body.contains("Open Margin in a window of its own"), "{}", r.body);
    let again = r.body.split(r#"href=""#).find(|h| h.starts_with("/lti/login?")).and_then(|h| h.split('"').next()).expect("a way to start again").replace("&amp;", "&");
    assert!(again.contains("login_hint=hint-instructor-1") && again.contains("client_id=margin-lms-test"), "{again}");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users);
    // The state it carried is used up: posting it again with a cookie goes nowhere.
    assert_eq!(post_launch(&app, &lms, &posted, Some(&posted.state)).await.location(), "/refused/lti-expired");
    // Started again where the cookie is kept, the launch goes through.
    let r = app.send(Request::builder().uri(&again).body(Body::empty()).unwrap()).await;
    assert!(r.location().starts_with(&format!("{}/authorize?", lms.issuer)), "{}", r.location());
    let state = r.cookie("margin_lti").unwrap();
    reqwest::get(r.location()).await.unwrap();
    let posted = lms.take_posted().unwrap();
    assert!(post_launch(&app, &lms, &posted, Some(&state)).await.cookie("margin_session").is_some());
}

#[tokio::test]
async fn addresses_inside_the_servers_network_are_never_fetched_and_logins_go_only_to_the_platform() {
    let lms = FakeLms::start().await;
    // A server whose operator allowed no inner address (the fake LMS is on 127.0.0.1).
    let config = margin::server::config::Config { outbound_allow: vec![margin::server::config::ip_range::IpRange::parse("192.0.2.1").unwrap()], ..Default::default() };
    let app = common::app_with(config).await;
    let admin = app.sign_up("head@lincoln.example.org").await;
    assert_eq!(app.post_json("/api/school/lti", Auth::Bearer(&admin), lms.registration()).await.status, StatusCode::CREATED);
    let r = launch(&app, &lms, Launcher::new("instructor-1", "t@lincoln.example.org", INSTRUCTOR)).await;
    assert_eq!(r.location(), "/refused/lti");
    assert_eq!(lms.jwks_reads(), 0, "the platform's keys at a loopback address were never fetched");
    let metadata = "http://169.254.169.254/latest/meta-data/";
    let platform = margin::server::lti::platforms::get(&app.state.db, &sqlx::query_scalar::<_, String>("SELECT id FROM lti_platforms").fetch_one(&app.state.db).await.unwrap()).await.unwrap().unwrap();
    let cloud = margin::server::lti::platforms::Platform { jwks_url: metadata.into(), ..platform };
    let refused = app.state.lti_keys.of(&cloud, true).await.unwrap_err();
    assert!(refused.contains("inside this server's network"), "{refused}");

    // The login address must be on the issuer's or the keys' site: `/lti/login` sends anyone's browser there.
    let mut open = lms.registration();
    open["clientId"] = json!("another-client");
    open["loginUrl"] = json!("https://phish.example/login");
    let r = app.post_json("/api/school/lti", Auth::Bearer(&admin), open).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("same site as the issuer"), "{}", r.body);
}

#[tokio::test]
async fn a_roster_is_read_whole_as_rfc_8288_pages_it_or_changes_nobody() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    registered(&app, &lms).await;
    lms.write_unquoted_links();
    lms.set_members((1..=5).map(|n| member(&format!("learner-{n}"), &format!("s{n}@lincoln.example.org"), LEARNER, "Active")).collect());
    let r = launch(&app, &lms, Launcher { roster: true, ..Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR) }).await;
    let teacher = r.cookie("margin_session").unwrap();
    let class_id = r.location().trim_start_matches("/classes/").to_string();
    let members = format!("SELECT COUNT(*) FROM class_members WHERE class_id = '{class_id}'");
    common::waits::until(&app, &members, 5).await;
    // Each student shows as the LMS names them.
    let class = app.get(&format!("/api/classes/{class_id}"), Auth::Bearer(&teacher)).await.json();
    let emails: Vec<&str> = class["students"].as_array().unwrap().iter().map(|s| s["email"].as_str().unwrap()).collect();
    assert_eq!(emails, ["s1@lincoln.example.org", "s2@lincoln.example.org", "s3@lincoln.example.org", "s4@lincoln.example.org", "s5@lincoln.example.org"]);
    // Page two fails: the sync fails and removes nobody (it would have taken 3 and 4 out).
    lms.fail_roster_page(Some(1));
    let r = app.post_json(&format!("/api/classes/{class_id}/roster"), Auth::Bearer(&teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert_eq!(count(&app, &members).await, 5);
    lms.fail_roster_page(None);
    let r = app.post_json(&format!("/api/classes/{class_id}/roster"), Auth::Bearer(&teacher), json!({})).await;
    assert_eq!(r.json(), json!({"added": 0, "removed": 0}));
}

#[tokio::test]
async fn an_lms_registers_itself_from_the_address_the_school_made() {
    let lms = FakeLms::start().await;
    let app = common::app().await;
    let admin = app.sign_up("head@lincoln.example.org").await;
    let school = me(&app, &admin).await["school_id"].clone();
    // Only a school's admin makes an address; the form shows it once.
    let teacher = common::colleague(&app, &admin, "ada@lincoln.example.org").await;
    assert_eq!(app.post_json("/api/school/lti/dynamic", Auth::Bearer(&teacher), json!({})).await.status, StatusCode::FORBIDDEN);
    let r = app.post_form("/school/lti/dynamic", Auth::Cookie(&admin), &[]).await;
    assert!(r.location().starts_with("/school?lti-registration="), "{}", r.location());
    let page = app.get(r.location(), Auth::Cookie(&admin)).await;
    assert!(page.body.contains("http://127.0.0.1:3000/lti/register/"), "{}", page.body);
    let url = app.post_json("/api/school/lti/dynamic", Auth::Bearer(&admin), json!({})).await.json()["url"].as_str().unwrap().to_string();
    let path = url.strip_prefix("http://127.0.0.1:3000").unwrap().to_string();

    // The LMS opens it, in its own page.
    let open = format!("{path}?openid_configuration={}&registration_token=registration-token-1", margin::url::percent_encode(&lms.configuration_url()));
    let r = app.get(&open, Auth::None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("Margin is registered") && r.body.contains("org.imsglobal.lti.close"), "{}", r.body);
    let policy = r.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(policy.contains(&format!("frame-ancestors {}", lms.issuer)), "framed by the LMS alone: {policy}");
    assert!(r.headers.get(header::X_FRAME_OPTIONS).is_none());
    // What Margin sent: its addresses, and this registration's own keys address.
    let sent = lms.registrations();
    assert_eq!(sent.len(), 1);
    let body = &sent[0].1;
    let id: String = sqlx::query_scalar("SELECT id FROM lti_platforms").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(body["jwks_uri"], format!("http://127.0.0.1:3000/lti/jwks/{id}"));
    assert_eq!(body["initiate_login_uri"], "http://127.0.0.1:3000/lti/login");
    assert_eq!(body["redirect_uris"], json!(["http://127.0.0.1:3000/lti/launch"]));
    assert_eq!(body["token_endpoint_auth_method"], "private_key_jwt");
    assert_eq!(body["https://purl.imsglobal.org/spec/lti-tool-configuration"]["messages"][1]["type"], "LtiDeepLinkingRequest");
    // The platform is the school's, under the client id the platform chose.
    let listed = app.get("/api/school/lti", Auth::Bearer(&admin)).await.json();
    assert_eq!((listed[0]["clientId"].as_str(), listed[0]["issuer"].as_str(), listed[0]["name"].as_str()), (Some("margin-lms-test"), Some(lms.issuer.as_str()), Some("test-lms")));
    assert_eq!(listed[0]["deployments"], json!(["deployment-1"]));
    lms.trust(&app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json());
    // Its launches work.
    let r = launch(&app, &lms, Launcher::new("instructor-1", "ms.ng@lincoln.example.org", INSTRUCTOR)).await;
    assert!(r.location().starts_with("/classes/"), "{}", r.location());
    assert_eq!(me(&app, &r.cookie("margin_session").unwrap()).await["school_id"], school);

    // The address works once.
    let again = app.get(&open, Auth::None).await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST);
    assert!(again.body.contains("has been used or has expired") && !again.body.contains("org.imsglobal.lti.close"), "{}", again.body);
    // A registration the LMS refuses (a wrong registration token) registers nothing.
    let url = app.post_json("/api/school/lti/dynamic", Auth::Bearer(&admin), json!({})).await.json()["url"].as_str().unwrap().to_string();
    let path = url.strip_prefix("http://127.0.0.1:3000").unwrap().to_string();
    let other = FakeLms::start().await;
    let r = app.get(&format!("{path}?openid_configuration={}&registration_token=wrong", margin::url::percent_encode(&other.configuration_url())), Auth::None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("did not take Margin's registration"), "{}", r.body);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM lti_platforms").await, 1);
}

/// The LMS built on `lti1p3platform` (PyPI; tests/peers/lti_platform.py),
/// run with the Python `make test` installs it in (`MARGIN_TEST_LTI_PYTHON`).
struct PeerLms {
    child: std::process::Child,
    base: String,
}

impl Drop for PeerLms {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PeerLms {
    async fn start() -> Self {
        let python = std::env::var("MARGIN_TEST_LTI_PYTHON").unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/target/peers/venv/bin/python").to_string());
        assert!(std::path::Path::new(&python).exists(), "{python} is missing: `make test` installs lti1p3platform there (make lti-peer)");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let root = env!("CARGO_MANIFEST_DIR");
        let child = std::process::Command::new(python)
            .args([&format!("{root}/tests/peers/lti_platform.py"), &port.to_string(), "margin-peer", "deployment-peer", &format!("{root}/tests/all/common/keys/provider.pem")])
            .spawn()
            .expect("the platform starts");
        let peer = PeerLms { child, base: format!("http://127.0.0.1:{port}") };
        let started = std::time::Instant::now();
        while reqwest::get(format!("{}/jwks", peer.base)).await.is_err() {
            assert!(started.elapsed() < std::time::Duration::from_secs(30), "lti1p3platform never answered");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        peer
    }

    async fn post(&self, path: &str, body: serde_json::Value) {
        let r = reqwest::Client::new().post(format!("{}{path}", self.base)).json(&body).send().await.unwrap();
        assert!(r.status().is_success());
    }

    async fn get(&self, path: &str) -> serde_json::Value {
        reqwest::get(format!("{}{path}", self.base)).await.unwrap().json().await.unwrap()
    }

    /// A launch as the library makes it: its login initiation to Margin,
    /// Margin's authentication request to it, its signed launch posted back.
    async fn launch(&self, app: &TestApp, query: &str) -> Reply {
        let start = self.get(&format!("/start?{query}")).await;
        let initiation = start["url"].as_str().unwrap().strip_prefix("http://127.0.0.1:3000").unwrap().to_string();
        let r = app.send(Request::builder().uri(&initiation).body(Body::empty()).unwrap()).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
        let state = r.cookie("margin_lti").unwrap();
        let answer = reqwest::get(r.location()).await.unwrap();
        assert_eq!(answer.status().as_u16(), 200, "{:?}", answer.text().await);
        let posted: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(posted["launch_url"], "http://127.0.0.1:3000/lti/launch");
        let fields = [("id_token".to_string(), posted["id_token"].as_str().unwrap().to_string()), ("state".to_string(), posted["state"].as_str().unwrap().to_string())];
        app.send(form("/lti/launch", &self.base, Some(&format!("margin_lti={state}")), &fields)).await
    }
}

#[tokio::test]
async fn launches_rosters_and_grades_work_with_a_platform_library_no_one_here_wrote() {
    let peer = PeerLms::start().await;
    let app = common::app().await;
    let admin = app.sign_up("head@lincoln.example.org").await;
    let b = &peer.base;
    let registration = json!({
        "name": "lti1p3platform", "issuer": b, "clientId": "margin-peer", "deployments": "deployment-peer",
        "loginUrl": format!("{b}/authorize"), "tokenUrl": format!("{b}/token"), "jwksUrl": format!("{b}/jwks"),
    });
    let r = app.post_json("/api/school/lti", Auth::Bearer(&admin), registration).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_str().unwrap().to_string();
    // The platform's admin enters the registration's keys.
    peer.post("/trust", app.get(&format!("/lti/jwks/{id}"), Auth::None).await.json()).await;
    let learners: Vec<serde_json::Value> = (1..=5).map(|n| member(&format!("learner-{n}"), &format!("s{n}@lincoln.example.org"), LEARNER, "Active")).collect();
    peer.post("/members", json!(learners)).await;

    // The instructor's launch makes the class, and the roster (three pages
    // of two, each named by the library's unquoted `rel=next`) fills it.
    let r = peer.launch(&app, &format!("user=inst-1&role={}&email=ms.ng%40lincoln.example.org&roster=1", margin::url::percent_encode(INSTRUCTOR))).await;
    assert!(r.location().starts_with("/classes/"), "{} {}", r.location(), r.body);
    let teacher = r.cookie("margin_session").unwrap();
    let class_id = r.location().trim_start_matches("/classes/").to_string();
    common::waits::until(&app, &format!("SELECT COUNT(*) FROM class_members WHERE class_id = '{class_id}'"), 5).await;

    // The teacher picks a lesson for the course (Deep Linking): the library
    // checks Margin's signed answer against the registration's keys.
    let owner = me(&app, &teacher).await["id"].as_str().unwrap().to_string();
    let lesson = margin::server::lessons::create(&app.state.db, &owner, "Être").await.unwrap();
    let r = peer.launch(&app, &format!("user=inst-1&role={}&deep_link=1", margin::url::percent_encode(INSTRUCTOR))).await;
    assert!(r.location().starts_with("/lti/pick/"), "{} {}", r.location(), r.body);
    let session = r.cookie("margin_session").unwrap();
    let r = app.post_form(&format!("{}/choose", r.location()), Auth::Cookie(&session), &[("lesson", &lesson.id)]).await;
    assert!(r.body.contains(&format!(r#"action="{b}/deep-link-return""#)), "{}", r.body);
    let jwt = r.body.split(r#"name="JWT" value=""#).nth(1).and_then(|rest| rest.split('"').next()).unwrap().to_string();
    let back = reqwest::Client::new().post(format!("{b}/deep-link-return")).header("content-type", "application/x-www-form-urlencoded").body(serde_urlencoded::to_string([("JWT", jwt)]).unwrap()).send().await.unwrap();
    assert_eq!(back.status().as_u16(), 200, "{:?}", back.text().await);
    let items: serde_json::Value = back.json().await.unwrap();
    assert_eq!((items[0]["type"].as_str(), items[0]["custom"]["lesson"].as_str()), (Some("ltiResourceLink"), Some(lesson.id.as_str())));

    // A published lesson, opened by a learner from an assignment, sends the score back.
    common::classes::save_xml(&app, &teacher, &lesson.id, common::classes::LESSON).await;
    sqlx::query("INSERT INTO class_lessons (class_id, lesson_id, added_at) VALUES ($1, $2, '2026-01-01T00:00:00.000Z')").bind(&class_id).bind(&lesson.id).execute(&app.state.db).await.unwrap();
    assert_eq!(app.post_json(&format!("/api/lessons/{}/publish", lesson.id), Auth::Bearer(&teacher), json!({})).await.status, StatusCode::OK);
    let r = peer.launch(&app, &format!("user=learner-1&role={}&lesson={}&lineitem=1", margin::url::percent_encode(LEARNER), lesson.id)).await;
    assert_eq!(r.location(), format!("/learn/lessons/{}", lesson.id), "{}", r.body);
    let sam = r.cookie("margin_session").unwrap();
    let answers = json!({"answers": {"b1": "serai", "q1": "o2", "s1": "true"}, "seen": 0});
    assert_eq!(app.put_json(&format!("/api/learn/lessons/{}/answers", lesson.id), Auth::Bearer(&sam), answers).await.status, StatusCode::OK);
    assert_eq!(app.post_json(&format!("/api/learn/lessons/{}/check", lesson.id), Auth::Bearer(&sam), json!({})).await.status, StatusCode::OK);
    let started = std::time::Instant::now();
    let scores = loop {
        let scores = peer.get("/scores").await;
        if !scores.as_array().unwrap().is_empty() {
            break scores;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "no score arrived: {}", peer.get("/token-refusals").await);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!((scores[0]["userId"].as_str(), scores[0]["scoreGiven"].as_i64()), (Some("learner-1"), Some(2)));
    assert_eq!(peer.get("/token-refusals").await, json!([]), "the library took every client assertion Margin signed");
}
