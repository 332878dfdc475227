//! Every cargo integration suite, one module each, in one test binary:
//! linked once rather than once a suite (there were 40 binaries, each
//! linking the whole server). Run one suite with
//! `cargo test --features ssr --test all -- word::` (its module's name).
//! What the suites share is `common` (an app on a fresh database, teachers,
//! uploads), `material_files` (files written by the tests) and `agent_run`
//! (the agent against the scripted model).
#![cfg(feature = "ssr")]

mod agent_run;
mod common;
mod material_files;

mod accounts;
mod agent;
mod agent_next;
mod approval;
mod backup;
mod budget;
mod chat;
mod chat_export;
mod chat_json;
mod class_loop;
mod co_editors;
mod design_protocol;
mod concurrency;
mod config;
mod delivery;
mod audit;
mod deletion;
mod export;
mod exports_checked;
mod fuzz;
mod hardening;
mod hostile;
mod instances;
mod layout;
mod lesson_events;
mod lessons;
mod library;
mod lms;
mod lti;
mod material;
mod model_window;
mod operations;
mod paused_restart;
mod provider_faults;
mod reactions;
mod reading_level;
mod retention;
mod safety;
mod review;
mod schemas;
mod school_library;
mod shutdown;
mod small_models;
mod sso;
mod standards;
mod students;
mod upgrade;
mod versions;
mod word;
