//! The one bar above every page but the lesson's own: the app's name (home
//! is the lessons for a teacher, "My classes" for a student), the pages
//! the account has, who is signed in, and sign out. Nobody signed in (a
//! join link followed from another browser): the name alone.

use leptos::prelude::*;

use crate::api::{safety::open_flag_count, session::whoami};

#[component]
pub fn TopBar() -> impl IntoView {
    let me = Resource::new(|| (), |_| whoami());
    let flags = Resource::new(|| (), |_| open_flag_count());
    view! {
        <header class="top-bar">
            <Suspense fallback=|| view! { <a href="/" class="brand">"Margin"</a> }>
                {move || Suspend::new(async move {
                    let user = me.await.ok().flatten();
                    let open = flags.await.unwrap_or(0);
                    let student = user.as_ref().is_some_and(|u| u.is_student());
                    view! {
                        <a href=if student { "/learn" } else { "/" } class="brand">"Margin"</a>
                        {user.map(|u| view! {
                            <div class="top-bar-right">
                                {if student {
                                    view! { <a href="/learn" class="quiet">"My classes"</a> }.into_any()
                                } else {
                                    view! {
                                        <a href="/classes" class="quiet">"Classes"</a>
                                        <a href="/library" class="quiet">"School library"</a>
                                        // New flags reach the teacher on their next page.
                                        {if open > 0 {
                                            view! { <a href="/flags" class="flags-alert" aria-label=format!("Flags: {open} to see")>{format!("Flags ({open})")}</a> }.into_any()
                                        } else {
                                            view! { <a href="/flags" class="quiet">"Flags"</a> }.into_any()
                                        }}
                                        {u.is_admin().then(|| view! { <a href="/school" class="quiet">"School"</a> })}
                                    }
                                    .into_any()
                                }}
                                <a href="/account" class="who quiet" title="Account">{u.email}</a>
                                <form method="post" action="/auth/signout">
                                    <button type="submit" class="quiet">"Sign out"</button>
                                </form>
                            </div>
                        })}
                    }
                })}
            </Suspense>
        </header>
    }
}
