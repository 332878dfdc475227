//! The UI, one family of components per file.

pub mod answer_sheet;
pub mod ask_selection;
pub mod account_page;
pub mod auth_pages;
pub mod chat;
pub mod classes;
pub mod client_only;
pub mod history_panel;
pub mod hydrated;
pub mod learn_page;
pub mod lesson_calls;
pub mod lesson_live;
pub mod lesson_page;
pub mod lesson_state;
pub mod lesson_view;
pub mod lessons_page;
pub mod material_section;
pub mod not_found;
pub mod page_title;
pub mod school_library_page;
pub mod school_page;
pub mod top_bar;
pub mod title_field;
pub mod trash_page;
pub mod versions_page;
pub mod xml_editor;
