//! Putting tool calls back together from streamed deltas.
//!
//! Providers differ: OpenAI sends the id and name in the first chunk and the
//! arguments in many pieces, several calls interleaved by `index`; Ollama sends
//! a whole call in one chunk, and some servers reuse index 0 for every call
//! (telling them apart only by their ids); some repeat the id on every chunk.
//! All of these end up as the same list of calls.

/// A complete tool call as the model asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssembledCall {
    pub id: String,
    pub name: String,
    /// The raw argument text; it may not be valid JSON (e.g. cut off).
    pub arguments: String,
}

#[derive(Default, Debug)]
pub struct ToolCallAssembler {
    calls: Vec<AssembledCall>,
    /// For each stream `index`, the position in `calls` it currently feeds.
    slots: Vec<(u32, usize)>,
}

impl ToolCallAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one tool-call delta.
    pub fn push(&mut self, index: u32, id: Option<&str>, name: Option<&str>, arguments: Option<&str>) {
        let id = id.filter(|s| !s.is_empty());
        let pos = match self.slots.iter().find(|(i, _)| *i == index).map(|(_, p)| *p) {
            // Same index, but a different id: a new call that reuses the index.
            Some(pos) if id.is_some_and(|id| !self.calls[pos].id.is_empty() && self.calls[pos].id != id) => {
                self.open(index)
            }
            Some(pos) => pos,
            None => self.open(index),
        };
        let call = &mut self.calls[pos];
        if let Some(id) = id {
            if call.id.is_empty() {
                call.id = id.to_string();
            }
        }
        if let Some(name) = name.filter(|s| !s.is_empty()) {
            if call.name.is_empty() {
                call.name = name.to_string();
            } else if call.name != name {
                // A name split over chunks.
                call.name.push_str(name);
            }
        }
        if let Some(args) = arguments {
            call.arguments.push_str(args);
        }
    }

    fn open(&mut self, index: u32) -> usize {
        self.calls.push(AssembledCall { id: String::new(), name: String::new(), arguments: String::new() });
        let pos = self.calls.len() - 1;
        self.slots.retain(|(i, _)| *i != index);
        self.slots.push((index, pos));
        pos
    }

    /// Calls whose id and name are known so far (arguments may still be
    /// coming), in the order the model began them, up to the first whose
    /// id or name is still missing: announced in this order, steps keep it.
    pub fn started(&self) -> impl Iterator<Item = (&str, &str)> {
        self.calls.iter().take_while(|c| !c.id.is_empty() && !c.name.is_empty()).map(|c| (c.id.as_str(), c.name.as_str()))
    }

    /// The name of the call `id` and the size of its arguments so far.
    pub fn arguments_of(&self, id: &str) -> Option<(&str, usize)> {
        self.calls.iter().find(|c| c.id == id).map(|c| (c.name.as_str(), c.arguments.len()))
    }

    /// The size of the longest arguments so far, in bytes.
    pub fn largest_arguments(&self) -> usize {
        self.calls.iter().map(|c| c.arguments.len()).max().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The calls in the order they were opened. A call without an id gets one
    /// (every call must be answered by id); empty arguments mean `{}`.
    pub fn finish(self) -> Vec<AssembledCall> {
        self.calls
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                if c.id.is_empty() {
                    c.id = format!("call_{i}");
                }
                if c.arguments.trim().is_empty() {
                    c.arguments = "{}".into();
                }
                c
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str, args: &str) -> AssembledCall {
        AssembledCall { id: id.into(), name: name.into(), arguments: args.into() }
    }

    #[test]
    fn arguments_split_over_many_chunks() {
        let mut a = ToolCallAssembler::new();
        a.push(0, Some("call_a"), Some("load_skill"), Some(""));
        for piece in ["{\"", "sk", "ill\"", ":\"fill", "-blanks\"}"] {
            a.push(0, None, None, Some(piece));
        }
        assert_eq!(a.finish(), vec![call("call_a", "load_skill", r#"{"skill":"fill-blanks"}"#)]);
    }

    #[test]
    fn one_character_pieces() {
        let mut a = ToolCallAssembler::new();
        a.push(0, Some("c"), Some("load_skill"), None);
        for ch in r#"{"skill":"true-false"}"#.chars() {
            a.push(0, None, None, Some(&ch.to_string()));
        }
        assert_eq!(a.finish()[0].arguments, r#"{"skill":"true-false"}"#);
    }

    #[test]
    fn several_calls_interleaved_by_index() {
        let mut a = ToolCallAssembler::new();
        a.push(0, Some("c0"), Some("load_skill"), Some("{\"skill\":"));
        a.push(1, Some("c1"), Some("load_skill"), Some("{\"skill\":"));
        a.push(1, None, None, Some("\"sequencing\"}"));
        a.push(0, None, None, Some("\"fill-blanks\"}"));
        assert_eq!(
            a.finish(),
            vec![
                call("c0", "load_skill", r#"{"skill":"fill-blanks"}"#),
                call("c1", "load_skill", r#"{"skill":"sequencing"}"#)
            ]
        );
    }

    #[test]
    fn a_whole_call_in_one_chunk() {
        let mut a = ToolCallAssembler::new();
        a.push(0, Some("c0"), Some("edit_document"), Some(r#"{"documentXml":"<lesson/>","summary":"x"}"#));
        assert_eq!(a.finish(), vec![call("c0", "edit_document", r#"{"documentXml":"<lesson/>","summary":"x"}"#)]);
    }

    #[test]
    fn calls_that_reuse_index_zero_are_told_apart_by_id() {
        let mut a = ToolCallAssembler::new();
        a.push(0, Some("c0"), Some("load_skill"), Some(r#"{"skill":"a"}"#));
        a.push(0, Some("c1"), Some("load_skill"), Some(r#"{"skill":"b"}"#));
        let calls = a.finish();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1], call("c1", "load_skill", r#"{"skill":"b"}"#));
    }

    #[test]
    fn a_repeated_id_is_the_same_call() {
        let mut a = ToolCallAssembler::new();
        a.push(0, Some("c0"), Some("load_skill"), Some("{\"skill\""));
        a.push(0, Some("c0"), None, Some(":\"x\"}"));
        assert_eq!(a.finish(), vec![call("c0", "load_skill", r#"{"skill":"x"}"#)]);
    }

    #[test]
    fn missing_ids_and_empty_arguments_are_filled_in() {
        let mut a = ToolCallAssembler::new();
        a.push(0, None, Some("load_skill"), None);
        assert_eq!(a.finish(), vec![call("call_0", "load_skill", "{}")]);
        assert!(ToolCallAssembler::new().is_empty());
    }
}
