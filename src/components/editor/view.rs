//! The editor drawn: each block with its tools, the save state, offers of
//! others' changes, and the keys.

use leptos::{ev, prelude::*};

use crate::components::client_view::{ClientView, IntoClientView};
use super::{exercise::exercise_view, surface, Editor, NewBlock, SaveState};
use crate::{
    components::lesson_state::LessonState,
    lesson::{
        blocks::{Block, TextKind},
    },
};

/// The lesson, editable. Shown while `LessonState::editing`; what it holds
/// (and anything unsaved) is kept while another tab is open.
#[component]
pub fn LessonEditor() -> impl IntoView {
    let state = expect_context::<LessonState>();
    let ed = Editor::new(state);
    // Versions saved elsewhere (or by the XML tab, Restore, Undo) come in
    // around what the teacher is typing.
    Effect::new(move |_| {
        let revision = state.revision.get();
        if revision > ed.base.with_value(|(r, _)| *r) {
            ed.arrive(revision, &state.xml.get_untracked());
        }
    });
    // Leaving the Lesson tab sends what is typed at once.
    Effect::new(move |_| {
        if !state.editing.get() {
            ed.send();
        }
    });
    warn_before_leaving(ed);
    // The exercises' part comes now that the editor is here, not with the
    // first exercise drawn: fetched then, it would keep an exercise the
    // assistant just wrote (or the teacher just added) off the page, and
    // its fields out of reach of the caret, for as long as it loads.
    Effect::new(|_| super::exercise::preload());
    state.editor_ready.set(true);
    // Drawn only while it shows, so that the page holds one drawing of the
    // lesson at a time; what it holds lives on in `ed`.
    move || state.editing.get().then(|| view! {
        <article class="lesson-view editor" aria-label="Lesson" on:keydown=move |ev| history_keys(ed, ev)
            on:focusin=move |ev| note_block(ed.focused, &ev) on:pointerover=move |ev| note_block(ed.pointed, &ev)>
            <SaveLine ed=ed/>
            // The lesson's reading level and standards, as the server measured them.
            <div class="lesson-head" inner_html=move || state.html.with(|h| head_of(&h.teacher).to_string())></div>
            <Offers ed=ed/>
            <For each=move || ed.blocks.get() key=|b| b.key let:b>
                <BlockView ed=ed key=b.key block=b.block/>
            </For>
            {move || ed.blocks.with(Vec::is_empty).then(|| view! {
                <button type="button" class="quiet" on:click=move |_| ed.insert(0, NewBlock::Text(TextKind::P), false)>"Start writing"</button>
            })}
            {move || ed.notice.with(|n| (!n.is_empty()).then(|| view! { <p class="muted" role="status">{n.clone()}</p> }))}
        </article>
    })
}

/// The lines the server writes above the teacher's lesson (its reading
/// level, its standards: `lesson::render_both`), already escaped there.
fn head_of(teacher: &str) -> &str {
    let mut end = 0;
    for class in ["<p class=\"reading-level\"", "<p class=\"standards\""] {
        if teacher[end..].starts_with(class) {
            match teacher[end..].find("</p>") {
                Some(i) => end += i + "</p>".len(),
                None => break,
            }
        }
    }
    &teacher[..end]
}

/// "Saving…", "Saved", or what went wrong.
#[component]
fn SaveLine(ed: Editor) -> impl IntoView {
    view! {
        <p class="save-state" role="status" aria-live="polite">
            {move || match ed.status.get() {
                SaveState::Saved if ed.problems.with(|p| !p.is_empty()) => view! {
                    <span class="form-error">"Saved, except an exercise with a problem marked below: it stays here as you wrote it and is saved once it is right."</span>
                }.into_client_view(),
                SaveState::Saved => view! { <span class="muted">"Saved"</span> }.into_client_view(),
                SaveState::Saving => view! { <span class="muted">"Saving…"</span> }.into_client_view(),
                SaveState::Retrying(why) => view! { <span class="form-error">{format!("Not saved yet: {why} Your text is kept; trying again.")}</span> }.into_client_view(),
                SaveState::Refused(why) => view! { <span class="form-error">{format!("Not saved: {why} Your text is kept.")}</span> }.into_client_view(),
            }}
        </p>
    }
}

