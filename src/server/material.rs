//! A lesson's material: files the teacher adds for the assistant to build
//! exercises from, kept as their text (`extract` reads it, `sources` stores
//! it, `routes` takes the files).

pub mod extract;
pub mod routes;
pub mod sources;
