//! "Choose a lesson for your LMS": the page an LMS's Deep Linking request
//! opens for a teacher. Each lesson is a plain form (`server::lti::routes`
//! answers with the page that takes the choice back to the LMS).

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::{api::session::get_deep_link, models::DeepLinkPick};

#[component]
pub fn LtiPickPage() -> impl IntoView {
    let params = use_params_map();
    let pick = Resource::new(move || params.read().get("id").unwrap_or_default(), get_deep_link);
    view! {
        <Title text="Choose a lesson · Margin"/>
        <main class="page narrow lti-pick">
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match pick.await {
                        Ok(p) => Either::Left(view! { <Choices p/> }),
                        Err(_) => Either::Right(view! {
                            <h1>"Choose a lesson"</h1>
                            <p class="form-error" role="alert">"This choice was made already, or took more than an hour. Add Margin again from your LMS."</p>
                        }),
                    }
                })}
            </Suspense>
        </main>
    }
}

#[component]
fn Choices(p: DeepLinkPick) -> impl IntoView {
    let DeepLinkPick { id, platform, lessons } = p;
    let heading = format!("Choose a lesson for {platform}");
    view! {
        <h1>{heading}</h1>
        {if lessons.is_empty() {
            Either::Left(view! { <p>"You have no lessons yet. Make one in Margin, then add it from your LMS again."</p> })
        } else {
            Either::Right(view! {
                <p class="muted">"Students who open the link in the course see the lesson once you publish it to the course's class."</p>
                <ul class="lti-lessons">
                    {lessons.into_iter().map(|(lesson, title)| view! {
                        <li>
                            <form method="post" action=format!("/lti/pick/{id}/choose")>
                                <input type="hidden" name="lesson" value=lesson/>
                                <button type="submit">{title}</button>
                            </form>
                        </li>
                    }).collect_view()}
                </ul>
            })
        }}
    }
}
