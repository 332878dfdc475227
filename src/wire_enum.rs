//! How the small enums of the API (a status, a role, a kind) are written in
//! JSON: as one lowercase word. Written by hand rather than derived because a
//! derived enum deserialiser is a visitor of its own in the browser bundle,
//! while these all read a string (code the bundle has anyway) and look it up.
//! An unknown word is an error naming it, as a derived one would be.
//!
//! The macro stands in the lesson crate, the bottom layer, so that every
//! layer can use it.

pub(crate) use margin_lesson::wire_enum;

#[cfg(test)]
mod tests {
    use crate::{chat::events::ToolStatus, lesson::ChangeKind};

    #[test]
    fn words_round_trip_and_unknown_words_are_errors() {
        for (v, s) in ToolStatus::WIRE {
            assert_eq!(serde_json::to_string(v).unwrap(), format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<ToolStatus>(&format!("\"{s}\"")).unwrap(), *v);
        }
        assert_eq!(ChangeKind::Moved.as_str(), "moved");
        assert_eq!(ChangeKind::from_wire("added"), Some(ChangeKind::Added));
        let e = serde_json::from_str::<ToolStatus>("\"maybe\"").unwrap_err().to_string();
        assert!(e.contains("maybe"), "{e}");
        assert!(serde_json::from_str::<ToolStatus>("3").is_err());
    }
}
