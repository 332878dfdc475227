//! The configuration as an operator meets it: the real binary, started with
//! a bad value, refuses to start and names it; `margin config` prints what
//! is in effect without the secrets.
#![cfg(feature = "ssr")]

use std::process::Command;

/// The server binary with a clean environment plus `vars`.
fn margin(args: &[&str], vars: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_margin"));
    cmd.args(args).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    let dir = tempfile::tempdir().unwrap();
    cmd.current_dir(dir.path()).env("DATABASE_URL", format!("sqlite://{}/margin.db", dir.path().display()));
    // Should a bad value ever get past the checks, the server stops at its
    // listen address instead of serving (and the test fails, never hangs).
    cmd.env("LEPTOS_SITE_ADDR", "not an address");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().expect("run margin")
}

#[test]
fn a_bad_value_stops_the_server_with_a_sentence_naming_each() {
    let out = margin(&[], &[("MARGIN_SESSION_DAYS", "thirty"), ("MARGIN_PUBLIC_URL", "margin.school.org"), ("AI_PROVIDER", "gemini")]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("Margin will not start: 3 settings must be fixed first."), "{said}");
    assert!(said.contains("MARGIN_SESSION_DAYS must be a whole number from 1 to 3650 (days), not \"thirty\"."), "{said}");
    assert!(said.contains("MARGIN_PUBLIC_URL must be an address beginning http:// or https://"), "{said}");
    assert!(said.contains("AI_PROVIDER must be one of openai, anthropic, ollama, openai-compatible, demo, not \"gemini\"."), "{said}");
}

#[test]
fn a_database_url_of_another_kind_is_refused_without_its_password() {
    let out = margin(&[], &[("DATABASE_URL", "mysql://margin:hunter2@db/margin")]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("DATABASE_URL must begin sqlite:// (a file) or postgres:// (a server)"), "{said}");
    assert!(!said.contains("hunter2"), "{said}");
}

#[test]
fn margin_config_prints_every_setting_in_effect_with_secrets_hidden() {
    let out = margin(
        &["config"],
        &[
            ("AI_API_KEY", "sk-secret-123"),
            ("AI_PROVIDER", "openai"),
            ("MARGIN_SESSION_DAYS", "7"),
            ("DATABASE_URL", "postgres://margin:hunter2@127.0.0.1/margin"),
        ],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!said.contains("sk-secret-123") && !said.contains("hunter2"), "{said}");
    let line = |name: &str| said.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("{name} in {said}")).to_string();
    assert!(line("AI_API_KEY").ends_with("(set, hidden)"));
    assert!(line("MARGIN_SESSION_DAYS").ends_with(" 7"));
    assert!(line("MARGIN_KEEPALIVE_SECS").ends_with(" 15"), "defaults are shown too");
    assert!(line("DATABASE_URL").contains("postgres://margin:***@127.0.0.1/margin"));
}

#[test]
fn margin_config_fails_and_says_why_on_a_bad_value() {
    let out = margin(&["config"], &[("MARGIN_EXTRACTIONS", "0")]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("MARGIN_EXTRACTIONS must be a whole number from 1 to 64 (files at once), not \"0\"."), "{said}");
}
