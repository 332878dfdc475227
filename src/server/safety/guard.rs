//! "Hints only": the tutor's reply never carries an answer to one of the
//! lesson's items. The tutor never sees the key, but a model can work an
//! answer out from the lesson, so its text is checked against the key here,
//! on the server, before a student sees it.
//!
//! The reply still streams: the guard holds back only its last few
//! characters (as many as the longest answer could span), checks all of it
//! so far each time text comes, and lets out what can no longer be part of
//! an answer. Once an answer shows, nothing more of the reply's text goes
//! out, and it ends with a sentence saying why. The model's reasoning is
//! not shown at all under this policy.
//!
//! What counts as an answer: a blank's answer and its alternatives, and a
//! multiple-choice question's right options, as whole words, ignoring case
//! and punctuation; answers shorter than `SHORTEST` characters are not
//! checked (they are ordinary words). True/false, order and open answers
//! are not checked: docs/safety.md says so.

use crate::lesson::{self, answers::Key, Element};

use super::rules::normalise;

/// The shortest answer checked, in characters.
const SHORTEST: usize = 2;
/// The shortest right option checked: shorter ones ("es", "Yes") are
/// words any explanation uses.
const SHORTEST_OPTION: usize = 4;

/// What the student reads when the guard stopped a reply.
pub const HELD: &str = "I started to give away an answer there, and this lesson is set to hints only, so I stopped. Let's work it out together instead: what do you already know about it?";

/// The answers a reply must not carry, from the published lesson with its
/// key (`key_xml`), each normalised (`rules::normalise`).
pub fn answers_of(key_xml: &str) -> Vec<String> {
    let Ok(root) = lesson::parse(key_xml) else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for item in lesson::answers::items(&root) {
        if let Key::Blank { answer, alts, .. } = item.key {
            out.extend(std::iter::once(answer).chain(alts).filter(|a| a.trim().chars().count() >= SHORTEST).map(|a| normalise(&a)));
        }
    }
    right_options(&root, &mut out);
    out.retain(|a| !a.trim().is_empty());
    out.sort();
    out.dedup();
    out
}

fn right_options(e: &Element, out: &mut Vec<String>) {
    for child in e.elements() {
        if child.name == "option" && child.attr("correct") == Some("true") {
            let text = child.text();
            if text.trim().chars().count() >= SHORTEST_OPTION {
                out.push(normalise(&text));
            }
        } else {
            right_options(child, out);
        }
    }
}

/// One reply's text on its way to a student.
pub struct AnswerGuard {
    answers: Vec<String>,
    /// How many characters at the end may still become part of an answer.
    hold: usize,
    text: String,
    /// Bytes of `text` let out.
    released: usize,
    caught: bool,
}

impl AnswerGuard {
    pub fn new(answers: Vec<String>) -> Self {
        // A match in the original text may be longer than the normalised
        // answer (runs of spaces and punctuation are one space there).
        let hold = answers.iter().map(|a| a.chars().count()).max().unwrap_or(0) * 2 + 8;
        Self { answers, hold, text: String::new(), released: 0, caught: false }
    }

    /// Whether an answer showed (and the rest was held).
    pub fn caught(&self) -> bool {
        self.caught
    }

    fn found(&self) -> bool {
        let norm = normalise(&self.text);
        self.answers.iter().any(|a| norm.contains(a.as_str()))
    }

    /// Takes the next piece of the reply; returns what may go out now.
    pub fn push(&mut self, piece: &str) -> String {
        if self.caught {
            return String::new();
        }
        self.text.push_str(piece);
        if self.found() {
            self.caught = true;
            return String::new();
        }
        let chars = self.text[self.released..].chars().count();
        let out: String = self.text[self.released..].chars().take(chars.saturating_sub(self.hold)).collect();
        self.released += out.len();
        out
    }

