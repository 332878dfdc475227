//! The actions a reply can offer as buttons, which the page runs without
//! asking the model again: one registry for both sides. The server lets the
//! model offer only these, with their arguments checked
//! ([`PageAction::offered`]); the browser shows each with its label and runs
//! its handler (`components/chat/suggestions.rs`). Adding an action means a
//! word here, a label, and a handler there.

/// The tool whose calls offer what to do next: the agent's `suggest_next`,
/// whose calls the sidebar shows as buttons under the reply, not as steps.
pub const SUGGEST_TOOL: &str = "suggest_next";

/// One action the page knows how to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageAction {
    /// Show the lesson as students see it (no answers, no notes).
    StudentPreview,
    /// Take back the edit this reply made (the step's own Undo).
    UndoEdit,
    /// Open the printable worksheet.
    PrintWorksheet,
    /// Open the printable answer key.
    PrintKey,
}

crate::wire_enum::wire_enum!(PageAction {
    StudentPreview => "student_preview",
    UndoEdit => "undo_edit",
    PrintWorksheet => "print_worksheet",
    PrintKey => "print_key",
});

/// The names the model may offer (`print` takes `answerKey`).
pub const OFFERED_NAMES: [&str; 3] = ["student_preview", "undo_edit", "print"];

impl PageAction {
    /// The button's text.
    pub fn label(self) -> &'static str {
        match self {
            Self::StudentPreview => "Show student preview",
            Self::UndoEdit => "Undo this edit",
            Self::PrintWorksheet => "Print worksheet",
            Self::PrintKey => "Print answer key",
        }
    }

    /// The action the model asked for by `name`, with its one argument
    /// (`answerKey`, for `print` only), or why it cannot be offered, in
    /// words the model can act on.
    pub fn offered(name: &str, answer_key: Option<bool>) -> Result<Self, String> {
        match (name, answer_key) {
            ("print", key) => Ok(if key == Some(true) { Self::PrintKey } else { Self::PrintWorksheet }),
            ("student_preview" | "undo_edit", Some(_)) => Err(format!("The action `{name}` takes no arguments; leave out answerKey.")),
            ("student_preview", None) => Ok(Self::StudentPreview),
            ("undo_edit", None) => Ok(Self::UndoEdit),
            _ => Err(format!("There is no action named `{name}`. The actions are: {}.", OFFERED_NAMES.join(", "))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_registered_actions_with_their_arguments_are_offered() {
        assert_eq!(PageAction::offered("print", None), Ok(PageAction::PrintWorksheet));
        assert_eq!(PageAction::offered("print", Some(false)), Ok(PageAction::PrintWorksheet));
        assert_eq!(PageAction::offered("print", Some(true)), Ok(PageAction::PrintKey));
        assert_eq!(PageAction::offered("student_preview", None), Ok(PageAction::StudentPreview));
        assert_eq!(PageAction::offered("undo_edit", None), Ok(PageAction::UndoEdit));
        let e = PageAction::offered("publish", None).unwrap_err();
        assert!(e.contains("no action named `publish`") && e.contains("student_preview, undo_edit, print"), "{e}");
        let e = PageAction::offered("undo_edit", Some(true)).unwrap_err();
        assert!(e.contains("takes no arguments"), "{e}");
        // The wire words are not names the model may use.
        assert!(PageAction::offered("print_key", None).is_err());
    }

    #[test]
    fn actions_travel_as_words() {
        for (a, word) in PageAction::WIRE {
            assert_eq!(serde_json::to_string(a).unwrap(), format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<PageAction>(&format!("\"{word}\"")).unwrap(), *a);
            assert!(!a.label().is_empty());
        }
        assert!(serde_json::from_str::<PageAction>("\"delete_lesson\"").is_err());
    }
}
