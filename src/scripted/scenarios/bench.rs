//! Scenarios the benchmarks and the soak run use: long and paced replies.

use super::{Ctx, Step};

/// A reply written over a minute, a word a second, for `make soak`.
pub(super) fn soak(_: &Ctx) -> Step {
    Step::Text { text: "word ".repeat(60), piece: 5, delay_ms: 1000 }
}

/// 20,000 one-character deltas, for `make bench`.
pub(super) fn benchmark_stream(_: &Ctx) -> Step {
    Step::Text { text: "abcdefghij".repeat(2_000), piece: 1, delay_ms: 0 }
}

/// Replies of 100,000 and 20,000 characters, five per delta, about a
/// millisecond apart (as a fast model writes), for `make bench`: the
/// server's work per delta must not grow with the reply's length.
pub(super) fn benchmark_long(c: &Ctx) -> Step {
    let tens = if c.said.contains("benchmark long") { 10_000 } else { 2_000 };
    Step::Text { text: "abcdefghij".repeat(tens), piece: 5, delay_ms: 1 }
}

/// A reply written over six seconds (600 deltas, 10 ms apart), for the
/// many-turns-at-once part of `make bench`.
pub(super) fn benchmark_paced(_: &Ctx) -> Step {
    Step::Text { text: "abcdefghij".repeat(600), piece: 10, delay_ms: 10 }
}

/// 20,000 characters of markdown, one character per chunk about a
/// millisecond apart, for the sidebar benchmark (`make bench-ui`).
pub(super) fn benchmark_markdown(_: &Ctx) -> Step {
    Step::Text { text: bench_markdown(20_000), piece: 1, delay_ms: 1 }
}

pub(super) fn slowly(_: &Ctx) -> Step {
    let reply = "Here is a careful answer. ".repeat(12);
    Step::Text { text: reply.trim_end().to_string(), piece: 4, delay_ms: 40 }
}

/// A long, varied markdown reply (headings, paragraphs with inline styles and
/// links, lists, quotes, code) cut to exactly `len` ASCII characters.
fn bench_markdown(len: usize) -> String {
    let mut out = String::with_capacity(len + 512);
    let mut n = 0;
    while out.len() < len {
        n += 1;
        out.push_str(&format!(
            "## Part {n}: reading closely\n\n\
             Read the passage **twice**, then note *three* words you do not know. \
             Compare your list with a partner and look up the rest in [a dictionary](https://example.org/words/{n}).\n\n\
             - Underline the main idea of paragraph {n}.\n\
             - Circle every verb in the past tense.\n\
             - Write one question you would ask the author.\n\n\
             > A good reader asks questions before, during and after reading.\n\n\
             1. Summarise the text in `two sentences`.\n\
             2. Share your summary with the class.\n\n"
        ));
    }
    out.truncate(len);
    out
}
