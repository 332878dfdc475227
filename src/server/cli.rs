//! The command line beside the server, for whoever runs it:
//!
//! - `margin config`: every setting in effect, secrets masked, and what is
//!   wrong with any (the server refuses to start on those);
//! - `margin schools`: every school with its id, members and credits;
//! - `margin credits add --school <id or name> --tokens <n>`: adds credits
//!   (there is no payment provider; this and an operator's School page are
//!   the ways credits arrive);
//! - `margin allowance set --school <id or name> --tokens <n|unlimited|default>`:
//!   a school's own monthly allowance, above the server's if need be;
//! - `margin copy --from sqlite://… --to postgres://…`: a single-machine
//!   school moved onto PostgreSQL (`ops::copy`);
//! - `margin backup <file>`, `margin restore <file>`: the whole database in
//!   one file, and back into a new database (`ops::backup`);
//! - `margin export --email <email> <file.zip>`: everything kept about one
//!   person (`ops::export`);
//! - `margin delete --email <email> [--lessons admin|delete] [--yes]`: one
//!   person's account and data deleted (`ops::deletion`); without `--yes`
//!   it says what would go and deletes nothing;
//! - `margin operators [add|remove <email>]`: who runs the server
//!   (`operators`): those accounts add credits and raise allowances from
//!   their School page;
//! - `margin sso links`, `margin sso link --school … <provider> <domain|tenant> <value>`:
//!   which school a sign-in domain or tenant lands in (`accounts::sso::school_links`);
//! - `margin lti-key rotate [REGISTRATION]`: a new key for one LMS
//!   registration, or the shared key (`lti::keys`); the old one stays
//!   published a day.
//!
//! All open the database the server would (`DATABASE_URL`). Hand-parsed: a
//! few commands do not justify an argument-parsing crate.

use std::process::ExitCode;

use crate::server::{accounts::budget, config::Config, db, accounts::operators, accounts::schools};

/// Runs a command when the arguments name one; `None`: start the server.
pub async fn run(args: &[String]) -> Option<ExitCode> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match words.as_slice() {
        ["config"] => show_config(),
        ["schools"] => list().await,
        ["credits", "add", rest @ ..] => add_credits(rest).await,
        ["allowance", "set", rest @ ..] => set_allowance(rest).await,
        ["operators"] => list_operators().await,
        ["copy", "--from", from, "--to", to] | ["copy", "--to", to, "--from", from] => copy(from, to).await,
        ["backup", file] => backup(file, true).await,
        ["restore", file] => backup(file, false).await,
        ["export", "--email", email, file] => export_person(email, file).await,
        ["delete", "--email", email, rest @ ..] => delete_person(email, rest).await,
        ["operators", "add", email] => change_operator(email, true).await,
        ["operators", "remove", email] => change_operator(email, false).await,
        ["lti-key", "rotate"] => rotate_lti_key(None).await,
        ["lti-key", "rotate", platform] => rotate_lti_key(Some(platform)).await,
        ["sso", "links"] => sso_links().await,
        ["sso", "link", "--school", school, provider, kind, value] => sso_link(school, provider, kind, value).await,
        ["sso", ..] | ["lti-key", ..] | ["credits", ..] | ["allowance", ..] | ["operators", ..] | ["copy", ..] | ["backup", ..] | ["restore", ..] | ["export", ..] | ["delete", ..] | ["help"] | ["--help"] | ["-h"] => Err(USAGE.into()),
        _ => return None,
    };
    Some(match result {
        Ok(said) => {
            println!("{said}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("{why}");
            ExitCode::FAILURE
        }
    })
}

