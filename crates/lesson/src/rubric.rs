//! Rubrics: how an open answer is scored. A short-answer question or a
//! writing task may end with one `<rubric>` of named criteria, each with
//! levels worth whole points:
//!
//! ```xml
//! <rubric shared="true">
//!   <criterion name="Gives a reason">
//!     <level points="2">A clear reason in a full sentence.</level>
//!     <level points="0">No reason.</level>
//!   </criterion>
//! </rubric>
//! ```
//!
//! Students see a rubric only when it says `shared="true"` (and the lesson
//! is published); otherwise it is the teacher's, like a model answer. The
//! rules are checked in `validate::rubric`; this is the typed view the
//! rest of the app reads.

use super::tree::Element;

/// The most criteria a rubric has.
pub const MAX_CRITERIA: usize = 8;
/// The most levels a criterion has.
pub const MAX_LEVELS: usize = 6;
/// The most points one level is worth.
pub const MAX_POINTS: u32 = 100;
/// The longest criterion name, in characters.
pub const MAX_NAME_CHARS: usize = 80;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rubric {
    pub id: String,
    /// Shown to students with the published lesson.
    pub shared: bool,
    pub criteria: Vec<Criterion>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Criterion {
    pub id: String,
    pub name: String,
    /// Best first, as written.
    pub levels: Vec<Level>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    pub points: u32,
    pub text: String,
}

impl Rubric {
    /// The rubric `holder` (a question or a writing exercise) ends with, as
    /// read from a valid lesson (what does not read is left out).
    pub fn of(holder: &Element) -> Option<Rubric> {
        holder.elements().find(|c| c.name == "rubric").map(Self::from_element)
    }

    pub fn from_element(r: &Element) -> Rubric {
        let criteria = r
            .elements()
            .filter(|c| c.name == "criterion")
            .map(|c| Criterion {
                id: c.id().unwrap_or_default().to_string(),
                name: c.attr("name").unwrap_or_default().trim().to_string(),
                levels: c
                    .elements()
                    .filter(|l| l.name == "level")
                    .filter_map(|l| Some(Level { points: l.attr("points")?.trim().parse().ok()?, text: l.text().split_whitespace().collect::<Vec<_>>().join(" ") }))
                    .collect(),
            })
            .collect();
        Rubric { id: r.id().unwrap_or_default().to_string(), shared: r.attr("shared") == Some("true"), criteria }
    }

    /// The most an answer can score: the best level of each criterion.
    pub fn max_points(&self) -> u32 {
        self.criteria.iter().map(|c| c.levels.iter().map(|l| l.points).max().unwrap_or(0)).sum()
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests;
