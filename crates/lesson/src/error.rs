//! One problem in a lesson document, said so that it can be fixed: where it is
//! (line, column, and the path of elements), what is wrong, and what would be right.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LessonError {
    /// 1-based line in the XML text (0 when the problem is the whole document).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// Where in the document, e.g. `exercise#ex-3 > p > blank`.
    pub path: String,
    /// What is wrong and how to put it right.
    pub message: String,
}

impl LessonError {
    pub fn new(line: u32, column: u32, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { line, column, path: path.into(), message: message.into() }
    }

    /// A problem with the document as a whole (size, encoding).
    pub fn whole(message: impl Into<String>) -> Self {
        Self::new(0, 0, "", message)
    }
}

impl std::fmt::Display for LessonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "line {}, column {}", self.line, self.column)?;
            if !self.path.is_empty() {
                write!(f, ", {}", self.path)?;
            }
            write!(f, ": {}", self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for LessonError {}
