//! Reading a provider's server-sent events, with the clock running.
//!
//! Written here rather than taken from `eventsource-stream` (which
//! async-openai uses) because Margin needs three things that reader hides:
//! every byte counts as a sign of life for the timeouts, including the
//! comment lines some providers send while the model thinks; the `[DONE]`
//! marker is seen, so a stream that stops without it and without a finish
//! reason reads as the dropped connection it is; and a broken body is an
//! error, never a quiet end.

use std::{future::Future, pin::Pin, task::Poll, time::Duration};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio::time::{Instant, Sleep};

/// Why no more events came.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// No first byte in time.
    NoFirstByte,
    /// Too long a gap between two bytes.
    Idle,
    /// The connection broke.
    Broken(String),
}

type Body = Pin<Box<dyn Stream<Item = Result<Bytes, String>> + Send>>;

pub struct EventReader {
    body: Body,
    buf: Vec<u8>,
    /// Where the unread part of `buf` starts.
    start: usize,
    data: String,
    /// Until the first byte: when to give up waiting for it.
    first_byte_by: Option<Instant>,
    idle: Duration,
    /// The wait for the first byte, then for each next one: one timer for
    /// the whole stream, moved on as bytes come (moving it later is an
    /// atomic store; a new timer per read would be timer-wheel work on every
    /// chunk of every running reply).
    clock: Pin<Box<Sleep>>,
    done: bool,
    ended: bool,
}

impl EventReader {
    pub fn new(body: impl Stream<Item = Result<Bytes, String>> + Send + 'static, first_byte_by: Instant, idle: Duration) -> Self {
        Self {
            body: Box::pin(body),
            buf: Vec::new(),
            start: 0,
            data: String::new(),
            first_byte_by: Some(first_byte_by),
            idle,
            clock: Box::pin(tokio::time::sleep_until(first_byte_by)),
            done: false,
            ended: false,
        }
    }

    /// Whether the stream ended with `[DONE]`.
    pub fn saw_done(&self) -> bool {
        self.done
    }

    /// The data of the next event; `None` once the stream has ended (with
    /// `[DONE]` or by closing cleanly).
    pub async fn next(&mut self) -> Result<Option<String>, ReadError> {
        loop {
            if self.done {
                return Ok(None);
            }
            if let Some(event) = self.take_event() {
                if event.trim() == "[DONE]" {
                    self.done = true;
                    return Ok(None);
                }
                return Ok(Some(event));
            }
            if self.ended {
                // A last event without its blank line still counts.
                let rest = std::mem::take(&mut self.data);
                return Ok((!rest.is_empty() && rest.trim() != "[DONE]").then_some(rest));
            }
            let waiting_for_first = self.first_byte_by.is_some();
            if !waiting_for_first {
                self.clock.as_mut().reset(Instant::now() + self.idle);
            }
            // The body first, as `tokio::time::timeout` does: bytes that are
            // there count even when the clock has run out meanwhile.
            let read = std::future::poll_fn(|cx| match self.body.poll_next_unpin(cx) {
                Poll::Ready(item) => Poll::Ready(Ok(item)),
                Poll::Pending => self.clock.as_mut().poll(cx).map(Err),
            })
            .await;
            match read {
                Err(_) if waiting_for_first => return Err(ReadError::NoFirstByte),
                Err(_) => return Err(ReadError::Idle),
                Ok(None) => {
                    self.ended = true;
                    // A last line without its line break still counts.
                    if self.start < self.buf.len() {
                        self.buf.extend_from_slice(b"\n\n");
                    }
                }
                Ok(Some(Err(e))) => return Err(ReadError::Broken(e)),
                Ok(Some(Ok(bytes))) => {
                    self.first_byte_by = None;
                    if self.start > 0 && self.start == self.buf.len() {
                        self.buf.clear();
                        self.start = 0;
                    }
                    self.buf.extend_from_slice(&bytes);
                }
            }
        }
    }

