//! The teacher's home: their lessons (searched, sorted, a page at a time,
//! each with Duplicate, Download XML and Delete), "New lesson" and
//! "Import lesson".
//!
//! The page is rendered on the server only. The one interactive part, the
//! "New lesson" button that opens the form, is a small island; the form
//! itself is a plain HTML form posting to `/lessons/new`, which answers with
//! a redirect to the new lesson, or back here with an error code and the
//! title that was typed.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use super::top_bar::TopBar;
use crate::{
    api::{
        error_text,
        lessons::{find_import_report, list_co_edited, list_lessons, LESSONS_PER_PAGE},
    },
    models::{CoEditedLesson, ImportReport, LessonList},
    refusals::{TitleRefusal, MAX_LESSON_TITLE_CHARS},
};

/// The sentence for an error code set by the `/lessons/new` form handler.
pub fn new_lesson_error(code: &str) -> String {
    TitleRefusal::from_code(code).message()
}

#[component]
pub fn LessonsPage() -> impl IntoView {
    let query = use_query_map();
    let read = |name: &str| query.read_untracked().get(name).unwrap_or_default();
    let error = query.read_untracked().get("error").map(|c| new_lesson_error(&c));
    let title = read("title");
    let (search, sort) = (read("q"), read("sort"));
    let offset: i64 = read("offset").parse().unwrap_or(0).max(0);
    let trashed = query.read_untracked().get("trashed");
    let import = query.read_untracked().get("import");
    let report = Resource::new(move || import.clone(), |token| async move {
        match token {
            Some(t) => find_import_report(t).await.ok().flatten(),
            None => None,
        }
    });
    let co_edited = Resource::new(|| (), |_| list_co_edited());
    let lessons = Resource::new(
        {
            let (search, sort) = (search.clone(), sort.clone());
            move || (search.clone(), sort.clone(), offset)
        },
        |(q, sort, offset)| list_lessons(q, sort, offset),
    );

    view! {
        <Title text="Your lessons · Margin"/>
        <TopBar/>
        <main class="page">
            <NewLesson error title/>
            {trashed.map(|id| view! {
                <form class="notice" method="post" action=format!("/lessons/{id}/restore") role="status">
                    "The lesson is in the Trash, where it stays for 30 days. "
                    <button type="submit" class="quiet">"Undo"</button>
                </form>
            })}
            <ImportForm/>
            <Suspense>
                {move || Suspend::new(async move { report.await.map(|r| view! { <ImportProblems report=r/> }) })}
            </Suspense>
            <SearchForm search=search.clone() sort=sort.clone()/>
            <Suspense fallback=|| view! { <p class="muted">"Loading your lessons…"</p> }>
                {move || {
                    let (search, sort) = (search.clone(), sort.clone());
                    Suspend::new(async move {
                        match lessons.await {
                            Ok(list) if list.lessons.is_empty() => {
                                let said = if search.is_empty() && offset == 0 {
                                    "No lessons yet. Press “New lesson” to start one.".to_string()
                                } else {
                                    format!("No lessons match “{search}”.")
                                };
                                Either::Left(Either::Left(view! { <p class="empty">{said}</p> }))
                            }
                            Ok(list) => Either::Left(Either::Right(view! {
                                <LessonRows list search sort offset/>
                            })),
                            Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                        }
                    })
                }}
            </Suspense>
            <Suspense>
                {move || Suspend::new(async move { co_edited.await.ok().filter(|l| !l.is_empty()).map(|lessons| view! { <CoEdited lessons/> }) })}
            </Suspense>
            <p class="trash-link"><a href="/trash">"Trash"</a></p>
        </main>
    }
}

/// Colleagues' lessons the teacher was invited to edit, with whose they are.
#[component]
fn CoEdited(lessons: Vec<CoEditedLesson>) -> impl IntoView {
    view! {
        <section class="co-edited" aria-labelledby="co-edited">
            <h2 id="co-edited">"Editing with colleagues"</h2>
            <ul class="lesson-list">
                {lessons.into_iter().map(|l| view! {
                    <li><a href=format!("/lessons/{}", l.id)>{l.title}</a>" "<span class="muted">{format!("{}’s lesson", l.owner)}</span></li>
                }).collect_view()}
            </ul>
        </section>
    }
}

/// "Import lesson": a plain form that uploads a lesson file.
#[component]
fn ImportForm() -> impl IntoView {
    view! {
        <form class="lesson-import" method="post" action="/lessons/import" enctype="multipart/form-data">
            <label for="lesson-file">"Import lesson"</label>
            <input id="lesson-file" type="file" name="file" accept=".xml,application/xml,text/xml,.docx,application/vnd.openxmlformats-officedocument.wordprocessingml.document,.zip,application/zip" required/>
            <button type="submit">"Import"</button>
        </form>
    }
}

