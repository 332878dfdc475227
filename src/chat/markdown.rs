//! The assistant's markdown as HTML, the same on the server (history) and in
//! the browser (streaming). The output is inert:
//! - raw HTML in the markdown is shown as text, never interpreted;
//! - links keep only http, https and mailto targets, and open in a new tab
//!   with `rel="noopener noreferrer"`; other links become plain text;
//! - images are never loaded: they become a link to the image, labelled.
//!
//! Sanitising is done on pulldown-cmark's events rather than on the HTML it
//! writes (so no HTML sanitiser is needed): the only tags in the output are
//! the ones pulldown-cmark writes for markdown structure.
//!
//! While a reply streams, [`MarkdownStream`] cuts its text into finished
//! blocks and the still-growing last one; the sidebar renders each finished
//! block once and only the last one again, so a chunk costs the same at the
//! end of a long reply as at its start. (It cuts, and the conversation's view
//! renders: in the browser the renderer is then a part of the bundle of its
//! own, loaded once the page is live, not in the page's first load.)

use pulldown_cmark::{html, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

fn allowed_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("mailto:")
}

/// Renders markdown to inert HTML.
pub fn render(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    // Links that were dropped: their closing events must be dropped too.
    let mut link_stack: Vec<bool> = Vec::new();
    let mut in_image: Option<(String, String)> = None;
    let mut events: Vec<Event> = Vec::new();
    for event in Parser::new_ext(markdown, options()) {
        if let Some((_, alt)) = &mut in_image {
            match event {
                Event::End(TagEnd::Image) => {
                    let (url, alt) = in_image.take().unwrap_or_default();
                    let label = if alt.trim().is_empty() { "image".to_string() } else { format!("image: {}", alt.trim()) };
                    if allowed_url(&url) && !url.to_ascii_lowercase().starts_with("mailto:") {
                        events.push(Event::Start(Tag::Link {
                            link_type: LinkType::Inline,
                            dest_url: CowStr::from(url),
                            title: CowStr::from(""),
                            id: CowStr::from(""),
                        }));
                        events.push(Event::Text(CowStr::from(format!("[{label}]"))));
                        events.push(Event::End(TagEnd::Link));
                    } else {
                        events.push(Event::Text(CowStr::from(format!("[{label}]"))));
                    }
                }
                Event::Text(t) | Event::Code(t) => alt.push_str(&t),
                _ => {}
            }
            continue;
        }
        match event {
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                let keep = allowed_url(&dest_url);
                link_stack.push(keep);
                if keep {
                    events.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
                }
            }
            Event::End(TagEnd::Link) => {
                if link_stack.pop().unwrap_or(false) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) => in_image = Some((dest_url.to_string(), String::new())),
            other => events.push(other),
        }
    }
    html::push_html(&mut out, events.into_iter());
    // Every anchor in `out` was written by pulldown-cmark for an allowed link;
    // raw HTML became escaped text and cannot contain a literal `<a href=`.
    out.replace("<a href=\"", "<a target=\"_blank\" rel=\"noopener noreferrer\" href=\"")
}

/// Where the finished part of a growing markdown text ends: after the last
/// blank line that is outside a fenced code block.
fn stable_prefix_len(text: &str) -> usize {
    let mut in_fence = false;
    let mut fence_marker = "";
    let mut stable = 0;
    let mut offset = 0;
    let mut prev_blank = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let complete_line = line.ends_with('\n');
        if !complete_line {
            break;
        }
        if in_fence {
            if trimmed.starts_with(fence_marker) {
                in_fence = false;
            }
        } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = true;
            fence_marker = if trimmed.starts_with("```") { "```" } else { "~~~" };
        }
        let blank = line.trim().is_empty();
        offset += line.len();
        if blank && !in_fence && !prev_blank {
            stable = offset;
        }
        prev_blank = blank;
    }
    stable
}

/// A reply being streamed, cut into blocks: those finished (never to
/// change) and the growing tail.
#[derive(Default, Debug)]
pub struct MarkdownStream {
    text: String,
    /// How much of `text` has been handed out as finished blocks.
    done: usize,
}

/// What changed after [`MarkdownStream::push`]: markdown, for [`render`].
#[derive(Debug, PartialEq, Eq)]
pub struct StreamUpdate {
    /// The blocks finished by this push, to render after earlier ones.
    pub finished: Option<String>,
    /// The still-growing last block (replaces the previous tail).
    pub tail: String,
}

