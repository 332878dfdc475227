//! The rules of a rubric: how an open answer (a short-answer question or a
//! writing task) is scored. At most one per question or writing task; one
//! to `MAX_CRITERIA` criteria, each named, with two to `MAX_LEVELS` levels
//! of distinct whole points. `shared="true"` shows it to students.

use std::collections::HashMap;

use super::{excerpt, join, Validator};
use crate::{
    rubric::{MAX_CRITERIA, MAX_LEVELS, MAX_NAME_CHARS, MAX_POINTS},
    tree::{Element, Node},
};

impl Validator {
    /// The rubrics found in `holder` (a question or a writing exercise).
    pub(super) fn rubrics(&mut self, holder: &Element, path: &str, rubrics: Vec<&Element>) {
        if rubrics.len() > 1 {
            self.err(rubrics[1], &join(path, rubrics[1]), format!("a {} has at most one <rubric>.", if holder.name == "question" { "question" } else { "writing task" }));
        }
        // Last, after what the student answers.
        if let (Some(r), Some(last)) = (rubrics.first(), holder.elements().last()) {
            if last.name != "rubric" {
                self.err(r, &join(path, r), "the <rubric> comes last, after the prompt (and the model answer or writing area).");
            }
        }
        for r in rubrics {
            self.rubric(r, &join(path, r));
        }
    }

    fn rubric(&mut self, r: &Element, path: &str) {
        self.attrs(r, path);
        if let Some(shared) = r.attr("shared") {
            if shared != "true" && shared != "false" {
                self.err(r, path, format!("shared=\"{shared}\" must be \"true\" (students see the rubric) or \"false\"."));
            }
        }
        self.no_loose_text(r, path, "rubric", "<criterion>");
        let mut criteria = 0;
        for c in r.elements() {
            let c_path = join(path, c);
            if c.name == "criterion" {
                criteria += 1;
                self.criterion(c, &c_path);
            } else {
                self.err(c, &c_path, format!("<{}> does not belong in a <rubric>. A rubric holds <criterion name=\"…\"> elements, each with <level points=\"N\">s.", c.name));
            }
        }
        if !(1..=MAX_CRITERIA).contains(&criteria) {
            self.err(r, path, format!("a rubric needs 1 to {MAX_CRITERIA} <criterion> elements (it has {criteria})."));
        }
    }

    fn criterion(&mut self, c: &Element, path: &str) {
        self.attrs(c, path);
        if let Some(name) = c.attr("name") {
            let chars = name.trim().chars().count();
            if chars == 0 {
                self.err(c, path, "the criterion's name is empty. Name what it judges, e.g. name=\"Gives a reason\".");
            } else if chars > MAX_NAME_CHARS {
                self.err(c, path, format!("the criterion's name is {chars} characters long; keep it under {MAX_NAME_CHARS} and describe the levels in them."));
            }
        }
        self.no_loose_text(c, path, "criterion", "<level points=\"N\">");
        let mut seen: HashMap<u32, u32> = HashMap::new();
        let mut levels = 0;
        for l in c.elements() {
            let l_path = join(path, l);
            if l.name != "level" {
                self.err(l, &l_path, format!("<{}> does not belong in a <criterion>. Use <level points=\"N\">what an answer at this level does</level>.", l.name));
                continue;
            }
            levels += 1;
            self.text_part(l, &l_path, "level");
            let Some(raw) = l.attr("points") else { continue };
            match raw.trim().parse::<u32>() {
                Ok(n) if n <= MAX_POINTS => {
                    if let Some(line) = seen.get(&n) {
                        self.err(l, &l_path, format!("{n} points is already a level of this criterion (line {line}). Give each level its own points."));
                    } else {
                        seen.insert(n, l.line);
                    }
                }
                _ => self.err(l, &l_path, format!("points=\"{raw}\" must be a whole number from 0 to {MAX_POINTS}.")),
            }
        }
        if !(2..=MAX_LEVELS).contains(&levels) {
            self.err(c, path, format!("a criterion needs 2 to {MAX_LEVELS} <level>s (it has {levels}), from the best answer to the weakest."));
        }
    }

    /// Text directly inside an element that holds only elements.
    fn no_loose_text(&mut self, e: &Element, path: &str, what: &str, instead: &str) {
        for n in &e.children {
            if let Node::Text(t) = n {
                if !t.trim().is_empty() {
                    self.err(e, path, format!("the text \"{}\" stands directly inside <{what}>. Put it in a {instead}.", excerpt(t)));
                }
            }
        }
    }
}
