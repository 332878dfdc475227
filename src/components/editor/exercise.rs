//! An exercise (or a writing area) in the editor, as teachers think of it:
//! its instructions, its questions with their options and the right ones
//! marked, statements true or false, items in their right order, sentences
//! whose selected words become blanks, model answers, lines to write on,
//! and rubrics as a small table. Each field changes one part
//! (`lesson::parts`); the format's problems show at the part they are about.
//!
//! Every part's container carries `data-part` (its path) and every field
//! `data-focus` (path and what), so that the focus comes back to the field
//! after the block is drawn anew.

use leptos::{ev, prelude::*};

use crate::components::client_view::{ClientView, IntoClientView};
use super::{surface, Editor};
use crate::lesson::{
    blocks::runs_of,
    parts::{Part, Path, Step},
    Element, ExerciseKind,
};

/// A path as the attributes write it: `0.2.1` (the exercise itself: empty).
pub fn path_name(path: &[usize]) -> String {
    path.iter().map(usize::to_string).collect::<Vec<_>>().join(".")
}

/// What every field of one exercise needs.
#[derive(Clone, Copy)]
struct Cx {
    ed: Editor,
    key: u64,
    /// The exercise's id: its problems are filed under it.
    id: StoredValue<String>,
    /// Why the last step could not be taken.
    said: RwSignal<String>,
}

impl Cx {
    fn step(&self, path: &[usize], step: Step, draw: bool, focus: &'static str) {
        match self.ed.part(self.key, path, step, draw, focus) {
            Ok(()) => self.said.set(String::new()),
            Err(why) => self.said.set(why),
        }
    }
}

/// The exercise or writing area drawn with `key`, its code (the fields, the
/// steps on its parts and the format's checks) in a part of the bundle of
/// its own: a lesson of text alone never loads it.
#[lazy]
pub fn exercise_view(ed: Editor, key: u64, element: Element) -> ClientView {
    super::parts::install_checks();
    super::exercise_drawn(key);
    view! { <ExerciseView ed key element/> }.into_client_view()
}

/// Fetches the exercises' part ahead of the first exercise drawn.
pub fn preload() {
    let _ = lazy_preload!(exercise_view);
}

