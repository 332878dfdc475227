//! The pages of classes, for teachers (their classes, one class, a lesson's
//! results, one student's work) and for students (joining, their classes).
//! Whole HTML documents written on the server with plain forms: they need
//! no code in the browser bundle (the one student page that does, the
//! lesson with its tutor, is a Leptos page: `components::learn_page`).
//!
//! Inert by construction: every value from the database is escaped.

use std::collections::HashMap;

use axum::{
    http::header,
    response::{Html, IntoResponse, Response},
};

use super::{sheets::ResultRow, ClassDetail, ClassSummary, StudentClass};
use crate::{
    chat::message::{ChatMessage, Role},
    lesson::{escape_attr as attr, escape_text as esc},
    models::UserInfo,
};

/// A whole page: the app's stylesheet, a top bar for the account, `body`.
pub fn document(title: &str, user: Option<&UserInfo>, body: &str) -> Response {
    let bar = match user {
        Some(u) if u.is_student() => format!(
            "<a href=\"/learn\" class=\"brand\">Margin</a><div class=\"top-bar-right\"><a href=\"/learn\" class=\"quiet\">My classes</a><span class=\"who\">{}</span>{SIGN_OUT}</div>",
            esc(&u.email)
        ),
        Some(u) => format!(
            "<a href=\"/\" class=\"brand\">Margin</a><div class=\"top-bar-right\"><a href=\"/classes\" class=\"quiet\">Classes</a><span class=\"who\">{}</span>{SIGN_OUT}</div>",
            esc(&u.email)
        ),
        None => "<a href=\"/\" class=\"brand\">Margin</a>".into(),
    };
    let html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><link rel=\"icon\" href=\"data:,\"><title>{} · Margin</title><link rel=\"stylesheet\" href=\"{}\"></head><body><header class=\"top-bar\">{bar}</header><main class=\"page classes-page\">{body}</main></body></html>",
        esc(title),
        crate::server::http::assets::stylesheet_read()
    );
    ([(header::CACHE_CONTROL, "no-store")], Html(html)).into_response()
}

const SIGN_OUT: &str = "<form method=\"post\" action=\"/auth/signout\"><button type=\"submit\" class=\"quiet\">Sign out</button></form>";

/// The sentences a page shows for the error codes its address may carry.
/// Only codes travel in an address, never text: a link someone sends a
/// teacher or a student cannot make Margin's page say what they like.
const PAGE_ERRORS: [(&str, &str); 2] = [
    ("name", "Give the class a name of at most 80 characters."),
    ("code", "That class code does not work. Check it, or ask your teacher for the new one."),
];

/// The sentence for an error code from an address; nothing for any other text.
pub fn page_error(code: Option<&str>) -> Option<&'static str> {
    let code = code?;
    PAGE_ERRORS.iter().find(|(c, _)| *c == code).map(|(_, sentence)| *sentence)
}

/// A line saying what went wrong, when something did.
fn error_line(error: Option<&str>) -> String {
    error.map(|e| format!("<p class=\"form-error\" role=\"alert\">{}</p>", esc(e))).unwrap_or_default()
}

/// "Classes": the teacher's classes and "New class".
pub fn class_list(classes: &[ClassSummary], error: Option<&str>) -> String {
    let mut rows = String::new();
    for c in classes {
        rows.push_str(&format!(
            "<li><a href=\"/classes/{}\">{}</a> <span class=\"muted\">{} students · {} lessons</span></li>",
            attr(&c.id),
            esc(&c.name),
            c.students,
            c.lessons
        ));
    }
    if rows.is_empty() {
        rows = "<li class=\"muted\">No classes yet. Make one, add lessons to it, and invite your students.</li>".into();
    }
    format!(
        "<h1>Classes</h1>{}<form method=\"post\" action=\"/classes\" class=\"inline-form\"><label>Class name <input name=\"name\" required maxlength=\"80\"></label> <button type=\"submit\">New class</button></form><ul class=\"class-list\">{rows}</ul>",
        error_line(error)
    )
}

