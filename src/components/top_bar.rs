//! The bar above signed-in pages: the app's name, who is signed in, sign out.

use leptos::prelude::*;

use crate::api::session::whoami;

#[component]
pub fn TopBar() -> impl IntoView {
    let me = Resource::new(|| (), |_| whoami());
    view! {
        <header class="top-bar">
            <a href="/" class="brand">"Margin"</a>
            <div class="top-bar-right">
                <Suspense fallback=|| ()>
                    {move || Suspend::new(async move {
                        me.await.ok().flatten().map(|u| view! {
                            <a href="/classes" class="quiet">"Classes"</a>
                            {u.is_admin().then(|| view! { <a href="/school" class="quiet">"School"</a> })}
                            <span class="who">{u.email}</span>
                        })
                    })}
                </Suspense>
                <form method="post" action="/auth/signout">
                    <button type="submit" class="quiet">"Sign out"</button>
                </form>
            </div>
        </header>
    }
}
