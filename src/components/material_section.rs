//! "Material" on the lesson page: the sources the teacher added for the
//! assistant to build from, each with Remove, and "Add material" to add
//! files. Plain forms rendered on the server (`server::material::routes`
//! answers them with a redirect back here, and a refusal is kept on the
//! server, its token in the address as `material_error`), so none of it is
//! in the browser bundle.

use leptos::prelude::*;

use crate::models::{Material, MATERIAL_ENDINGS};


/// 52,310 bytes → "52 KB"; 1,572,864 → "1.5 MB".
fn size(bytes: i64) -> String {
    const MB: i64 = 1024 * 1024;
    if bytes < MB {
        format!("{} KB", (bytes + 1023) / 1024)
    } else {
        format!("{}.{} MB", bytes / MB, bytes % MB * 10 / MB)
    }
}

#[component]
pub fn MaterialSection(lesson_id: String, material: Material) -> impl IntoView {
    let Material { sources, react_to_events, refused } = material;
    let add_to = format!("/lessons/{lesson_id}/sources");
    let back = lesson_id.clone();
    let empty = sources.is_empty();
    let items = sources
        .into_iter()
        .map(|s| {
            let remove = format!("/lessons/{lesson_id}/sources/{}/remove", s.id);
            let label = format!("Remove {}", s.name);
            view! {
                <li class="source">
                    <div>
                        <strong class="source-name">{s.name}</strong>
                        <span class="muted">{format!(" · {} · {} characters", size(s.size), crate::chat::message::thousands(s.chars))}</span>
                        <p class="source-opening muted">{s.opening}</p>
                    </div>
                    <form method="post" action=remove>
                        <button type="submit" class="quiet" aria-label=label>"Remove"</button>
                    </form>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="material" id="material" aria-labelledby="material-heading">
            <h2 id="material-heading">"Material"</h2>
            <p class="muted">"Add your own worksheets, chapters or notes, and ask the assistant to build exercises from them. It reads them; students never see them."</p>
            {refused.map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
            {empty.then(|| view! { <p class="muted">"No material yet."</p> })}
            <ul class="sources" aria-label="Sources">{items}</ul>
            <form class="add-material" method="post" action=add_to enctype="multipart/form-data">
                <label>
                    "Files (.txt, .md, .html, .docx or .pdf, up to 10 MB each) "
                    <input type="file" name="file" multiple accept=MATERIAL_ENDINGS required/>
                </label>
                <button type="submit">"Add material"</button>
            </form>
            // The teacher's own switch, for all their lessons (`server::reactions`).
            <form class="react-setting" method="post" action="/settings/reactions">
                <input type="hidden" name="lesson" value=back/>
                <label>
                    <input type="checkbox" name="react" value="on" checked=react_to_events/>
                    " Let the assistant react on its own"
                </label>
                <button type="submit" class="quiet">"Update setting"</button>
                <p class="muted">"When on, the assistant reads what you add and says what it could build from it, helps you start a new lesson, and welcomes you back to a lesson once a day. It never changes the lesson on its own."</p>
            </form>
        </section>
    }
}