/// Every problem of a file that could not be imported; nothing was created.
/// Or, for a quiz package that became a lesson, what did not come in.
#[component]
fn ImportProblems(report: ImportReport) -> impl IntoView {
    if let Some((id, title)) = report.made {
        return Either::Left(view! {
            <div class="notice import-left-out" role="status">
                <p>{format!("“{}” was imported as ", report.file)}<a href=format!("/lessons/{id}")>{title}</a>". These parts could not be brought in:"</p>
                <ul>{report.problems.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}</ul>
            </div>
        });
    }
    Either::Right(view! {
        <div class="form-error import-problems" role="alert">
            <p>{format!("“{}” was not imported, so no lesson was created. Fix these and import it again:", report.file)}</p>
            <ul>{report.problems.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}</ul>
        </div>
    })
}

/// The search box and the order, as a plain GET form (the list is the server's).
#[component]
fn SearchForm(search: String, sort: String) -> impl IntoView {
    view! {
        <form class="lesson-search" method="get" action="/" role="search">
            <label for="lesson-search">"Search lessons"</label>
            <input id="lesson-search" type="search" name="q" value=search placeholder="Title or words in the lesson"/>
            <label for="lesson-sort">"Sort by"</label>
            <select id="lesson-sort" name="sort">
                <option value="edited" selected=sort != "title" && sort != "relevance">"Last edited"</option>
                <option value="title" selected=sort == "title">"Title"</option>
                <option value="relevance" selected=sort == "relevance">"Best match"</option>
            </select>
            <button type="submit">"Search"</button>
        </form>
    }
}

/// One page of lessons, each with Duplicate, Download XML and Delete, and
/// links to the pages before and after.
#[component]
fn LessonRows(list: LessonList, search: String, sort: String, offset: i64) -> impl IntoView {
    let page_link = move |to: i64| {
        let query = crate::url::query(&[("q", &search), ("sort", &sort), ("offset", &to.to_string())]);
        format!("/?{query}")
    };
    let shown = list.lessons.len() as i64;
    let previous = (offset > 0).then(|| page_link((offset - LESSONS_PER_PAGE).max(0)));
    let next = (offset + shown < list.total).then(|| page_link(offset + shown));
    view! {
        <p class="muted">{format!("{} lesson{}", list.total, if list.total == 1 { "" } else { "s" })}</p>
        <ul class="lesson-list">
            {list.lessons.into_iter().map(|l| view! {
                <li>
                    <a href=format!("/lessons/{}", l.id)>{l.title.clone()}</a>
                    <span class="muted">"Changed " {l.updated_at.get(..10).unwrap_or_default().to_string()}</span>
                    <span class="lesson-actions">
                        <form method="post" action=format!("/lessons/{}/duplicate", l.id)>
                            <button type="submit" class="quiet" aria-label=format!("Duplicate {}", l.title)>"Duplicate"</button>
                        </form>
                        <a class="quiet" href=format!("/lessons/{}/download", l.id) aria-label=format!("Download XML of {}", l.title)>"Download XML"</a>
                        <form method="post" action=format!("/lessons/{}/delete", l.id)>
                            <button type="submit" class="quiet danger" aria-label=format!("Delete {}", l.title)>"Delete"</button>
                        </form>
                    </span>
                </li>
            }).collect_view()}
        </ul>
        <nav class="pages" aria-label="Pages">
            {previous.map(|href| view! { <a href=href>"Previous page"</a> })}
            {next.map(|href| view! { <a href=href>"Next page"</a> })}
        </nav>
    }
}

/// The heading with "New lesson", which opens the form. The form starts open
/// when the last try failed, showing why and the title that was typed.
///
/// A disclosure (`<details>`) drawn by the server, not an island: opening a
/// form needs no code in the browser, and an island's start-up code alone
/// cost the bundle about 4 KB.
#[component]
fn NewLesson(error: Option<String>, title: String) -> impl IntoView {
    let open = error.is_some();
    view! {
        <div class="page-head">
            <h1>"Your lessons"</h1>
        </div>
        <details class="new-lesson-box" open=open>
            <summary class="button primary" role="button">"New lesson"</summary>
            <form method="post" action="/lessons/new">
                <div class="new-lesson">
                    <label for="new-lesson-title">"Title"</label>
                    <input id="new-lesson-title" name="title" required maxlength=MAX_LESSON_TITLE_CHARS
                        placeholder="e.g. French verbs: the present tense" value=title/>
                    <button type="submit" class="primary">"Create lesson"</button>
                </div>
            </form>
            {error.map(|msg| view! { <p class="form-error" role="alert">{msg}</p> })}
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::new_lesson_error;

    #[test]
    fn codes_become_sentences() {
        assert_eq!(new_lesson_error("title"), "Give the lesson a title.");
        assert!(new_lesson_error("title-long").contains("200"));
        assert!(new_lesson_error("<script>").contains("Something went wrong"));
    }
}
