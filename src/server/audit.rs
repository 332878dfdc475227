//! The school's audit log of what the AI did (issue #70): for each reply,
//! who asked (a teacher, a student, or Margin on a teacher's behalf), which
//! lesson, which model, how many tokens, which tools ran and what each
//! changed; each refusal; each flag, by category. The school's admin reads
//! it on the Audit page and downloads it as CSV or JSON (`routes`); it is
//! kept as long as the school says (180 days unless set), then swept
//! (`ops::retention`).
//!
//! Nothing in it is the words of a message, a student's or the model's:
//! a school's admin reads who did what, not what was said.

pub mod list;
pub mod record;
pub mod routes;

pub use record::{record, NewEntry};
