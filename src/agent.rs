//! The agent behind the sidebar: a streaming, tool-calling loop over any
//! OpenAI-compatible provider.
//!
//! `run::Agent::run_turn` streams a model round, assembles tool calls from the
//! streamed deltas (`assemble`), runs them (`tools`), feeds the results back and
//! repeats until a round calls no tool or the step cap is reached. Everything it
//! does is reported as `chat::events::ChatEvent`s. `scripted` is a stand-in
//! provider for tests and the offline demo.

pub mod assemble;
pub mod config;
pub mod prompt;
pub mod provider;
pub mod run;
pub mod scripted;
pub mod skills;
pub mod tools;