/// Changes others made to blocks the teacher was changing.
#[component]
fn Offers(ed: Editor) -> impl IntoView {
    view! {
        <For each=move || ed.offers.get() key=|b| b.id().to_string() let:b>
            {
                let id = b.id().to_string();
                let (take, keep) = (id.clone(), id.clone());
                view! {
                    <div class="offer" role="group" aria-label="A change made elsewhere">
                        <p>{format!("This {} was changed elsewhere while you were writing in it:", b.label().to_lowercase())}</p>
                        <blockquote>{b.to_element().text()}</blockquote>
                        <button type="button" on:click=move |_| ed.take_offer(&take)>"Use that version"</button>
                        <button type="button" class="quiet" on:click=move |_| ed.keep_mine(&keep)>"Keep mine"</button>
                    </div>
                }
            }
        </For>
    }
}

/// One block and its tools.
#[component]
fn BlockView(ed: Editor, key: u64, block: Block) -> impl IntoView {
    let label = block.label();
    let id = block.id().to_string();
    let body = match &block {
        Block::Text { kind, runs, .. } => {
            let kind = *kind;
            let placeholder = match kind {
                TextKind::P => "Write here, or type / to add a heading, a note or a writing area",
                TextKind::Note => "A note only you see",
                _ => "Heading",
            };
            let html = surface::html_of(runs);
            // Headings stay headings (named by their text); paragraphs and
            // notes are text boxes named for what they are.
            macro_rules! editable {
                ($tag:ident $($attrs:tt)*) => {
                    view! {
                        <$tag class=format!("block-text {}", kind.tag()) contenteditable="true" $($attrs)*
                            data-placeholder=placeholder spellcheck="true" inner_html=html
                            on:input=move |ev| typed(ed, key, &ev)
                            on:keydown=move |ev| keys(ed, key, kind, ev)
                            on:paste=move |ev| pasted(ed, key, ev)
                            on:drop=|ev: ev::DragEvent| ev.prevent_default()></$tag>
                    }
                    .into_client_view()
                };
            }
            match kind {
                TextKind::H1 => editable!(h1),
                TextKind::H2 => editable!(h2),
                TextKind::H3 => editable!(h3),
                TextKind::P => editable!(p role="textbox" aria-label=label),
                TextKind::Note => editable!(div role="textbox" aria-label=label),
            }
        }
        // An exercise's fields are a part of the bundle of their own, asked
        // for once the editor is up (then drawn at once, as text is).
        Block::Other(e) => Suspend::new(exercise_view(ed, key, e.clone())).into_client_view(),
    };
    let text_kind = match &block {
        Block::Text { kind, .. } => Some(*kind),
        Block::Other(_) => None,
    };
    // The tools are drawn while the block has the caret or the pointer
    // (`Editor::focused`, `Editor::pointed`); the style shows them then too.
    let tools_here = Memo::new(move |_| ed.focused.get() == Some(key) || ed.pointed.get() == Some(key));
    let tools = move || tools_here.get().then(|| block_tools(ed, key, label, text_kind));
    view! {
        <div class="block" data-key=key data-id=id data-exercise=text_kind.is_none().then_some("")>
            {body}
            {tools}
        </div>
    }
}

/// A block's tools: its type (text blocks), moving, removing, adding below.
fn block_tools(ed: Editor, key: u64, label: &'static str, text_kind: Option<TextKind>) -> ClientView {
    let kind_pick = text_kind.map(|now| {
        view! {
            <select aria-label=format!("Type of this {}", label.to_lowercase()) on:change=move |ev| {
                let v = event_target_value(&ev);
                match super::NewBlock::from_value(&v) {
                    Some(NewBlock::Text(kind)) => ed.convert(key, kind),
                    Some(other) => ed.insert(key, other, true),
                    None => {}
                }
            }>
                {NewBlock::ALL.into_iter().map(|n| view! { <option value=n.value() selected=n == NewBlock::Text(now)>{n.label()}</option> }).collect_view()}
            </select>
        }
    });
    view! {
        <div class="block-tools" role="group" aria-label=format!("{label} tools")>
            {kind_pick}
            <button type="button" aria-label="Move up" title="Move up (Alt+↑)" on:click=move |_| ed.shift(key, -1, 0)>"↑"</button>
            <button type="button" aria-label="Move down" title="Move down (Alt+↓)" on:click=move |_| ed.shift(key, 1, 0)>"↓"</button>
            <button type="button" aria-label=format!("Remove this {}", label.to_lowercase()) title="Remove (Ctrl+Z takes it back)" on:click=move |_| ed.delete(key)>"✕"</button>
            <select aria-label="Add a block below" on:change=move |ev| {
                if let Some(n) = NewBlock::from_value(&event_target_value(&ev)) {
                    ed.insert(key, n, false);
                }
            }>
                <option value="" selected>"+ Add below"</option>
                {NewBlock::ALL.into_iter().map(|n| view! { <option value=n.value()>{n.label()}</option> }).collect_view()}
            </select>
        </div>
    }
    .into_client_view()
}

