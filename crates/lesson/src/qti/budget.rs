//! What one import may read of a package, and the sentences said when a
//! package asks for more: each part, the whole package and the number of
//! items have a ceiling, so a crafted package costs its sender a refusal
//! (`lesson::archive::Budgeted` keeps the count).

use crate::archive::PartError;

/// The most an archive's part is read to, unpacked.
pub(super) const MAX_PART_BYTES: u64 = 8 * 1024 * 1024;

/// The most items read from one package, however many quizzes it holds.
pub(super) const MAX_ITEMS: usize = 500;

/// The most a whole package's parts unpack to, together: far above any
/// quiz (images are never read), far below what would cost the server.
pub(super) const PACKAGE_BYTES: u64 = 32 * 1024 * 1024;

/// The most parts read from one package: its manifest, test, items and quizzes.
pub(super) const PACKAGE_READS: usize = MAX_ITEMS + 100;

/// The most entries of an archive looked at.
pub(super) const MAX_ENTRIES: usize = 5_000;

/// Says once that items past `MAX_ITEMS` were left out.
pub(super) fn past_items(left_out: &mut Vec<String>) {
    let said = format!("Only the first {MAX_ITEMS} questions came in: that is the most one import takes.");
    if !left_out.contains(&said) {
        left_out.push(said);
    }
}

/// The sentence for a package past its budget.
pub(super) fn over_budget(e: PartError) -> String {
    match e {
        PartError::TooLarge => format!("A file in the package unpacks to more than {} MB, far larger than any quiz: the package cannot be imported.", MAX_PART_BYTES / (1024 * 1024)),
        _ => format!(
            "The package unpacks to more than {} MB or names more than {PACKAGE_READS} files, far more than any quiz: it cannot be imported. Export the quiz again, or in parts.",
            PACKAGE_BYTES / (1024 * 1024)
        ),
    }
}
