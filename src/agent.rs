//! The agent behind the sidebar: a streaming, tool-calling loop over any
//! OpenAI-compatible provider.
//!
//! `run::Agent::run_turn` streams a model round, assembles tool calls from the
//! streamed deltas (`assemble`), runs them (`tools`), feeds the results back and
//! repeats until a round calls no tool or the step cap is reached. Everything it
//! does is reported as `chat::events::ChatEvent`s. The agent knows nothing of
//! HTTP routes or the database: the lesson reaches it through
//! `tools::DocumentStore`, and the turn engine in `server` does the rest.

pub mod assemble;
pub mod config;
pub mod context;
pub mod meter;
pub mod pause;
pub mod prompt;
pub mod provider;
pub mod run;
pub mod skills;
pub mod tools;
