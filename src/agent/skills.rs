//! Skills: markdown instructions the agent loads on demand, one file per skill
//! in `prompts/chat/skills/`. The file name is the skill's name; a short front
//! matter gives its label and a one-line description:
//!
//! ```text
//! ---
//! label: Fill in the blanks
//! description: How to write fill-in-the-blank exercises.
//! ---
//! (the instructions)
//! ```
//!
//! Adding a file adds a skill at the next start, with no code change.

use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub label: String,
    pub description: String,
    pub body: String,
}

#[derive(Clone, Debug, Default)]
pub struct Skills {
    list: Vec<Skill>,
}

impl Skills {
    /// Reads every `*.md` in `dir`, sorted by name.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read the skills folder {}: {e}", dir.display()))?;
        let mut list = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("md") {
                continue;
            }
            let Some(name) = path.file_stem().and_then(|s| s.to_str()).map(str::to_string) else { continue };
            if !valid_name(&name) {
                tracing::warn!(file = %path.display(), "skipping a skill whose file name is not lowercase letters, digits and dashes");
                continue;
            }
            let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            list.push(parse_skill(&name, &text));
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self { list })
    }

    pub fn from_list(mut list: Vec<Skill>) -> Self {
        list.sort_by(|a, b| a.name.cmp(&b.name));
        Self { list }
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.list.iter().find(|s| s.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|s| s.name.as_str()).collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.list.iter()
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Splits the optional front matter from the body.
pub fn parse_skill(name: &str, text: &str) -> Skill {
    let text = text.trim_start_matches('\u{feff}');
    let mut label = name.to_string();
    let mut description = String::new();
    let mut body = text;
    if let Some(rest) = text.strip_prefix("---") {
        if let Some(end) = rest.find("\n---") {
            for line in rest[..end].lines() {
                if let Some((key, value)) = line.split_once(':') {
                    match key.trim() {
                        "label" => label = value.trim().to_string(),
                        "description" => description = value.trim().to_string(),
                        _ => {}
                    }
                }
            }
            body = rest[end + 4..].trim_start_matches(['-', '\r', '\n']);
        }
    }
    Skill { name: name.to_string(), label, description, body: body.trim().to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_gives_label_and_description() {
        let s = parse_skill("fill-blanks", "---\nlabel: Fill in the blanks\ndescription: How to write them.\n---\n# Rules\nUse blanks.\n");
        assert_eq!(s.label, "Fill in the blanks");
        assert_eq!(s.description, "How to write them.");
        assert_eq!(s.body, "# Rules\nUse blanks.");
    }

    #[test]
    fn a_file_without_front_matter_is_still_a_skill() {
        let s = parse_skill("extra", "Just text.");
        assert_eq!((s.label.as_str(), s.description.as_str(), s.body.as_str()), ("extra", "", "Just text."));
    }

    #[test]
    fn adding_a_file_adds_a_skill() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b-skill.md"), "---\nlabel: B\ndescription: b\n---\nB body").unwrap();
        std::fs::write(dir.path().join("a-skill.md"), "A body").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        std::fs::write(dir.path().join("Bad Name.md"), "ignored").unwrap();
        let skills = Skills::load(dir.path()).unwrap();
        assert_eq!(skills.names(), vec!["a-skill", "b-skill"]);
        std::fs::write(dir.path().join("c-skill.md"), "C").unwrap();
        assert_eq!(Skills::load(dir.path()).unwrap().names().len(), 3);
    }

    #[test]
    fn the_shipped_skills_cover_every_exercise_kind() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/chat/skills");
        let skills = Skills::load(&dir).unwrap();
        for name in ["fill-blanks", "multiple-choice", "true-false", "sequencing", "short-answer", "writing-exercises", "rubrics", "standards", "reading-level"] {
            let s = skills.get(name).unwrap_or_else(|| panic!("missing skill {name}"));
            assert!(!s.description.is_empty() && s.body.len() > 200, "{name} is too thin");
        }
    }
}
