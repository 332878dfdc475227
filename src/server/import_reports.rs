//! What went wrong with a lesson file a teacher tried to import, kept for a
//! few minutes for the page the import redirects to. The address carries
//! only a random token, never the text, so nobody can make the page say
//! what they like; a token is good only for the teacher who imported.
//!
//! Kept in this process's memory (bounded): an import and the page after it
//! are a second apart. With many instances (#20) this moves to the database.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::models::ImportReport;

const KEEP: Duration = Duration::from_secs(600);
const MAX_REPORTS: usize = 1000;

#[derive(Default)]
pub struct ImportReports {
    reports: Mutex<HashMap<String, (String, Instant, ImportReport)>>,
}

impl ImportReports {
    /// Keeps `report` for `owner`; returns the token that finds it.
    pub fn keep(&self, owner: &str, report: ImportReport) -> String {
        let token = super::ids::random_hex(16);
        let mut reports = self.reports.lock().unwrap_or_else(|p| p.into_inner());
        reports.retain(|_, (_, at, _)| at.elapsed() < KEEP);
        if reports.len() >= MAX_REPORTS {
            if let Some(oldest) = reports.iter().min_by_key(|(_, (_, at, _))| *at).map(|(k, _)| k.clone()) {
                reports.remove(&oldest);
            }
        }
        reports.insert(token.clone(), (owner.to_string(), Instant::now(), report));
        token
    }

    /// The report behind `token`, if it is `owner`'s and still kept.
    pub fn get(&self, owner: &str, token: &str) -> Option<ImportReport> {
        let reports = self.reports.lock().unwrap_or_else(|p| p.into_inner());
        reports
            .get(token)
            .filter(|(who, at, _)| who == owner && at.elapsed() < KEEP)
            .map(|(_, _, r)| r.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_found_only_by_its_owner() {
        let reports = ImportReports::default();
        let report = ImportReport { file: "a.xml".into(), problems: vec!["Line 2: oops".into()] };
        let token = reports.keep("ana", report.clone());
        assert_eq!(reports.get("ana", &token), Some(report));
        assert_eq!(reports.get("ben", &token), None);
        assert_eq!(reports.get("ana", "nope"), None);
    }
}