const USAGE: &str = "Usage:
  margin                                              start the server
  margin config                                       print the settings in effect (secrets hidden)
  margin schools                                      list the schools
  margin credits add --school <id or name> --tokens <n>   add credits to a school
  margin allowance set --school <id or name> --tokens <n|unlimited|default>
                                                      set a school's monthly allowance
  margin operators                                    list the operators
  margin operators add <email>                        let an account add credits and raise allowances
  margin operators remove <email>                     take that back
  margin copy --from sqlite://<file> --to postgres://<server>/<database>
                                                      move everything into an empty PostgreSQL database
  margin backup <file>                                the whole database in one file, while the server runs
  margin restore <file>                               a backup into a new database (DATABASE_URL), never over one
  margin export --email <email> <file.zip>            everything kept about one person, as a zip
  margin delete --email <email> [--lessons admin|delete] [--yes]
                                                      delete one person's account and data (a teacher's lessons go
                                                      to the school's admin unless --lessons delete); without --yes,
                                                      only says what would go
  margin sso links                                    list which school each sign-in domain or tenant lands in
  margin sso link --school <id or name> <provider> <domain|tenant> <value>
                                                      link a domain or tenant to a school (moving it from another)
  margin lti-key rotate [REGISTRATION]                a new signing key for one LMS registration, or the shared key of registrations that have none of their own (the old one stays published a day)";

/// The server's configuration, checked as the server checks it.
fn config() -> Result<Config, String> {
    crate::server::config::load().map(|(config, _, _)| config)
}

/// `margin config`: every setting in effect, secrets masked; the problems
/// too, when there are any (and then a failure, as the server would).
fn show_config() -> Result<String, String> {
    let mut env = crate::settings::Env::from_process();
    Config::read(&mut env);
    crate::agent::config::AiConfig::read(&mut env);
    let width = env.effective().iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let lines: Vec<String> = env.effective().iter().map(|(n, v)| format!("{n:width$}  {v}")).collect();
    let shown = lines.join("\n");
    match env.finish() {
        Ok(()) => Ok(shown),
        Err(why) => Err(format!("{shown}\n\n{why}")),
    }
}

async fn open() -> Result<db::Db, String> {
    let url = config()?.database_url;
    db::connect(&url).await.map_err(|e| format!("Could not open the database at {}: {e}", db::redacted(&url)))
}

async fn list() -> Result<String, String> {
    let db = open().await?;
    let rows: Vec<(String, String, i64, i64)> = sqlx::query_as(
        "SELECT s.id, s.name, s.credits, (SELECT COUNT(*) FROM users u WHERE u.school_id = s.id) FROM schools s ORDER BY s.created_at",
    )
    .fetch_all(&db)
    .await
    .map_err(|e| e.to_string())?;
    if rows.is_empty() {
        return Ok("No schools yet: the first account to sign up starts one.".into());
    }
    Ok(rows
        .into_iter()
        .map(|(id, name, credits, members)| format!("{id}  {name}  ({members} accounts, {} credits)", crate::chat::message::thousands(credits)))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// `--school` and `--tokens` of a command.
fn school_and_tokens<'a>(rest: &[&'a str]) -> Result<(&'a str, String), String> {
    let (mut school, mut tokens) = (None, None);
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        match *flag {
            "--school" => school = it.next().copied(),
            "--tokens" => tokens = it.next().map(|t| t.replace([',', '_'], "")),
            other => return Err(format!("Unknown option {other}.\n{USAGE}")),
        }
    }
    match (school, tokens) {
        (Some(school), Some(tokens)) => Ok((school, tokens)),
        _ => Err(USAGE.into()),
    }
}

/// The one school with this id or name.
async fn one_school(db: &db::Db, school: &str) -> Result<crate::models::School, String> {
    let found = schools::find(db, school).await.map_err(|e| e.to_string())?;
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("No school has the id or name {school:?}. `margin schools` lists them.")),
        _ => Err(format!("{} schools are named {school:?}; give the id instead (`margin schools`).", found.len())),
    }
}

async fn set_allowance(rest: &[&str]) -> Result<String, String> {
    let (school, tokens) = school_and_tokens(rest)?;
    let (allowance, said) = match tokens.as_str() {
        "unlimited" => (Some(-1), "unlimited".to_string()),
        "default" => (None, "the server's".to_string()),
        n => {
            let n: i64 = n.parse().ok().filter(|n| *n >= 0).ok_or("--tokens takes a whole number, `unlimited` or `default`.")?;
            (Some(n), format!("{} tokens a month", crate::chat::message::thousands(n)))
        }
    };
    let db = open().await?;
    let target = one_school(&db, school).await?;
    budget::set_allowance(&db, &target.id, allowance).await.map_err(|e| e.to_string())?;
    Ok(format!("{}'s allowance is now {said}.", target.name))
}

