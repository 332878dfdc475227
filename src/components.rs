//! The UI, one family of components per file.

pub mod auth_pages;
pub mod lesson_page;
pub mod lessons_page;
pub mod top_bar;
