//! The command line beside the server, for whoever runs it:
//!
//! - `margin schools`: every school with its id, members and credits;
//! - `margin credits add --school <id or name> --tokens <n>`: adds credits
//!   (there is no payment provider; this and the School page are the ways
//!   credits arrive).
//!
//! Both open the database the server would (`DATABASE_URL`). Hand-parsed:
//! two commands do not justify an argument-parsing crate.

use std::process::ExitCode;

use super::{budget, config::Config, db, schools};

/// Runs a command when the arguments name one; `None`: start the server.
pub async fn run(args: &[String]) -> Option<ExitCode> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match words.as_slice() {
        ["schools"] => list().await,
        ["credits", "add", rest @ ..] => add_credits(rest).await,
        ["credits", ..] | ["help"] | ["--help"] | ["-h"] => Err(USAGE.into()),
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
  margin schools                                      list the schools
  margin credits add --school <id or name> --tokens <n>   add credits to a school";

async fn open() -> Result<db::Db, String> {
    let url = Config::from_env().database_url;
    db::connect(&url).await.map_err(|e| format!("Could not open the database at {url}: {e}"))
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

async fn add_credits(rest: &[&str]) -> Result<String, String> {
    let (mut school, mut tokens) = (None, None);
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        match *flag {
            "--school" => school = it.next().copied(),
            "--tokens" => tokens = it.next().map(|t| t.replace([',', '_'], "")),
            other => return Err(format!("Unknown option {other}.\n{USAGE}")),
        }
    }
    let (Some(school), Some(tokens)) = (school, tokens) else { return Err(USAGE.into()) };
    let tokens: i64 = tokens.parse().ok().filter(|n| *n > 0).ok_or("--tokens takes a whole number above zero.")?;
    let db = open().await?;
    let found = schools::find(&db, school).await.map_err(|e| e.to_string())?;
    let target = match found.as_slice() {
        [one] => one.clone(),
        [] => return Err(format!("No school has the id or name {school:?}. `margin schools` lists them.")),
        _ => return Err(format!("{} schools are named {school:?}; give the id instead (`margin schools`).", found.len())),
    };
    let now = budget::MonthClock::real().now();
    budget::add_credits(&db, &target.id, tokens, None, now).await.map_err(|e| e.to_string())?;
    let default = budget::default_allowance(Config::from_env().monthly_tokens);
    let usage = budget::summary(&db, &target.id, default, now).await.map_err(|e| e.to_string())?;
    Ok(format!(
        "Added {} tokens to {}. It now has {} credits.",
        crate::chat::message::thousands(tokens),
        target.name,
        crate::chat::message::thousands(usage.credits)
    ))
}
