//! Times are Unix milliseconds (UTC) everywhere; these helpers convert at the edges.

use chrono::{DateTime, SecondsFormat, Utc};

/// Unix time in milliseconds, UTC.
pub type Millis = i64;

/// Formats a time as an RFC 3339 UTC string, e.g. `2026-11-22T10:42:00.000Z`.
pub fn rfc3339(t: Millis) -> String {
    match DateTime::<Utc>::from_timestamp_millis(t) {
        Some(d) => d.to_rfc3339_opts(SecondsFormat::Millis, true),
        None => format!("@{t}ms"),
    }
}

/// Parses an RFC 3339 time (any offset) into Unix milliseconds.
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|d| d.timestamp_millis())
}

/// Hours and minutes of a time, UTC, as shown in notices ("10:42").
pub fn clock_hm(t: Millis) -> String {
    match DateTime::<Utc>::from_timestamp_millis(t) {
        Some(d) => d.format("%H:%M").to_string(),
        None => "??:??".into(),
    }
}

/// A short human duration: `45s`, `12m`, `3h05m`, `2d04h`.
pub fn short_duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86400, (s % 86400) / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_rfc3339() {
        let t = 1_795_000_000_123;
        assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        assert_eq!(
            parse_rfc3339("2026-11-22T10:00:00+01:00"),
            parse_rfc3339("2026-11-22T09:00:00Z")
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(short_duration(45_000), "45s");
        assert_eq!(short_duration(12 * 60_000 + 5_000), "12m05s");
        assert_eq!(short_duration(3 * 3_600_000 + 5 * 60_000), "3h05m");
        assert_eq!(short_duration(2 * 86_400_000 + 4 * 3_600_000), "2d04h");
        assert_eq!(short_duration(-5), "0s");
    }
}