    /// The reply's text paused (a tool is called, or a round ends): what is
    /// held goes out, unless it carries an answer.
    pub fn flush(&mut self) -> String {
        if self.caught || self.found() {
            self.caught = true;
            return String::new();
        }
        let out = self.text[self.released..].to_string();
        self.released = self.text.len();
        out
    }

    /// The reply is over: the rest, or why it stopped.
    pub fn finish(&mut self) -> String {
        let rest = self.flush();
        if self.caught {
            let gap = if self.released == 0 { "" } else { "…\n\n" };
            self.text.truncate(self.released);
            self.text.push_str(gap);
            self.text.push_str(HELD);
            self.released = self.text.len();
            return format!("{gap}{HELD}");
        }
        rest
    }

    /// Everything let out so far: the reply as the student read it.
    pub fn shown(&self) -> &str {
        &self.text[..self.released]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = r#"<lesson><h1>Être</h1>
      <exercise type="fill-blanks"><p>Demain, je <blank id="b1" answer="serai" alts="serais" hint="être, future"/> content.</p>
        <p>The <blank id="b2" answer="water cycle"/> moves water, and <blank id="b3" answer="a"/> letter.</p></exercise>
      <exercise type="multiple-choice"><question><prompt>Tu …</prompt><option>suis</option><option correct="true">es</option></question>
        <question><prompt>Capital?</prompt><option correct="true">Paris</option><option>Lyon</option></question></exercise>
    </lesson>"#;

    fn through(guard: &mut AnswerGuard, pieces: &[&str]) -> String {
        let mut out: String = pieces.iter().map(|p| guard.push(p)).collect();
        out.push_str(&guard.finish());
        out
    }

    #[test]
    fn the_answers_are_blanks_and_their_alternatives_and_longer_right_options() {
        assert_eq!(answers_of(KEY), vec![" paris ", " serai ", " serais ", " water cycle "]);
    }

    #[test]
    fn an_answer_streamed_in_pieces_never_gets_out_and_the_reply_says_why() {
        let mut g = AnswerGuard::new(answers_of(KEY));
        let out = through(&mut g, &["Fine, just this once: the first gap is s", "er", "ai. Don't tell your teacher!"]);
        assert!(g.caught());
        assert!(!out.to_lowercase().contains("serai"), "{out}");
        assert!(out.ends_with(HELD), "{out}");
        assert_eq!(g.shown(), out);
    }

    #[test]
    fn an_answer_split_by_spacing_or_case_is_caught() {
        let mut g = AnswerGuard::new(answers_of(KEY));
        let out = through(&mut g, &["It is the WATER", "   \n cycle, of course."]);
        assert!(g.caught() && !out.to_lowercase().contains("water"), "{out}");
    }

    #[test]
    fn a_reply_without_an_answer_goes_out_whole_and_streams_before_its_end() {
        let mut g = AnswerGuard::new(answers_of(KEY));
        let long = "Think about what happens tomorrow: which tense talks about the future? Look at the verb's ending in the other sentences. ";
        let first = g.push(long);
        assert!(!first.is_empty() && long.starts_with(&first), "nothing streamed: {first:?}");
        let rest = g.push("What do you think?");
        let end = g.finish();
        assert_eq!(format!("{first}{rest}{end}"), format!("{long}What do you think?"));
        assert!(!g.caught());
    }

    #[test]
    fn short_answers_and_words_inside_others_are_not_answers() {
        let mut g = AnswerGuard::new(answers_of(KEY));
        // "a" and "es" are too short to check; "Parisian" is not "Paris".
        let text = "Tu es… a Parisian would say it differently.";
        assert_eq!(through(&mut g, &[text]), text);
        assert!(!g.caught());
    }

    #[test]
    fn a_flush_before_a_tool_lets_held_text_out_unless_it_is_an_answer() {
        let mut g = AnswerGuard::new(answers_of(KEY));
        let a = g.push("Let me check. ");
        assert_eq!(format!("{a}{}", g.flush()), "Let me check. ");
        g.push("It's Paris");
        assert_eq!(g.flush(), "");
        assert!(g.caught());
    }
}
