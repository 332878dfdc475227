//! `make bench`, second part: how long the change list of an edit takes for
//! two lessons at the size cap (256 KB of XML each), and how long making one
//! edit on top of another (`lesson::merge`, used by Apply and Undo) takes.
//! Target: under 20 ms for the change list.
//!
//! The two lessons share their ids and differ where edits differ in real
//! use: answers, options and statements changed, a tenth of the paragraphs
//! reworded, blocks added, removed and moved.

use std::time::{Duration, Instant};

use margin::lesson::{changes, merge, normalize, Element, MAX_BYTES};

/// A lesson of about `MAX_BYTES` of XML: paragraphs and exercises of every
/// kind, in turn. `variant` changes some of it, as an edit would.
fn lesson(variant: bool) -> String {
    let mut out = String::from("<lesson>\n");
    let mut i = 0;
    while out.len() < MAX_BYTES - 4_000 {
        let edit = variant && i % 10 == 3;
        match i % 6 {
            0 => out.push_str(&format!(
                "<p id=\"p-{i}\">Paragraph {i}: verbs change their ending with the subject, so we {} them carefully before we write.</p>\n",
                if edit { "practise" } else { "learn" }
            )),
            1 => out.push_str(&format!(
                "<exercise id=\"ex-{i}\" type=\"fill-blanks\"><p id=\"s-{i}\">Je <blank id=\"b-{i}\" answer=\"{}\" hint=\"être\"/> content et tu <blank id=\"c-{i}\" answer=\"es\"/> là.</p></exercise>\n",
                if edit { "serai" } else { "suis" }
            )),
            2 => out.push_str(&format!(
                "<exercise id=\"ex-{i}\" type=\"multiple-choice\"><question id=\"q-{i}\"><prompt>Which is a verb?</prompt><option id=\"o-{i}\" correct=\"{}\">manger</option><option id=\"u-{i}\" correct=\"{}\">la table</option></question></exercise>\n",
                !edit, edit
            )),
            3 => out.push_str(&format!(
                "<exercise id=\"ex-{i}\" type=\"true-false\"><statement id=\"st-{i}\" answer=\"{}\">The sun is a star.</statement></exercise>\n",
                if edit { "false" } else { "true" }
            )),
            4 if variant && i % 20 == 4 => {} // removed
            4 => out.push_str(&format!(
                "<exercise id=\"ex-{i}\" type=\"sequencing\"><item id=\"i-{i}\" position=\"1\">Fill the kettle</item><item id=\"j-{i}\" position=\"2\">Boil the water</item></exercise>\n"
            )),
            _ => out.push_str(&format!("<note id=\"n-{i}\">Teacher note {i}: spend ten minutes on this part.</note>\n")),
        }
        if variant && i % 50 == 7 {
            out.push_str(&format!("<p>A new paragraph after block {i}.</p>\n"));
        }
        i += 1;
    }
    out.push_str("</lesson>\n");
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    median((0..runs).map(|_| {
        let t = Instant::now();
        f();
        t.elapsed()
    }).collect())
}

fn main() {
    let (a, b) = (lesson(false), lesson(true));
    let old: Element = normalize(&a).expect("the first lesson is valid");
    let new: Element = normalize(&b).expect("the second lesson is valid");
    let list = changes(&old, &new);
    let took = time(21, || {
        std::hint::black_box(changes(&old, &new));
    });
    println!(
        "Changes between two lessons of {} and {} KB ({} changes): median {:.2} ms (target < 20 ms)",
        a.len() / 1024,
        b.len() / 1024,
        list.len(),
        took.as_secs_f64() * 1000.0
    );
    // Undo's work: the edit taken back while every other block stays.
    let merged = time(21, || {
        std::hint::black_box(merge(&new, &old, &new).expect("no conflict"));
    });
    println!("Making those changes on top of the lesson (Apply and Undo): median {:.2} ms", merged.as_secs_f64() * 1000.0);
}
