//! The HTML shell and the routes of the app.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    path,
};

use crate::components::{
    auth_pages::{SignInPage, SignUpPage},
    lesson_page::LessonPage,
    lessons_page::LessonsPage,
};

/// The document around every page, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                // No favicon file to fetch.
                <link rel="icon" href="data:,"/>
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // Tells tests (and anyone curious) that the page is interactive now.
    Effect::new(|_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });

    view! {
        <Stylesheet id="leptos" href="/pkg/margin.css"/>
        <Title text="Margin"/>
        <Router>
            <Routes fallback=|| view! { <main class="page narrow"><h1>"Page not found"</h1><p><a href="/">"Back to your lessons"</a></p></main> }>
                <Route path=path!("/") view=LessonsPage/>
                <Route path=path!("/signin") view=SignInPage/>
                <Route path=path!("/signup") view=SignUpPage/>
                <Route path=path!("/lessons/:id") view=LessonPage/>
            </Routes>
        </Router>
    }
}
