//! Timestamps as the database stores them: UTC text with milliseconds,
//! `2026-11-24T08:30:07.123Z`, which sorts and compares as time on both
//! backends. The server writes them (rather than each database's own clock
//! function, which the two spell differently), so every instance and both
//! backends agree, and a test can pass a time of its own.

use std::time::Duration;

use time::OffsetDateTime;

/// Now, as stored.
pub fn now() -> String {
    format_time(OffsetDateTime::now_utc())
}

/// `from` moved by `by` (forward when `later`), as stored; `None` when `from`
/// is not a stored timestamp.
pub fn shifted(from: &str, by: Duration, later: bool) -> Option<String> {
    let t = parse(from)?;
    let by = time::Duration::try_from(by).ok()?;
    Some(format_time(if later { t.checked_add(by)? } else { t.checked_sub(by)? }))
}

/// Now moved by `by`, as stored.
pub fn from_now(by: Duration) -> String {
    shifted(&now(), by, true).unwrap_or_else(now)
}

/// A stored timestamp as milliseconds since the Unix epoch.
pub fn epoch_millis(stored: &str) -> Option<i64> {
    parse(stored).map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}

/// A time as stored.
pub fn stored(t: OffsetDateTime) -> String {
    format_time(t)
}

fn format_time(t: OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// Reads a stored timestamp (the form `format_time` writes).
fn parse(s: &str) -> Option<OffsetDateTime> {
    let b = s.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'.' || b[23] != b'Z' {
        return None;
    }
    let n = |from: usize, to: usize| s.get(from..to)?.parse::<u16>().ok();
    let date = time::Date::from_calendar_date(i32::from(n(0, 4)?), time::Month::try_from(n(5, 7)? as u8).ok()?, n(8, 10)? as u8).ok()?;
    let clock = time::Time::from_hms_milli(n(11, 13)? as u8, n(14, 16)? as u8, n(17, 19)? as u8, n(20, 23)?).ok()?;
    Some(time::PrimitiveDateTime::new(date, clock).assume_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_have_one_form() {
        let t = now();
        assert_eq!(t.len(), 24, "{t}");
        assert_eq!(shifted(&t, Duration::ZERO, true).as_deref(), Some(t.as_str()));
    }

    #[test]
    fn shifting_crosses_months_and_years() {
        let day = Duration::from_secs(86_400);
        assert_eq!(shifted("2026-12-31T23:59:59.999Z", day, true).unwrap(), "2027-01-01T23:59:59.999Z");
        assert_eq!(shifted("2026-03-01T00:00:00.000Z", day * 30, false).unwrap(), "2026-01-30T00:00:00.000Z");
        assert_eq!(shifted("2028-02-28T12:00:00.000Z", day, true).unwrap(), "2028-02-29T12:00:00.000Z");
        assert!(shifted("yesterday", day, true).is_none());
        assert!(shifted("2026-13-01T00:00:00.000Z", day, true).is_none());
        assert_eq!(epoch_millis("1970-01-02T00:00:00.250Z"), Some(86_400_250));
    }
}