async fn rotate_lti_key(platform: Option<&str>) -> Result<String, String> {
    let db = open().await?;
    if let Some(p) = platform {
        crate::server::lti::platforms::get(&db, p).await.map_err(|e| e.to_string())?.ok_or(format!("No LMS registration {p} on this server."))?;
    }
    let (kid, _) = crate::server::lti::keys::rotate(&db, platform).await.map_err(|e| e.to_string())?;
    Ok(match platform {
        Some(p) => format!("New LTI key {kid} for registration {p}: it signs from now on; its LMS finds it at /lti/jwks/{p}."),
        None => format!("New shared LTI key {kid}: registrations without a key of their own sign with it from now on; platforms find it at /lti/jwks."),
    })
}

async fn sso_links() -> Result<String, String> {
    let db = open().await?;
    let links = crate::server::accounts::sso::school_links::all(&db).await.map_err(|e| e.to_string())?;
    Ok(if links.is_empty() {
        "No school is linked to a sign-in domain or tenant.".into()
    } else {
        links.into_iter().map(|(p, k, v, s)| format!("{p}\t{k}\t{v}\t{s}")).collect::<Vec<_>>().join("\n")
    })
}

async fn sso_link(school: &str, provider: &str, kind: &str, value: &str) -> Result<String, String> {
    let db = open().await?;
    let target = one_school(&db, school).await?;
    let moved = crate::server::accounts::sso::school_links::link_by_operator(&db, &target.id, provider, kind, value).await.map_err(|e| e.to_string())?;
    Ok(match moved {
        Some(from) => format!("{provider} {kind} {value} now lands in {} (moved from school {from}).", target.name),
        None => format!("{provider} {kind} {value} now lands in {}.", target.name),
    })
}

async fn list_operators() -> Result<String, String> {
    let db = open().await?;
    let emails = operators::list(&db).await.map_err(|e| e.to_string())?;
    Ok(if emails.is_empty() { "No operators yet: `margin operators add <email>` names one.".into() } else { emails.join("\n") })
}

async fn change_operator(email: &str, add: bool) -> Result<String, String> {
    let db = open().await?;
    if add {
        match operators::add(&db, email).await {
            Ok(true) => Ok(format!("{email} is now an operator: it can add credits and raise allowances.")),
            Ok(false) => Ok(format!("{email} was already an operator.")),
            Err(crate::server::error::AppError::NotFound) => Err(format!("No account has the email {email}. Sign up first.")),
            Err(e) => Err(e.to_string()),
        }
    } else {
        match operators::remove(&db, email).await.map_err(|e| e.to_string())? {
            true => Ok(format!("{email} is no longer an operator.")),
            false => Err(format!("{email} is not an operator.")),
        }
    }
}

async fn add_credits(rest: &[&str]) -> Result<String, String> {
    let (school, tokens) = school_and_tokens(rest)?;
    let tokens: i64 = tokens.parse().ok().filter(|n| *n > 0).ok_or("--tokens takes a whole number above zero.")?;
    let db = open().await?;
    let target = one_school(&db, school).await?;
    let now = crate::server::clock::MonthClock::real().now();
    budget::add_credits(&db, &target.id, tokens, None, now).await.map_err(|e| e.to_string())?;
    let default = budget::default_allowance(config()?.monthly_tokens);
    let usage = budget::summary(&db, &target.id, default, now).await.map_err(|e| e.to_string())?;
    Ok(format!(
        "Added {} tokens to {}. It now has {} credits.",
        crate::chat::message::thousands(tokens),
        target.name,
        crate::chat::message::thousands(usage.credits)
    ))
}

