//! The lesson rendered from its XML, in two modes: the teacher's view (the
//! exercises as students meet them, with the answers shown) and the student
//! preview (answers hidden, inputs to fill in, teacher notes left out).
//!
//! Everything a document says is rendered as text; nothing in it becomes HTML.

use leptos::prelude::*;

use crate::lesson::{self, Element, ExerciseKind, Node};

/// Who the lesson is shown to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    Teacher,
    Student,
}

#[component]
pub fn LessonView(#[prop(into)] xml: Signal<String>, #[prop(into)] audience: Signal<Audience>) -> impl IntoView {
    move || {
        let who = audience.get();
        match lesson::parse(&xml.get()) {
            Ok(root) => view! {
                <article class="lesson-view" class:student=move || who == Audience::Student>
                    {root.elements().map(|e| block(e, who)).collect_view()}
                </article>
            }
            .into_any(),
            Err(e) => view! {
                <p class="form-error" role="alert">"This lesson cannot be shown: " {e.to_string()}</p>
            }
            .into_any(),
        }
    }
}

fn id_of(e: &Element) -> String {
    e.id().unwrap_or_default().to_string()
}

fn block(e: &Element, who: Audience) -> AnyView {
    let id = id_of(e);
    match e.name.as_str() {
        "h1" => view! { <h1 data-id=id>{inline(e, who)}</h1> }.into_any(),
        "h2" => view! { <h2 data-id=id>{inline(e, who)}</h2> }.into_any(),
        "h3" => view! { <h3 data-id=id>{inline(e, who)}</h3> }.into_any(),
        "p" => view! { <p data-id=id>{inline(e, who)}</p> }.into_any(),
        "note" if who == Audience::Teacher => view! {
            <aside class="teacher-note" data-id=id>
                <span class="tag">"Teacher note"</span>
                " "
                {inline(e, who)}
            </aside>
        }
        .into_any(),
        "note" => ().into_any(),
        "writing-area" => writing_area(e, who),
        "exercise" => exercise(e, who),
        _ => ().into_any(),
    }
}

fn inline(e: &Element, who: Audience) -> Vec<AnyView> {
    e.children
        .iter()
        .map(|n| match n {
            Node::Text(t) => t.clone().into_any(),
            Node::Element(c) => match c.name.as_str() {
                "em" => view! { <em>{inline(c, who)}</em> }.into_any(),
                "strong" => view! { <strong>{inline(c, who)}</strong> }.into_any(),
                "blank" => blank(c, who),
                _ => c.text().into_any(),
            },
        })
        .collect()
}

fn blank(e: &Element, who: Audience) -> AnyView {
    let answer = e.attr("answer").unwrap_or_default().to_string();
    let hint = e.attr("hint").map(str::to_string);
    let alts = e.attr("alts").unwrap_or_default();
    let alts: Vec<String> = alts.split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_string).collect();
    match who {
        Audience::Teacher => {
            let title = if alts.is_empty() { None } else { Some(format!("Also accepted: {}", alts.join(", "))) };
            view! {
                <span class="blank answer" data-id=id_of(e) title=title>{answer}</span>
                {hint.map(|h| view! { <span class="hint">" (" {h} ")"</span> })}
            }
            .into_any()
        }
        Audience::Student => {
            let width = answer.chars().count().clamp(4, 24);
            view! {
                <input class="blank" type="text" data-id=id_of(e) aria-label="Blank" size=width placeholder=hint.unwrap_or_default()/>
            }
            .into_any()
        }
    }
}

fn writing_area(e: &Element, who: Audience) -> AnyView {
    let lines: u32 = e.attr("lines").and_then(|l| l.parse().ok()).unwrap_or(5);
    let placeholder = e.attr("placeholder").unwrap_or_default().to_string();
    view! {
        <textarea class="writing-area" data-id=id_of(e) rows=lines aria-label="Your writing"
            placeholder=placeholder disabled=who == Audience::Teacher></textarea>
    }
    .into_any()
}