    /// Reads whole lines from the buffer until an event is complete. Lines
    /// are read in place; only a `data:` value is copied (once, into the
    /// event).
    fn take_event(&mut self) -> Option<String> {
        while let Some(n) = self.buf[self.start..].iter().position(|&b| b == b'\n') {
            let mut line = &self.buf[self.start..self.start + n];
            self.start += n + 1;
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            if line.is_empty() {
                if !self.data.is_empty() {
                    return Some(std::mem::take(&mut self.data));
                }
                continue;
            }
            // Comments (`: keep-alive`) and fields other than `data` are skipped.
            let value = if line == b"data" { Some(&line[4..]) } else { line.strip_prefix(b"data:") };
            if let Some(value) = value {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value.strip_prefix(b" ").unwrap_or(value)));
            }
        }
        // Keep the buffer from growing with what has been read.
        if self.start > 64 * 1024 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(parts: Vec<Result<&'static str, &'static str>>) -> EventReader {
        let body = futures::stream::iter(parts.into_iter().map(|p| p.map(Bytes::from).map_err(str::to_string)));
        EventReader::new(body, Instant::now() + Duration::from_secs(5), Duration::from_secs(5))
    }

    #[tokio::test]
    async fn events_split_anywhere_are_put_back_together() {
        let mut r = reader(vec![Ok(": keep-alive\n\nda"), Ok("ta: {\"a\":1}\r\n\r\ndata: é"), Ok("\n\ndata: [DONE]\n\n"), Ok("data: late\n\n")]);
        assert_eq!(r.next().await, Ok(Some("{\"a\":1}".into())));
        assert_eq!(r.next().await, Ok(Some("é".into())));
        assert_eq!(r.next().await, Ok(None));
        assert!(r.saw_done());
        assert_eq!(r.next().await, Ok(None), "nothing is read after [DONE]");
    }

    #[tokio::test]
    async fn an_end_without_done_is_seen() {
        let mut r = reader(vec![Ok("data: 1\n\n"), Ok("data: 2")]);
        assert_eq!(r.next().await, Ok(Some("1".into())));
        assert_eq!(r.next().await, Ok(Some("2".into())));
        assert_eq!(r.next().await, Ok(None));
        assert!(!r.saw_done());
    }

    #[tokio::test]
    async fn a_broken_body_is_an_error() {
        let mut r = reader(vec![Ok("data: 1\n\n"), Err("reset")]);
        assert_eq!(r.next().await, Ok(Some("1".into())));
        assert_eq!(r.next().await, Err(ReadError::Broken("reset".into())));
    }

    #[tokio::test(start_paused = true)]
    async fn every_byte_moves_the_clock_on() {
        // Each piece within the idle limit of the one before; all of them
        // together far past the first byte's limit and the idle limit.
        let body = futures::stream::iter(0..5).then(|i| async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            Ok(Bytes::from(format!("data: {i}\n\n")))
        });
        let mut r = EventReader::new(body, Instant::now() + Duration::from_secs(2), Duration::from_secs(2));
        for i in 0..5 {
            assert_eq!(r.next().await, Ok(Some(i.to_string())));
        }
        assert_eq!(r.next().await, Ok(None));
    }

    #[tokio::test(start_paused = true)]
    async fn silence_runs_out_the_clock() {
        let body = futures::stream::iter(vec![Ok(Bytes::from("data: 1\n\n"))]).chain(futures::stream::pending());
        let mut r = EventReader::new(body, Instant::now() + Duration::from_secs(30), Duration::from_secs(2));
        assert_eq!(r.next().await, Ok(Some("1".into())));
        assert_eq!(r.next().await, Err(ReadError::Idle));
        let mut silent = EventReader::new(futures::stream::pending(), Instant::now() + Duration::from_secs(30), Duration::from_secs(2));
        assert_eq!(silent.next().await, Err(ReadError::NoFirstByte));
    }
}
