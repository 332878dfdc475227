//! `make bench`, third part: the lessons list of a teacher with 1,000
//! lessons (each a typical few-KB document) on a real SQLite file: one page
//! in each order, and full-text searches that match a few lessons (by date
//! and best match first), every lesson, and none. Target: each under 20 ms.

use std::time::{Duration, Instant};

use margin::server::{
    db,
    lessons::library::{fill_search_text, find, Sort},
};

const LESSONS: usize = 1_000;

fn document(i: usize) -> String {
    let mut doc = format!("<lesson>\n<h1 id=\"b1\">Lesson {i}</h1>\n");
    for p in 0..20 {
        let topic = if i % 100 == 7 { "photosynthesis" } else { "grammar" };
        doc.push_str(&format!(
            "<p id=\"p{p}\">Paragraph {p} of lesson {i} on {topic}: the class reads, talks it over and writes a short answer in their own words.</p>\n"
        ));
    }
    doc.push_str("</lesson>\n");
    doc
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let pool = db::connect(&format!("sqlite://{}/library.db", dir.path().display())).await.unwrap();
    sqlx::query("INSERT INTO users (id, email, password_hash) VALUES ('t', 't@x.org', 'x')").execute(&pool).await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    for i in 0..LESSONS {
        sqlx::query("INSERT INTO lessons (id, owner_id, title, document_xml, updated_at) VALUES ($1, 't', $2, $3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', $4))")
            .bind(format!("l{i}"))
            .bind(format!("Lesson {i}"))
            .bind(document(i))
            .bind(format!("-{i} minutes"))
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    // What start-up does for lessons stored before search had their words.
    let started = Instant::now();
    let filled = fill_search_text(&pool).await.unwrap();
    println!("Preparing {filled} older lessons for search at start-up: {:.0} ms", started.elapsed().as_secs_f64() * 1e3);
    println!("Lessons list of one teacher with {LESSONS} lessons (~2.5 KB each), median of 51:");
    for (what, query, sort) in [
        ("first page, last edited first", "", Sort::Edited),
        ("first page, by title", "", Sort::Title),
        ("search matching 10 lessons", "photosynthesis", Sort::Edited),
        ("the same, best match first", "photosynthesis", Sort::Relevance),
        ("search matching every lesson", "grammar", Sort::Edited),
        ("search matching none", "volcano", Sort::Edited),
    ] {
        let mut times = Vec::new();
        let mut total = 0;
        for _ in 0..51 {
            let started = Instant::now();
            let page = find(&pool, "t", query, sort, 50, 0).await.unwrap();
            times.push(started.elapsed());
            total = page.total;
        }
        println!("  {what:<32} {:>7.2} ms  ({total} found; target < 20 ms)", median(times).as_secs_f64() * 1e3);
    }
}