impl MarkdownStream {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn push(&mut self, piece: &str) -> StreamUpdate {
        self.text.push_str(piece);
        // Only the unfinished part can contain a new boundary.
        let rest = &self.text[self.done..];
        let stable = stable_prefix_len(rest);
        let finished = (stable > 0).then(|| rest[..stable].to_string());
        self.done += stable;
        // Blank lines alone (the gap after steps) make no block.
        StreamUpdate { finished: finished.filter(|m| !m.trim().is_empty()), tail: self.text[self.done..].to_string() }
    }

    /// Ends the block under way, as steps come between it and whatever
    /// text follows: its markdown, if it has any text.
    pub fn flush(&mut self) -> Option<String> {
        let rest = &self.text[self.done..];
        let block = (!rest.trim().is_empty()).then(|| rest.to_string());
        self.done = self.text.len();
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_shown_as_text() {
        let html = render("Hi <img src=x onerror=alert(1)> and <script>alert(1)</script>");
        assert!(!html.contains("<img") && !html.contains("<script"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        let block = render("<div onclick=\"x\">block</div>\n");
        assert!(!block.contains("<div"), "{block}");
    }

    #[test]
    fn only_safe_links_survive_and_they_open_safely() {
        let html = render("[a](javascript:alert(1)) [b](data:text/html,x) [c](https://example.org) [d](mailto:t@x.org) [e](JAVASCRIPT:x)");
        assert!(!html.to_lowercase().contains("javascript:") && !html.contains("data:"), "{html}");
        assert!(html.contains("<a target=\"_blank\" rel=\"noopener noreferrer\" href=\"https://example.org\">c</a>"), "{html}");
        assert!(html.contains("href=\"mailto:t@x.org\""));
        assert!(html.contains(">a ") || html.contains("a b"), "the text of a dropped link stays: {html}");
        let auto = render("<javascript:alert(1)>");
        assert!(!auto.contains("href=\"javascript"), "{auto}");
    }

    #[test]
    fn images_are_never_loaded() {
        let html = render("![a pixel](https://tracker.example/p.png) ![x](javascript:alert(1))");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("href=\"https://tracker.example/p.png\">[image: a pixel]</a>"), "{html}");
        assert!(html.contains("[image: x]") && !html.contains("javascript"), "{html}");
    }

    #[test]
    fn markdown_structure_renders() {
        let html = render("# Title\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nlet x = 1 < 2;\n```\n");
        for part in ["<h1>Title</h1>", "<li>one</li>", "<table>", "<td>2</td>", "<code class=\"language-rust\">let x = 1 &lt; 2;"] {
            assert!(html.contains(part), "missing {part} in {html}");
        }
    }

    #[test]
    fn streaming_renders_the_same_as_all_at_once() {
        let text = "# Plan\n\nFirst paragraph with **bold**.\n\n```\ncode\n\nstill code\n```\n\n- a\n- b\n\nLast words.";
        for step in [1, 2, 3, 7, 50] {
            let mut s = MarkdownStream::new();
            let mut html = String::new();
            let mut tail = String::new();
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(step) {
                let u = s.push(&piece.iter().collect::<String>());
                if let Some(f) = u.finished {
                    html.push_str(&render(&f));
                }
                tail = u.tail;
            }
            html.push_str(&render(&tail));
            assert_eq!(html, render(text), "pieces of {step}");
        }
    }

    #[test]
    fn finished_blocks_are_handed_out_once() {
        let mut s = MarkdownStream::new();
        let first = s.push("One.\n\n");
        assert_eq!(first.finished.as_deref(), Some("One.\n\n"));
        assert_eq!(first.tail, "");
        let second = s.push("Two");
        assert_eq!(second.finished, None);
        assert_eq!(second.tail, "Two");
        // Blank lines alone make no block.
        assert_eq!(s.push("\n\n\n").finished.as_deref(), Some("Two\n\n"));
        assert_eq!(s.push("\n\n").finished, None);
        // A blank line inside an open code fence does not finish a block.
        let mut c = MarkdownStream::new();
        assert_eq!(c.push("```\na\n\nb").finished, None);
    }
}