/// One class: inviting students, its lessons (and adding one), its students.
pub fn class_page(class: &ClassDetail, own_lessons: &[(String, String)], origin: &str, error: Option<&str>) -> String {
    let id = attr(&class.id);
    let link = format!("{origin}/join/{}", class.join_code);
    let mut lessons = String::new();
    for l in &class.lessons {
        let state = match l.published_revision {
            Some(v) if v == l.revision => format!("Published (version {v})"),
            Some(v) => format!("Published (version {v}; version {} not yet)", l.revision),
            None => "Not published".into(),
        };
        lessons.push_str(&format!(
            "<li><a href=\"/lessons/{lid}\">{}</a> <span class=\"muted\">{}</span> <a href=\"/lessons/{lid}/results\">Results</a> <form method=\"post\" action=\"/classes/{id}/lessons/{lid}/remove\" class=\"inline\"><button type=\"submit\" class=\"quiet\">Remove</button></form></li>",
            esc(&l.title),
            esc(&state),
            lid = attr(&l.id)
        ));
    }
    if lessons.is_empty() {
        lessons = "<li class=\"muted\">No lessons yet.</li>".into();
    }
    let options: String = own_lessons
        .iter()
        .filter(|(lid, _)| !class.lessons.iter().any(|l| &l.id == lid))
        .map(|(lid, title)| format!("<option value=\"{}\">{}</option>", attr(lid), esc(title)))
        .collect();
    let add = if options.is_empty() {
        String::new()
    } else {
        format!("<form method=\"post\" action=\"/classes/{id}/lessons\" class=\"inline-form\"><label>Lesson to add <select name=\"lesson\">{options}</select></label> <button type=\"submit\">Add to class</button></form>")
    };
    let mut students = String::new();
    for s in &class.students {
        students.push_str(&format!(
            "<li>{} <form method=\"post\" action=\"/classes/{id}/students/{}/remove\" class=\"inline\"><button type=\"submit\" class=\"quiet\" aria-label=\"Remove {}\">Remove</button></form></li>",
            esc(&s.email),
            attr(&s.id),
            attr(&s.email)
        ));
    }
    if students.is_empty() {
        students = "<li class=\"muted\">Nobody has joined yet.</li>".into();
    }
    format!(
        "<p><a href=\"/classes\">← Classes</a></p><h1>{name}</h1>{err}
        <section class=\"invite\" aria-labelledby=\"invite-h\"><h2 id=\"invite-h\">Invite students</h2>
        <p>Students join with this link, or with the code under “Join a class”.</p>
        <p><label>Join link <input class=\"join-link\" readonly value=\"{link}\" size=\"48\"></label></p>
        <p>Join code: <strong class=\"join-code\">{code}</strong></p>
        <form method=\"post\" action=\"/classes/{id}/code\"><button type=\"submit\">Renew code</button> <span class=\"muted\">The old code and link stop working.</span></form></section>
        <section aria-labelledby=\"lessons-h\"><h2 id=\"lessons-h\">Lessons</h2><p class=\"muted\">Students see a lesson once you publish it (on the lesson's page), and only the version you published.</p><ul>{lessons}</ul>{add}</section>
        <section aria-labelledby=\"students-h\"><h2 id=\"students-h\">Students</h2><p class=\"muted\">A student you remove no longer sees this class's lessons; their answers are kept, and come back with them if they join again.</p><ul>{students}</ul></section>
        <form method=\"post\" action=\"/classes/{id}/delete\" class=\"danger-zone\"><button type=\"submit\" class=\"quiet\">Delete class</button> <span class=\"muted\">Its students no longer see its lessons. The lessons and the answers stay.</span></form>",
        name = esc(&class.name),
        err = error_line(error),
        link = attr(&link),
        code = esc(&class.join_code),
    )
}

/// A lesson's results: each student's progress and score.
pub fn results_page(lesson_id: &str, title: &str, rows: &[ResultRow]) -> String {
    let mut body = String::new();
    for r in rows {
        let score = match (r.right, r.graded, &r.checked_at) {
            (Some(right), Some(graded), Some(_)) => format!("{right} of {graded} right"),
            _ => "Not checked yet".into(),
        };
        body.push_str(&format!(
            "<tr><td><a href=\"/lessons/{}/results/{}\">{}</a></td><td>{} of {}</td><td>{}</td></tr>",
            attr(lesson_id),
            attr(&r.student_id),
            esc(&r.email),
            r.answered,
            r.total,
            esc(&score)
        ));
    }
    if body.is_empty() {
        body = "<tr><td colspan=\"3\" class=\"muted\">No students yet: add this lesson to a class and invite them.</td></tr>".into();
    }
    format!(
        "<p><a href=\"/lessons/{lid}\">← {t}</a></p><h1>Results: {t}</h1><table class=\"results\"><thead><tr><th>Student</th><th>Answered</th><th>Score</th></tr></thead><tbody>{body}</tbody></table>",
        lid = attr(lesson_id),
        t = esc(title)
    )
}

