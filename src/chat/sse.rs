//! Reading a `text/event-stream` incrementally, as bytes arrive in chunks of
//! any size: events split mid-line or mid-character, several events in one
//! chunk, `\n`, `\r\n` or `\r` line ends, comments. Used by the browser to
//! read a turn, and by tests to read what the server sent.
//!
//! Hand-written rather than a crate: the format is a page of rules, and the
//! crates that implement it are tied to an HTTP client we do not use in WASM.

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseMessage {
    pub event: String,
    pub data: String,
    pub id: Option<String>,
}

#[derive(Default, Debug)]
pub struct SseParser {
    /// Bytes of a line not finished yet.
    pending: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    event: String,
    data: Vec<String>,
    id: Option<String>,
    /// The id of the last event dispatched (what `Last-Event-ID` should say).
    pub last_id: Option<String>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseMessage> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.end_line(&mut out);
                    self.after_cr = true;
                }
                _ => self.pending.push(b),
            }
        }
        out
    }

    fn end_line(&mut self, out: &mut Vec<SseMessage>) {
        let line = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        if line.is_empty() {
            if !self.data.is_empty() || !self.event.is_empty() {
                let message = SseMessage {
                    event: if self.event.is_empty() { "message".into() } else { std::mem::take(&mut self.event) },
                    data: self.data.join("\n"),
                    id: self.id.clone(),
                };
                if message.id.is_some() {
                    self.last_id = message.id.clone();
                }
                out.push(message);
            }
            self.event.clear();
            self.data.clear();
            return;
        }
        if line.starts_with(':') {
            return; // a comment, e.g. `: keepalive`
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f.to_string(), v.strip_prefix(' ').unwrap_or(v).to_string()),
            None => (line, String::new()),
        };
        match field.as_str() {
            "event" => self.event = value,
            "data" => self.data.push(value),
            "id" if !value.contains('\0') => self.id = Some(value),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "event: tool_start\nid: 1\ndata: {\"a\":1}\n\n: keepalive\n\nevent: text\nid: 2\ndata: {\"content\":\"héllo\"}\n\n";

    fn all(chunks: &[&[u8]]) -> Vec<SseMessage> {
        let mut p = SseParser::new();
        chunks.iter().flat_map(|c| p.push(c)).collect()
    }

    fn expected() -> Vec<SseMessage> {
        vec![
            SseMessage { event: "tool_start".into(), data: "{\"a\":1}".into(), id: Some("1".into()) },
            SseMessage { event: "text".into(), data: "{\"content\":\"héllo\"}".into(), id: Some("2".into()) },
        ]
    }

    #[test]
    fn several_events_in_one_chunk() {
        assert_eq!(all(&[STREAM.as_bytes()]), expected());
    }

    #[test]
    fn any_split_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        for cut in 0..bytes.len() {
            assert_eq!(all(&[&bytes[..cut], &bytes[cut..]]), expected(), "cut at {cut}");
        }
        let single: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(all(&single), expected(), "one byte at a time (splits é)");
    }

    #[test]
    fn crlf_and_cr_line_ends() {
        let crlf = STREAM.replace('\n', "\r\n");
        assert_eq!(all(&[crlf.as_bytes()]), expected());
        let bytes = crlf.as_bytes();
        for cut in 0..bytes.len() {
            assert_eq!(all(&[&bytes[..cut], &bytes[cut..]]), expected(), "crlf cut at {cut}");
        }
        let cr = STREAM.replace('\n', "\r");
        assert_eq!(all(&[cr.as_bytes()]), expected());
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored_and_multiline_data_joined() {
        let got = all(&[b": hi\nretry: 10\nevent: text\ndata: a\ndata: b\nfoo: bar\n\n"]);
        assert_eq!(got, vec![SseMessage { event: "text".into(), data: "a\nb".into(), id: None }]);
    }

    #[test]
    fn the_last_id_is_remembered() {
        let mut p = SseParser::new();
        p.push(STREAM.as_bytes());
        assert_eq!(p.last_id.as_deref(), Some("2"));
    }

    #[test]
    fn an_unfinished_event_is_not_dispatched() {
        assert!(all(&[b"event: text\ndata: {}\n"]).is_empty());
    }
}
