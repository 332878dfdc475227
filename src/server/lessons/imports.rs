//! What a file imported as a lesson holds: Margin's XML, a .docx made by
//! "Download for Word", a QTI package or cartridge, or one QTI item. The
//! packages and .docx files are zip archives, and reading one is work a
//! crafted file can make large, so it is done in the bounded child reader
//! (`material::sandbox`, `Job::Import`), never on the server's async
//! workers: `answer` is what the child runs, `Reading` what it answers.

use serde::{Deserialize, Serialize};

use crate::lesson;

/// What an imported file holds: a lesson, a quiz to make one from, or a
/// .docx made here (whose worksheet the server resolves for the importer).
#[derive(Debug, Serialize, Deserialize)]
pub enum Reading {
    Lesson(String),
    Quiz(lesson::qti::Imported),
    Word(lesson::word::Carried),
}

/// What `bytes` holds, or why it can be none of these, as a sentence.
pub fn read(bytes: &[u8]) -> Result<Reading, String> {
    if lesson::qti::is_package(bytes) {
        return lesson::qti::lesson_of_package(bytes).map(Reading::Quiz);
    }
    // A .docx (a zip archive) made by "Download for Word".
    if bytes.starts_with(b"PK\x03\x04") {
        return lesson::word::read_docx(bytes).map(Reading::Word);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "The file is not text in UTF-8. Save it as UTF-8 XML and try again.".to_string())?;
    match lesson::qti::lesson_of_qti_xml(text) {
        Some(quiz) => quiz.map(Reading::Quiz),
        None => Ok(Reading::Lesson(text.to_string())),
    }
}

/// The child's answer for `bytes`: the reading as JSON, or the sentence.
pub fn answer(bytes: &[u8]) -> Result<String, String> {
    let json = serde_json::to_string(&read(bytes)?).map_err(|e| e.to_string())?;
    // The parent believes an answer only this long; no lesson comes near it.
    if json.len() > crate::server::material::extract::MAX_TEXT_BYTES {
        return Err(format!("This file makes a lesson far larger than Margin takes (at most {} KB).", lesson::MAX_BYTES / 1024));
    }
    Ok(json)
}

/// The child's answer read back.
pub fn reading_of(answer: &str) -> Option<Reading> {
    serde_json::from_str(answer).ok()
}
