//! Whom a turn answers, which decides what it may do: read and write a
//! teacher's lesson, only suggest, or tutor a student. Its own file, as
//! both the start of a turn and its run read it.

/// Whom a turn answers, and so what it may do. Kept with a paused reply
/// (`pause::Parked`), so a reply resumed after a restart goes on as what
/// it was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TurnKind {
    /// The teacher's: edits land or wait as their lesson's setting says.
    #[default]
    Teacher,
    /// A student's turn with the tutor: the lesson it reads is the
    /// published one (`chat.document_xml`, keys kept on the server), and the
    /// teacher's open pages are not told of it.
    Student,
    /// Started by the app from students' wrong answers: it reads and
    /// suggests in the teacher's chat, and never changes a lesson (the
    /// teacher did not ask; they ask in their next message).
    Suggest,
    /// The teacher's, started from their class's results ("Improve with
    /// these results"): every edit is held for review, whatever the
    /// lesson's setting.
    Results,
    /// The teacher's, started by "Draft feedback": it reads students' open
    /// answers and keeps drafts for the teacher (its agent has those
    /// tools); an edit it makes is held, as from results.
    Feedback,
    /// Started when the core of a version changed: the assistant carries
    /// the core's changes into the version in its own terms, and every edit
    /// is held for review, whatever the version's setting.
    CoreChange,
}

impl TurnKind {
    /// Whether every edit of the turn waits for the teacher.
    pub fn holds_edits(self) -> bool {
        matches!(self, Self::Results | Self::Feedback | Self::CoreChange)
    }

    /// Whether a held edit may pause the turn until the teacher decides. A
    /// core's changes carried into a version never do: nobody watches that
    /// version's chat, and the change waits there for the teacher.
    pub fn may_pause(self) -> bool {
        self != Self::CoreChange
    }
}
