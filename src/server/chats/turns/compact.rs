//! A finished turn's log, kept small for late readers.
//!
//! While a turn runs, its log is one event per model delta, which is what
//! readers following it live need. Once it is over, a reader can only be
//! catching up from some event number on, so the log is kept as:
//! - each run of text events as one string and the end of every delta in it
//!   (four bytes a delta instead of an event each), so a reader resuming in
//!   the middle of a run gets exactly the text after its cursor;
//! - the lesson only in the turn's last edit that carried one: an earlier
//!   edit's document is replaced by the later one a reader also receives.
//!
//! Numbers stay as they were live, so `Last-Event-ID` means the same thing
//! before and after.
//!
//! The same form, for events `first..` of a running turn, is how a batch of
//! them is stored for readers on other instances (`to_json`, `from_json`).

use serde::{Deserialize, Serialize};

use crate::chat::events::{ChatEvent, TextData};

#[derive(Debug)]
enum Entry {
    One { seq: u64, event: ChatEvent },
    /// Text (or reasoning) events `first..first + ends.len()` of one round;
    /// `ends[i]` is where the text of event `first + i` ends in `text`.
    Run { reasoning: bool, round: u32, first: u64, text: String, ends: Vec<u32> },
}

/// The text of a text or reasoning event, which of the two it is, and its round.
fn piece(e: &ChatEvent) -> Option<(bool, u32, &str)> {
    match e {
        ChatEvent::Text(t) => Some((false, t.round_index, &t.content)),
        ChatEvent::Reasoning(t) => Some((true, t.round_index, &t.content)),
        _ => None,
    }
}

impl Entry {
    /// Roughly what an entry takes in memory, in bytes.
    fn bytes(&self) -> usize {
        match self {
            Entry::One { event, .. } => event.data_json().len() + 64,
            Entry::Run { text, ends, .. } => text.len() + ends.len() * 4 + 64,
        }
    }
}

fn end_of(text: &str) -> u32 {
    u32::try_from(text.len()).unwrap_or(u32::MAX)
}

#[derive(Debug)]
pub struct Compacted {
    entries: Vec<Entry>,
    /// Roughly what this takes in memory, in bytes.
    pub bytes: usize,
}

/// An entry as stored: an event as its SSE name and data, or a run.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum StoredEntry {
    One { s: u64, e: String, d: String },
    Run {
        r: bool,
        f: u64,
        t: String,
        n: Vec<u32>,
        #[serde(default)]
        i: u32,
    },
}

impl Compacted {
    #[cfg(test)]
    pub fn new(events: Vec<ChatEvent>) -> Self {
        Self::starting_at(1, events)
    }

    /// `events` numbered from `first`.
    pub fn starting_at(first: u64, events: Vec<ChatEvent>) -> Self {
        let last_document = events.iter().rposition(|e| matches!(e, ChatEvent::ToolEnd(end) if end.document_xml.is_some()));
        let mut entries: Vec<Entry> = Vec::new();
        let mut bytes = 0;
        for (i, event) in events.into_iter().enumerate() {
            let seq = first + i as u64;
            if let Some((is_reasoning, in_round, content)) = piece(&event) {
                match entries.last_mut() {
                    Some(Entry::Run { reasoning, round, text, ends, .. }) if *reasoning == is_reasoning && *round == in_round => {
                        text.push_str(content);
                        ends.push(end_of(text));
                    }
                    _ => entries.push(Entry::Run {
                        reasoning: is_reasoning,
                        round: in_round,
                        first: seq,
                        text: content.to_string(),
                        ends: vec![end_of(content)],
                    }),
                }
                continue;
            }
            let mut event = event;
            if let ChatEvent::ToolEnd(end) = &mut event {
                if Some(i) != last_document {
                    end.document_xml = None;
                    end.document_html = None;
                }
            }
            bytes += event.data_json().len() + 64;
            entries.push(Entry::One { seq, event });
        }
        for e in &mut entries {
            if let Entry::Run { text, ends, .. } = e {
                text.shrink_to_fit();
                ends.shrink_to_fit();
                bytes += text.len() + ends.len() * 4 + 64;
            }
        }
        entries.shrink_to_fit();
        Self { entries, bytes }
    }

