//! The server's standards folder (`MARGIN_STANDARDS_DIR`): every `.json`
//! CASE package in it is offered to every school, loaded at start. A file
//! already loaded as it is costs one query; a file that cannot be read is
//! named in the log and the others still load. Margin ships no framework.

use std::path::Path;

use super::{case, frameworks};
use crate::server::db::Db;

/// The largest package file read from the folder.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// What loading the folder did: frameworks loaded now, already loaded, and
/// the files refused, each with why.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    pub loaded: usize,
    pub unchanged: usize,
    pub refused: Vec<(String, String)>,
}

/// Loads every `.json` file of `dir` (not its subfolders), in name order.
pub async fn load(db: &Db, dir: &Path) -> Result<Loaded, String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("the standards folder {} cannot be read: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("json")))
        .collect();
    names.sort();
    let mut done = Loaded::default();
    for path in names {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match load_file(db, &path).await {
            Ok(true) => done.loaded += 1,
            Ok(false) => done.unchanged += 1,
            Err(why) => done.refused.push((name, why)),
        }
    }
    Ok(done)
}

/// `Ok(false)`: the file is loaded already, as it is.
async fn load_file(db: &Db, path: &Path) -> Result<bool, String> {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("it is {} MB; a framework file may be at most {} MB", size / 1_048_576, MAX_FILE_BYTES / 1_048_576));
    }
    let bytes = tokio::fs::read(path).await.map_err(|e| e.to_string())?;
    if frameworks::is_loaded(db, &crate::server::ids::digest(&bytes)).await.map_err(|e| e.to_string())? {
        return Ok(false);
    }
    let package = tokio::task::spawn_blocking(move || case::read(&bytes)).await.map_err(|e| e.to_string())??;
    frameworks::load(db, None, &package).await.map_err(|e| e.to_string())?;
    Ok(true)
}
