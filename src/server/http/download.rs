//! A response the browser saves as a file: its type, a file name made safe
//! for the header from a title the teacher chose, and no caching (what it
//! holds is one account's).

use axum::{
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
};

/// `body` as a download named `stem.ext`, of type `kind`.
pub fn download(body: impl IntoResponse, kind: &'static str, stem: &str, ext: &str) -> Response {
    let mut res = body.into_response();
    let headers = res.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{}.{ext}\"", file_name(stem))) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// A file name from a title: letters, digits, spaces, `-`, `_` and
/// parentheses (nothing that could end the header's quoted name), at most
/// 80; a letter outside ASCII becomes `_`.
pub fn file_name(title: &str) -> String {
    let kept: String = title.chars().filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '(' | ')')).take(80).collect();
    let kept = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    let ascii: String = kept.chars().map(|c| if c.is_ascii() { c } else { '_' }).collect();
    if ascii.trim_matches(|c| c == '_' || c == '(' || c == ')' || c == ' ').is_empty() { "download".into() } else { ascii }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_keep_only_safe_letters() {
        assert_eq!(file_name("Verbs / \"plan\"\r\nX"), "Verbs planX");
        assert_eq!(file_name("Équipe 2 (key)"), "_quipe 2 (key)");
        assert_eq!(file_name("\"\""), "download");
    }
}
