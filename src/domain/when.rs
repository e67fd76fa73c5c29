//! The one parser for a time a person types: every flag that takes one (`--since`,
//! `--until`, `--due`, …) and the TUI's dialogs read the same words. `now` and the zone
//! are parameters: nothing here reads the clock.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone};

use super::time::{Millis, Zone, parse_rfc3339};

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;

/// Which way a bare span (`7d`, `90m`) goes from now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// Back: "since 7 days ago" (`--since`, `--until`).
    Back,
    /// Ahead: "due in 2 hours" (`--due`, a time to wake at).
    Ahead,
}

/// What every time flag and dialog accepts, for help texts and messages.
pub const TIME_WORDS: &str = "now, today, yesterday, tomorrow, a span (90m, 12h, 7d, 2w), \
     a time of today or tomorrow (tomorrow 09:00), a date (2026-12-01), a local date and time (2026-12-01 17:00), a time today (17:00) \
     or RFC 3339 (2026-12-01T17:00:00Z)";

/// Parses a time a person typed: `now`; `today`, `yesterday`, `tomorrow` (their first
/// instant in `zone`); a span of minutes, hours, days or weeks (`90m`, `12h`, `7d`, `2w`),
/// back from `now` or ahead of it as `span` says; a date (`2026-12-01`, its first
/// instant); a local date and time (`2026-12-01 17:00`, seconds optional, `T` allowed);
/// a time of day today (`17:00`); or RFC 3339 with its offset. `Err` says what is
/// accepted.
pub fn parse_time(text: &str, now: Millis, zone: Zone, span: Span) -> Result<Millis, String> {
    let s = text.trim();
    parse(s, now, zone, span).ok_or_else(|| format!("'{s}' is not a time; use {TIME_WORDS}"))
}

fn parse(s: &str, now: Millis, zone: Zone, span: Span) -> Option<Millis> {
    match s.to_ascii_lowercase().as_str() {
        "now" => return Some(now),
        "today" => return Some(zone.start_of_day(now)),
        "yesterday" => return Some(day_start(zone, now, -1)),
        "tomorrow" => return Some(day_start(zone, now, 1)),
        _ => {}
    }
    // `tomorrow 09:00`, `today 14:00`: a time of that day.
    if let Some((day, time)) = s.split_once(' ') {
        let days = match day.to_ascii_lowercase().as_str() {
            "today" => 0,
            "tomorrow" => 1,
            _ => -1,
        };
        if days >= 0 {
            let t = ["%H:%M", "%H:%M:%S"]
                .iter()
                .find_map(|f| NaiveTime::parse_from_str(time.trim(), f).ok())?;
            let date = zone
                .at(now)?
                .date_naive()
                .checked_add_signed(chrono::Duration::days(days))?;
            return local(zone, date.and_time(t));
        }
    }
    if let Some(ms) = span_ms(s) {
        return match span {
            Span::Back => now.checked_sub(ms),
            Span::Ahead => now.checked_add(ms),
        };
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return local(zone, d.and_time(NaiveTime::MIN));
    }
    for f in [
        "%Y-%m-%d %H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return local(zone, t);
        }
    }
    for f in ["%H:%M", "%H:%M:%S"] {
        if let Ok(t) = NaiveTime::parse_from_str(s, f) {
            let today = zone.at(now)?.date_naive();
            return local(zone, today.and_time(t));
        }
    }
    parse_rfc3339(s)
}

/// `90m`, `12h`, `7d`, `2w` in milliseconds.
fn span_ms(s: &str) -> Option<i64> {
    let unit = s.chars().last()?;
    let digits = &s[..s.len() - unit.len_utf8()];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    let per = match unit {
        'm' => MIN,
        'h' => HOUR,
        'd' => DAY,
        'w' => 7 * DAY,
        _ => return None,
    };
    n.checked_mul(per)
}

/// The first instant of the day `days` away from the day of `now`, in `zone`.
fn day_start(zone: Zone, now: Millis, days: i64) -> Millis {
    let date = zone
        .at(now)
        .map(|d| d.date_naive())
        .and_then(|d| d.checked_add_signed(chrono::Duration::days(days)));
    date.and_then(|d| local(zone, d.and_time(NaiveTime::MIN)))
        .unwrap_or_else(|| zone.start_of_day(now) + days * DAY)
}

