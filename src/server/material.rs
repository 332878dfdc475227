//! A lesson's material: files the teacher adds for the assistant to build
//! exercises from, kept as their text (`extract` reads it, in a child
//! process `sandbox` runs with limits; `sources` stores it, `routes` takes
//! the files).

pub mod extract;
pub mod routes;
pub mod sandbox;
pub mod sources;
