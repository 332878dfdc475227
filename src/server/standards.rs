//! Standards as data: frameworks read from 1EdTech CASE packages (a school
//! admin's upload, or the server's standards folder for every school), kept
//! in the database, searched, and the catalog every write of a lesson is
//! checked against, so that a code on a lesson is always a real one.
//!
//! This domain reads no lessons: the lesson's Standards page (coverage,
//! "Align to a standard") lives with the class results it shows
//! (`server::classes::coverage`).

pub mod case;
pub mod folder;
pub mod frameworks;
pub mod routes;
