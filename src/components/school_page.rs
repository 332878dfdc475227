//! The School page, for its admin: this month's AI use against the
//! allowance, credits and "Add credits", the teachers with what each used,
//! and invitations ("Invite a teacher" gives a single-use link). Rendered on
//! the server; every change is a plain form (`server::accounts::school_routes`).

use leptos::{either::Either, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use super::top_bar::TopBar;
use crate::{
    api::{error_text, school::get_school},
    chat::message::thousands,
    models::{megabytes, SchoolOverview},
};

#[component]
pub fn SchoolPage() -> impl IntoView {
    let overview = Resource::new(|| (), |_| get_school());
    let query = use_query_map();
    let invited = move || query.read().get("invited").filter(|t| t.chars().all(|c| c.is_ascii_hexdigit()));
    let registration = move || query.read().get("lti-registration").filter(|t| t.chars().all(|c| c.is_ascii_hexdigit()));
    let notice = move || match query.read().get("done").as_deref() {
        Some("credits") => Some("Credits added."),
        Some("settings") => Some("Saved."),
        Some("retention") => Some("Set. Older chats go at the next daily sweep."),
        Some("framework") => Some("Framework added. Lessons can now name its standards."),
        Some("sso-linked") => Some("Linked. New people signing in with that account wait here for you to let them in."),
        Some("student-domains") => Some("Saved. Sign-ins at those domains are students from now on."),
        Some("approved") => Some("Let in. They can sign in as a teacher now."),
        Some("declined") => Some("Declined. That account cannot sign in."),
        Some("removed") => Some("Removed. That account cannot sign in any more; its work stays."),
        Some("deleted") => Some("Deleted. That account and its data are gone."),
        Some("lti-registered") => Some("Registered. Teachers and students can open Margin from that LMS now."),
        Some("lti-own-key") => Some("Done. That registration signs with a key of its own from now on."),
        Some("lti-removed") => Some("Removed. Launches from that LMS stop; the accounts and classes they made stay."),
        Some("sso-removed") => Some("Unlinked. People who signed in through it keep their accounts."),
        Some("framework-removed") => Some("Framework removed. Lessons that name its standards keep them; saving such a lesson then asks for a code the school has."),
        _ => None,
    };
    let error = move || match query.read().get("error").as_deref() {
        Some("input") => Some("Enter a whole number of tokens above zero, and a name for the school."),
        Some("operator") => Some("Credits are added by whoever runs this Margin server. Ask them for more."),
        Some("framework") => Some("That file is not a framework Margin can read: choose the JSON of a CASE package (a CFPackage whose items have codes). Nothing was added."),
        Some("student-domains") => Some("Enter each students' email domain like students.lincoln.org (up to 20, never a mail service anyone can join)."),
        Some("sso-own") => Some("Link your own school account on the Account page first; the school can then be linked to what it vouches for."),
        Some("lti-input") => Some("Fill in every field of the LMS registration: the addresses begin https://, and at least one deployment id."),
        Some("lti-taken") => Some("That LMS and client id are registered already on this server."),
        Some("sso-taken") => Some("Another school on this server is linked to that already. Whoever runs this Margin server can move it."),
        Some("allowance") => Some("The allowance can be at most the server's. Whoever runs this Margin server can raise it."),
        Some(_) => Some("Something went wrong on the server. Please try again."),
        None => None,
    };
    view! {
        <Title text="School · Margin"/>
        <TopBar/>
        <main class="page school">
            <div class="page-head">
                <h1>"School"</h1>
                <a href="/">"Back to your lessons"</a>
            </div>
            {move || notice().map(|n| view! { <p class="form-ok" role="status">{n}</p> })}
            {move || error().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match overview.await {
                        Ok(o) => {
                            // The whole address, to paste into an email.
                            let origin = o.origin.clone();
                            let invite = invited().map(|token| view! {
                                <div class="invite-link" role="status">
                                    <p>"Send this link to the teacher you are inviting. It works once, for 7 days, and is shown only now:"</p>
                                    <InviteLink token origin/>
                                </div>
                            });
                            Either::Left(view! { {invite}<Overview o registration=registration()/> })
                        }
                        Err(e) => Either::Right(view! { <p class="form-error" role="alert">{error_text(&e)}</p> }),
                    }
                })}
            </Suspense>
        </main>
    }
}

