use super::*;
use crate::{
    chat::{
        events::{ErrorData, ToolStartData, UsageData},
        message::{Attachments, SelectedText},
        proposal::ProposalMark,
        tool_args::ToolArgs,
    },
    lesson::{Change, ChangeKind},
};

fn message(role: Role, content: &str) -> ChatMessage {
    ChatMessage {
        id: "m".into(),
        role,
        content: content.into(),
        reasoning: String::new(),
        tool_calls: Vec::new(),
        document_xml: None,
        status: MessageStatus::Complete,
        error: None,
        model: None,
        usage: UsageData::default(),
        turn_id: None,
        created_at: "2026-11-27T09:14:03Z".into(),
        attachments: None,
        rounds: 1,
    }
}

fn step(display: &str, status: ToolStatus, at: u32) -> ToolCallRecord {
    let mut s = ToolCallRecord::started(ToolStartData { id: "c".into(), tool: "edit_document".into(), args: ToolArgs::empty(), display_text: display.into(), round_index: 0 });
    s.status = status;
    s.error = None;
    s.at = at;
    s
}

fn session() -> ChatSession {
    ChatSession { id: "s".into(), lesson_id: "l".into(), title: "Verbs / \"plan\"".into(), created_at: "2026-11-27T09:00:00Z".into(), updated_at: String::new() }
}

#[test]
fn a_chat_reads_in_order_with_steps_where_they_happened_and_what_became_of_each_change() {
    let mut asked = message(Role::User, "Add an exercise");
    asked.attachments = Some(Attachments { trigger: None, selected_text: Some(SelectedText { text: "Je suis".into(), block_id: "p1".into() }) });
    let mut answer = message(Role::Assistant, "First I look. Then I edit. Done!");
    let mut edit = step("Editing document", ToolStatus::Success, 13);
    edit.summary = Some("Added a quiz".into());
    edit.revision = Some(3);
    edit.changes = vec![Change { kind: ChangeKind::Added, block: Some("e1".into()), text: "Added exercise 1 (Multiple choice, 2 questions)".into() }];
    let mut held = step("Editing document", ToolStatus::Proposed, 27);
    held.proposal = Some(ProposalMark::decided("p", ProposalStatus::Discarded, None, Some("too long".into())));
    answer.tool_calls = vec![step("Loading skill", ToolStatus::Success, 13), edit, held];
    let mut auto = message(Role::User, "This message was not typed by the teacher. Internal instructions.");
    auto.attachments = Some(Attachments { trigger: Some("You added Chapter 5.pdf".into()), selected_text: None });
    let mut failed = message(Role::Assistant, "Let me");
    failed.status = MessageStatus::Error;
    failed.error = Some(ErrorData { code: "provider".into(), message: "The assistant's provider did not answer.".into() });

    let md = markdown(&session(), "Être", &[asked, answer, auto, failed]);
    let expected = "# Verbs / \"plan\"\n\nA chat about the lesson “Être”, started 2026-11-27 09:00.\n\n\
## You · 2026-11-27 09:14\n\n> Je suis\n\nAdd an exercise\n\n\
## Assistant · 2026-11-27 09:14\n\nFirst I look.\n\n- Step: Loading skill (done)\n- Step: Editing document (done). Added a quiz, saved as version 3\n  - Added exercise 1 (Multiple choice, 2 questions)\n\n\
Then I edit.\n\n- Step: Editing document (discarded: “too long”)\n\nDone!\n\n\
## Started by the app · 2026-11-27 09:14\n\nYou added Chapter 5.pdf\n\n\
## Assistant · 2026-11-27 09:14 · ended with an error\n\nLet me\n\n*The assistant's provider did not answer.*\n\n";
    assert_eq!(md, expected);
    assert!(!md.contains("Internal instructions"), "the app's message to the model is not the teacher's");
}

#[test]
fn a_step_past_the_end_of_the_text_or_inside_a_letter_does_not_break_it() {
    let mut m = message(Role::Assistant, "Été");
    m.tool_calls = vec![step("Reading", ToolStatus::Error, 1), step("Again", ToolStatus::Success, 99)];
    let md = markdown(&session(), "", &[m]);
    assert!(md.contains("- Step: Reading (failed)\n\nÉté\n\n- Step: Again (done)"), "{md}");
}

#[test]
fn what_the_teacher_typed_reads_as_typed_once_the_markdown_is_shown() {
    let typed = "Why does the <blank> element need an *answer*?\n# not a heading\n1. not a list\n- nor this\nA & B | C_d `e` [f](g) ~h~ \\i";
    let mut s = session();
    s.title = "The <blank> element & *stars*".into();
    let md = markdown(&s, "Verbs", &[message(Role::User, typed), message(Role::Assistant, "**Bold** stays the model's Markdown.")]);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new(&md));
    assert!(html.contains("<h1>The &lt;blank&gt; element &amp; *stars*</h1>"), "{html}");
    for line in ["Why does the &lt;blank&gt; element need an *answer*?", "# not a heading", "1. not a list", "- nor this", "A &amp; B | C_d `e` [f](g) ~h~ \\i"] {
        assert!(html.contains(line), "{line:?} not shown as typed in {html}");
    }
    assert!(!html.contains("<em>") && !html.contains("<h1>not") && !html.contains("<ol>") && !html.contains("<ul>") && !html.contains("<code>"), "{html}");
    assert!(html.contains("<strong>Bold</strong>"), "the reply's own Markdown is kept: {html}");
}
