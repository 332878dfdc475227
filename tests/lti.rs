//! Margin as an LTI 1.3 tool, against an LMS platform the test runs
//! (`common::fake_lms`: published keys, an authorization endpoint that signs
//! launches with a real RSA key), on both databases: a school's admin
//! registers the platform; an instructor's launch makes the course's class
//! and opens it (or a lesson, added to it); a learner's joins it and opens
//! the published lesson; forged, foreign and replayed launches are refused
//! with a sentence and make nobody.

mod common;

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

async fn registered(app: &TestApp, lms: &FakeLms) -> String {
    let admin = app.sign_up("head@lincoln.example.org").await;
    let r = app.post_json("/api/school/lti", Auth::Bearer(&admin), lms.registration()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    admin
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
    assert_eq!(r.location(), "/signin?error=lti-class");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users);
    let page = app.get("/signin?error=lti-class", Auth::None).await;
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
    assert_eq!(r.location(), "/signin?error=lti");
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
        assert_eq!(r.location(), "/signin?error=lti", "{twist:?}");
        assert_eq!(r.cookie("margin_session"), None, "{twist:?}");
    }
    // A deployment nobody registered, in the launch or in the initiation.
    let r = launch(&app, &lms, Launcher { deployment: "deployment-9".into(), ..teacher() }).await;
    assert_eq!(r.location(), "/signin?error=lti-unknown");
    let mut init = lms.initiation(teacher());
    init.iter_mut().find(|(k, _)| k == "lti_deployment_id").unwrap().1 = "deployment-9".into();
    assert_eq!(app.send(form("/lti/login", &lms.issuer, None, &init)).await.location(), "/signin?error=lti-unknown");
    // A platform nobody registered.
    let mut init = lms.initiation(teacher());
    init.iter_mut().find(|(k, _)| k == "iss").unwrap().1 = "https://unknown-lms.example".into();
    assert_eq!(app.send(form("/lti/login", &lms.issuer, None, &init)).await.location(), "/signin?error=lti-unknown");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users);

    // Another browser's state cookie; then the right one; then the same launch replayed.
    let (posted, state) = start(&app, &lms, teacher()).await;
    assert_eq!(post_launch(&app, &lms, &posted, Some("another-browsers-state")).await.location(), "/signin?error=lti-expired");
    let r = post_launch(&app, &lms, &posted, Some(&state)).await;
    assert!(r.cookie("margin_session").is_some(), "{}", r.location());
    let again = post_launch(&app, &lms, &posted, None).await;
    assert_eq!(again.location(), "/signin?error=lti-expired");
    assert_eq!(again.cookie("margin_session"), None);
    // A token with no state, or a state Margin never made.
    let forged = Posted { state: "made-up".into(), ..posted.clone() };
    assert_eq!(post_launch(&app, &lms, &forged, None).await.location(), "/signin?error=lti-expired");
    assert_eq!(lms.refusals(), Vec::<String>::new(), "Margin's authentication requests were all as LTI asks");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users + 1);
}

/// The claims of a JWT Margin signed, checked against Margin's published keys.
async fn verified_by_margin(app: &TestApp, jwt: &str) -> serde_json::Value {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64, Engine};
    use rsa::{pkcs1v15::{Signature, VerifyingKey}, sha2::Sha256, signature::Verifier, BigUint, RsaPublicKey};
    let jwks = app.get("/lti/jwks", Auth::None).await.json();
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
    assert_eq!(r.location(), "/signin?error=lti");
}

#[tokio::test]
async fn margins_key_rotates_from_the_command_line_and_old_keys_stay_published_a_day() {
    let app = common::app().await;
    let rotate = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_margin")).args(["lti-key", "rotate"]).env("DATABASE_URL", &app.database.url).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).split_whitespace().nth(3).unwrap().trim_end_matches(':').to_string()
    };
    assert_eq!(app.get("/lti/jwks", Auth::None).await.json()["keys"], json!([]), "no key until one is needed");
    let first = rotate();
    let second = rotate();
    assert_ne!(first, second);
    let kids = |jwks: serde_json::Value| jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let jwks = app.get("/lti/jwks", Auth::None).await;
    assert_eq!(kids(jwks.json()), vec![second.clone(), first.clone()], "the newest first, the one it replaced still published");
    assert!(jwks.json()["keys"][0].get("d").is_none(), "no private part");
    let (signing, _) = margin::server::lti::keys::current(&app.state.db).await.unwrap();
    assert_eq!(signing, second);
    // A day after it was replaced, a key is no longer published.
    sqlx::query("UPDATE lti_tool_keys SET retired_at = $1 WHERE kid = $2").bind("2000-01-01T00:00:00.000Z").bind(&first).execute(&app.state.db).await.unwrap();
    assert_eq!(kids(app.get("/lti/jwks", Auth::None).await.json()), vec![second]);
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
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users WHERE email = 'kim@lincoln.example.org'").await, 1);
    // Only the class's teacher may ask; a class with no course roster says so.
    let other = app.sign_up("other@example.net").await;
    assert_eq!(app.post_json(&format!("/api/classes/{class_id}/roster"), Auth::Bearer(&other), json!({})).await.status, StatusCode::NOT_FOUND);
    let plain = app.post_json("/api/classes", Auth::Bearer(&teacher), json!({"name": "Club"})).await.json();
    let r = app.post_json(&format!("/api/classes/{}/roster", plain["id"].as_str().unwrap()), Auth::Bearer(&teacher), json!({})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}