/// The invitation link, the whole address, selectable to copy.
#[component]
fn InviteLink(token: String, origin: String) -> impl IntoView {
    let link = format!("{origin}/signup?invite={token}");
    view! { <p><input class="invite-url" readonly aria-label="Invitation link" value=link size="64"/></p> }
}

#[component]
fn Overview(o: SchoolOverview, registration: Option<String>) -> impl IntoView {
    let SchoolOverview { school, usage, server_allowance, operator, storage_limit, members, invites, frameworks, sso_links, sso_options, sso_student_domains, lms, origin, help_sentence, help_default, keep_tutor_chats_days, keep_teacher_chats_days, keep_audit_days } = o;
    let (waiting, members): (Vec<_>, Vec<_>) = members.into_iter().filter(|m| m.role != crate::models::ROLE_REMOVED).partition(|m| m.role == crate::models::ROLE_PENDING);
    let storage_note = storage_limit.map(|l| format!("Each teacher's account keeps up to {} of lessons, versions and material.", megabytes(l)));
    let meter = usage.meter().unwrap_or_else(|| "Unlimited: this school has no monthly allowance.".into());
    let remaining = usage.remaining.map(|r| format!("{} tokens left this month, with credits. The allowance resets on {}.", thousands(r), usage.reset_day));
    let own = school.monthly_tokens.filter(|n| *n >= 0).map(|n| n.to_string()).unwrap_or_default();
    let teacher_share = school.teacher_share.map(|n| n.to_string()).unwrap_or_default();
    let student_share = school.student_share.map(|n| n.to_string()).unwrap_or_default();
    let server = match server_allowance {
        Some(n) if !operator => format!("Leave empty for the server's allowance ({} tokens a month), or set a lower one.", thousands(n)),
        Some(n) => format!("Leave empty for the server's allowance ({} tokens a month).", thousands(n)),
        None => "Leave empty for the server's allowance (unlimited).".into(),
    };
    view! {
        <section aria-labelledby="usage-head">
            <h2 id="usage-head">"AI use this month"</h2>
            <p class="school-meter">{meter}</p>
            {remaining.map(|r| view! { <p class="muted">{r}</p> })}
            <p>"Credits: " <strong class="school-credits">{thousands(usage.credits)}</strong> " tokens. Credits do not expire; they are used once the month's allowance is spent."</p>
            {if operator {
                Either::Left(view! {
                    <form method="post" action="/school/credits" class="inline-form" id="credits">
                        <label for="credit-tokens">"Tokens to add"</label>
                        <input id="credit-tokens" name="tokens" inputmode="numeric" required placeholder="100,000"/>
                        <button type="submit" class="primary">"Add credits"</button>
                    </form>
                })
            } else {
                Either::Right(view! {
                    <p class="muted" id="credits">"Credits are added by whoever runs this Margin server. Ask them when the school needs more."</p>
                })
            }}
        </section>
        {(!waiting.is_empty()).then(|| view! {
            <section aria-labelledby="waiting-head" id="waiting">
                <h2 id="waiting-head">"Waiting for you"</h2>
                <p class="muted">"These people signed in with your school's accounts. Let in those who teach; students join their class from its link instead."</p>
                <ul class="waiting">
                    {waiting.into_iter().map(|m| {
                        let approve = format!("Let {} in as a teacher", m.email);
                        let decline = format!("Decline {}", m.email);
                        view! {
                            <li>
                                <span>{m.email.clone()}</span>
                                <form method="post" action=format!("/school/members/{}/approve", m.id)>
                                    <button type="submit" class="primary" aria-label=approve>"Let in as a teacher"</button>
                                </form>
                                <form method="post" action=format!("/school/members/{}/decline", m.id)>
                                    <button type="submit" class="quiet danger" aria-label=decline>"Decline"</button>
                                </form>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </section>
        })}
        <section aria-labelledby="teachers-head">
            <h2 id="teachers-head">"Teachers"</h2>
            <table class="members">
                <thead><tr><th>"Email"</th><th>"Role"</th><th>"Tokens this month"</th><th>"Storage"</th><th><span class="sr-only">"Remove"</span></th></tr></thead>
                <tbody>
                    {members.into_iter().map(|m| {
                        let removable = m.role != crate::models::ROLE_ADMIN;
                        // The button says whom by the row's email cell (its description),
                        // so the cells' own names stay what they show.
                        let who = format!("member-{}", m.id);
                        let action = format!("/school/members/{}/remove", m.id);
                        view! {
                            <tr>
                                <td id=who.clone()>{m.email}</td><td>{m.role}</td><td>{thousands(m.tokens_this_month)}</td><td class="storage">{megabytes(m.stored_bytes)}</td>
                                <td>
                                    // Everything kept about them, for a data request.
                                    <a href=format!("/api/school/members/{}/export", m.id) download aria-describedby=who.clone()>"Export data"</a>
                                    {removable.then(|| view! {
                                    <form method="post" action=action>
                                        <button type="submit" class="quiet danger" aria-describedby=who.clone()>"Remove"</button>
                                    </form>
                                    // Two steps: the next page says what goes.
                                    <a href=format!("/school/members/{}/delete", m.id) class="danger" aria-describedby=who>"Delete account and data…"</a>
                                })}
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            {storage_note.map(|n| view! { <p class="muted">{n}</p> })}
            <form method="post" action="/school/invites">
                <button type="submit" class="primary">"Invite a teacher"</button>
            </form>
            {(!invites.is_empty()).then(|| view! {
                <h3>"Open invitations"</h3>
                <ul class="invites">
                    {invites.into_iter().map(|i| view! {
                        <li>
                            <span>"Made " {i.created_at.get(..10).unwrap_or_default().to_string()} ", works until " {i.expires_at.get(..10).unwrap_or_default().to_string()}</span>
                            <form method="post" action=format!("/school/invites/{}/revoke", i.id)>
                                <button type="submit" class="quiet danger">"Revoke"</button>
                            </form>
                        </li>
                    }).collect_view()}
                </ul>
            })}
        </section>
        <section aria-labelledby="settings-head">
            <h2 id="settings-head">"Settings"</h2>
            <form method="post" action="/school/settings" class="stack">
                <label for="school-name">"School name"</label>
                <input id="school-name" name="name" required maxlength="120" value=school.name/>
                <label for="school-allowance">"Monthly allowance in tokens"</label>
                <input id="school-allowance" name="monthly_tokens" inputmode="numeric" value=own/>
                <p class="muted">{server}</p>
                <label for="teacher-share">"Each teacher's monthly share in tokens"</label>
                <input id="teacher-share" name="teacher_share" inputmode="numeric" value=teacher_share/>
                <label for="student-share">"Each student's monthly share in tokens (the tutor)"</label>
                <input id="student-share" name="student_share" inputmode="numeric" value=student_share/>
                <p class="muted">"Leave a share empty to let everyone use what the school has. With a share, one account cannot use up the month for the others."</p>
                <button type="submit">"Save"</button>
            </form>
        </section>
        <section aria-labelledby="help-head" id="help">
            <h2 id="help-head">"When a student may be at risk"</h2>
            <p class="muted">"When a student tells the tutor something that suggests they may be hurt or hurting, the tutor answers with care and ends with this sentence, and the flag reaches their teacher and you. Say who to talk to at your school."</p>
            <form method="post" action="/school/help" class="stack">
                <label for="help-sentence">"Where students find help"</label>
                <textarea id="help-sentence" name="sentence" maxlength="600" rows="3" placeholder=help_default>{help_sentence}</textarea>
                <p class="muted">"Leave it empty to use the sentence shown in grey."</p>
                <button type="submit">"Set the help sentence"</button>
            </form>
        </section>
        <section aria-labelledby="audit-head" id="audit">
            <h2 id="audit-head">"What the AI did"</h2>
            <p class="muted">"Every reply of the assistant and the tutor in your school: who it was for, the lesson, the model, the tokens, the tools it ran and what each changed, and every refusal and flag. Never the words of a message."</p>
            <p><a href="/school/audit">"Open the audit log"</a></p>
        </section>
        <section aria-labelledby="keeping-head" id="keeping">
            <h2 id="keeping-head">"How long chats are kept"</h2>
            <p class="muted">"Once a day, chats whose last message is older than this are deleted, with their messages. Leave a box empty to keep chats until someone deletes them. Students' answers, lessons and flags are not affected."</p>
            <form method="post" action="/school/retention" class="stack">
                <label for="keep-tutor">"Students' chats with the tutor (days)"</label>
                <input id="keep-tutor" name="tutor_chats_days" inputmode="numeric" value=keep_tutor_chats_days.map(|d| d.to_string()).unwrap_or_default()/>
                <label for="keep-teacher">"Teachers' chats with the assistant (days)"</label>
                <input id="keep-teacher" name="teacher_chats_days" inputmode="numeric" value=keep_teacher_chats_days.map(|d| d.to_string()).unwrap_or_default()/>
                <label for="keep-audit">"The audit log of what the AI did (days, at least 30)"</label>
                <input id="keep-audit" name="audit_days" inputmode="numeric" required value=keep_audit_days.to_string()/>
                <button type="submit">"Set how long chats are kept"</button>
            </form>
        </section>
        <SchoolSignIn links=sso_links options=sso_options student_domains=sso_student_domains/>
        <Lms platforms=lms origin registration/>
        <Standards frameworks/>
    }
}

/// "Sign in with school accounts": which people land in this school when
/// they sign in with a provider, and what the admin may link (the domain or
/// organisation of their own linked school account).
#[component]
fn SchoolSignIn(links: Vec<crate::models::SsoLink>, options: Vec<crate::models::SsoLink>, student_domains: Vec<String>) -> impl IntoView {
    let student_domains = student_domains.join(", ");
    let link_row = |l: crate::models::SsoLink, action: &'static str, button: &'static str, class: &'static str| {
        let text = format!("{}: {}", l.label, l.who());
        view! {
            <li>
                <span>{text}</span>
                <form method="post" action=action>
                    <input type="hidden" name="provider" value=l.provider/>
                    <input type="hidden" name="kind" value=l.kind/>
                    <input type="hidden" name="value" value=l.value/>
                    <button type="submit" class=class>{button}</button>
                </form>
            </li>
        }
    };
    view! {
        <section aria-labelledby="sso-head" id="sign-in">
            <h2 id="sso-head">"Sign in with school accounts"</h2>
            <p class="muted">"Teachers who sign in with the school's own accounts land in this school, with no password to keep. Students join their class from its link, with the same accounts."</p>
            {if links.is_empty() {
                Either::Left(view! { <p>"No school accounts are linked yet."</p> })
            } else {
                Either::Right(view! { <ul class="sso-links">{links.into_iter().map(|l| link_row(l, "/school/sso/remove", "Unlink", "quiet danger")).collect_view()}</ul> })
            }}
            {if options.is_empty() {
                Either::Left(view! { <p class="muted">"To link one, first link your own school account on the " <a href="/account">"Account"</a> " page."</p> })
            } else {
                Either::Right(view! {
                    <h3>"Link"</h3>
                    <ul class="sso-options">{options.into_iter().map(|l| link_row(l, "/school/sso", "Link to this school", "")).collect_view()}</ul>
                })
            }}
            <form method="post" action="/school/sso/students" class="stack">
                <label for="student-domains">"Students' email domains"</label>
                <input id="student-domains" name="domains" value=student_domains placeholder="students.lincoln.org"/>
                <p class="muted">"People who sign in with an address at one of these domains are students; everyone else waits for you to let them in as a teacher."</p>
                <button type="submit">"Set students' domains"</button>
            </form>
        </section>
    }
}

/// "Your LMS": what a platform's admin enters to add Margin as an LTI 1.3
/// tool, the platforms registered, and the form that registers one.
#[component]
fn Lms(platforms: Vec<crate::models::LmsPlatform>, origin: String, registration: Option<String>) -> impl IntoView {
    let registration = registration.map(|token| format!("{origin}/lti/register/{token}"));
    let values = [("Login (OIDC initiation) address", format!("{origin}/lti/login")), ("Launch (redirect and target link) address", format!("{origin}/lti/launch"))];
    view! {
        <section aria-labelledby="lms-head" id="lms">
            <h2 id="lms-head">"Your LMS (LTI 1.3)"</h2>
            <p class="muted">"Teachers and students can open Margin from inside Canvas, Moodle, Brightspace or any LMS that speaks LTI 1.3."</p>
            <h3>"Register by address (LTI Dynamic Registration)"</h3>
            <p class="muted">"Canvas, Moodle and Brightspace add a tool from one address: make one here and give it to your LMS's admin, who enters it as the tool's registration URL. It works once, for a day."</p>
            {match registration {
                Some(url) => Either::Left(view! {
                    <div class="invite-link" role="status">
                        <p>"The registration address, shown only now:"</p>
                        <p><input class="invite-url" readonly aria-label="Registration address" value=url/></p>
                    </div>
                }),
                None => Either::Right(view! {
                    <form method="post" action="/school/lti/dynamic">
                        <button type="submit" class="primary">"Make a registration address"</button>
                    </form>
                }),
            }}
            <h3>"Register by hand"</h3>
            <p class="muted">"For an LMS without Dynamic Registration: give its admin these values, then register what the LMS shows for Margin below."</p>
            <dl class="lms-values">
                {values.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd><code>{v}</code></dd> }).collect_view()}
            </dl>
            {(!platforms.is_empty()).then(|| view! {
                <ul class="lms-platforms">
                    {platforms.into_iter().map(|p| view! {
                        <li>
                            <span><strong>{p.name}</strong> " · " {p.issuer} " · client " {p.client_id} " · deployments " {p.deployments.join(", ")}</span>
                            <span class="muted">"Margin's keys address for it: " <code>{p.tool_jwks_url}</code>
                                {(!p.own_key).then(|| " (still Margin's shared key: point the LMS at this address, then give it its own key)")}
                            </span>
                            {(!p.own_key).then(|| view! {
                                <form method="post" action=format!("/school/lti/{}/own-key", p.id)>
                                    <button type="submit">"Give it its own key"</button>
                                </form>
                            })}
                            <form method="post" action=format!("/school/lti/{}/remove", p.id)>
                                <button type="submit" class="quiet danger">"Remove"</button>
                            </form>
                        </li>
                    }).collect_view()}
                </ul>
            })}
            <form method="post" action="/school/lti" class="stack">
                <label for="lms-name">"Name"</label>
                <input id="lms-name" name="name" maxlength="80" placeholder="Canvas"/>
                <label for="lms-issuer">"Issuer (platform id)"</label>
                <input id="lms-issuer" name="issuer" required placeholder="https://canvas.instructure.com"/>
                <label for="lms-client">"Client id"</label>
                <input id="lms-client" name="clientId" required/>
                <label for="lms-deployments">"Deployment ids"</label>
                <input id="lms-deployments" name="deployments" required/>
                <label for="lms-login">"Authentication (authorization) address"</label>
                <input id="lms-login" name="loginUrl" required placeholder="https://…/api/lti/authorize_redirect"/>
                <label for="lms-token">"Access token address"</label>
                <input id="lms-token" name="tokenUrl" required placeholder="https://…/login/oauth2/token"/>
                <label for="lms-jwks">"Public keys (JWKS) address"</label>
                <input id="lms-jwks" name="jwksUrl" required placeholder="https://…/api/lti/security/jwks"/>
                <label for="lms-services">"Other addresses its services use (optional)"</label>
                <input id="lms-services" name="serviceOrigins" placeholder="https://yourschool.instructure.com"/>
                <p class="muted">"Rosters and grades are read and sent only at the platform's own addresses. Canvas serves them at your school's Canvas address: enter it here. Once registered, give the LMS the keys address Margin shows for it."</p>
                <button type="submit">"Register the LMS"</button>
            </form>
        </section>
    }
}

/// The frameworks the school's lessons may name, and "Add a framework".
#[component]
fn Standards(frameworks: Vec<crate::models::Framework>) -> impl IntoView {
    view! {
        <section aria-labelledby="standards-head" id="standards">
            <h2 id="standards-head">"Standards"</h2>
            <p class="muted">"Lessons can name the standards they teach. Add your frameworks as 1EdTech CASE packages (the JSON file your state or network publishes); every code on a lesson is then checked against them."</p>
            {if frameworks.is_empty() {
                Either::Left(view! { <p>"No frameworks yet."</p> })
            } else {
                Either::Right(view! {
                    <ul class="frameworks">
                        {frameworks.into_iter().map(|f| view! {
                            <li>
                                <span><strong>{f.title}</strong> " · " {format!("{} standards", f.items)}
                                    {(!f.creator.is_empty()).then(|| format!(" · {}", f.creator))}</span>
                                {if f.shared {
                                    Either::Left(view! { <span class="muted">"Offered by this server"</span> })
                                } else {
                                    Either::Right(view! {
                                        <form method="post" action=format!("/school/frameworks/{}/remove", f.id)>
                                            <button type="submit" class="quiet danger">"Remove"</button>
                                        </form>
                                    })
                                }}
                            </li>
                        }).collect_view()}
                    </ul>
                })
            }}
            <form method="post" action="/school/frameworks" enctype="multipart/form-data" class="stack">
                <label for="framework-file">"CASE package (.json)"</label>
                <input id="framework-file" type="file" name="file" accept=".json,application/json" required/>
                <button type="submit">"Add a framework"</button>
            </form>
        </section>
    }
}