/// One student's work on a lesson: their sheet, as the teacher sees it
/// (with the answer key beside it), and their chats with the tutor.
pub fn student_work(lesson_id: &str, title: &str, email: &str, sheet_html: &str, score: &str, chats: &[(String, Vec<ChatMessage>)]) -> String {
    let mut talk = String::new();
    for (chat_title, messages) in chats {
        talk.push_str(&format!("<article class=\"tutor-chat\"><h3>{}</h3>", esc(chat_title)));
        for m in messages {
            // What the student typed is shown as text; the tutor's reply as
            // the sidebar shows it (markdown, inert).
            let (class, who, shown) = match m.role {
                Role::User => ("msg user", "Student", format!("<p>{}</p>", esc(&m.content))),
                Role::Assistant => ("msg assistant", "Tutor", crate::chat::markdown::render(&m.content)),
            };
            talk.push_str(&format!("<div class=\"{class}\"><span class=\"who\">{who}</span> <div class=\"bubble\">{shown}</div></div>"));
        }
        talk.push_str("</article>");
    }
    if talk.is_empty() {
        talk = "<p class=\"muted\">No chats with the tutor.</p>".into();
    }
    format!(
        "<p><a href=\"/lessons/{lid}/results\">← Results</a></p><h1>{e}: {t}</h1><p class=\"score\">{s}</p><section class=\"lesson-view student-work\" aria-label=\"Answers\">{sheet_html}</section><section aria-labelledby=\"chats-h\"><h2 id=\"chats-h\">Chats with the tutor</h2><p class=\"muted\">Read only.</p>{talk}</section>",
        lid = attr(lesson_id),
        e = esc(email),
        t = esc(title),
        s = esc(score)
    )
}

/// "Join a class" from a link: the class's name, and how to join.
pub fn join_page(code: &str, class_name: Option<&str>, user: Option<&UserInfo>, error: Option<&str>, email: &str) -> String {
    let Some(name) = class_name else {
        return format!("<h1>Join a class</h1>{}<p>This class code does not work any more. Ask your teacher for the new one.</p>", error_line(error));
    };
    let code_attr = attr(code);
    let head = format!("<h1>Join {}</h1>{}", esc(name), error_line(error));
    match user {
        Some(u) if u.is_student() => format!(
            "{head}<form method=\"post\" action=\"/learn/join\"><input type=\"hidden\" name=\"code\" value=\"{code_attr}\"><button type=\"submit\">Join the class</button></form>"
        ),
        Some(_) => format!("{head}<p>You are signed in as a teacher. Students join with an account of their own: sign out first, or open this link in another browser.</p>"),
        None => format!(
            "{head}<p>Make a student account to join, or sign in if you have one.</p>
            <form method=\"post\" action=\"/auth/signup\" class=\"auth-form\"><input type=\"hidden\" name=\"join\" value=\"{code_attr}\"><input type=\"hidden\" name=\"next\" value=\"/learn\">
            <label>Email <input type=\"email\" name=\"email\" required autocomplete=\"email\" value=\"{}\"></label>
            <label>Password <input type=\"password\" name=\"password\" required minlength=\"8\" autocomplete=\"new-password\"></label>
            <button type=\"submit\">Create account and join</button></form>
            <p><a href=\"/signin?next=/join/{code_attr}\">I already have an account</a></p>",
            attr(email)
        ),
    }
}

/// "My classes": a student's classes with their published lessons.
pub fn learn_page(classes: &[StudentClass], scores: &HashMap<String, String>, error: Option<&str>) -> String {
    let mut body = String::new();
    for c in classes {
        body.push_str(&format!("<section class=\"student-class\"><h2>{}</h2><ul>", esc(&c.name)));
        if c.lessons.is_empty() {
            body.push_str("<li class=\"muted\">No lessons yet.</li>");
        }
        for l in &c.lessons {
            let score = scores.get(&l.id).map(|s| format!(" <span class=\"muted\">{}</span>", esc(s))).unwrap_or_default();
            body.push_str(&format!("<li><a href=\"/learn/lessons/{}\">{}</a>{score}</li>", attr(&l.id), esc(&l.title)));
        }
        body.push_str("</ul></section>");
    }
    if body.is_empty() {
        body = "<p class=\"muted\">You are not in a class yet. Enter the code your teacher gave you.</p>".into();
    }
    format!(
        "<h1>My classes</h1>{}{body}<form method=\"post\" action=\"/learn/join\" class=\"inline-form\"><label>Class code <input name=\"code\" required maxlength=\"32\" autocomplete=\"off\"></label> <button type=\"submit\">Join a class</button></form>",
        error_line(error)
    )
}