/// The block an event happened in becomes `which` (the caret's or the
/// pointer's), so that its tools are drawn.
fn note_block(which: RwSignal<Option<u64>>, ev: &ev::Event) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        let key = ev
            .target()
            .and_then(|t| t.dyn_into::<leptos::web_sys::Element>().ok())
            .and_then(|el| el.closest(".editor .block").ok().flatten())
            .and_then(|b| b.get_attribute("data-key"))
            .and_then(|k| k.parse().ok());
        if key.is_some() && which.get_untracked() != key {
            which.set(key);
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (which, ev);
}

/// The block's element after an input: its runs go to the model.
fn typed(ed: Editor, key: u64, ev: &ev::Event) {
    #[cfg(feature = "hydrate")]
    {
        let el: leptos::web_sys::HtmlElement = event_target(ev);
        let runs = surface::runs_of(&el);
        // An emptied block holds nothing (not the browser's stray <br>), so
        // its hint shows.
        if runs.is_empty() && el.child_nodes().length() > 0 {
            el.set_inner_html("");
        }
        ed.typed(key, runs);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (ed, key, ev);
}

/// The editor's keys in a text block.
fn keys(ed: Editor, key: u64, kind: TextKind, ev: ev::KeyboardEvent) {
    #[cfg(feature = "hydrate")]
    {
        let k = ev.key();
        let ctrl = ev.ctrl_key() || ev.meta_key();
        // Typing needs nothing from here: only these keys look at the caret.
        if k.chars().count() == 1 && !ctrl && !ev.alt_key() && k != "/" {
            return;
        }
        let el: leptos::web_sys::HtmlElement = event_target(&ev);
        let caret = surface::caret(&el);
        let at = caret.map_or(0, |c| c.0);
        let collapsed = caret.is_some_and(|(a, b)| a == b);
        let handled = match (k.as_str(), ctrl, ev.shift_key(), ev.alt_key()) {
            ("Enter", false, _, false) => {
                let (start, end) = caret.unwrap_or((at, at));
                ed.split(key, start, end);
                true
            }
            ("Backspace", false, false, false) if collapsed && at == 0 => {
                if kind != TextKind::P && surface::runs_of(&el).is_empty() {
                    ed.convert(key, TextKind::P);
                } else {
                    ed.join_previous(key);
                }
                true
            }
            ("b" | "B", true, false, false) => {
                surface::toggle("bold");
                true
            }
            ("i" | "I", true, false, false) => {
                surface::toggle("italic");
                true
            }
            // Underline is not in the format.
            ("u" | "U", true, false, false) => true,
            ("ArrowUp", false, false, true) => {
                ed.shift(key, -1, at);
                true
            }
            ("ArrowDown", false, false, true) => {
                ed.shift(key, 1, at);
                true
            }
            (digit @ ("0" | "1" | "2" | "3"), true, false, true) => {
                ed.convert(key, match digit {
                    "1" => TextKind::H1,
                    "2" => TextKind::H2,
                    "3" => TextKind::H3,
                    _ => TextKind::P,
                });
                true
            }
            ("/", false, _, false) if surface::runs_of(&el).is_empty() => {
                // The block's type list, open: any block can be chosen by keyboard.
                if let Some(select) = el.parent_element().and_then(|p| p.query_selector(".block-tools select").ok().flatten()) {
                    use leptos::wasm_bindgen::JsCast;
                    if let Ok(select) = select.dyn_into::<leptos::web_sys::HtmlElement>() {
                        let _ = select.focus();
                        let _ = leptos::web_sys::js_sys::Reflect::get(&select, &"showPicker".into())
                            .ok()
                            .and_then(|f| f.dyn_into::<leptos::web_sys::js_sys::Function>().ok())
                            .map(|f| f.call0(&select));
                    }
                }
                true
            }
            ("ArrowUp", false, false, false) if collapsed && at == 0 => move_to(key, -1),
            ("ArrowDown", false, false, false) if collapsed && at == surface::runs_of(&el).iter().map(|r| r.text.encode_utf16().count()).sum::<usize>() => move_to(key, 1),
            _ => false,
        };
        if handled {
            ev.prevent_default();
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (ed, key, kind, ev);
}

/// Ctrl+Z and Ctrl+Shift+Z (or Ctrl+Y) anywhere in the editor: the
/// teacher's own steps, apart from Undo of an assistant's edit.
fn history_keys(ed: Editor, ev: ev::KeyboardEvent) {
    if !(ev.ctrl_key() || ev.meta_key()) || ev.alt_key() {
        return;
    }
    match (ev.key().as_str(), ev.shift_key()) {
        ("z" | "Z", false) => ed.undo(),
        ("z" | "Z", true) | ("y" | "Y", false) => ed.redo(),
        _ => return,
    }
    ev.prevent_default();
}

/// The caret to the text block before (`-1`) or after (`1`) the block `key`.
#[cfg(feature = "hydrate")]
fn move_to(key: u64, by: i32) -> bool {
    use leptos::wasm_bindgen::JsCast;
    let all = document().query_selector_all(".editor .block-text").ok();
    let Some(all) = all else { return false };
    let items: Vec<leptos::web_sys::HtmlElement> = (0..all.length()).filter_map(|i| all.item(i)).filter_map(|n| n.dyn_into().ok()).collect();
    let here = items.iter().position(|e| e.closest(&format!("[data-key=\"{key}\"]")).ok().flatten().is_some());
    let Some(next) = here.and_then(|i| i.checked_add_signed(by as isize)).and_then(|j| items.get(j)) else { return false };
    let at = if by < 0 { usize::MAX } else { 0 };
    surface::place_caret(next, at);
    true
}

/// A paste: the clipboard's HTML (or text) as blocks, never as markup.
fn pasted(ed: Editor, key: u64, ev: ev::ClipboardEvent) {
    ev.prevent_default();
    #[cfg(feature = "hydrate")]
    {
        let Some(data) = ev.clipboard_data() else { return };
        let html = data.get_data("text/html").unwrap_or_default();
        let made = match (!html.is_empty()).then(|| super::paste::read_html(&html)).flatten() {
            Some(tree) => super::paste::from_html(&tree),
            None => super::paste::from_text(&data.get_data("text/plain").unwrap_or_default()),
        };
        ed.notice.set(made.left_out.clone());
        match made.blocks.as_slice() {
            [] => {}
            // One paragraph's worth goes in at the caret, as typing would.
            [(TextKind::P, runs)] if runs.iter().all(|r| !r.bold && !r.italic) => {
                surface::insert_text(&runs.iter().map(|r| r.text.as_str()).collect::<String>());
            }
            _ => {
                let el: leptos::web_sys::HtmlElement = event_target(&ev);
                let (start, end) = surface::caret(&el).unwrap_or((0, 0));
                ed.paste_blocks(key, start, end, made.blocks);
            }
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (ed, key);
}

impl Editor {
    /// Pasted blocks go in at the selection `start..end` of the block `key`
    /// (`model::paste`).
    pub fn paste_blocks(&self, key: u64, start: usize, end: usize, pasted: Vec<(TextKind, Vec<crate::lesson::blocks::Run>)>) {
        self.reshape(|ed, list, n| {
            let i = list.iter().position(|b| b.key == key)?;
            super::model::paste(list, i, (start, end), pasted, n, || ed.key())
        });
    }
}

/// The browser asks before the page is closed or reloaded with typing the
/// server has not confirmed.
fn warn_before_leaving(ed: Editor) {
    #[cfg(feature = "hydrate")]
    {
        let handle = window_event_listener(ev::beforeunload, move |ev| {
            if ed.unsaved() || ed.held() {
                ed.send();
                ev.prevent_default();
                ev.set_return_value("Your latest changes are still being saved.");
            }
        });
        on_cleanup(move || handle.remove());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = ed;
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_head_is_the_servers_lines_above_the_blocks() {
        let html = crate::lesson::render_both(r#"<lesson standards="RL.4.1"><h1 id="h">T</h1></lesson>"#).teacher;
        assert_eq!(super::head_of(&html), r#"<p class="standards">Standards: RL.4.1</p>"#);
        assert_eq!(super::head_of(r#"<h1 data-id="h">T</h1>"#), "");
    }
}