/// A wall-clock time in `zone` as Unix milliseconds. Where the clocks repeat it (the
/// autumn change), the first; where they skip it (the spring change), as if they had not
/// changed yet: 02:30 is the instant the clocks read 03:30.
fn local(zone: Zone, t: NaiveDateTime) -> Option<Millis> {
    match zone {
        Zone::Utc => in_zone(&chrono::Utc, t),
        Zone::Fixed(o) => in_zone(&o, t),
        Zone::Local => in_zone(&chrono::Local, t).or_else(|| {
            in_zone(
                &chrono::Local,
                t.checked_add_signed(chrono::Duration::hours(1))?,
            )
        }),
    }
}

fn in_zone<Tz: TimeZone>(tz: &Tz, t: NaiveDateTime) -> Option<Millis> {
    tz.from_local_datetime(&t)
        .earliest()
        .map(|d| d.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::FixedOffset;

    /// 2026-11-22T10:00:00Z, a Sunday.
    const NOW: Millis = 1_795_341_600_000;

    fn utc(s: &str, span: Span) -> Result<Millis, String> {
        parse_time(s, NOW, Zone::Utc, span)
    }

    #[test]
    fn words_spans_and_dates() {
        let midnight = NOW - 10 * HOUR;
        assert_eq!(utc("now", Span::Back), Ok(NOW));
        assert_eq!(utc("today", Span::Back), Ok(midnight));
        assert_eq!(utc("Yesterday", Span::Back), Ok(midnight - DAY));
        assert_eq!(utc("tomorrow", Span::Ahead), Ok(midnight + DAY));
        assert_eq!(utc("7d", Span::Back), Ok(NOW - 7 * DAY));
        assert_eq!(utc("90m", Span::Back), Ok(NOW - 90 * MIN));
        assert_eq!(utc("2h", Span::Ahead), Ok(NOW + 2 * HOUR));
        assert_eq!(utc("2w", Span::Ahead), Ok(NOW + 14 * DAY));
        assert_eq!(utc("2026-11-22", Span::Back), Ok(midnight));
        assert_eq!(
            utc("2026-11-22 17:00", Span::Ahead),
            Ok(midnight + 17 * HOUR)
        );
        assert_eq!(
            utc("2026-11-22T17:00:30", Span::Ahead),
            Ok(midnight + 17 * HOUR + 30_000)
        );
        assert_eq!(utc("17:00", Span::Ahead), Ok(midnight + 17 * HOUR));
        assert_eq!(
            utc("tomorrow 09:00", Span::Ahead),
            Ok(midnight + DAY + 9 * HOUR)
        );
        assert_eq!(utc("Today 14:30", Span::Ahead), Ok(midnight + 870 * MIN));
        assert!(utc("tomorrow 25:00", Span::Ahead).is_err());
        assert_eq!(
            utc("2026-11-22T17:00:00+01:00", Span::Back),
            Ok(midnight + 16 * HOUR)
        );
    }

    #[test]
    fn local_words_follow_the_zone() {
        let west = Zone::Fixed(FixedOffset::west_opt(6 * 3600).unwrap());
        // 04:00 there: "today" began at 06:00 UTC.
        assert_eq!(
            parse_time("today", NOW, west, Span::Back),
            Ok(NOW - 4 * HOUR)
        );
        assert_eq!(
            parse_time("2026-12-01 17:00", NOW, west, Span::Ahead),
            parse_time("2026-12-01T17:00:00-06:00", NOW, Zone::Utc, Span::Ahead)
        );
    }

    #[test]
    fn anything_else_says_what_is_accepted() {
        for bad in ["soon", "-3d", "3x", "", "d", "2026-13-01", "25:00", "1e9d"] {
            let e = utc(bad, Span::Back).unwrap_err();
            assert!(
                e.contains("is not a time") && e.contains("7d"),
                "{bad}: {e}"
            );
        }
        assert!(
            utc("99999999999999999d", Span::Back).is_err(),
            "no overflow"
        );
    }
}
