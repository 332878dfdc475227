//! The School library's pages: the lessons the school's teachers share
//! (search and filters as a plain GET form), one shared lesson to read with
//! "Copy to my lessons", and a lesson's Share page (share it with a subject
//! and grade, or stop sharing). Rendered on the server; plain forms, no
//! browser code.

use leptos::{either::Either, prelude::*};
use leptos_router::hooks::{use_params_map, use_query_map};

use super::{
    lesson_view::{Audience, LessonView},
    not_found::{NotFound, MISSING_LESSON},
    page_title::PageTitle,
    top_bar::TopBar,
};
use crate::{
    api::{
        error_text,
        lessons::{get_school_library, get_shared_lesson, get_sharing},
    },
    models::{Editor, SchoolLibrary, SharedLesson, Sharing, SHARE_GRADES as GRADES},
};


fn grade_said(g: &str) -> String {
    if g == "K" { "Kindergarten".into() } else { format!("Grade {g}") }
}

/// "French · Grade 5 · shared by a@school.org", what is known of it.
fn about(l: &SharedLesson) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !l.subject.is_empty() {
        parts.push(l.subject.clone());
    }
    if !l.grade.is_empty() {
        parts.push(grade_said(&l.grade));
    }
    parts.push(if l.mine { "shared by you".into() } else { format!("shared by {}", l.teacher) });
    parts.join(" · ")
}

