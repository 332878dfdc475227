//! Signing in with a school's accounts (OpenID Connect) against a real
//! provider the test runs (`common::fake_sso`: discovery, keys, codes, PKCE,
//! ID tokens signed with a real RSA key), on both databases: a school's
//! admin links their own account and then the school; its teachers land in
//! it; students join their class; every tampered or replayed answer is
//! refused with a sentence and makes no account.

use crate::common;

use axum::{
    body::Body,
    http::{header, Method, Request, StatusCode},
};
use common::{
    fake_sso::{FakeSso, Person, Twist},
    waits::count,
    Auth, Reply, TestApp, OWN_ORIGIN,
};
use margin::server::config::Config;
use serde_json::json;

async fn app_with_sso(fake: &FakeSso, tenant_claim: Option<&str>) -> TestApp {
    let config = Config { sso: vec![fake.provider("example", tenant_claim)], ..Config::default() };
    common::app_with(config).await
}

/// What a browser does: Margin's answer to `start` sends it to the
/// provider, which sends it back to Margin with a code and the state; the
/// browser carries the state cookie (and `session`, when signed in). The
/// last answer, Margin's.
async fn through_provider(app: &TestApp, start: Request<Body>, session: Option<&str>) -> Reply {
    let r = app.send(start).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let state = r.cookie("margin_sso").expect("the state cookie");
    let back = follow_provider(r.location()).await;
    callback(app, &back, Some(&state), session).await
}

/// The provider's answer: where it sends the browser back to (a path on Margin).
async fn follow_provider(to: &str) -> String {
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let answer = http.get(to).send().await.expect("the provider answers");
    assert_eq!(answer.status().as_u16(), 303, "{:?}", answer.text().await);
    let back = answer.headers()[header::LOCATION].to_str().unwrap().to_string();
    back.strip_prefix(OWN_ORIGIN).unwrap_or_else(|| panic!("back to Margin's own address: {back}")).to_string()
}

async fn callback(app: &TestApp, path: &str, state: Option<&str>, session: Option<&str>) -> Reply {
    let mut cookies = Vec::new();
    if let Some(s) = state {
        cookies.push(format!("margin_sso={s}"));
    }
    if let Some(s) = session {
        cookies.push(format!("margin_session={s}"));
    }
    let mut req = Request::builder().method(Method::GET).uri(path);
    if !cookies.is_empty() {
        req = req.header(header::COOKIE, cookies.join("; "));
    }
    app.send(req.body(Body::empty()).unwrap()).await
}

fn get(path: &str) -> Request<Body> {
    Request::builder().method(Method::GET).uri(path).body(Body::empty()).unwrap()
}

/// "Link Example SSO" on the Account page, signed in as `session`: a link
/// followed from Margin's own page.
fn link(session: &str) -> Request<Body> {
    Request::builder()
        .method(Method::GET)
        .uri("/auth/sso/example/link")
        .header(header::COOKIE, format!("margin_session={session}"))
        .header("sec-fetch-site", "same-origin")
        .body(Body::empty())
        .unwrap()
}

/// The operator links a domain or tenant to a school (`margin sso link`).
async fn operator_links(app: &TestApp, school: &str, kind: &str, value: &str) {
    margin::server::accounts::sso::school_links::link_by_operator(&app.state.db, school, "example", kind, value).await.expect("linked");
}

