//! Times are Unix milliseconds (UTC) everywhere; these helpers convert at the edges.
//!
//! Text meant for a person (the TUI, the CLI's text output, messages) shows times in the
//! display zone: the local zone (`TZ` honoured) in the program, UTC until the program says
//! otherwise (so tests and libraries get reproducible text). JSON and exported data stay
//! RFC 3339 UTC.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, FixedOffset, Local, NaiveDate, Offset, SecondsFormat, TimeZone, Utc};

/// Unix time in milliseconds, UTC.
pub(crate) type Millis = i64;

const DAY_MS: i64 = 86_400_000;

/// The zone times are shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    Utc,
    /// The host's zone: `TZ` if set, else `/etc/localtime`; daylight saving follows the
    /// date shown.
    Local,
    /// A fixed offset from UTC (tests, or a zone given by offset).
    Fixed(FixedOffset),
}

impl Zone {
    /// The offset from UTC in force at `t`.
    pub(crate) fn offset_at(self, t: Millis) -> FixedOffset {
        match self {
            Zone::Utc => Utc.fix(),
            Zone::Fixed(o) => o,
            Zone::Local => Local
                .timestamp_millis_opt(t)
                .single()
                .map_or_else(|| Utc.fix(), |d| d.offset().fix()),
        }
    }

    /// `t` as a date and time in this zone.
    pub(crate) fn at(self, t: Millis) -> Option<DateTime<FixedOffset>> {
        DateTime::<Utc>::from_timestamp_millis(t).map(|d| d.with_timezone(&self.offset_at(t)))
    }

    /// How the zone is named on screen, once: "UTC" or "local time (UTC+01:00)".
    pub(crate) fn label(self, now: Millis) -> String {
        match self {
            Zone::Utc => "UTC".into(),
            Zone::Local | Zone::Fixed(_) => format!("local time ({})", self.short(now)),
        }
    }

    /// The offset in force at `now` as a short name: "UTC", "UTC+01:00", "UTC-05:00".
    pub(crate) fn short(self, now: Millis) -> String {
        let off = self.offset_at(now).local_minus_utc();
        if off == 0 {
            return "UTC".into();
        }
        let sign = if off < 0 { '-' } else { '+' };
        let m = off.unsigned_abs() / 60;
        format!("UTC{sign}{:02}:{:02}", m / 60, m % 60)
    }

    /// The first instant of the calendar day of `now` in this zone. Where midnight does
    /// not exist (a daylight-saving jump at midnight), the first instant that does.
    pub fn start_of_day(self, now: Millis) -> Millis {
        let Some(date) = self.at(now).map(|d| d.date_naive()) else {
            return now - now.rem_euclid(DAY_MS);
        };
        match self {
            Zone::Utc => midnight_in(&Utc, date),
            Zone::Fixed(o) => midnight_in(&o, date),
            Zone::Local => midnight_in(&Local, date),
        }
        .unwrap_or_else(|| {
            // No midnight that day: count back from `now` by the local time of day.
            let off = i64::from(self.offset_at(now).local_minus_utc()) * 1000;
            now - (now + off).rem_euclid(DAY_MS)
        })
    }
}

fn midnight_in<Tz: TimeZone>(tz: &Tz, date: NaiveDate) -> Option<Millis> {
    (0..24).find_map(|h| {
        let t = date.and_hms_opt(h, 0, 0)?;
        tz.from_local_datetime(&t)
            .earliest()
            .map(|d| d.timestamp_millis())
    })
}

/// The first instant of the day of `now` in `zone`: "today" for the TUI's activity view
/// and `caseload history` alike.
pub(crate) fn start_of_day(now: Millis, zone: Zone) -> Millis {
    zone.start_of_day(now)
}

/// `i64::MIN` stands for [`Zone::Local`]; any other value is a fixed offset in seconds.
static DISPLAY: AtomicI64 = AtomicI64::new(0);

/// Sets the zone of every time shown to a person from now on (the binary sets
/// [`Zone::Local`] once at startup).
pub fn set_display_zone(zone: Zone) {
    let v = match zone {
        Zone::Utc => 0,
        Zone::Local => i64::MIN,
        Zone::Fixed(o) => i64::from(o.local_minus_utc()),
    };
    DISPLAY.store(v, Ordering::Relaxed);
}

/// The zone times are shown in (UTC unless [`set_display_zone`] said otherwise).
pub(crate) fn display_zone() -> Zone {
    match DISPLAY.load(Ordering::Relaxed) {
        0 => Zone::Utc,
        i64::MIN => Zone::Local,
        s => i32::try_from(s)
            .ok()
            .and_then(FixedOffset::east_opt)
            .map_or(Zone::Utc, Zone::Fixed),
    }
}

