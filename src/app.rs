//! The HTML shell and the routes of the app. Pages are rendered on the
//! server only (islands mode): the router never reaches the browser, and
//! links between pages are ordinary page loads.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    path, SsrMode,
};

use crate::components::{
    account_page::AccountPage,
    lti_pick_page::LtiPickPage,
    auth_pages::{SignInPage, SignUpPage},
    classes::{
        class_list::ClassListPage, class_page::ClassPageView, join_page::JoinPage, my_classes::MyClassesPage, results_page::ResultsPage, standards_page::StandardsPage,
        student_work::StudentWorkPage,
    },
    audit_page::AuditPage,
    delete_member_page::DeleteMemberPage,
    flags_page::FlagsPage,
    learn_page::LearnPage,
    lesson_page::LessonPage,
    lessons_page::LessonsPage,
    versions_page::VersionsPage,
    not_found::NotFound,
    school_library_page::{SchoolLibraryPage, SharePage, SharedLessonPage},
    school_page::SchoolPage,
    trash_page::TrashPage,
};

/// The pages with an island (the lesson workspace, a student's tutor): only
/// these load the island script and the WASM bundle. Every other page is
/// whole as the server draws it, so it loads no code at all.
pub fn has_island(path: &str) -> bool {
    let lesson = |prefix: &str| path.strip_prefix(prefix).is_some_and(|id| !id.is_empty() && !id.contains('/'));
    lesson("/lessons/") || lesson("/learn/lessons/")
}

/// The document around every page, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    let parts = use_context::<axum::http::request::Parts>();
    // The response's script nonce (`server::http::headers`), for the scripts below.
    #[cfg(feature = "ssr")]
    if let Some(nonce) = parts.as_ref().and_then(|parts| parts.extensions.get::<crate::server::http::headers::CspNonce>().cloned()) {
        provide_context(leptos::nonce::Nonce::from_value(nonce.0));
    }
    #[cfg(feature = "ssr")]
    let islands = parts.as_ref().is_none_or(|parts| has_island(parts.uri.path()));
    #[cfg(not(feature = "ssr"))]
    let islands = true;
    // The stylesheet by its hashed name in a release build.
    #[cfg(feature = "ssr")]
    let stylesheet = crate::server::http::assets::stylesheet(&options);
    #[cfg(not(feature = "ssr"))]
    let stylesheet = "/pkg/margin.css";
    // A page without an island is as interactive as it gets once drawn: it
    // says so itself, as `hydrate()` says it for a page with one.
    let hydrated = (!islands).then_some("true");
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                // No favicon file to fetch.
                <link rel="icon" href="data:,"/>
                <link rel="stylesheet" id="leptos" href=stylesheet/>
                <AutoReload options=options.clone()/>
                {islands.then(|| view! { <HydrationScripts options islands=true/> })}
                <MetaTags/>
            </head>
            <body data-hydrated=hydrated>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();

    view! {
        <Title text="Margin"/>
        <Router>
            <Routes fallback=|| view! { <NotFound heading="Page not found" text="There is nothing at this address."/> }>
                <Route path=path!("/") view=LessonsPage/>
                <Route path=path!("/signin") view=SignInPage ssr=SsrMode::Async/>
                <Route path=path!("/signup") view=SignUpPage ssr=SsrMode::Async/>
                <Route path=path!("/account") view=AccountPage ssr=SsrMode::Async/>
                <Route path=path!("/lti/pick/:id") view=LtiPickPage ssr=SsrMode::Async/>
                <Route path=path!("/trash") view=TrashPage/>
                <Route path=path!("/flags") view=FlagsPage ssr=SsrMode::Async/>
                <Route path=path!("/school") view=SchoolPage/>
                <Route path=path!("/school/audit") view=AuditPage ssr=SsrMode::Async/>
                <Route path=path!("/school/members/:id/delete") view=DeleteMemberPage ssr=SsrMode::Async/>
                // The class pages, rendered whole: a missing class answers 404,
                // and the page needs no script to show its content.
                <Route path=path!("/classes") view=ClassListPage ssr=SsrMode::Async/>
                <Route path=path!("/classes/:id") view=ClassPageView ssr=SsrMode::Async/>
                <Route path=path!("/lessons/:id/results") view=ResultsPage ssr=SsrMode::Async/>
                <Route path=path!("/lessons/:id/results/:student") view=StudentWorkPage ssr=SsrMode::Async/>
                <Route path=path!("/lessons/:id/standards") view=StandardsPage ssr=SsrMode::Async/>
                <Route path=path!("/lessons/:id/versions") view=VersionsPage ssr=SsrMode::Async/>
                <Route path=path!("/lessons/:id/share") view=SharePage ssr=SsrMode::Async/>
                <Route path=path!("/library") view=SchoolLibraryPage ssr=SsrMode::Async/>
                <Route path=path!("/library/:id") view=SharedLessonPage ssr=SsrMode::Async/>
                <Route path=path!("/learn") view=MyClassesPage ssr=SsrMode::Async/>
                <Route path=path!("/join/:code") view=JoinPage ssr=SsrMode::Async/>
                // The workspace island sits inside the lesson's Suspense: render the
                // page whole (not streamed), so the island is in the HTML the
                // island script walks when it hydrates.
                <Route path=path!("/lessons/:id") view=LessonPage ssr=SsrMode::Async/>
                // A student's lesson: its tutor island, rendered whole for the same reason.
                <Route path=path!("/learn/lessons/:id") view=LearnPage ssr=SsrMode::Async/>
            </Routes>
        </Router>
    }
}

#[cfg(test)]
mod tests {
    use super::has_island;

    #[test]
    fn only_lesson_pages_have_an_island() {
        assert!(has_island("/lessons/0123abcd") && has_island("/learn/lessons/0123abcd"));
        for path in ["/", "/signin", "/signup", "/trash", "/school", "/lessons/", "/lessons/x/print", "/learn", "/classes/x"] {
            assert!(!has_island(path), "{path}");
        }
    }
}