async fn me(app: &TestApp, session: &str) -> serde_json::Value {
    let r = app.get("/api/auth/me", Auth::Bearer(session)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json()["user"].clone()
}

#[tokio::test]
async fn a_linked_school_takes_its_teachers_in_by_their_school_accounts() {
    let fake = FakeSso::start().await;
    let app = app_with_sso(&fake, None).await;
    let admin = app.sign_up("admin@lincoln.example.org").await;
    let admin_school = me(&app, &admin).await["school_id"].as_str().unwrap().to_string();

    // The sign-in page offers the provider; unknown providers are not there.
    let page = app.get("/signin", Auth::None).await;
    assert!(page.body.contains(r#"href="/auth/sso/example""#) && page.body.contains("Sign in with Example SSO"), "{}", page.body);
    assert_eq!(app.get("/api/auth/sso", Auth::None).await.json()["providers"], json!([{"id": "example", "label": "Example SSO"}]));
    assert_eq!(app.get("/auth/sso/elsewhere", Auth::None).await.status, StatusCode::NOT_FOUND);

    // Before the school is linked, a teacher of its domain lands nowhere.
    fake.sign_in_as(Person::new("teacher-1", "ada@lincoln.example.org"));
    let r = through_provider(&app, get("/auth/sso/example"), None).await;
    assert_eq!(r.location(), "/refused/sso-school");
    assert_eq!(r.cookie("margin_session"), None);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, 1, "no account from a school nobody linked");

    // The admin links their own school account, then the school to its domain.
    fake.sign_in_as(Person::new("admin-1", "admin@lincoln.example.org"));
    // Not when another site starts it.
    let forged = Request::builder()
        .uri("/auth/sso/example/link")
        .header(header::COOKIE, format!("margin_session={admin}"))
        .header("sec-fetch-site", "cross-site")
        .body(Body::empty())
        .unwrap();
    assert_eq!(app.send(forged).await.location(), "/account?error=sso");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM sso_logins").await, 0);
    let r = through_provider(&app, link(&admin), Some(&admin)).await;
    assert_eq!(r.location(), "/account?done=linked", "{}", r.body);
    let account = app.get("/account", Auth::Cookie(&admin)).await;
    assert!(account.body.contains("Example SSO (admin@lincoln.example.org)"), "{}", account.body);
    // A confirmed address proves no domain (a pupil's would do): not offered, not taken.
    let school = app.get("/api/school", Auth::Bearer(&admin)).await.json();
    assert_eq!(school["ssoOptions"], json!([]));
    let r = app.post_form("/school/sso", Auth::Cookie(&admin), &[("provider", "example"), ("kind", "domain"), ("value", "lincoln.example.org")]).await;
    assert_eq!(r.location(), "/school?error=sso-own");
    // The operator links the domain.
    operator_links(&app, &admin_school, "domain", "lincoln.example.org").await;
    let page = app.get("/school", Auth::Cookie(&admin)).await;
    assert!(page.body.contains("Example SSO: everyone with an @lincoln.example.org address"), "{}", page.body);
    // A teacher (not the admin) cannot link.
    let colleague = common::colleague(&app, &admin, "bea@lincoln.example.org").await;
    let r = app.post_form("/school/sso/remove", Auth::Cookie(&colleague), &[("provider", "example"), ("kind", "domain"), ("value", "lincoln.example.org")]).await;
    assert_eq!(r.location(), "/school");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM school_sso").await, 1);

    // Now the teacher lands in the school waiting for its admin, with no session;
    // once let in, with no password, and the page they asked for.
    fake.sign_in_as(Person::new("teacher-1", "ada@lincoln.example.org"));
    let r = through_provider(&app, get("/auth/sso/example?next=%2Fclasses"), None).await;
    assert_eq!(r.location(), "/refused/sso-waiting");
    assert_eq!(r.cookie("margin_session"), None);
    let waiting = app.get("/school", Auth::Cookie(&admin)).await;
    assert!(waiting.body.contains("Waiting for you") && waiting.body.contains("ada@lincoln.example.org"), "{}", waiting.body);
    let ada_id: String = sqlx::query_scalar("SELECT id FROM users WHERE email = 'ada@lincoln.example.org'").fetch_one(&app.state.db).await.unwrap();
    // Not by a teacher, nor by another school's admin.
    let outsider = app.sign_up("other@example.net").await;
    assert_eq!(app.post_json(&format!("/api/school/members/{ada_id}/approve"), Auth::Bearer(&outsider), json!({})).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.post_form(&format!("/school/members/{ada_id}/approve"), Auth::Cookie(&admin), &[]).await.location(), "/school?done=approved");
    let r = through_provider(&app, get("/auth/sso/example?next=%2Fclasses"), None).await;
    assert_eq!(r.location(), "/classes");
    let session = r.cookie("margin_session").expect("a session");
    let ada = me(&app, &session).await;
    assert_eq!((ada["email"].as_str(), ada["role"].as_str(), ada["school_id"].as_str()), (Some("ada@lincoln.example.org"), Some("teacher"), Some(admin_school.as_str())));
    let hash: String = sqlx::query_scalar("SELECT password_hash FROM users WHERE email = 'ada@lincoln.example.org'").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(hash, "", "an account made by a school account has no password");
    let by_password = app.post_json("/api/auth/login", Auth::None, json!({"email": "ada@lincoln.example.org", "password": ""})).await;
    assert_eq!(by_password.status, StatusCode::BAD_REQUEST, "and an empty one does not sign in");
    // The state cookie is cleared on the way back.
    assert!(r.headers.get_all(header::SET_COOKIE).iter().any(|c| c.to_str().unwrap().starts_with("margin_sso=;")));

    // The same person again: the same account.
    let again = through_provider(&app, get("/auth/sso/example"), None).await;
    assert_eq!(me(&app, &again.cookie("margin_session").unwrap()).await["id"], ada["id"]);

    // Someone whose email has a password account here: not merged silently.
    fake.sign_in_as(Person::new("teacher-2", "bea@lincoln.example.org"));
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/sso-exists");
    // An address the provider did not confirm makes no account.
    fake.sign_in_as(Person { email_verified: Some(false), ..Person::new("teacher-3", "cy@lincoln.example.org") });
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/sso-email");
    fake.sign_in_as(Person { email: None, ..Person::new("teacher-4", "") });
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/sso-email");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, 4, "admin, colleague, Ada, the other school's admin");

    // An account made by a school account keeps its only way in.
    let r = app.post_form("/account/sso/example/unlink", Auth::Cookie(&session), &[]).await;
    assert_eq!(r.location(), "/account?error=last");
    // A password account may unlink; its identity then signs in nobody.
    let r = app.post_form("/account/sso/example/unlink", Auth::Cookie(&admin), &[]).await;
    assert_eq!(r.location(), "/account?done=unlinked");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM user_identities").await, 1);
    // The admin unlinks the school: new people land nowhere again; Ada keeps her account.
    let r = app.post_form("/school/sso/remove", Auth::Cookie(&admin), &[("provider", "example"), ("kind", "domain"), ("value", "lincoln.example.org")]).await;
    assert_eq!(r.location(), "/school?done=sso-removed");
    fake.sign_in_as(Person::new("teacher-5", "dee@lincoln.example.org"));
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/sso-school");
    fake.sign_in_as(Person::new("teacher-1", "ada@lincoln.example.org"));
    let ada_session = through_provider(&app, get("/auth/sso/example"), None).await.cookie("margin_session").expect("signed in");

    // The admin removes Ada, and the colleague: their sessions end, and no
    // door lets them back (another school's admin cannot remove anyone here).
    assert_eq!(app.post_json(&format!("/api/school/members/{ada_id}/remove"), Auth::Bearer(&outsider), json!({})).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.post_form(&format!("/school/members/{ada_id}/remove"), Auth::Cookie(&admin), &[]).await.location(), "/school?done=removed");
    assert_eq!(app.get("/api/auth/me", Auth::Bearer(&ada_session)).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/removed");
    let bea: String = sqlx::query_scalar("SELECT id FROM users WHERE email = 'bea@lincoln.example.org'").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(app.post_json(&format!("/api/school/members/{bea}/remove"), Auth::Bearer(&admin), json!({})).await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.get("/api/auth/me", Auth::Bearer(&colleague)).await.status, StatusCode::UNAUTHORIZED);
    let by_password = app.post_json("/api/auth/login", Auth::None, json!({"email": "bea@lincoln.example.org", "password": "correct horse"})).await;
    assert!(by_password.body.contains("removed this account"), "{}", by_password.body);
    // Nor is an admin removed, by themselves or anyone.
    let admin_id = me(&app, &admin).await["id"].as_str().unwrap().to_string();
    assert_eq!(app.post_json(&format!("/api/school/members/{admin_id}/remove"), Auth::Bearer(&admin), json!({})).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn tampered_replayed_and_foreign_answers_are_refused() {
    let fake = FakeSso::start().await;
    let app = app_with_sso(&fake, None).await;
    let admin = app.sign_up("admin@lincoln.example.org").await;
    fake.sign_in_as(Person::new("admin-1", "admin@lincoln.example.org"));
    assert_eq!(through_provider(&app, link(&admin), Some(&admin)).await.location(), "/account?done=linked");
    let school = me(&app, &admin).await["school_id"].as_str().unwrap().to_string();
    operator_links(&app, &school, "domain", "lincoln.example.org").await;
    // Ada is a teacher of the school already (let in before).
    fake.sign_in_as(Person::new("teacher-1", "ada@lincoln.example.org"));
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/sso-waiting");
    sqlx::query("UPDATE users SET role = 'teacher' WHERE email = 'ada@lincoln.example.org'").execute(&app.state.db).await.unwrap();
    let users = count(&app, "SELECT COUNT(*) FROM users").await;

    // Each twisted token is refused with the same sentence, and makes nobody.
    for twist in [Twist::StrangerKey, Twist::OtherAudience, Twist::Expired, Twist::OtherNonce, Twist::OtherIssuer] {
        let issued = fake.tokens_issued();
        fake.twist_next(twist);
        let r = through_provider(&app, get("/auth/sso/example"), None).await;
        assert_eq!(fake.tokens_issued(), issued + 1, "{twist:?}: the provider did sign a token");
        assert_eq!(r.location(), "/refused/sso", "{twist:?}");
        assert_eq!(r.cookie("margin_session"), None, "{twist:?}");
    }
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users);
    assert_eq!(fake.refusals(), Vec::<String>::new(), "Margin sent the secret, the code, its address and the PKCE verifier right each time");

    // The answer must come back to the browser that started: no state cookie, another one, or none at all.
    let start = app.send(get("/auth/sso/example")).await;
    let state = start.cookie("margin_sso").unwrap();
    let back = follow_provider(start.location()).await;
    assert_eq!(callback(&app, &back, None, None).await.location(), "/refused/sso-expired");
    assert_eq!(callback(&app, &back, Some("another-browsers-state"), None).await.location(), "/refused/sso-expired");
    // Refused above, the state is still unused: the right browser goes on.
    let r = callback(&app, &back, Some(&state), None).await;
    assert!(r.cookie("margin_session").is_some(), "{}", r.location());
    // Replayed, the same answer is refused: the state was used.
    let again = callback(&app, &back, Some(&state), None).await;
    assert_eq!(again.location(), "/refused/sso-expired");
    assert_eq!(again.cookie("margin_session"), None);

    // A state started for one provider does not finish another's sign-in.
    let start = app.send(get("/auth/sso/example")).await;
    let state = start.cookie("margin_sso").unwrap();
    let back = follow_provider(start.location()).await;
    let elsewhere = back.replace("/auth/sso/example/", "/auth/sso/other/");
    assert_eq!(callback(&app, &elsewhere, Some(&state), None).await.location(), "/refused/sso-expired");

    // The provider's own refusal (the person said no) is a sentence too.
    let start = app.send(get("/auth/sso/example")).await;
    let state = start.cookie("margin_sso").unwrap();
    let r = callback(&app, &format!("/auth/sso/example/callback?error=access_denied&state={state}"), Some(&state), None).await;
    assert_eq!(r.location(), "/refused/sso");

    // An expired sign-in (older than ten minutes) is refused.
    let start = app.send(get("/auth/sso/example")).await;
    let state = start.cookie("margin_sso").unwrap();
    let back = follow_provider(start.location()).await;
    sqlx::query("UPDATE sso_logins SET expires_at = $1").bind("2000-01-01T00:00:00.000Z").execute(&app.state.db).await.unwrap();
    assert_eq!(callback(&app, &back, Some(&state), None).await.location(), "/refused/sso-expired");

    // The sentence the page shows for each code.
    let page = app.get("/refused/sso", Auth::None).await;
    assert!(page.body.contains("Signing in with your school account did not work"), "{}", page.body);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users").await, users, "no refused answer made an account");
}

#[tokio::test]
async fn students_join_their_class_with_a_school_account() {
    let fake = FakeSso::start().await;
    let app = app_with_sso(&fake, None).await;
    let c = common::classes::class(&app, "teacher@lincoln.example.org").await;

    // The join page offers it.
    let page = app.get(&format!("/join/{}", c.code), Auth::None).await;
    let href = format!("/auth/sso/example?next=%2Flearn&amp;join={}", c.code);
    assert!(page.body.contains(&href) && page.body.contains("Join with Example SSO"), "{}", page.body);

    // A student with a personal address joins through the class's link: no school link needed.
    fake.sign_in_as(Person::new("student-1", "sam@gmail.com"));
    let r = through_provider(&app, get(&format!("/auth/sso/example?next=%2Flearn&join={}", c.code)), None).await;
    assert_eq!(r.location(), "/learn");
    let sam = r.cookie("margin_session").unwrap();
    assert_eq!(me(&app, &sam).await["role"], "student");
    let classes = app.get("/api/learn", Auth::Bearer(&sam)).await;
    assert!(classes.body.contains("Year 7 French"), "{}", classes.body);

    // Without the class's link the same kind of person lands nowhere; with a dead code, back to the join page.
    fake.sign_in_as(Person::new("student-2", "kim@gmail.com"));
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/sso-school");
    let r = through_provider(&app, get("/auth/sso/example?join=NOPE99"), None).await;
    assert_eq!(r.location(), "/join/NOPE99?error=join");
    assert_eq!(count(&app, "SELECT COUNT(*) FROM users WHERE role = 'student'").await, 1);
}

#[tokio::test]
async fn a_school_linked_by_its_organisation_takes_whoever_the_provider_vouches_for() {
    let fake = FakeSso::start().await;
    let app = app_with_sso(&fake, Some("tid")).await;
    let admin = app.sign_up("head@gmail.com").await;
    fake.sign_in_as(Person { extra: json!({"tid": "Lincoln-42"}), ..Person::new("admin-1", "head@gmail.com") });
    assert_eq!(through_provider(&app, link(&admin), Some(&admin)).await.location(), "/account?done=linked");
    // A mail service's domain is never offered; the organisation is.
    let school = app.get("/api/school", Auth::Bearer(&admin)).await.json();
    assert_eq!(school["ssoOptions"], json!([{"provider": "example", "label": "Example SSO", "kind": "tenant", "value": "lincoln-42"}]));
    let r = app.post_form("/school/sso", Auth::Cookie(&admin), &[("provider", "example"), ("kind", "tenant"), ("value", "lincoln-42")]).await;
    assert_eq!(r.location(), "/school?done=sso-linked");

    // Someone of that organisation lands in the school, even without a
    // confirmed-email claim: waiting, until the admin lets them in.
    fake.sign_in_as(Person { email_verified: None, extra: json!({"tid": "Lincoln-42"}), ..Person::new("teacher-1", "ada@gmail.com") });
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/sso-waiting");
    let ada_id: String = sqlx::query_scalar("SELECT id FROM users WHERE email = 'ada@gmail.com'").fetch_one(&app.state.db).await.unwrap();
    assert_eq!(app.post_json(&format!("/api/school/members/{ada_id}/approve"), Auth::Bearer(&admin), json!({})).await.status, StatusCode::NO_CONTENT);
    let r = through_provider(&app, get("/auth/sso/example"), None).await;
    let ada = me(&app, &r.cookie("margin_session").expect("signed in")).await;
    assert_eq!(ada["role"], "teacher");
    assert_eq!(ada["school_id"], me(&app, &admin).await["school_id"]);
    // Someone of another organisation does not.
    fake.sign_in_as(Person { extra: json!({"tid": "Elsewhere-7"}), ..Person::new("teacher-2", "eve@gmail.com") });
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/sso-school");

    // Another school's admin cannot link the same organisation (their own account is of another one).
    let other = app.sign_up("other@example.net").await;
    let r = app.post_form("/school/sso", Auth::Cookie(&other), &[("provider", "example"), ("kind", "tenant"), ("value", "lincoln-42")]).await;
    assert_eq!(r.location(), "/school?error=sso-own");
    // An identity linked to one account cannot be linked to another.
    fake.sign_in_as(Person { extra: json!({"tid": "Lincoln-42"}), ..Person::new("admin-1", "head@gmail.com") });
    assert_eq!(through_provider(&app, link(&other), Some(&other)).await.location(), "/account?error=sso-linked");
}

#[tokio::test]
async fn a_domain_is_not_claimed_by_an_address_and_its_students_do_not_become_teachers() {
    let fake = FakeSso::start().await;
    let app = app_with_sso(&fake, Some("hd")).await;
    // The real school links its organisation: its admin's own account carries it.
    let head = app.sign_up("head@lincoln.example.org").await;
    let lincoln = me(&app, &head).await["school_id"].as_str().unwrap().to_string();
    fake.sign_in_as(Person { extra: json!({"hd": "lincoln.example.org"}), ..Person::new("head-1", "head@lincoln.example.org") });
    assert_eq!(through_provider(&app, link(&head), Some(&head)).await.location(), "/account?done=linked");

    // A hostile sign-up whose own school account is a pupil's confirmed
    // address at the domain, without the organisation's claim, may not take it.
    let squatter = app.sign_up("squat@example.net").await;
    fake.sign_in_as(Person::new("pupil-9", "pupil9@lincoln.example.org"));
    assert_eq!(through_provider(&app, link(&squatter), Some(&squatter)).await.location(), "/account?done=linked");
    assert_eq!(app.get("/api/school", Auth::Bearer(&squatter)).await.json()["ssoOptions"], json!([]));
    for kind in ["domain", "tenant"] {
        let r = app.post_form("/school/sso", Auth::Cookie(&squatter), &[("provider", "example"), ("kind", kind), ("value", "lincoln.example.org")]).await;
        assert_eq!(r.location(), "/school?error=sso-own", "{kind}");
    }
    assert_eq!(count(&app, "SELECT COUNT(*) FROM school_sso").await, 0);
    let r = app.post_form("/school/sso", Auth::Cookie(&head), &[("provider", "example"), ("kind", "tenant"), ("value", "lincoln.example.org")]).await;
    assert_eq!(r.location(), "/school?done=sso-linked");

    // The school's rule: addresses at its students' domain are students'
    // (a mail service anyone can join is never one).
    let r = app.post_form("/school/sso/students", Auth::Cookie(&head), &[("domains", "gmail.com")]).await;
    assert_eq!(r.location(), "/school?error=student-domains#sign-in");
    let r = app.post_form("/school/sso/students", Auth::Cookie(&head), &[("domains", "Students.Lincoln.example.org")]).await;
    assert_eq!(r.location(), "/school?done=student-domains");
    assert_eq!(app.post_form("/school/sso/students", Auth::Cookie(&squatter), &[("domains", "lincoln.example.org")]).await.location(), "/school?done=student-domains", "its own school's rule only");
    fake.sign_in_as(Person { extra: json!({"hd": "lincoln.example.org"}), ..Person::new("student-0", "kai@students.lincoln.example.org") });
    let r = through_provider(&app, get("/auth/sso/example"), None).await;
    let kai = me(&app, &r.cookie("margin_session").expect("a student signs in")).await;
    assert_eq!((kai["role"].as_str(), kai["school_id"].as_str()), (Some("student"), Some(lincoln.as_str())));
    assert_eq!(app.get("/api/library", Auth::Bearer(&r.cookie("margin_session").unwrap())).await.status, StatusCode::FORBIDDEN, "no school library for a student");

    // A student of the domain signing in outside a class link waits, with no
    // session: no teacher's door and no school library opens to them.
    fake.sign_in_as(Person { extra: json!({"hd": "lincoln.example.org"}), ..Person::new("student-1", "sam@lincoln.example.org") });
    let r = through_provider(&app, get("/auth/sso/example"), None).await;
    assert_eq!(r.location(), "/refused/sso-waiting");
    assert_eq!(r.cookie("margin_session"), None);
    let sam: (String, String, String) = sqlx::query_as("SELECT id, role, school_id FROM users WHERE email = 'sam@lincoln.example.org'").fetch_one(&app.state.db).await.unwrap();
    assert_eq!((sam.1.as_str(), sam.2.as_str()), ("pending", lincoln.as_str()));
    // A session that somehow exists for a waiting account opens nothing.
    let token = margin::server::accounts::auth::create_session(&app.state.db, &sam.0, 1).await.unwrap();
    assert_eq!(app.get("/api/auth/me", Auth::Bearer(&token)).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get("/api/library", Auth::Bearer(&token)).await.status, StatusCode::UNAUTHORIZED);
    // The squatter's school cannot decide on Lincoln's people.
    assert_eq!(app.post_json(&format!("/api/school/members/{}/approve", sam.0), Auth::Bearer(&squatter), json!({})).await.status, StatusCode::NOT_FOUND);
    // The admin declines: the account cannot come back by any door.
    assert_eq!(app.post_form(&format!("/school/members/{}/decline", sam.0), Auth::Cookie(&head), &[]).await.location(), "/school?done=declined");
    assert_eq!(through_provider(&app, get("/auth/sso/example"), None).await.location(), "/refused/removed");
    let c = common::classes::class(&app, "teacher@elsewhere.example").await;
    let r = through_provider(&app, get(&format!("/auth/sso/example?join={}", c.code)), None).await;
    assert_eq!(r.location(), format!("/join/{}?error=removed", c.code));
    assert_eq!(r.cookie("margin_session"), None);
    // Declined is not approvable as if waiting.
    assert_eq!(app.post_json(&format!("/api/school/members/{}/approve", sam.0), Auth::Bearer(&head), json!({})).await.status, StatusCode::NOT_FOUND);

    // A contested domain is the operator's to settle: it moves the link.
    let moved = margin::server::accounts::sso::school_links::link_by_operator(&app.state.db, &lincoln, "example", "domain", "lincoln.example.org").await.unwrap();
    assert_eq!(moved, None);
    let squatter_school = me(&app, &squatter).await["school_id"].as_str().unwrap().to_string();
    let moved = margin::server::accounts::sso::school_links::link_by_operator(&app.state.db, &squatter_school, "example", "domain", "lincoln.example.org").await.unwrap();
    assert_eq!(moved.as_deref(), Some(lincoln.as_str()), "says whose it was");
    assert!(margin::server::accounts::sso::school_links::link_by_operator(&app.state.db, &lincoln, "example", "domain", "gmail.com").await.is_err(), "never a mail service");
}

#[tokio::test]
async fn class_codes_tried_through_a_school_account_count_as_any_try() {
    let fake = FakeSso::start().await;
    let app = app_with_sso(&fake, None).await;
    let c = common::classes::class(&app, "teacher@lincoln.example.org").await;
    // This client address used up its tries of class codes at another door.
    let client = std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);
    while app.state.limits.join_code(client, None).await.is_ok() {}
    // A code tried through the provider is refused before anyone goes there…
    let r = app.send(get(&format!("/auth/sso/example?join={}", c.code))).await;
    assert!(r.location().starts_with(&format!("/join/{}?error=rate-", c.code)), "{} {}", r.location(), r.body);
    assert_eq!(r.cookie("margin_sso"), None);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM sso_logins").await, 0);
    // …while a sign-in without a code still starts.
    assert!(app.send(get("/auth/sso/example")).await.cookie("margin_sso").is_some());
}
