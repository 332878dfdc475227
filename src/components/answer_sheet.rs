//! A student's answer sheet saves itself as they type. The sheet is a plain
//! form drawn by the server (`lesson::to_answer_sheet`) that works without
//! this code: "Check answers" and the sequences' "Move up"/"Move down" send
//! it. With this code, the form is sent in the background a moment after
//! each change (`POST /api/learn/lessons/{id}/sheet`), the moves happen in
//! place, and a line under the lesson says where the answers stand.
//!
//! Written against the DOM rather than as a view, like `ask_selection`: one
//! listener on the form, no signals, so it costs the bundle little.
//!
//! Nothing is lost when the connection drops: what could not be saved is
//! tried again every few seconds, and leaving the page while it is unsaved
//! asks first. A save that finds answers changed meanwhile in another tab
//! does not overwrite them (the server keeps the newer ones) and says so.

/// Starts saving the page's answer sheet as it changes (in the browser only).
pub fn autosave(lesson_id: String) {
    #[cfg(feature = "hydrate")]
    listen(lesson_id);
    #[cfg(not(feature = "hydrate"))]
    let _ = lesson_id;
}

#[cfg(feature = "hydrate")]
fn listen(lesson_id: String) {
    use std::rc::Rc;

    use leptos::{
        prelude::document,
        wasm_bindgen::{closure::Closure, JsCast},
        web_sys::{Element, Event, HtmlElement, HtmlFormElement},
    };
    let Some(form) = document().query_selector("form.answer-sheet").ok().flatten().and_then(|f| f.dyn_into::<HtmlFormElement>().ok()) else { return };
    let saver = Rc::new(Saver { form, url: format!("/api/learn/lessons/{lesson_id}/sheet"), state: Default::default() });
    let on_change = {
        let saver = saver.clone();
        Closure::<dyn Fn(Event)>::new(move |ev: Event| {
            let kind = ev.type_();
            if kind == "submit" {
                // The form itself carries every answer now (and "Check answers").
                saver.state.borrow_mut().sent = true;
                return;
            }
            if kind == "click" {
                // "Move up" / "Move down": the item moves in place.
                let Some(button) = ev.target().and_then(|t| t.dyn_into::<Element>().ok()).and_then(|t| t.closest("button.move").ok().flatten()) else { return };
                ev.prevent_default();
                let Some(item) = button.parent_element() else { return };
                let up = button.get_attribute("value").is_some_and(|v| v.starts_with("up"));
                let neighbour = if up { item.previous_element_sibling() } else { item.next_element_sibling() };
                let (Some(neighbour), Some(list)) = (neighbour, item.parent_node()) else { return };
                let _ = if up { list.insert_before(&item, Some(&neighbour)) } else { list.insert_before(&neighbour, Some(&item)) };
                if let Some(b) = button.dyn_ref::<HtmlElement>() {
                    let _ = b.focus();
                }
            }
            Saver::changed(&saver);
        })
    };
    for kind in ["input", "change", "click", "submit"] {
        let _ = saver.form.add_event_listener_with_callback(kind, on_change.as_ref().unchecked_ref());
    }
    on_change.forget();
    // Leaving with answers not yet saved asks first.
    let leaving = {
        let saver = saver.clone();
        Closure::<dyn Fn(Event)>::new(move |ev: Event| {
            if saver.state.borrow().unsaved() {
                ev.prevent_default();
            }
        })
    };
    let _ = leptos::prelude::window().add_event_listener_with_callback("beforeunload", leaving.as_ref().unchecked_ref());
    leaving.forget();
}

#[cfg(feature = "hydrate")]
#[derive(Default)]
struct SaveState {
    /// Changed since the last save began.
    dirty: bool,
    saving: bool,
    /// The form was sent as a page (its answers go with it).
    sent: bool,
    timer: Option<leptos::prelude::TimeoutHandle>,
}

#[cfg(feature = "hydrate")]
impl SaveState {
    fn unsaved(&self) -> bool {
        !self.sent && (self.dirty || self.saving)
    }
}

#[cfg(feature = "hydrate")]
struct Saver {
    form: leptos::web_sys::HtmlFormElement,
    url: String,
    state: std::cell::RefCell<SaveState>,
}

#[cfg(feature = "hydrate")]
impl Saver {
    fn say(&self, text: &str) {
        if let Some(line) = self.form.query_selector(".sheet-status").ok().flatten() {
            line.set_text_content(Some(text));
        }
    }

    /// Something changed: save it shortly (once typing pauses).
    fn changed(this: &std::rc::Rc<Self>) {
        this.state.borrow_mut().dirty = true;
        Self::later(this, 800);
    }

    fn later(this: &std::rc::Rc<Self>, ms: u64) {
        let me = this.clone();
        let handle = leptos::prelude::set_timeout_with_handle(move || Self::save(&me), std::time::Duration::from_millis(ms)).ok();
        if let Some(old) = std::mem::replace(&mut this.state.borrow_mut().timer, handle) {
            old.clear();
        }
    }

    fn save(this: &std::rc::Rc<Self>) {
        {
            let mut s = this.state.borrow_mut();
            if s.saving || !s.dirty {
                return;
            }
            s.saving = true;
            s.dirty = false;
        }
        this.say("Saving…");
        let me = this.clone();
        leptos::task::spawn_local(async move {
            let fields = leptos::web_sys::FormData::new_with_form(&me.form)
                .and_then(|f| leptos::web_sys::UrlSearchParams::new_with_str_sequence_sequence(&f))
                .map(|p| String::from(p.to_string()))
                .unwrap_or_default();
            // URL-encoding leaves nothing a JSON string must escape.
            let body = format!("\"{fields}\"");
            let sent = crate::chat::client::answer_text("POST", &me.url, Some(body)).await;
            let retry = match sent {
                Ok(reply) => {
                    // A hidden input's value is its attribute.
                    if let (Some(seen), Some(input)) = (crate::chat::json_fields::int_field(&reply, "seen"), me.form.query_selector("[name=_seen]").ok().flatten()) {
                        let _ = input.set_attribute("value", &seen.to_string());
                    }
                    me.say("All answers saved.");
                    false
                }
                Err(crate::chat::client::ClientError::Http { status: 409, .. }) => {
                    me.say("Some answers were changed in another tab or on another device, and were kept. Reload the page to see the newest ones.");
                    false
                }
                // Refused (too long, say): saying why is all that helps.
                Err(crate::chat::client::ClientError::Http { message, .. }) => {
                    me.say(&message);
                    false
                }
                Err(_) => {
                    me.say("Not saved yet: no connection. Trying again…");
                    me.state.borrow_mut().dirty = true;
                    true
                }
            };
            let again = {
                let mut s = me.state.borrow_mut();
                s.saving = false;
                s.dirty
            };
            if again {
                Self::later(&me, if retry { 4000 } else { 300 });
            }
        });
    }
}
