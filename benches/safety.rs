//! `make bench`, the safety checks' part: what checking a student's message
//! and a tutor's reply costs (issue #69). The rules (`server::safety::rules`)
//! run on every message a student sends and every reply, before the reply
//! starts and after it ends; the answer guard (`server::safety::guard`)
//! runs on every piece of a "hints only" reply as it streams. Neither calls
//! a model, so neither spends tokens. Writes `docs/benchmarks/safety.md`.

use std::time::Instant;

use margin::server::safety::{guard, rules};

/// A lesson like the tests' (blanks with alternatives, right options).
const KEY: &str = r#"<lesson><h1>The water cycle</h1>
  <exercise type="fill-blanks"><p>Water <blank answer="evaporates" alts="evaporate"/> in the sun and <blank answer="condenses"/> into clouds; rain is <blank answer="precipitation"/>.</p></exercise>
  <exercise type="multiple-choice"><question><prompt>What makes clouds?</prompt><option correct="true">water vapour cooling</option><option>wind</option></question></exercise>
</lesson>"#;

fn main() {
    // A typical message (about 160 characters) and a long one (2,000).
    let short = "Can you help me with the second gap? I think it is something about clouds but I'm not sure what the word is, my friend said rain but that's the third one.";
    let long = "I read the part about the sun heating the sea and the water going up into the air. ".repeat(24);
    let messages = 20_000;
    let time = |text: &str| {
        let start = Instant::now();
        let mut found = 0;
        for _ in 0..messages {
            found += rules::check(std::hint::black_box(text)).len();
        }
        assert_eq!(found, 0, "the benchmark's messages are innocent");
        start.elapsed().as_secs_f64() * 1e6 / f64::from(messages)
    };
    let rules_short = time(short);
    let rules_long = time(&long);

    // A 2,000-character reply streamed in pieces of about 20 characters.
    let reply = "Good question! Think about what happens when warm air rises and meets colder air higher up. What do you notice on a cold window when you breathe on it? ".repeat(13);
    let pieces: Vec<&str> = reply.as_bytes().chunks(20).map(|c| std::str::from_utf8(c).unwrap()).collect();
    let answers = guard::answers_of(KEY);
    let replies = 200;
    let start = Instant::now();
    for _ in 0..replies {
        let mut g = guard::AnswerGuard::new(answers.clone());
        let mut out = String::new();
        for p in &pieces {
            out.push_str(&g.push(p));
        }
        out.push_str(&g.finish());
        assert_eq!(out.len(), reply.len());
    }
    let guard_us = start.elapsed().as_secs_f64() * 1e6 / f64::from(replies);
    let per_piece = guard_us / pieces.len() as f64;

    let lines = [
        format!("| the rules, a {}-character message | {rules_short:.1} µs | 0 |", short.chars().count()),
        format!("| the rules, a {}-character message | {rules_long:.1} µs | 0 |", long.chars().count()),
        format!("| the answer guard, a {}-character reply in {} pieces | {guard_us:.0} µs a reply ({per_piece:.1} µs a piece) | 0 |", reply.chars().count(), pieces.len()),
    ];
    for l in &lines {
        println!("{l}");
    }
    let doc = format!(
        "# What the safety checks cost\n\nWritten by `make bench` (`benches/safety.rs`), on this machine, release build. The rules run on every message a student sends and on every tutor reply; the answer guard on every piece of a \"hints only\" reply. Neither calls a model.\n\n| check | time | tokens |\n|---|---|---|\n{}\n",
        lines.join("\n")
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmarks");
    std::fs::create_dir_all(&dir).ok();
    std::fs::write(dir.join("safety.md"), doc).expect("docs/benchmarks/safety.md");
}
