//! The stored shape of a step (`ToolCallRecord`), one flat JSON object as it
//! has always been written, read and written here apart from the record.

use serde::{Deserialize, Serialize};

use crate::{
    chat::{
        events::{MadeLesson, ToolArgs, ToolStartData, ToolStatus},
        proposal::ProposalMark,
    },
    lesson::Change,
};

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    id: String,
    tool: String,
    args: ToolArgs,
    display_text: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    round_index: u32,
    status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revision: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    proposal: Option<ProposalMark>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    replies: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    actions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lesson: Option<MadeLesson>,
    #[serde(default, skip_serializing_if = "is_zero")]
    at: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    undone: Option<i64>,
}

impl From<Step> for super::ToolCallRecord {
    fn from(s: Step) -> Self {
        let call = ToolStartData { id: s.id, tool: s.tool, args: s.args, display_text: s.display_text, round_index: s.round_index };
        Self {
            call,
            status: s.status,
            error: s.error,
            summary: s.summary,
            revision: s.revision,
            changes: s.changes,
            proposal: s.proposal,
            output: s.output,
            replies: s.replies,
            actions: s.actions,
            lesson: s.lesson,
            at: s.at,
            undone: s.undone,
            running: false,
        }
    }
}

impl From<super::ToolCallRecord> for Step {
    fn from(r: super::ToolCallRecord) -> Self {
        let ToolStartData { id, tool, args, display_text, round_index } = r.call;
        Self {
            id,
            tool,
            args,
            display_text,
            round_index,
            status: r.status,
            error: r.error,
            summary: r.summary,
            revision: r.revision,
            changes: r.changes,
            proposal: r.proposal,
            output: r.output,
            replies: r.replies,
            actions: r.actions,
            lesson: r.lesson,
            at: r.at,
            undone: r.undone,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