/// The exercise or writing area drawn with `key`.
#[component]
pub fn ExerciseView(ed: Editor, key: u64, element: Element) -> impl IntoView {
    let cx = Cx { ed, key, id: StoredValue::new(element.id().unwrap_or_default().to_string()), said: RwSignal::new(String::new()) };
    let said = move || cx.said.with(|s| (!s.is_empty()).then(|| view! { <p class="form-error" role="status">{s.clone()}</p> }));
    if element.name == "writing-area" {
        return view! {
            <div class="exercise-edit" role="group" aria-label="Writing area" data-part="">
                {writing_area(cx, &[], &element)}
                {problem(cx, &[])}
                {said}
            </div>
        }
        .into_client_view();
    }
    let Some(kind) = element.attr("type").and_then(ExerciseKind::from_name) else {
        return view! { <p class="form-error">"This exercise's type is not one the editor knows; change it in the XML tab."</p> }.into_client_view();
    };
    let title = element.attr("title").unwrap_or_default().to_string();
    // The standards it names, as above the lesson: changed in the Standards page or the XML.
    let standards = element.attr("standards").map(|v| crate::lesson::standards::codes(v).join(" · "));
    let items = element.elements().filter(|e| e.name == "item").count();
    let mut count = std::collections::HashMap::<&str, usize>::new();
    let body = element
        .elements()
        .enumerate()
        .map(|(i, part)| {
            let n = {
                let c = count.entry(part.name.as_str()).or_default();
                *c += 1;
                *c
            };
            let path = vec![i];
            match part.name.as_str() {
                "instructions" => view! {
                    <div class="part" data-part=path_name(&path)>
                        {words(cx, &path, part, "Instructions".into(), "What students are to do")}
                        {remove(cx, &path, "Remove the instructions".into())}
                    </div>
                }
                .into_client_view(),
                "question" => question(cx, path, part, kind, n),
                "statement" => statement(cx, path, part, n),
                "item" => item(cx, path, part, n, items),
                "p" => sentence(cx, path, part, n),
                "prompt" => view! { <div class="part" data-part=path_name(&path)>{words(cx, &path, part, "Task".into(), "The writing task")}</div> }.into_client_view(),
                "writing-area" => view! {
                    <div class="part" data-part=path_name(&path)>
                        {writing_area(cx, &path, part)}
                        {remove(cx, &path, "Remove the writing area".into())}
                    </div>
                }
                .into_client_view(),
                "rubric" => rubric(cx, path, part),
                _ => ().into_client_view(),
            }
        })
        .collect_view();
    let has = |name: &str| element.elements().any(|e| e.name == name);
    let mut adds: Vec<(Part, &'static str)> = Vec::new();
    if !has("instructions") {
        adds.push((Part::Instructions, "Add instructions"));
    }
    match kind {
        ExerciseKind::MultipleChoice | ExerciseKind::ShortAnswer => adds.push((Part::Question, "Add a question")),
        ExerciseKind::TrueFalse => adds.push((Part::Statement, "Add a statement")),
        ExerciseKind::Sequencing => adds.push((Part::Item, "Add an item")),
        ExerciseKind::FillBlanks => adds.push((Part::Sentence, "Add a sentence")),
        ExerciseKind::Writing => {
            if !has("writing-area") {
                adds.push((Part::WritingArea, "Add lines to write on"));
            }
            if !has("rubric") {
                adds.push((Part::Rubric, "Add a rubric"));
            }
        }
    }
    let adds = adds.into_iter().map(|(part, label)| add(cx, &[], part, label.to_string())).collect_view();
    view! {
        <div class="exercise exercise-edit" role="group" aria-label=format!("Exercise: {}", kind.label()) data-part="">
            <header class="exercise-head">
                <span class="exercise-kind">{kind.label()}</span>
                {standards.map(|codes| view! { <span class="standards" title="Standards">{codes}</span> })}
            </header>
            <input type="text" class="ex-title" aria-label="Exercise title" placeholder="Title (optional)" value=title data-focus=":title"
                on:input=move |ev| cx.step(&[], Step::Attr("title", event_target_value(&ev)), false, "title")/>
            {body}
            <div class="part-adds">{adds}</div>
            {problem(cx, &[])}
            {said}
        </div>
    }
    .into_client_view()
}

/// The format's problems with the part at `path`, beside it.
fn problem(cx: Cx, path: &[usize]) -> impl IntoView {
    let path = path.to_vec();
    move || {
        cx.ed.problems.with(|p| {
            cx.id.with_value(|id| {
                p.iter().filter(|(b, at, _)| b == id && *at == path).map(|(.., said)| view! { <p class="field-error">{said.clone()}</p> }).collect_view()
            })
        })
    }
}

/// A part's words, typed in place with bold and italic.
fn words(cx: Cx, path: &[usize], e: &Element, label: String, placeholder: &'static str) -> impl IntoView {
    let path = path.to_vec();
    let html = surface::html_of(&runs_of(e));
    let at = path.clone();
    view! {
        <div class="part-text" contenteditable="true" role="textbox" aria-label=label spellcheck="true"
            data-placeholder=placeholder data-focus=format!("{}:text", path_name(&path)) inner_html=html
            on:input=move |ev| {
                #[cfg(feature = "hydrate")]
                {
                    let el: leptos::web_sys::HtmlElement = event_target(&ev);
                    let runs = surface::runs_of(&el);
                    if runs.is_empty() && el.child_nodes().length() > 0 {
                        el.set_inner_html("");
                    }
                    cx.step(&at, Step::Words(runs), false, "text");
                }
                #[cfg(not(feature = "hydrate"))]
                let _ = (&ev, &at);
            }
            on:keydown=text_keys
            on:paste=plain_paste
            on:drop=|ev: ev::DragEvent| ev.prevent_default()></div>
        {problem(cx, &path)}
    }
}

/// Keys in a part's words: bold and italic; Enter adds no line (a part is
/// one stretch of text).
fn text_keys(ev: ev::KeyboardEvent) {
    let ctrl = ev.ctrl_key() || ev.meta_key();
    let handled = match (ev.key().as_str(), ctrl, ev.alt_key()) {
        ("Enter", false, false) => true,
        ("b" | "B", true, false) => {
            #[cfg(feature = "hydrate")]
            surface::toggle("bold");
            true
        }
        ("i" | "I", true, false) => {
            #[cfg(feature = "hydrate")]
            surface::toggle("italic");
            true
        }
        ("u" | "U", true, false) => true,
        _ => false,
    };
    if handled {
        ev.prevent_default();
    }
}

/// A paste into a part is its plain text.
fn plain_paste(ev: ev::ClipboardEvent) {
    ev.prevent_default();
    #[cfg(feature = "hydrate")]
    if let Some(data) = ev.clipboard_data() {
        let text = data.get_data("text/plain").unwrap_or_default();
        surface::insert_text(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    }
}

fn button(cx: Cx, path: &[usize], step: Step, label: String, class: &'static str, text: &'static str, focus: &'static str) -> impl IntoView {
    let path = path.to_vec();
    view! {
        <button type="button" class=class aria-label=label.clone() title=label
            on:click=move |_| cx.step(&path, step.clone(), true, focus)>{text}</button>
    }
}

fn remove(cx: Cx, path: &[usize], label: String) -> impl IntoView {
    button(cx, path, Step::Remove, label, "quiet part-remove", "✕", "first")
}

fn add(cx: Cx, path: &[usize], part: Part, label: String) -> impl IntoView {
    let path = path.to_vec();
    // A new criterion is named first; anything else is written in.
    let focus = if part == Part::Criterion { "name" } else { "first" };
    view! {
        <button type="button" class="quiet part-add" on:click=move |_| cx.step(&path, Step::Add(part), true, focus)>{format!("+ {label}")}</button>
    }
}

/// A question: its prompt, then options with the right ones marked (or a
/// model answer and a rubric).
fn question(cx: Cx, path: Path, q: &Element, kind: ExerciseKind, n: usize) -> ClientView {
    let several = q.attr("multiple") == Some("true");
    let mut option = 0;
    let parts = q
        .elements()
        .enumerate()
        .map(|(i, part)| {
            let mut at = path.clone();
            at.push(i);
            match part.name.as_str() {
                "prompt" => view! { <div class="part" data-part=path_name(&at)>{words(cx, &at, part, format!("Question {n}"), "The question")}</div> }.into_client_view(),
                "option" => {
                    option += 1;
                    let name = format!("Question {n}, option {option}");
                    let right = part.attr("correct") == Some("true");
                    let mark = at.clone();
                    view! {
                        <div class="part option-edit" data-part=path_name(&at)>
                            <input type=if several { "checkbox" } else { "radio" } name=format!("right-{}-{n}", cx.key) checked=right
                                aria-label=format!("{name} is right") title="The right answer" data-focus=format!("{}:correct", path_name(&at))
                                on:change=move |ev| cx.step(&mark, Step::Correct(event_target_checked(&ev)), true, "correct")/>
                            {words(cx, &at, part, name.clone(), "An option")}
                            {remove(cx, &at, format!("Remove {}", name.to_lowercase()))}
                        </div>
                    }
                    .into_client_view()
                }
                "answer" => view! {
                    <div class="part" data-part=path_name(&at)>
                        <p class="part-label">"Model answer (only you see it)"</p>
                        {words(cx, &at, part, format!("Question {n}, model answer"), "What a good answer says")}
                        {remove(cx, &at, format!("Remove the model answer of question {n}"))}
                    </div>
                }
                .into_client_view(),
                "rubric" => rubric(cx, at, part),
                _ => ().into_client_view(),
            }
        })
        .collect_view();
    let has = |name: &str| q.elements().any(|e| e.name == name);
    let extra = match kind {
        ExerciseKind::MultipleChoice => {
            let at = path.clone();
            view! {
                {add(cx, &path, Part::Option, format!("Add an option to question {n}"))}
                <label class="part-check">
                    <input type="checkbox" checked=several data-focus=format!("{}:multiple", path_name(&path))
                        on:change=move |ev| cx.step(&at, Step::Multiple(event_target_checked(&ev)), true, "multiple")/>
                    {format!(" Question {n} has several right answers")}
                </label>
            }
            .into_client_view()
        }
        _ => view! {
            {(!has("answer")).then(|| add(cx, &path, Part::ModelAnswer, format!("Add a model answer to question {n}")))}
            {(!has("rubric")).then(|| add(cx, &path, Part::Rubric, format!("Add a rubric to question {n}")))}
        }
        .into_client_view(),
    };
    view! {
        <div class="part question-edit" data-part=path_name(&path)>
            {parts}
            <div class="part-adds">{extra}{remove(cx, &path, format!("Remove question {n}"))}</div>
            {problem(cx, &path)}
        </div>
    }
    .into_client_view()
}

fn statement(cx: Cx, path: Path, s: &Element, n: usize) -> ClientView {
    let answer = s.attr("answer").unwrap_or("true").to_string();
    let at = path.clone();
    view! {
        <div class="part statement-edit" data-part=path_name(&path)>
            {words(cx, &path, s, format!("Statement {n}"), "A statement")}
            <select aria-label=format!("Statement {n} is") data-focus=format!("{}:answer", path_name(&path))
                on:change=move |ev| cx.step(&at, Step::Attr("answer", event_target_value(&ev)), true, "answer")>
                <option value="true" selected=answer == "true">"True"</option>
                <option value="false" selected=answer == "false">"False"</option>
            </select>
            {remove(cx, &path, format!("Remove statement {n}"))}
        </div>
    }
    .into_client_view()
}

/// An item, with its place in the right order (students see the items in
/// the order written).
fn item(cx: Cx, path: Path, it: &Element, n: usize, of: usize) -> ClientView {
    let place: usize = it.attr("position").and_then(|p| p.parse().ok()).unwrap_or(0);
    let at = path.clone();
    view! {
        <div class="part item-edit" data-part=path_name(&path)>
            <select aria-label=format!("Item {n}'s place in the right order") data-focus=format!("{}:position", path_name(&path))
                on:change=move |ev| {
                    if let Ok(to) = event_target_value(&ev).parse() {
                        cx.step(&at, Step::Position(to), true, "position");
                    }
                }>
                {(1..=of).map(|k| view! { <option value=k.to_string() selected=k == place>{format!("{k}.")}</option> }).collect_view()}
            </select>
            {words(cx, &path, it, format!("Item {n}"), "A step or event")}
            {remove(cx, &path, format!("Remove item {n}"))}
        </div>
    }
    .into_client_view()
}

/// A fill-in sentence: words typed in place, blanks made from selected
/// words, each blank's answer, other accepted answers and hint.
fn sentence(cx: Cx, path: Path, p: &Element, n: usize) -> ClientView {
    let html = surface::sentence_html(p);
    let selection = StoredValue::new((0usize, 0usize));
    let typed_at = path.clone();
    let blank_at = path.clone();
    // The selection is remembered as it changes, so that the button (or
    // Ctrl+Alt+B) makes the blank from it after the focus has moved.
    let remember = move |ev: &ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            let el: leptos::web_sys::HtmlElement = event_target(ev);
            if let Some(sel) = surface::caret(&el) {
                selection.set_value(sel);
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };
    let blank_at = StoredValue::new(blank_at);
    let make = move || {
        let (start, end) = selection.get_value();
        blank_at.with_value(|at| cx.step(at, Step::MakeBlank { start, end }, true, "text"));
    };
    let blanks = p
        .elements()
        .enumerate()
        .filter(|(_, b)| b.name == "blank")
        .map(|(i, b)| {
            let mut at = path.clone();
            at.push(i);
            let answer = b.attr("answer").unwrap_or_default().to_string();
            let field = |name: &'static str, label: String, value: &str, hint: &'static str| {
                let at = at.clone();
                let id = b.id().unwrap_or_default().to_string();
                view! {
                    <label class="blank-field">{label.clone()}
                        <input type="text" value=value.to_string() placeholder=hint data-focus=format!("{}:{name}", path_name(&at))
                            on:input=move |ev| {
                                let value = event_target_value(&ev);
                                // The box in the sentence shows the answer as it is typed.
                                #[cfg(feature = "hydrate")]
                                if name == "answer" {
                                    if let Ok(Some(chip)) = document().query_selector(&format!("[data-key=\"{}\"] [data-blank=\"{id}\"]", cx.key)) {
                                        chip.set_text_content(Some(&value));
                                    }
                                }
                                #[cfg(not(feature = "hydrate"))]
                                let _ = &id;
                                cx.step(&at, Step::Attr(name, value), false, name);
                            }/>
                    </label>
                }
            };
            view! {
                <div class="part blank-edit" role="group" aria-label=format!("Blank “{answer}”") data-part=path_name(&at)>
                    {field("answer", "Answer ".into(), &answer, "")}
                    {field("alts", "Also accept ".into(), b.attr("alts").unwrap_or_default(), "other answers, with commas")}
                    {field("hint", "Hint ".into(), b.attr("hint").unwrap_or_default(), "a clue for students")}
                    {button(cx, &at, Step::Remove, format!("Turn blank “{answer}” back into words"), "quiet part-remove", "Undo blank", "text")}
                    {problem(cx, &at)}
                </div>
            }
        })
        .collect_view();
    view! {
        <div class="part sentence-edit" data-part=path_name(&path)>
            <div class="part-text sentence" contenteditable="true" role="textbox" aria-label=format!("Sentence {n}") spellcheck="true"
                data-placeholder="A sentence; select words in it to make a blank" data-focus=format!("{}:text", path_name(&path)) inner_html=html
                on:input=move |ev| {
                    #[cfg(feature = "hydrate")]
                    {
                        let el: leptos::web_sys::HtmlElement = event_target(&ev);
                        cx.step(&typed_at, Step::Sentence(surface::pieces_of(&el)), false, "text");
                    }
                    #[cfg(not(feature = "hydrate"))]
                    let _ = (&ev, &typed_at);
                }
                on:keyup=move |ev| remember(&ev)
                on:mouseup=move |ev| remember(&ev)
                on:keydown=move |ev: ev::KeyboardEvent| {
                    if (ev.ctrl_key() || ev.meta_key()) && ev.alt_key() && ev.key().eq_ignore_ascii_case("b") {
                        ev.prevent_default();
                        remember(&ev);
                        make();
                    } else {
                        text_keys(ev);
                    }
                }
                on:paste=plain_paste
                on:drop=|ev: ev::DragEvent| ev.prevent_default()></div>
            <button type="button" class="quiet" title="Select words in the sentence first (Ctrl+Alt+B)"
                aria-label=format!("Make a blank from the words selected in sentence {n}")
                on:mousedown=|ev| ev.prevent_default() on:click=move |_| make()>"Make a blank"</button>
            {remove(cx, &path, format!("Remove sentence {n}"))}
            {problem(cx, &path)}
            {blanks}
        </div>
    }
    .into_client_view()
}

/// Lines to write on, and what the empty space says.
fn writing_area(cx: Cx, path: &[usize], w: &Element) -> impl IntoView {
    let path = path.to_vec();
    let lines = w.attr("lines").unwrap_or("5").to_string();
    let placeholder = w.attr("placeholder").unwrap_or_default().to_string();
    let (a, b) = (path.clone(), path.clone());
    view! {
        <div class="writing-edit">
            <label>"Lines to write on "
                <input type="number" min="1" max="50" value=lines data-focus=format!("{}:lines", path_name(&path))
                    on:input=move |ev| cx.step(&a, Step::Attr("lines", event_target_value(&ev)), false, "lines")/>
            </label>
            <label>" Shown in the empty space "
                <input type="text" value=placeholder placeholder="optional" data-focus=format!("{}:placeholder", path_name(&path))
                    on:input=move |ev| cx.step(&b, Step::Attr("placeholder", event_target_value(&ev)), false, "placeholder")/>
            </label>
            {problem(cx, &path)}
        </div>
    }
}

/// A rubric as a table: a row per criterion, its levels (points and what an
/// answer at that level does) across.
fn rubric(cx: Cx, path: Path, r: &Element) -> ClientView {
    let shared = r.attr("shared") == Some("true");
    let share_at = path.clone();
    let rows = r
        .elements()
        .enumerate()
        .filter(|(_, c)| c.name == "criterion")
        .enumerate()
        .map(|(k, (i, c))| {
            let n = k + 1;
            let mut at = path.clone();
            at.push(i);
            let name_at = at.clone();
            let levels = c
                .elements()
                .enumerate()
                .map(|(j, level)| {
                    let m = j + 1;
                    let mut lat = at.clone();
                    lat.push(j);
                    let points_at = lat.clone();
                    view! {
                        <td class="level-edit" data-part=path_name(&lat)>
                            <label class="points">
                                <input type="number" min="0" max="100" value=level.attr("points").unwrap_or_default().to_string()
                                    aria-label=format!("Criterion {n}, level {m}: points") data-focus=format!("{}:points", path_name(&lat))
                                    on:input=move |ev| cx.step(&points_at, Step::Attr("points", event_target_value(&ev)), false, "points")/>
                                " pts"
                            </label>
                            {words(cx, &lat, level, format!("Criterion {n}, level {m}"), "What an answer at this level does")}
                            {remove(cx, &lat, format!("Remove criterion {n}, level {m}"))}
                        </td>
                    }
                })
                .collect_view();
            view! {
                <tr data-part=path_name(&at)>
                    <th scope="row">
                        <input type="text" value=c.attr("name").unwrap_or_default().to_string() placeholder="What it judges"
                            aria-label=format!("Criterion {n}") data-focus=format!("{}:name", path_name(&at))
                            on:input=move |ev| cx.step(&name_at, Step::Attr("name", event_target_value(&ev)), false, "name")/>
                        {problem(cx, &at)}
                        {add(cx, &at, Part::Level, format!("Add a level to criterion {n}"))}
                        {remove(cx, &at, format!("Remove criterion {n}"))}
                    </th>
                    {levels}
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="part rubric-edit" data-part=path_name(&path)>
            <p class="part-label">"Rubric"</p>
            <label class="part-check">
                <input type="checkbox" checked=shared data-focus=format!("{}:shared", path_name(&path))
                    on:change=move |ev| cx.step(&share_at, Step::Attr("shared", if event_target_checked(&ev) { "true".into() } else { String::new() }), true, "shared")/>
                " Students see this rubric"
            </label>
            <table><tbody>{rows}</tbody></table>
            <div class="part-adds">
                {add(cx, &path, Part::Criterion, "Add a criterion".into())}
                {remove(cx, &path, "Remove the rubric".into())}
            </div>
            {problem(cx, &path)}
        </div>
    }
    .into_client_view()
}
