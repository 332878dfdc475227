//! The month a spending falls in, as the budget's rows keep it. Apart, so
//! that spending and the budget both read it without reading each other.

use time::OffsetDateTime;

/// The month a time falls in, as `usage_month` keeps it: `2026-11`.
pub fn month_of(t: OffsetDateTime) -> String {
    format!("{:04}-{:02}", t.year(), u8::from(t.month()))
}