/// `margin backup` and `margin restore`, with every table's rows afterwards.
async fn backup(file: &str, taking: bool) -> Result<String, String> {
    let url = config()?.database_url;
    let path = std::path::Path::new(file);
    let counted = if taking { crate::server::ops::backup::backup(&url, path).await? } else { crate::server::ops::backup::restore(&url, path).await? };
    let width = counted.iter().map(|c| c.table.len()).max().unwrap_or(0);
    let mut lines: Vec<String> = counted.iter().map(|c| format!("{:width$}  {:>9} rows", c.table, c.rows)).collect();
    let total: i64 = counted.iter().map(|c| c.rows).sum();
    lines.push(if taking {
        format!("Backed up {total} rows in {} tables to {file}. Keep it somewhere else than this machine.", counted.len())
    } else {
        format!("Restored {total} rows in {} tables from {file}. Start the server on this database.", counted.len())
    });
    Ok(lines.join("\n"))
}

/// `margin export`: one person's data, by their email, into a new zip.
async fn export_person(email: &str, file: &str) -> Result<String, String> {
    let path = std::path::Path::new(file);
    if path.exists() {
        return Err(format!("{file} already exists: name a new file."));
    }
    let db = open().await?;
    let person = crate::server::ops::export::person_by_email(&db, email).await.map_err(|e| e.to_string())?.ok_or_else(|| format!("No account has the email {email}."))?;
    let bytes = crate::server::ops::export::export(&db, &person).await.map_err(|e| e.to_string())?;
    std::fs::write(path, &bytes).map_err(|e| format!("Could not write {file}: {e}"))?;
    Ok(format!("Wrote everything Margin keeps about {email} ({} bytes) to {file}.", bytes.len()))
}

/// `margin delete`: one person's account and data, in two steps: without
/// `--yes` it says what would go.
async fn delete_person(email: &str, rest: &[&str]) -> Result<String, String> {
    let (mut theirs, mut yes) = (crate::server::ops::deletion::TheirLessons::ToAdmin, false);
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        match *word {
            "--yes" => yes = true,
            "--lessons" => {
                let choice = words.next().copied().unwrap_or_default();
                theirs = crate::server::ops::deletion::TheirLessons::from_word(choice).ok_or_else(|| format!("--lessons takes admin or delete, not {choice:?}."))?;
            }
            other => return Err(format!("Unknown option {other}.\n{USAGE}")),
        }
    }
    let db = open().await?;
    let person = crate::server::ops::export::person_by_email(&db, email).await.map_err(|e| e.to_string())?.ok_or_else(|| format!("No account has the email {email}."))?;
    let admin: Option<crate::models::UserInfo> = sqlx::query_as(
        "SELECT id, email, COALESCE(school_id, '') AS school_id, role FROM users WHERE school_id = $1 AND role = 'admin' ORDER BY created_at, id LIMIT 1",
    )
    .bind(&person.school_id)
    .fetch_optional(&db)
    .await
    .map_err(|e| e.to_string())?;
    let admin = admin.ok_or_else(|| format!("{email}'s school has no admin to hand their lessons to: use --lessons delete."))?;
    let what = crate::server::ops::deletion::preview(&db, &person).await.map_err(|e| e.to_string())?;
    let sentence = what.sentence(theirs, &admin.email);
    if !yes {
        return Ok(format!("{sentence}\nNothing was deleted. Run the same command with --yes to delete."));
    }
    crate::server::ops::deletion::delete(&db, &person, theirs, &admin).await.map_err(|e| e.to_string())?;
    Ok(format!("Deleted {email}'s account and data."))
}

/// `margin copy`: every table from SQLite into an empty PostgreSQL database.
async fn copy(from: &str, to: &str) -> Result<String, String> {
    let copied = crate::server::ops::copy::copy(from, to).await?;
    let width = copied.iter().map(|c| c.table.len()).max().unwrap_or(0);
    let mut lines: Vec<String> = copied.iter().map(|c| format!("{:width$}  {:>9} rows (PostgreSQL: {})", c.table, c.source, c.target)).collect();
    let total: i64 = copied.iter().map(|c| c.target).sum();
    lines.push(format!("Copied {total} rows in {} tables; every count matches. Point DATABASE_URL at the PostgreSQL database to use it.", copied.len()));
    Ok(lines.join("\n"))
}
