//! How the small enums of the API (a status, a role, a kind) are written in
//! JSON: as one lowercase word. Written by hand rather than derived because a
//! derived enum deserialiser is a visitor of its own in the browser bundle,
//! while these all read a string (code the bundle has anyway) and look it up.
//! An unknown word is an error naming it, as a derived one would be.

/// `wire_enum!(Type { Variant => "word", … })`: the words, and serde both ways.
macro_rules! wire_enum {
    ($t:ty { $($v:ident => $s:literal),+ $(,)? }) => {
        impl $t {
            /// Every variant with its word on the wire.
            pub(crate) const WIRE: &'static [($t, &'static str)] = &[$((<$t>::$v, $s)),+];

            /// The word this value is written as (in JSON and in the database).
            pub fn as_str(self) -> &'static str {
                Self::WIRE.iter().find(|(v, _)| *v == self).map(|(_, s)| *s).unwrap_or("")
            }

            /// The value a word stands for.
            pub fn from_wire(word: &str) -> Option<Self> {
                Self::WIRE.iter().find(|(_, s)| *s == word).map(|(v, _)| *v)
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let word = String::deserialize(d)?;
                Self::from_wire(&word).ok_or_else(|| serde::de::Error::unknown_variant(&word, &[]))
            }
        }
    };
}

pub(crate) use wire_enum;

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