#[component]
pub fn SchoolLibraryPage() -> impl IntoView {
    let query = use_query_map();
    let asked = move || query.with(|q| (q.get("q").unwrap_or_default(), q.get("subject").unwrap_or_default(), q.get("grade").unwrap_or_default()));
    let library = Resource::new(asked, |(q, subject, grade)| get_school_library(q, subject, grade));
    view! {
        <PageTitle text="School library".to_string()/>
        <TopBar/>
        <main class="page">
            <div class="page-head">
                <h1>"School library"</h1>
                <a href="/">"Back to your lessons"</a>
            </div>
            <p class="muted">"Lessons your colleagues share with the school. Open one to read it, and copy it to make it yours: the copy comes with its material, not its chats. Share your own from a lesson's Share page."</p>
            <Suspense fallback=|| view! { <p class="muted">"Loading the library…"</p> }>
                {move || Suspend::new(async move {
                    let (q, subject, grade) = asked();
                    match library.await {
                        Ok(found) => Either::Left(view! { <Shelf found q subject grade/> }),
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Suspense>
        </main>
    }
}

#[component]
fn Shelf(found: SchoolLibrary, q: String, subject: String, grade: String) -> impl IntoView {
    let SchoolLibrary { lessons, subjects, grades } = found;
    let filtered = !q.is_empty() || !subject.is_empty() || !grade.is_empty();
    let subject_options = subjects.into_iter().map(|s| {
        let (selected, value) = (s == subject, s.clone());
        view! { <option value=value selected=selected>{s}</option> }
    }).collect_view();
    let grade_options = grades.into_iter().map(|g| {
        let (selected, said) = (g == grade, grade_said(&g));
        view! { <option value=g selected=selected>{said}</option> }
    }).collect_view();
    let list = if lessons.is_empty() {
        Either::Left(view! {
            <p class="empty">{if filtered { "No shared lesson matches." } else { "Nothing is shared with your school yet." }}</p>
        })
    } else {
        Either::Right(view! {
            <ul class="lesson-list shared-lessons" aria-label="Shared lessons">
                {lessons.into_iter().map(|l| view! {
                    <li>
                        <a href=format!("/library/{}", l.id)>{l.title.clone()}</a>
                        " " <span class="muted">{about(&l)}</span>
                    </li>
                }).collect_view()}
            </ul>
        })
    };
    view! {
        <form method="get" action="/library" class="inline-form library-search" role="search">
            <label>"Search " <input type="search" name="q" value=q/></label>
            <label>"Subject "
                <select name="subject"><option value="">"Any"</option>{subject_options}</select>
            </label>
            <label>"Grade "
                <select name="grade"><option value="">"Any"</option>{grade_options}</select>
            </label>
            <button type="submit">"Find"</button>
        </form>
        {list}
    }
}

#[component]
pub fn SharedLessonPage() -> impl IntoView {
    let params = use_params_map();
    let found = Resource::new(move || params.read().get("id").unwrap_or_default(), get_shared_lesson);
    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted page">"Opening the lesson…"</p> }>
            {move || Suspend::new(async move {
                match found.await {
                    Ok(v) => Either::Left(view! {
                        <PageTitle text=format!("{} · School library", v.lesson.title)/>
                        <main class="page">
                            <p><a href="/library">"← School library"</a></p>
                            <div class="page-head">
                                <h1>{v.lesson.title.clone()}</h1>
                                <form method="post" action=format!("/library/{}/copy", v.lesson.id)>
                                    <button type="submit">"Copy to my lessons"</button>
                                </form>
                            </div>
                            <p class="muted">{about(&v.lesson)} ". Read only: copy it to change it."</p>
                            <LessonView html=Signal::stored(v.html) audience=Signal::stored(Audience::Teacher)/>
                        </main>
                    }),
                    Err(_) => Either::Right(view! { <NotFound heading="Lesson not found" text=MISSING_LESSON/> }),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn SharePage() -> impl IntoView {
    let params = use_params_map();
    let found = Resource::new(move || params.read().get("id").unwrap_or_default(), get_sharing);
    view! {
        <TopBar/>
        <Suspense fallback=|| view! { <p class="muted page">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match found.await {
                    Ok(s) => Either::Left(view! { <main class="page"><ShareForm s/></main> }),
                    Err(_) => Either::Right(view! { <NotFound heading="Lesson not found" text=MISSING_LESSON/> }),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ShareForm(s: Sharing) -> impl IntoView {
    let Sharing { lesson_id, title, shared, subject, grade, editors } = s;
    let error = use_query_map().with_untracked(|q| q.get("error")).map(|_| "A subject is at most 40 characters, and a grade is K or a number from 1 to 12.");
    let grades = GRADES.map(|g| {
        let selected = g == grade;
        view! { <option value=g selected=selected>{grade_said(g)}</option> }
    });
    view! {
        <PageTitle text=format!("Share: {title}")/>
        <p><a href=format!("/lessons/{lesson_id}")>"← " {title.clone()}</a></p>
        <h1>"Share: " {title.clone()}</h1>
        <p class="share-state" role="status">
            {if shared { "Shared with your school: colleagues find it in the School library and can copy it." } else { "Not shared: only you see this lesson." }}
        </p>
        {error.map(|e| view! { <p class="notice" role="alert">{e}</p> })}
        <form method="post" action=format!("/lessons/{lesson_id}/share") class="inline-form">
            <label>"Subject " <input name="subject" maxlength="40" value=subject placeholder="French"/></label>
            " "
            <label>"Grade "
                <select name="grade"><option value="">"Not said"</option>{grades.into_iter().collect_view()}</select>
            </label>
            " "
            <button type="submit" name="action" value="share">{if shared { "Save" } else { "Share with my school" }}</button>
            {shared.then(|| view! { " " <button type="submit" name="action" value="stop" class="quiet">"Stop sharing"</button> })}
        </form>
        <p class="muted">"Copies colleagues already made stay theirs when you stop sharing. Chats are never shared."</p>
        <EditTogether lesson_id=lesson_id.clone() editors/>
    }
}

/// "Edit together": the colleagues who edit the lesson with its owner,
/// each with Remove, and a form to invite one more by email.
#[component]
fn EditTogether(lesson_id: String, editors: Vec<Editor>) -> impl IntoView {
    let refused = use_query_map().with_untracked(|q| q.get("editors_error")).map(|_| {
        "That colleague could not be invited. Invite a teacher of your school by the email they sign in with (at most 20 colleagues per lesson)."
    });
    let action = format!("/lessons/{lesson_id}/editors");
    let rows = editors.into_iter().map(|e| {
        let label = format!("Stop {} editing", e.email);
        view! {
            <li>
                <form method="post" action=action.clone() class="inline-form">
                    {e.email.clone()}" "
                    <input type="hidden" name="user" value=e.user_id/>
                    <button type="submit" name="action" value="remove" class="quiet" aria-label=label>"Remove"</button>
                </form>
            </li>
        }
    }).collect_view();
    view! {
        <section class="edit-together" aria-labelledby="edit-together">
            <h2 id="edit-together">"Edit together"</h2>
            <p class="muted">
                "Colleagues you invite open this lesson from their lessons list and edit it with you; History says who made each change. "
                "Each has their own chats with the assistant. Sharing, publishing to classes, versions and deleting stay yours."
            </p>
            <ul class="editors">{rows}</ul>
            {refused.map(|e| view! { <p class="notice" role="alert">{e}</p> })}
            <form method="post" action=action class="inline-form">
                <label>"Colleague's email " <input type="email" name="email" required autocomplete="off"/></label>
                " "
                <button type="submit" name="action" value="invite">"Invite to edit"</button>
            </form>
        </section>
    }
}