    /// Adds events `first..` (numbered on from the last held), as a running
    /// turn folds its older events: a run of text cut by the fold is joined
    /// again, and a document an added edit carries replaces the older ones.
    pub fn extend(&mut self, first: u64, events: Vec<ChatEvent>) {
        let more = Self::starting_at(first, events);
        let has_document = |e: &Entry| matches!(e, Entry::One { event: ChatEvent::ToolEnd(end), .. } if end.document_xml.is_some());
        if more.entries.iter().any(has_document) {
            // Only entries that still carry a document are weighed again.
            for e in self.entries.iter_mut().filter(|e| has_document(e)) {
                let was = e.bytes();
                if let Entry::One { event: ChatEvent::ToolEnd(end), .. } = e {
                    end.document_xml = None;
                    end.document_html = None;
                }
                self.bytes = self.bytes.saturating_sub(was - e.bytes());
            }
        }
        let mut added = more.entries.into_iter().peekable();
        let next = self.last_seq().map_or(0, |l| l + 1);
        if let (Some(Entry::Run { reasoning, round, text, ends, .. }), Some(Entry::Run { reasoning: r, round: i, first: f, .. })) = (self.entries.last_mut(), added.peek()) {
            if *reasoning == *r && *round == *i && *f == next {
                if let Some(Entry::Run { text: t, ends: n, .. }) = added.next() {
                    let offset = end_of(text);
                    text.push_str(&t);
                    ends.extend(n.into_iter().map(|e| e.saturating_add(offset)));
                }
            }
        }
        self.entries.extend(added);
        // A run joined to the last one counts its own 64 bytes too: roughly.
        self.bytes += more.bytes;
    }

    /// The number of the last event held.
    fn last_seq(&self) -> Option<u64> {
        self.entries.last().map(|e| match e {
            Entry::One { seq, .. } => *seq,
            Entry::Run { first, ends, .. } => first + ends.len() as u64 - 1,
        })
    }

    /// Events after `after`, runs of text or reasoning merged (each numbered
    /// as its last event).
    pub fn since(&self, after: u64) -> Vec<(u64, ChatEvent)> {
        let mut out = Vec::new();
        for e in &self.entries {
            match e {
                Entry::One { seq, event } if *seq > after => out.push((*seq, event.clone())),
                Entry::One { .. } => {}
                Entry::Run { reasoning, round, first, text, ends } => {
                    let last = first + ends.len() as u64 - 1;
                    if last <= after {
                        continue;
                    }
                    let from = if after < *first { 0 } else { ends[(after - first) as usize] as usize };
                    let rest = TextData { content: text[from..].to_string(), round_index: *round };
                    let event = if *reasoning { ChatEvent::Reasoning(rest) } else { ChatEvent::Text(rest) };
                    out.push((last, event));
                }
            }
        }
        out
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.entries.last(), Some(Entry::One { event, .. }) if event.is_terminal())
    }

    /// The number of the last event held.
    #[cfg(test)]
    pub fn last(&self) -> Option<u64> {
        self.last_seq()
    }

    /// As stored.
    pub fn to_json(&self) -> String {
        let stored: Vec<StoredEntry> = self
            .entries
            .iter()
            .map(|e| match e {
                Entry::One { seq, event } => StoredEntry::One { s: *seq, e: event.name().into(), d: event.data_json() },
                Entry::Run { reasoning, round, first, text, ends } => StoredEntry::Run { r: *reasoning, f: *first, t: text.clone(), n: ends.clone(), i: *round },
            })
            .collect();
        serde_json::to_string(&stored).unwrap_or_else(|_| "[]".into())
    }

    /// Reads what `to_json` wrote.
    pub fn from_json(json: &str) -> Result<Self, String> {
        let stored: Vec<StoredEntry> = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let mut entries = Vec::with_capacity(stored.len());
        for s in stored {
            entries.push(match s {
                StoredEntry::One { s, e, d } => Entry::One { seq: s, event: ChatEvent::from_sse(&e, &d)? },
                StoredEntry::Run { r, f, t, n, i } => {
                    // Ends must rise within the text and on char boundaries, or `since` would panic.
                    let fits = !n.is_empty() && n.windows(2).all(|w| w[0] <= w[1]) && n.iter().all(|&end| t.is_char_boundary(end as usize));
                    if !fits {
                        return Err("a stored run of text does not fit its ends".into());
                    }
                    Entry::Run { reasoning: r, round: i, first: f, text: t, ends: n }
                }
            });
        }
        Ok(Self { entries, bytes: json.len() })
    }
}

#[cfg(test)]
mod tests;
