//! Reading levels against reference values: the formulas' published
//! examples where there are some, and the formulas worked by hand on
//! texts whose counts are not in doubt.

use super::*;
use crate::parse;

/// The example of the Flesch–Kincaid article (Wikipedia, "Flesch–Kincaid
/// readability tests"): grade 13.1.
const PLATYPUS: &str = "The Australian platypus is seemingly a hybrid of a mammal and reptilian creature.";

#[test]
fn english_is_flesch_kincaid_and_matches_the_published_example() {
    let l = score(PLATYPUS, "en").unwrap();
    assert_eq!(l.formula, "Flesch–Kincaid");
    let grade = l.grade.unwrap();
    assert!((grade - 13.1).abs() <= 0.15, "published 13.1, measured {grade}");
}

#[test]
fn one_syllable_words_give_the_formula_by_hand() {
    // 14 words, 2 sentences, 14 syllables: 0.39 × 7 + 11.8 × 1 − 15.59 = −1.06,
    // below the scale: grade 0, its lowest.
    let l = score("The cat sat on the mat. The dog ran to the big red box.", "en").unwrap();
    assert_eq!((l.score, l.grade), (-1.1, Some(0.0)), "{l:?}");
}

#[test]
fn other_languages_use_lix_worked_by_hand() {
    // LIX = words / sentences + 100 × long words (more than six letters) / words.
    // 9 words, 2 sentences, 1 long word ("Stockholm"): 4.5 + 11.1 = 15.6.
    let l = score("Min syster bor i Stockholm. Hon kom hem igår.", "sv").unwrap();
    assert_eq!(l.formula, "LIX");
    assert!((l.score - 15.6).abs() <= 0.1, "by hand 15.6, measured {l:?}");
}

#[test]
fn german_is_the_first_wiener_sachtextformel_worked_by_hand() {
    // WSTF1 = 0.1935 × MS + 0.1672 × SL + 0.1297 × IW − 0.0327 × ES − 0.875
    // (MS: % of words of three or more syllables, SL: words per sentence,
    // IW: % of words of more than six letters, ES: % of one-syllable words).
    // 7 words, 2 sentences; none of three syllables; "schnell" and
    // "schläft" are long; all but "Kat-ze" have one syllable:
    // 0 + 0.1672 × 3.5 + 0.1297 × 28.57 − 0.0327 × 85.71 − 0.875 = 0.61,
    // a school grade below the formula's lowest, read as grade 4.
    let l = score("Der Hund läuft schnell. Die Katze schläft.", "de").unwrap();
    assert_eq!(l.formula, "Wiener Sachtextformel");
    assert!((l.score - 0.6).abs() <= 0.05, "by hand 0.61, measured {l:?}");
    assert_eq!(l.grade, Some(4.0), "{l:?}");
}

#[test]
fn spanish_and_other_languages_without_a_grade_formula_say_lix_and_no_grade() {
    // 7 words, 2 sentences, 2 long words ("plantas", "necesitan"): 3.5 + 28.6 = 32.1.
    let l = score("Las plantas necesitan agua. El sol brilla.", "es").unwrap();
    assert_eq!(l.formula, "LIX");
    assert!((l.score - 32.1).abs() <= 0.1, "by hand 32.1, measured {l:?}");
    assert_eq!(l.grade, None);
    assert_eq!(l.said(), "LIX 32");
}

#[test]
fn short_texts_are_not_measured_and_long_ones_are() {
    assert_eq!(measure(PLATYPUS, "en"), None);
    let long = [PLATYPUS; 3].join(" ");
    assert!(measure(&long, "en").is_some());
}

#[test]
fn a_lesson_is_measured_on_what_students_read_blanks_filled() {
    let p = "Volcanoes are openings in the crust of the earth where hot melted rock comes up. ";
    let xml = format!(
        r#"<lesson lang="en"><h1 id="h">A very long heading that is not counted at all in the measure</h1><p id="p1">{p}{p}{p}</p>
        <note id="n">Teacher only text that should never be counted because students do not read it at all.</note>
        <exercise id="e1" type="fill-blanks"><instructions>Fill in the gap.</instructions><p id="p2">Hot rock is called <blank id="b1" answer="magma"/>.</p></exercise></lesson>"#
    );
    let root = parse(&xml).unwrap();
    let blocks = block_texts(&root);
    assert_eq!(blocks[1], ("e1".to_string(), "exercise 1 (Fill in the blanks)".to_string(), "Fill in the gap. Hot rock is called magma.".to_string()));
    assert_eq!(blocks.len(), 2, "the heading and the note are not read: {blocks:?}");
    let whole = of_lesson(&root).unwrap();
    assert!(whole.grade.is_some() && whole.words >= MIN_WORDS, "{whole:?}");
    assert_eq!(of_blocks(&root).len(), 1, "only the paragraph is long enough alone");
}

#[test]
fn the_change_list_tells_a_level_that_moved() {
    let hard = "Photosynthesis transforms electromagnetic radiation into chemical potential energy, facilitating carbohydrate biosynthesis within chloroplast organelles. ";
    let easy = "Plants use light to make food. The food is a kind of sugar. It is made in the leaves. ";
    let lesson = |t: &str| parse(&format!(r#"<lesson><p id="p1">{}</p></lesson>"#, t.repeat(3))).unwrap();
    let line = change(&lesson(hard), &lesson(easy)).unwrap();
    assert!(line.starts_with("Reading level: grade ") && line.contains(" → grade "), "{line}");
    assert_eq!(change(&lesson(easy), &lesson(easy)), None);
}

#[test]
fn a_very_long_lesson_is_measured_on_its_first_words() {
    let easy = "Plants use light to make food. The food is a kind of sugar. It is made in the leaves. ";
    let hard = "Photosynthesis transforms electromagnetic radiation into chemical potential energy, facilitating carbohydrate biosynthesis. ";
    let words = easy.split_whitespace().count();
    let lesson = |tail: &str| parse(&format!(r#"<lesson><p id="p1">{}</p><p id="p2">{}</p></lesson>"#, easy.repeat(SAMPLE_WORDS / words + 1), tail.repeat(50))).unwrap();
    let l = of_lesson(&lesson(hard)).unwrap();
    assert_eq!(l.words, SAMPLE_WORDS);
    assert_eq!(Some(l), of_lesson(&lesson(easy)), "what comes after the sample does not move it");
}
