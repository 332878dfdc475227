//! What the model is given each turn: the base prompt, the list of skills, the
//! current lesson (always fresh: the system prompt is written anew for every
//! model call, so a call after an edit sees the edited lesson), then the
//! recent conversation.
//!
//! Earlier turns enter as plain text: what the teacher wrote, and the reply
//! with a one-line account of its steps. Raw tool calls of earlier turns are
//! never replayed (their results, such as loaded skills, are not carried over).

use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessage,
    ChatCompletionRequestAssistantMessageContent, ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestToolMessage, ChatCompletionRequestToolMessageContent,
    ChatCompletionRequestUserMessage, ChatCompletionRequestUserMessageContent, FunctionCall,
};

use super::{assemble::AssembledCall, skills::Skills};

/// An earlier message of the session, as the model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PastMessage {
    User(String),
    /// The reply text followed by its steps line, if it had steps.
    Assistant(String),
}

pub fn system_prompt(base: &str, skills: &Skills, document_xml: &str) -> String {
    let list: Vec<String> = skills.iter().map(|s| format!("- `{}`: {}", s.name, s.description)).collect();
    format!(
        "{}\n\n## Skills you can load\n\n{}\n\n## The lesson as it is now\n\n```xml\n{}\n```\n",
        base.trim(),
        list.join("\n"),
        document_xml.trim()
    )
}

pub fn system(text: String) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage {
        content: ChatCompletionRequestSystemMessageContent::Text(text),
        name: None,
    })
}

pub fn user(text: String) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
        content: ChatCompletionRequestUserMessageContent::Text(text),
        name: None,
    })
}

pub fn assistant(text: String, calls: &[AssembledCall]) -> ChatCompletionRequestMessage {
    let tool_calls: Vec<ChatCompletionMessageToolCalls> = calls
        .iter()
        .map(|c| {
            ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                id: c.id.clone(),
                function: FunctionCall { name: c.name.clone(), arguments: c.arguments.clone() },
            })
        })
        .collect();
    ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
        content: (!text.is_empty()).then_some(ChatCompletionRequestAssistantMessageContent::Text(text)),
        tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
        ..Default::default()
    })
}

pub fn tool_result(call_id: &str, content: String) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
        content: ChatCompletionRequestToolMessageContent::Text(content),
        tool_call_id: call_id.to_string(),
    })
}

/// The conversation for one turn, before any tool round (the system prompt
/// is added to each model call).
pub fn turn_messages(history: &[PastMessage], user_text: &str) -> Vec<ChatCompletionRequestMessage> {
    let mut messages = Vec::with_capacity(history.len() + 1);
    for m in history {
        match m {
            PastMessage::User(t) if !t.trim().is_empty() => messages.push(user(t.clone())),
            PastMessage::Assistant(t) if !t.trim().is_empty() => messages.push(assistant(t.clone(), &[])),
            _ => {}
        }
    }
    messages.push(user(user_text.to_string()));
    messages
}
