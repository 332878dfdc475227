//! The frameworks a school has, in the database: loading one (a school's
//! upload, or the server's folder for every school), listing, removing, and
//! the school's `Catalog` that codes are checked against.

use sqlx::Row;

use super::case::Package;
use crate::lesson::{self, Element, LessonError};
use crate::lesson::standards::{Catalog, Standard};
use crate::models::{Framework, StandardHit};
use crate::server::{
    db::{self, begin_write, Db},
    error::Result,
    ids,
};

/// Rows written per statement when a framework is loaded.
const ROWS_PER_INSERT: usize = 200;

/// Keeps `package` for `school` (`None`: every school's), replacing a
/// framework loaded before from the same CFDocument. Returns it as listed.
pub async fn load(db: &Db, school: Option<&str>, package: &Package) -> Result<Framework> {
    let mut tx = begin_write(db).await?;
    sqlx::query("DELETE FROM frameworks WHERE COALESCE(school_id, '') = $1 AND case_id = $2")
        .bind(school.unwrap_or_default())
        .bind(&package.identifier)
        .execute(&mut *tx)
        .await?;
    let id = ids::new_id();
    sqlx::query("INSERT INTO frameworks (id, school_id, case_id, title, creator, digest, loaded_at) VALUES ($1, $2, $3, $4, $5, $6, $7)")
        .bind(&id)
        .bind(school)
        .bind(&package.identifier)
        .bind(&package.title)
        .bind(&package.creator)
        .bind(&package.digest)
        .bind(db::time::now())
        .execute(&mut *tx)
        .await?;
    for chunk in package.items.chunks(ROWS_PER_INSERT) {
        let values: Vec<String> = (0..chunk.len()).map(|i| format!("($1, ${}, ${})", i * 2 + 2, i * 2 + 3)).collect();
        let sql = format!("INSERT INTO framework_items (framework_id, code, statement) VALUES {}", values.join(", "));
        let mut q = sqlx::query(&sql).bind(&id);
        for (code, statement) in chunk {
            q = q.bind(code).bind(statement);
        }
        q.execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(Framework { id, title: package.title.clone(), creator: package.creator.clone(), items: package.items.len() as i64, shared: school.is_none() })
}

/// Whether the server's folder framework `package` is loaded as it is now.
pub async fn is_loaded(db: &Db, package_digest: &str) -> Result<bool> {
    let found: Option<String> = sqlx::query_scalar("SELECT id FROM frameworks WHERE school_id IS NULL AND digest = $1")
        .bind(package_digest)
        .fetch_optional(db)
        .await?;
    Ok(found.is_some())
}

/// The frameworks `school` may use: its own, then the server's.
pub async fn list(db: &Db, school: &str) -> Result<Vec<Framework>> {
    let rows = sqlx::query(
        "SELECT f.id, f.title, f.creator, f.school_id IS NULL AS shared, (SELECT COUNT(*) FROM framework_items i WHERE i.framework_id = f.id) AS items
         FROM frameworks f WHERE f.school_id = $1 OR f.school_id IS NULL ORDER BY shared, f.title, f.id",
    )
    .bind(school)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Framework {
                id: r.try_get("id")?,
                title: r.try_get("title")?,
                creator: r.try_get("creator")?,
                items: r.try_get("items")?,
                shared: r.try_get::<db::Flag, _>("shared")?.0,
            })
        })
        .collect()
}

/// Removes one of `school`'s own frameworks (the server's are removed from
/// its folder). Lessons that name its codes keep them; their next save says
/// which are no longer known.
pub async fn remove(db: &Db, school: &str, id: &str) -> Result<()> {
    let done = sqlx::query("DELETE FROM frameworks WHERE id = $1 AND school_id = $2").bind(id).bind(school).execute(db).await?;
    db::touched_one(&done)
}

/// Every standard `school` may name, its own frameworks first.
pub async fn catalog(db: &Db, school: &str) -> Result<Catalog> {
    let rows = sqlx::query(
        "SELECT i.code, i.statement, f.title FROM framework_items i JOIN frameworks f ON f.id = i.framework_id
         WHERE f.school_id = $1 OR f.school_id IS NULL ORDER BY f.school_id IS NULL, f.title, f.id, i.code",
    )
    .bind(school)
    .fetch_all(db)
    .await?;
    let items = rows
        .iter()
        .map(|r| Ok(Standard { code: r.try_get("code")?, statement: r.try_get("statement")?, framework: r.try_get("title")? }))
        .collect::<std::result::Result<Vec<_>, sqlx::Error>>()?;
    Ok(Catalog::new(items))
}

/// Whether `school` has any framework (most have none, and their saves need
/// not read a catalog unless the lesson names codes).
pub async fn any(db: &Db, school: &str) -> Result<bool> {
    let found: Option<String> = sqlx::query_scalar("SELECT id FROM frameworks WHERE school_id = $1 OR school_id IS NULL LIMIT 1")
        .bind(school)
        .fetch_optional(db)
        .await?;
    Ok(found.is_some())
}

/// What is wrong with the codes `lesson` names, for `owner_id`'s school:
/// one error per code no framework of the school has, naming the nearest
/// real ones. A lesson that names no code costs no query; one whose codes
/// are all known costs one.
pub async fn problems(db: &Db, owner_id: &str, lesson: &Element) -> Result<Vec<LessonError>> {
    let codes = lesson::standards::all_codes(lesson);
    if codes.is_empty() {
        return Ok(Vec::new());
    }
    let school = school_of(db, owner_id).await?;
    let list: Vec<String> = (0..codes.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT DISTINCT i.code FROM framework_items i JOIN frameworks f ON f.id = i.framework_id
         WHERE (f.school_id = $1 OR f.school_id IS NULL) AND i.code IN ({})",
        list.join(", ")
    );
    let mut q = sqlx::query_scalar::<_, String>(&sql).bind(&school);
    for code in &codes {
        q = q.bind(code);
    }
    if q.fetch_all(db).await?.len() == codes.len() {
        return Ok(Vec::new());
    }
    Ok(lesson::standards::check(lesson, &catalog(db, &school).await?))
}

/// The school of an account (empty when it has none).
pub async fn school_of(db: &Db, user_id: &str) -> Result<String> {
    Ok(sqlx::query_scalar::<_, String>("SELECT COALESCE(school_id, '') FROM users WHERE id = $1")
        .bind(user_id)
        .fetch_optional(db)
        .await?
        .unwrap_or_default())
}

/// At most `most` standards of `school` matching `query` (`Catalog::search`);
/// `None` when the school has no framework.
pub async fn search(db: &Db, school: &str, query: &str, most: usize) -> Result<Option<Vec<StandardHit>>> {
    let catalog = catalog(db, school).await?;
    if catalog.is_empty() {
        return Ok(None);
    }
    let query: String = query.chars().take(200).collect();
    Ok(Some(
        catalog
            .search(&query, most)
            .into_iter()
            .map(|s| StandardHit { code: s.code.clone(), statement: s.statement.clone(), framework: s.framework.clone() })
            .collect(),
    ))
}