/// Formats a time as an RFC 3339 UTC string, e.g. `2026-11-22T10:42:00.000Z`.
pub(crate) fn rfc3339(t: Millis) -> String {
    match DateTime::<Utc>::from_timestamp_millis(t) {
        Some(d) => d.to_rfc3339_opts(SecondsFormat::Millis, true),
        None => format!("@{t}ms"),
    }
}

/// Serializes a time as [`rfc3339`] (`#[serde(serialize_with = "...")]`): JSON output.
pub(crate) fn ser_rfc3339<S: serde::Serializer>(t: &Millis, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&rfc3339(*t))
}

/// Serializes a time that may be absent as [`rfc3339`], or null.
pub(crate) fn ser_opt_rfc3339<S: serde::Serializer>(
    t: &Option<Millis>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => ser_rfc3339(t, s),
        None => s.serialize_none(),
    }
}

/// Parses an RFC 3339 time (any offset) into Unix milliseconds.
pub(crate) fn parse_rfc3339(s: &str) -> Option<Millis> {
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|d| d.timestamp_millis())
}

/// Hours and minutes of a time in the display zone, as shown in notices ("10:42").
pub(crate) fn clock_hm(t: Millis) -> String {
    clock_hm_in(t, display_zone())
}

/// Hours and minutes of a time in `zone`.
pub(crate) fn clock_hm_in(t: Millis, zone: Zone) -> String {
    zone.at(t)
        .map_or_else(|| "??:??".into(), |d| d.format("%H:%M").to_string())
}

/// Date, hours and minutes in the display zone, as in lists ("2026-11-22 10:42").
pub(crate) fn date_hm(t: Millis) -> String {
    date_hm_in(t, display_zone())
}

/// Date, hours and minutes in `zone`.
pub(crate) fn date_hm_in(t: Millis, zone: Zone) -> String {
    zone.at(t).map_or_else(
        || format!("@{t}ms"),
        |d| d.format("%Y-%m-%d %H:%M").to_string(),
    )
}

/// A full time in the display zone with its offset, for text a person reads
/// ("2026-11-22 11:42:05 +01:00"); machines get [`rfc3339`].
pub(crate) fn local_full(t: Millis) -> String {
    display_zone().at(t).map_or_else(
        || format!("@{t}ms"),
        |d| d.format("%Y-%m-%d %H:%M:%S %:z").to_string(),
    )
}

/// A short human duration: `45s`, `12m`, `3h05m`, `2d04h`.
pub(crate) fn short_duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86400, (s % 86400) / 3600),
    }
}

/// A shorter duration for narrow columns: `45s`, `24m`, `3h`, `2d`.
pub(crate) fn compact_duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Millis = 1_795_341_600_000; // 2026-11-22T10:00:00Z

    fn hours(h: i32) -> Zone {
        Zone::Fixed(FixedOffset::east_opt(h * 3600).unwrap())
    }

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
        assert_eq!(compact_duration(24 * 60_000 + 59_000), "24m");
        assert_eq!(compact_duration(3 * 3_600_000 + 5 * 60_000), "3h");
        assert_eq!(compact_duration(2 * 86_400_000 + 4 * 3_600_000), "2d");
    }

    #[test]
    fn clock_times_follow_the_zone() {
        assert_eq!(clock_hm_in(T, Zone::Utc), "10:00");
        assert_eq!(clock_hm_in(T, hours(1)), "11:00");
        assert_eq!(clock_hm_in(T, hours(-5)), "05:00");
        assert_eq!(date_hm_in(T, hours(14)), "2026-11-23 00:00");
        assert_eq!(hours(1).label(T), "local time (UTC+01:00)");
        assert_eq!(Zone::Utc.label(T), "UTC");
        assert_eq!(hours(-5).short(T), "UTC-05:00");
    }

    #[test]
    fn the_day_starts_at_local_midnight() {
        let day = 86_400_000;
        let midnight_utc = T - 10 * 3_600_000;
        assert_eq!(start_of_day(T, Zone::Utc), midnight_utc);
        // 11:00 in UTC+1: the day began at 23:00 UTC the evening before.
        assert_eq!(start_of_day(T, hours(1)), midnight_utc - 3_600_000);
        // 00:00 UTC on the 23rd is still the 22nd in UTC-5, which began at 05:00 UTC.
        assert_eq!(
            start_of_day(midnight_utc + day, hours(-5)),
            midnight_utc + 5 * 3_600_000
        );
        // 00:30 on the 23rd in UTC+14 is after its midnight, 10:00 UTC on the 22nd.
        assert_eq!(start_of_day(T + 30 * 60_000, hours(14)), T);
    }
}
