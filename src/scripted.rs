//! The scripted LLM: a real OpenAI-compatible chat-completions server on
//! 127.0.0.1 that streams replies in OpenAI's exact format (role chunk, content
//! pieces, tool-call deltas, finish reason, usage chunk, `[DONE]`). What it
//! says is chosen from the last user message (`scenarios`), so tests, the
//! end-to-end suite and the offline demo get the same replies every time.
//!
//! It is the only stand-in in Margin: everything between it and the teacher is
//! the real code.

mod scenarios;

use std::{
    sync::{
        atomic::{AtomicU32, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use axum::{
    body::{Body, Bytes},
    extract::State,
    http::{header, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use serde_json::{json, Value};

pub use scenarios::{Step, PLAIN_SENTENCES, SPANISH_SENTENCES};

/// A running scripted server.
pub struct ScriptedLlm {
    /// Base URL to give an OpenAI client, e.g. `http://127.0.0.1:43111/v1`.
    pub base_url: String,
    state: Arc<ScriptState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the server remembers: every request (for tests to inspect) and the
/// counters of the scenarios that fail a set number of times.
#[derive(Default)]
pub struct ScriptState {
    requests: Mutex<Vec<Value>>,
    /// `provider error`: requests still to fail with 503.
    pub(crate) unavailable_left: AtomicU32,
    /// `rate limit`: requests still to answer 429 with Retry-After.
    pub(crate) rate_limited_left: AtomicU32,
    chunk_ids: AtomicU32,
    /// The inference server it stands in for, with its window (`serve_as`).
    serves_as: Mutex<Option<ServesAs>>,
}

/// An inference server whose model reads a small window, as the scripted
/// model plays it: it says its window where that server says it, and
/// refuses a request too long for it with that server's own words and body.
#[derive(Clone, Copy, Debug)]
pub enum ServesAs {
    /// llama.cpp's `llama-server`: `GET /props`; refuses a prompt longer
    /// than the window (a reply that would pass it is cut).
    LlamaCpp { n_ctx: u32 },
    /// vLLM: `GET /v1/models` with `max_model_len`; refuses a request
    /// whose prompt and `max_tokens` together pass it.
    Vllm { max_model_len: u32 },
}

impl ScriptedLlm {
    /// Starts the server on a free loopback port.
    pub async fn start() -> std::io::Result<Self> {
        let state = Arc::new(ScriptState {
            // Enough to outlast async-openai's three retries, once.
            unavailable_left: AtomicU32::new(4),
            rate_limited_left: AtomicU32::new(1),
            ..ScriptState::default()
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = router(state.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(crate::net::no_delay(listener), app.into_make_service()).await {
                tracing::error!(error = %e, "the scripted model stopped");
            }
        });
        Ok(Self { base_url: format!("http://{addr}/v1"), state, task })
    }

    /// Plays `server` from now on.
    pub fn serve_as(&self, server: ServesAs) {
        if let Ok(mut s) = self.state.serves_as.lock() {
            *s = Some(server);
        }
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.state.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

pub fn router(state: Arc<ScriptState>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(completions))
        .route("/chat/completions", post(completions))
        .route("/props", get(props))
        .route("/v1/models", get(models))
        .with_state(state)
}

fn serves_as(state: &ScriptState) -> Option<ServesAs> {
    state.serves_as.lock().ok().and_then(|s| *s)
}

/// llama.cpp's `/props`, the part Margin reads.
async fn props(State(state): State<Arc<ScriptState>>) -> Response {
    match serves_as(&state) {
        Some(ServesAs::LlamaCpp { n_ctx }) => Json(json!({ "default_generation_settings": { "n_ctx": n_ctx }, "total_slots": 1 })).into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The model list: vLLM's gives each model's window.
async fn models(State(state): State<Arc<ScriptState>>) -> Response {
    let mut card = json!({ "id": "margin-demo", "object": "model", "owned_by": "margin" });
    match serves_as(&state) {
        Some(ServesAs::Vllm { max_model_len }) => card["max_model_len"] = json!(max_model_len),
        // llama.cpp lists the window the model was trained with, not the one it runs with.
        Some(ServesAs::LlamaCpp { .. }) => card["meta"] = json!({ "n_ctx_train": 131_072 }),
        None => {}
    }
    Json(json!({ "object": "list", "data": [card] })).into_response()
}

/// The refusal of a request too long for the window, as that server words it.
fn too_long(server: ServesAs, body: &Value) -> Option<Response> {
    let prompt = (body.get("messages").map(|m| m.to_string().len()).unwrap_or(0) + body.get("tools").map(|t| t.to_string().len()).unwrap_or(0)) as u32 / 4;
    let cap = body.get("max_tokens").or_else(|| body.get("max_completion_tokens")).and_then(Value::as_u64).unwrap_or(0) as u32;
    let refusal = match server {
        ServesAs::LlamaCpp { n_ctx } if prompt >= n_ctx => json!({ "error": {
            "code": 400,
            "message": format!("request ({prompt} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it"),
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": n_ctx,
        } }),
        ServesAs::Vllm { max_model_len } if prompt + cap > max_model_len => json!({
            "object": "error",
            "message": format!("This model's maximum context length is {max_model_len} tokens. However, you requested {} tokens ({prompt} in the messages, {cap} in the completion). Please reduce the length of the messages or completion.", prompt + cap),
            "type": "BadRequestError",
            "param": null,
            "code": 400,
        }),
        _ => return None,
    };
    Some((StatusCode::BAD_REQUEST, Json(refusal)).into_response())
}

async fn completions(State(state): State<Arc<ScriptState>>, Json(body): Json<Value>) -> Response {
    if let Ok(mut r) = state.requests.lock() {
        r.push(body.clone());
    }
    if let Some(refused) = serves_as(&state).and_then(|server| too_long(server, &body)) {
        return refused;
    }
    let step = scenarios::decide(&body, &state);
    let include_usage = body.pointer("/stream_options/include_usage").and_then(Value::as_bool).unwrap_or(false);
    let id = format!("chatcmpl-margin-{}", state.chunk_ids.fetch_add(1, Ordering::Relaxed));
    let model = body.get("model").and_then(Value::as_str).unwrap_or("margin-demo").to_string();
    let prompt_tokens = (body.get("messages").map(|m| m.to_string().len()).unwrap_or(0) / 4) as u32;
    let wire = Wire { id, model, include_usage, prompt_tokens };
    match step {
        Step::Fail { status, retry_after, code, message } => {
            let mut res = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                Json(json!({ "error": { "message": message, "type": error_type(status, code), "param": null, "code": code } })),
            )
                .into_response();
            if let Some(secs) = retry_after {
                res.headers_mut().insert(header::RETRY_AFTER, secs.into());
            }
            res
        }
        Step::Silent => {
            // Accept, then never answer (the client is expected to give up first).
            tokio::time::sleep(Duration::from_secs(120)).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        other => sse(wire.frames(other)),
    }
}

/// The `type` OpenAI gives each kind of error.
fn error_type(status: u16, code: Option<&str>) -> &'static str {
    match (status, code) {
        (429, Some("insufficient_quota")) => "insufficient_quota",
        (429, _) => "requests",
        (400..=499, _) => "invalid_request_error",
        _ => "server_error",
    }
}

/// One piece of the response body.
enum Frame {
    Data { text: String, delay_ms: u64 },
    /// Wait, then cut the connection (the client is expected to leave first).
    Hold(Duration),
    /// Cut the connection now, mid-reply.
    Abort,
}

fn sse(frames: Vec<Frame>) -> Response {
    use futures::StreamExt;
    let stream = futures::stream::iter(frames).then(|frame| async move {
        match frame {
            Frame::Data { text, delay_ms } => {
                if delay_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                }
                Ok(Bytes::from(text))
            }
            Frame::Hold(d) => {
                tokio::time::sleep(d).await;
                Err(std::io::Error::other("scripted hold ended"))
            }
            Frame::Abort => {
                // Let the server flush what was written (it does so while the
                // body is pending), so the client really sees a reply that breaks off.
                tokio::time::sleep(Duration::from_millis(20)).await;
                Err(std::io::Error::other("scripted connection drop"))
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Writes chunks in OpenAI's streaming format.
struct Wire {
    id: String,
    model: String,
    include_usage: bool,
    prompt_tokens: u32,
}

impl Wire {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> String {
        format!("data: {}\n\n", self.chunk_json(delta, finish))
    }

    /// Token counts with `completion` tokens written so far.
    fn usage(&self, completion: u32) -> Value {
        json!({ "prompt_tokens": self.prompt_tokens, "completion_tokens": completion, "total_tokens": self.prompt_tokens + completion })
    }

    fn chunk_json(&self, delta: Value, finish: Option<&str>) -> Value {
        let mut c = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1_767_225_600,
            "model": self.model,
            "system_fingerprint": "fp_margin_scripted",
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        });
        if self.include_usage {
            c["usage"] = Value::Null;
        }
        c
    }

    fn tail(&self, completion_chars: usize) -> Vec<Frame> {
        let mut out = Vec::new();
        if self.include_usage {
            let completion = (completion_chars / 4) as u32;
            let mut c = self.chunk_json(json!({}), None);
            c["choices"] = json!([]);
            c["usage"] = self.usage(completion);
            out.push(data(format!("data: {c}\n\n")));
        }
        out.push(data("data: [DONE]\n\n".into()));
        out
    }

    fn text_frames(&self, text: &str, piece: usize, delay_ms: u64) -> Vec<Frame> {
        pieces(text, piece)
            .into_iter()
            .map(|p| Frame::Data { text: self.chunk(json!({ "content": p }), None), delay_ms })
            .collect()
    }

    fn frames(&self, step: Step) -> Vec<Frame> {
        let mut out = vec![data(self.chunk(json!({ "role": "assistant", "content": "" }), None))];
        match step {
            Step::Text { text, piece, delay_ms } => {
                out.extend(self.text_frames(&text, piece, delay_ms));
                out.push(data(self.chunk(json!({}), Some("stop"))));
                out.extend(self.tail(text.len()));
            }
            Step::Calls { text_before, calls, piece, interleave, whole, finish, delay_ms } => {
                if let Some(t) = &text_before {
                    out.extend(self.text_frames(t, 8, 0));
                }
                let mut size = text_before.map(|t| t.len()).unwrap_or(0);
                if whole {
                    // Ollama style: every call complete in one chunk.
                    let list: Vec<Value> = calls
                        .iter()
                        .enumerate()
                        .map(|(i, c)| json!({ "index": i, "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.args } }))
                        .collect();
                    out.push(data(self.chunk(json!({ "tool_calls": list }), None)));
                } else {
                    for (i, c) in calls.iter().enumerate() {
                        out.push(data(self.chunk(
                            json!({ "tool_calls": [{ "index": i, "id": c.id, "type": "function", "function": { "name": c.name, "arguments": "" } }] }),
                            None,
                        )));
                    }
                    let split: Vec<Vec<String>> = calls.iter().map(|c| pieces(&c.args, piece)).collect();
                    if interleave {
                        let longest = split.iter().map(Vec::len).max().unwrap_or(0);
                        for k in 0..longest {
                            for (i, parts) in split.iter().enumerate() {
                                if let Some(p) = parts.get(k) {
                                    out.push(data(self.arg_chunk(i, p)));
                                }
                            }
                        }
                    } else {
                        for (i, parts) in split.iter().enumerate() {
                            for p in parts {
                                out.push(Frame::Data { text: self.arg_chunk(i, p), delay_ms });
                            }
                        }
                    }
                }
                size += calls.iter().map(|c| c.args.len()).sum::<usize>();
                if let Some(f) = finish {
                    out.push(data(self.chunk(json!({}), Some(f))));
                }
                out.extend(self.tail(size));
            }
            Step::Drop { text } => {
                out.extend(self.text_frames(&text, 6, 0));
                out.push(Frame::Abort);
            }
            Step::Malformed { text } => {
                out.extend(self.text_frames(&text, 6, 0));
                out.push(data("data: {\"id\": \"broken\", \"choices\": [ {\"delta\": \n\n".into()));
                out.extend(self.tail(text.len()));
            }
            Step::Hold { text } => {
                out.extend(self.text_frames(&text, 6, 0));
                out.push(Frame::Hold(Duration::from_secs(120)));
            }
            Step::HoldCall { call: c } => {
                out.push(data(self.chunk(
                    json!({ "tool_calls": [{ "index": 0, "id": c.id, "type": "function", "function": { "name": c.name, "arguments": "" } }] }),
                    None,
                )));
                let half: String = c.args.chars().take(c.args.chars().count() / 2).collect();
                // Paced as a model writing a long edit, so the reader sees
                // its progress change (every 1 KB) for a few seconds.
                out.extend(pieces(&half, 64).iter().map(|p| Frame::Data { text: self.arg_chunk(0, p), delay_ms: 60 }));
                out.push(Frame::Hold(Duration::from_secs(120)));
            }
            Step::EndEarly { text, call } => {
                out.extend(self.text_frames(&text, 6, 0));
                if let Some(c) = call {
                    out.push(data(self.chunk(
                        json!({ "tool_calls": [{ "index": 0, "id": c.id, "type": "function", "function": { "name": c.name, "arguments": "" } }] }),
                        None,
                    )));
                    let half: String = c.args.chars().take(c.args.chars().count() / 2).collect();
                    out.extend(pieces(&half, 8).iter().map(|p| data(self.arg_chunk(0, p))));
                }
                // Then the body simply ends: no finish reason, no usage, no [DONE].
            }
            Step::ErrorMidStream { text, error } => {
                out.extend(self.text_frames(&text, 6, 0));
                out.push(data(format!("data: {}\n\n", json!({ "error": error }))));
            }
            Step::RepeatedUsage { text } => {
                let parts = pieces(&text, 4);
                for (i, p) in parts.iter().enumerate() {
                    let mut c = self.chunk_json(json!({ "content": p }), None);
                    c["usage"] = self.usage((i + 1) as u32);
                    out.push(data(format!("data: {c}\n\n")));
                }
                out.push(data(self.chunk(json!({}), Some("stop"))));
                out.extend(self.tail(parts.len() * 4));
            }
            Step::Reasoned { reasoning, then } => {
                let mut rest = self.frames(*then);
                let thoughts = pieces(&reasoning, 7).into_iter().map(|p| data(self.chunk(json!({ "reasoning_content": p }), None)));
                let tail = rest.split_off(1.min(rest.len()));
                out = rest;
                out.extend(thoughts);
                out.extend(tail);
            }
            Step::Fail { .. } | Step::Silent => {}
        }
        out
    }

    fn arg_chunk(&self, index: usize, piece: &str) -> String {
        self.chunk(json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] }), None)
    }
}

fn data(text: String) -> Frame {
    Frame::Data { text, delay_ms: 0 }
}

/// Splits text into pieces of `n` characters (never inside a character).
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}
