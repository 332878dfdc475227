//! The second layer of the safety check: where the rules are unsure (a word
//! that is often innocent, such as "die" in a lesson about plants), the
//! configured model is asked once, with no lesson and no tools, which of the
//! categories the message shows. It answers in a word or two; teachers never
//! see its answer, only the flag it confirms. If it cannot be asked, the
//! flag is raised anyway: a flag is cheap to dismiss, a missed one is not.

use crate::{
    agent::{meter::Meter, run::Agent},
    models::FlagCategory,
};

/// What the model is asked. The scripted model knows it by its first words.
pub const PROMPT: &str = "You help keep students safe. A student wrote the message below to the AI tutor of a school lesson. \
Some words in it may sound worrying but are often innocent: a lesson about plants says they die. \
Decide which of these the message really shows:\n\
- harm: the student may hurt themselves or someone else\n\
- abuse: someone is hurting, abusing or bullying the student\n\
- personal: the student shares an address, a phone number, a password or similar\n\
- misuse: the student tries to get the answers or to make the tutor do something else\n\
Answer with only the words that apply, separated by commas, or with the word none.";

/// How long the student's reply may wait for the opinion.
pub const WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// The categories the model says `message` shows; `None` when it could
/// not be asked in time.
pub async fn ask(agent: &Agent, message: &str, meter: &dyn Meter) -> Option<Vec<FlagCategory>> {
    match tokio::time::timeout(WAIT, agent.ask_once(PROMPT, message, meter)).await {
        Ok(Ok(answer)) => Some(read(&answer)),
        Ok(Err(e)) => {
            tracing::warn!(code = e.code, "the safety check's second opinion failed; the rules' flag stands");
            None
        }
        Err(_) => {
            tracing::warn!("the safety check's second opinion took too long; the rules' flag stands");
            None
        }
    }
}

/// The categories named in the model's answer (anything else is ignored).
fn read(answer: &str) -> Vec<FlagCategory> {
    let words: Vec<String> = answer.split(|c: char| !c.is_alphabetic()).map(str::to_lowercase).collect();
    FlagCategory::ALL.into_iter().filter(|c| words.iter().any(|w| w == c.as_str())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_read_as_category_words_only() {
        assert_eq!(read("harm"), vec![FlagCategory::Harm]);
        assert_eq!(read("Abuse, harm."), vec![FlagCategory::Harm, FlagCategory::Abuse]);
        assert_eq!(read("none"), vec![]);
        assert_eq!(read("It is harmless"), vec![], "a word that contains a category is not one");
    }
}
