//! The bundle's files (`/pkg/…`): how pages name the stylesheet and how
//! long a browser keeps each file.
//!
//! A release build names every file after its content (cargo-leptos's
//! `hash-files`: `margin.<hash>.wasm`), so a browser may keep one for a
//! year without asking again (`immutable`): a new release has new names.
//! A build without hashed names (`cargo leptos watch`, tests) keeps the
//! old rule: kept, but asked after on each visit (`no-cache`, answered
//! `304` while unchanged).

use std::sync::OnceLock;

use axum::http::HeaderValue;
use leptos::config::LeptosOptions;

/// The stylesheet's address, read once (at start-up, or at the first page).
static STYLESHEET: OnceLock<String> = OnceLock::new();

/// The stylesheet's address for `options`: its hashed name when the build
/// wrote one (the hash file beside the binary, as leptos reads it for the
/// scripts), else `/pkg/<name>.css`.
pub fn stylesheet(options: &LeptosOptions) -> &'static str {
    STYLESHEET.get_or_init(|| {
        let hash = options
            .hash_files
            .then(|| std::env::current_exe().ok()?.parent().map(|dir| dir.join(options.hash_file.as_ref())))
            .flatten()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .and_then(|hashes| hashes.lines().find_map(|l| l.split_once(':').filter(|(kind, _)| kind.trim() == "css").map(|(_, h)| h.trim().to_string())));
        let name = match hash {
            Some(h) => format!("{}.{h}", options.output_name),
            None => options.output_name.to_string(),
        };
        format!("/{}/{name}.css", options.site_pkg_dir)
    })
}

/// The stylesheet's address as read at start-up (`router` reads it), for
/// pages written outside the app's shell.
pub fn stylesheet_read() -> &'static str {
    STYLESHEET.get().map_or("/pkg/margin.css", String::as_str)
}

/// How long a browser keeps the bundle's files.
pub fn cache_control(options: &LeptosOptions) -> HeaderValue {
    HeaderValue::from_static(if options.hash_files { "public, max-age=31536000, immutable" } else { "no-cache" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_files_are_kept_for_good_and_others_asked_after() {
        let hashed = LeptosOptions::builder().output_name("margin").hash_files(true).build();
        assert_eq!(cache_control(&hashed), "public, max-age=31536000, immutable");
        let plain = LeptosOptions::builder().output_name("margin").hash_files(false).build();
        assert_eq!(cache_control(&plain), "no-cache");
    }
}
