//! A refused sign-in from elsewhere (a school account's provider, an LMS
//! launch) on a page of its own: `GET /refused/{code}`. The sign-in page
//! would send a browser that is already signed in straight home, and the
//! sentence would be lost (on a shared classroom computer, with the last
//! person's session still open). The code is one of `AccountRefusal`'s, so
//! nobody can make the page say what they like.

use axum::{
    extract::State,
    http::StatusCode,
    response::{Html, IntoResponse, Response},
    routing::get,
    Router,
};

use crate::{
    refusals::AccountRefusal,
    server::{http::extractors::ApiPath, state::AppState},
};

pub fn router() -> Router<AppState> {
    Router::new().route("/refused/{code}", get(refused))
}

async fn refused(State(state): State<AppState>, ApiPath(code): ApiPath<String>) -> Response {
    page(&state, AccountRefusal::from_code(&code), None)
}

/// Where a refused sign-in's browser goes.
pub fn path(refusal: AccountRefusal) -> String {
    format!("/refused/{}", refusal.code())
}

/// The page: the sentence, a way on (`next`: an address and its words, a
/// new window), and the way to the sign-in page.
pub fn page(state: &AppState, refusal: AccountRefusal, next: Option<(String, String)>) -> Response {
    use leptos::prelude::*;
    let sentence = refusal.message();
    let next = next.map(|(href, words)| view! { <p><a class="button primary" href=href target="_blank" rel="noopener">{words}</a></p> });
    let body = view! {
        <main class="page narrow">
            <h1>"Margin could not sign you in"</h1>
            <p role="alert" class="error">{sentence}</p>
            {next}
            <p><a href="/signin">"Go to the sign-in page"</a></p>
        </main>
    }
    .to_html();
    let html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Not signed in · Margin</title><link rel=\"stylesheet\" href=\"{}\"></head><body>{body}</body></html>",
        crate::server::http::assets::stylesheet(&state.leptos_options)
    );
    let status = match refusal {
        AccountRefusal::Server => StatusCode::INTERNAL_SERVER_ERROR,
        AccountRefusal::TooManyAttempts(_) => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::FORBIDDEN,
    };
    (status, Html(html)).into_response()
}
