//! The Flags page: what students' conversations with the tutor raised for
//! this teacher (and, for harm and abuse, the school's admin), newest first,
//! each with the words that raised it, the student, the lesson, the time, a
//! way to the whole conversation and "Acknowledge". Acknowledged flags stay
//! listed below. Rendered on the server; the button is a plain form.

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;

use super::top_bar::TopBar;
use crate::{
    api::{error_text, safety::list_flags},
    models::Flag,
};

#[component]
pub fn FlagsPage() -> impl IntoView {
    let flags = Resource::new(|| (), |_| list_flags(true));
    view! {
        <Title text="Flags · Margin"/>
        <TopBar/>
        <main class="page flags-page">
            <div class="page-head">
                <h1>"Flags"</h1>
                <a href="/">"Back to your lessons"</a>
            </div>
            <p class="muted">
                "What students wrote to the tutor (or the tutor answered) that you should see: a risk of harm, abuse or bullying, personal data shared, or trying to get the answers. "
                "The tutor went on answering them, with care. Acknowledge a flag once you have seen to it; it stays in the list."
            </p>
            <Suspense fallback=|| view! { <p class="muted">"Loading flags…"</p> }>
                {move || Suspend::new(async move {
                    match flags.await {
                        Ok(list) => {
                            let (open, done): (Vec<Flag>, Vec<Flag>) = list.into_iter().partition(|f| f.acknowledged_at.is_none());
                            Either::Left(view! {
                                <section aria-labelledby="open-flags">
                                    <h2 id="open-flags">{format!("To see ({})", open.len())}</h2>
                                    {if open.is_empty() {
                                        Either::Left(view! { <p class="empty">"Nothing to see: no open flags."</p> })
                                    } else {
                                        Either::Right(view! { <ul class="flag-list">{open.into_iter().map(flag_item).collect_view()}</ul> })
                                    }}
                                </section>
                                {(!done.is_empty()).then(|| view! {
                                    <section aria-labelledby="done-flags">
                                        <h2 id="done-flags">"Acknowledged"</h2>
                                        <ul class="flag-list done">{done.into_iter().map(flag_item).collect_view()}</ul>
                                    </section>
                                })}
                            })
                        }
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Suspense>
        </main>
    }
}

fn flag_item(f: Flag) -> impl IntoView {
    let when = f.created_at.get(..16).unwrap_or_default().replace('T', " ");
    let who = if f.from_student { "Written by" } else { "The tutor's reply to" };
    let label = f.category.label();
    view! {
        <li class=format!("flag flag-{}", f.category.as_str())>
            <div class="flag-head">
                <strong class="flag-category">{label}</strong>
                <span class="muted">{format!("{who} {} · {} · {when} UTC", f.student_email, f.lesson_title)}</span>
            </div>
            <blockquote class="flag-excerpt">{f.excerpt.clone()}</blockquote>
            <div class="flag-actions">
                {if f.yours {
                    Either::Left(view! { <a href=format!("/lessons/{}/results/{}", f.lesson_id, f.student_id)>"Open the conversation"</a> })
                } else {
                    Either::Right(view! { <span class="muted">"The lesson's teacher can open the conversation."</span> })
                }}
                {match (f.acknowledged_at.clone(), f.acknowledged_by.clone()) {
                    (Some(at), by) => Either::Left(view! {
                        <span class="muted">{format!("Acknowledged {}{}", at.get(..10).unwrap_or_default(), by.map(|b| format!(" by {b}")).unwrap_or_default())}</span>
                    }),
                    (None, _) => Either::Right(view! {
                        <form method="post" action=format!("/flags/{}/acknowledge", f.id)>
                            <button type="submit" aria-label=format!("Acknowledge: {label}, {}", f.student_email)>"Acknowledge"</button>
                        </form>
                    }),
                }}
            </div>
        </li>
    }
}