fn exercise(e: &Element, who: Audience) -> AnyView {
    let kind = e.attr("type").and_then(ExerciseKind::from_name);
    let label = kind.map(|k| k.label()).unwrap_or("Exercise");
    let title = e.attr("title").map(str::to_string);
    let parts: Vec<AnyView> = e
        .elements()
        .map(|part| match (part.name.as_str(), kind) {
            ("instructions", _) => view! { <p class="instructions">{inline(part, who)}</p> }.into_any(),
            ("p", _) => view! { <p data-id=id_of(part)>{inline(part, who)}</p> }.into_any(),
            ("question", Some(ExerciseKind::MultipleChoice)) => choice_question(part, who),
            ("question", _) => open_question(part, who),
            ("statement", _) => statement(part, who),
            ("item", _) => item(part, who),
            ("prompt", _) => view! { <p class="prompt">{inline(part, who)}</p> }.into_any(),
            ("writing-area", _) => writing_area(part, who),
            _ => ().into_any(),
        })
        .collect();
    let list_kind = matches!(kind, Some(ExerciseKind::Sequencing));
    view! {
        <section class="exercise" data-id=id_of(e) data-kind=kind.map(|k| k.name()).unwrap_or_default()>
            <header class="exercise-head">
                <span class="exercise-kind">{label}</span>
                {title.map(|t| view! { <span class="exercise-title">{t}</span> })}
            </header>
            {if list_kind {
                view! { <ol class="sequence">{parts}</ol> }.into_any()
            } else {
                parts.into_any()
            }}
        </section>
    }
    .into_any()
}

fn prompt_of(q: &Element, who: Audience) -> AnyView {
    match q.elements().find(|c| c.name == "prompt") {
        Some(p) => view! { <p class="prompt">{inline(p, who)}</p> }.into_any(),
        None => ().into_any(),
    }
}

fn choice_question(q: &Element, who: Audience) -> AnyView {
    let multiple = q.attr("multiple") == Some("true");
    let group = format!("q-{}", id_of(q));
    let options: Vec<AnyView> = q
        .elements()
        .filter(|c| c.name == "option")
        .map(|o| {
            let correct = o.attr("correct") == Some("true");
            let show_correct = who == Audience::Teacher && correct;
            let kind = if multiple { "checkbox" } else { "radio" };
            view! {
                <li class="option" class:correct=show_correct data-id=id_of(o)>
                    <label>
                        <input type=kind name=group.clone() checked=show_correct disabled=who == Audience::Teacher/>
                        " "
                        {inline(o, who)}
                        {show_correct.then(|| view! { <span class="answer-mark">" ✓ correct"</span> })}
                    </label>
                </li>
            }
            .into_any()
        })
        .collect();
    view! {
        <div class="question" data-id=id_of(q)>
            {prompt_of(q, who)}
            <ul class="options">{options}</ul>
        </div>
    }
    .into_any()
}

fn open_question(q: &Element, who: Audience) -> AnyView {
    let model = q.elements().find(|c| c.name == "answer").map(|a| a.text());
    view! {
        <div class="question" data-id=id_of(q)>
            {prompt_of(q, who)}
            {match (who, model) {
                (Audience::Teacher, Some(m)) => view! { <p class="model-answer"><span class="tag">"Model answer"</span> " " {m}</p> }.into_any(),
                (Audience::Teacher, None) => ().into_any(),
                (Audience::Student, _) => view! { <textarea class="short-answer" rows="3" aria-label="Your answer"></textarea> }.into_any(),
            }}
        </div>
    }
    .into_any()
}

fn statement(s: &Element, who: Audience) -> AnyView {
    let answer = s.attr("answer").unwrap_or_default().to_string();
    let group = format!("st-{}", id_of(s));
    let choice = move |value: &'static str, text: &'static str| {
        let checked = who == Audience::Teacher && answer == value;
        view! {
            <label class="tf-choice" class:correct=checked>
                <input type="radio" name=group.clone() value=value checked=checked disabled=who == Audience::Teacher/>
                " " {text}
            </label>
        }
    };
    view! {
        <div class="statement" data-id=id_of(s)>
            <span class="statement-text">{inline(s, who)}</span>
            <span class="tf-choices">{choice("true", "True")} {choice("false", "False")}</span>
        </div>
    }
    .into_any()
}

fn item(i: &Element, who: Audience) -> AnyView {
    let position = i.attr("position").unwrap_or_default().to_string();
    view! {
        <li class="sequence-item" data-id=id_of(i)>
            {match who {
                Audience::Teacher => view! { <span class="position" title="Place in the right order">{position}</span> }.into_any(),
                Audience::Student => view! { <input class="position-input" type="number" min="1" aria-label="Position"/> }.into_any(),
            }}
            " "
            {inline(i, who)}
        </li>
    }
    .into_any()
}
