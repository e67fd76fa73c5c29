//! Service levels on business hours: a queue's SLA is a span of working time, counted in
//! the queue's working hours (`Mon-Fri 08:00-17:00`), in its time zone (an IANA name,
//! through chrono-tz: daylight saving is the zone database's, never arithmetic here),
//! skipping its holidays. A new item without a due time is due when that much working
//! time has passed since it arrived; rows show the working time left.

use std::collections::BTreeSet;

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Weekday};
use chrono_tz::Tz;
use serde::Serialize;

use super::time::Millis;

const DAY_NAMES: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
/// How far ahead a due time is looked for (a calendar with almost no working time).
const MAX_DAYS: i64 = 3 * 366;

/// Working hours per weekday (Monday first): minutes from midnight, start and end
/// (end 1440 is midnight at the day's end); none for a day off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hours {
    days: [Option<(u32, u32)>; 7],
}

impl Hours {
    /// Every hour of every day.
    pub const ALWAYS: Hours = Hours {
        days: [Some((0, 1440)); 7],
    };

    /// Parses `Mon-Fri 08:00-17:00`, several parts joined by `,` or `;`
    /// (`Mon-Fri 08:00-17:00, Sat 09:00-12:00`), or `always` (`24/7`). Days are English
    /// three-letter names (`Mon`…`Sun`) or ranges of them (`Fri-Mon` wraps); a later
    /// part overrides an earlier one for its days.
    pub fn parse(s: &str) -> Result<Hours, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("always") || t == "24/7" {
            return Ok(Hours::ALWAYS);
        }
        let bad = |why: &str| {
            format!(
                "working hours '{}': {why} (e.g. 'Mon-Fri 08:00-17:00', 'Mon-Fri \
                 08:00-17:00, Sat 09:00-12:00' or 'always')",
                super::sanitize::line(s)
            )
        };
        let mut days = [None; 7];
        for part in t.split([',', ';']).map(str::trim) {
            let (d, h) = part
                .split_once(char::is_whitespace)
                .ok_or_else(|| bad("each part is days, then hours"))?;
            let which = day_range(d.trim()).ok_or_else(|| bad("unknown day"))?;
            let (a, b) = h
                .trim()
                .split_once('-')
                .ok_or_else(|| bad("hours are START-END"))?;
            let (a, b) = (minute(a), minute(b));
            let (Some(a), Some(b)) = (a, b) else {
                return Err(bad("a time is HH:MM, 00:00 to 24:00"));
            };
            if a >= b {
                return Err(bad("a day's hours must end after they start"));
            }
            for i in which {
                days[i] = Some((a, b));
            }
        }
        if days.iter().all(Option::is_none) {
            return Err(bad("no working time at all"));
        }
        Ok(Hours { days })
    }

    /// The hours as `parse` reads them: `Mon-Fri 08:00-17:00`, `always`.
    pub fn text(&self) -> String {
        if *self == Hours::ALWAYS {
            return "always".into();
        }
        let mut parts = Vec::new();
        let mut i = 0;
        while i < 7 {
            let Some(h) = self.days[i] else {
                i += 1;
                continue;
            };
            let mut j = i;
            while j + 1 < 7 && self.days[j + 1] == Some(h) {
                j += 1;
            }
            let days = match i == j {
                true => DAY_NAMES[i].to_string(),
                false => format!("{}-{}", DAY_NAMES[i], DAY_NAMES[j]),
            };
            parts.push(format!("{days} {}-{}", hm(h.0), hm(h.1)));
            i = j + 1;
        }
        parts.join(", ")
    }

    fn of(&self, day: Weekday) -> Option<(u32, u32)> {
        self.days[day.num_days_from_monday() as usize]
    }
}

fn hm(m: u32) -> String {
    format!("{:02}:{:02}", m / 60, m % 60)
}

/// `HH:MM` as minutes from midnight (`24:00` is 1440).
fn minute(s: &str) -> Option<u32> {
    let (h, m) = s.trim().split_once(':')?;
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (m < 60 && (h < 24 || (h == 24 && m == 0))).then_some(h * 60 + m)
}

/// `Mon`, or `Mon-Fri` (wrapping: `Sat-Mon`), as day indexes (Monday 0).
fn day_range(s: &str) -> Option<Vec<usize>> {
    let idx = |d: &str| {
        DAY_NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(d.trim()))
    };
    match s.split_once('-') {
        None => Some(vec![idx(s)?]),
        Some((a, b)) => {
            let (a, b) = (idx(a)?, idx(b)?);
            let n = (b + 7 - a) % 7 + 1;
            Some((0..n).map(|k| (a + k) % 7).collect())
        }
    }
}

/// Parses a holidays file: one date (`YYYY-MM-DD`) per line; blank lines and `#`
/// comments are ignored, and text after the date (a name) too. A bad line is named.
pub fn parse_holidays(text: &str) -> Result<BTreeSet<NaiveDate>, String> {
    let mut out = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.split('#').next().unwrap_or("").trim();
        if t.is_empty() {
            continue;
        }
        let word = t.split_whitespace().next().unwrap_or(t);
        let d = NaiveDate::parse_from_str(word, "%Y-%m-%d").map_err(|_| {
            format!(
                "line {}: '{}' is not a date (YYYY-MM-DD)",
                n + 1,
                super::sanitize::line(word)
            )
        })?;
        out.insert(d);
    }
    Ok(out)
}

/// Parses an IANA time zone name (`Europe/Berlin`, `UTC`).
pub fn parse_zone(s: &str) -> Result<Tz, String> {
    s.trim().parse::<Tz>().map_err(|_| {
        format!(
            "'{}' is not a time zone name (e.g. Europe/Berlin, America/New_York, UTC)",
            super::sanitize::line(s)
        )
    })
}

/// A queue's SLA: how much working time an item gets, and the calendar it is counted in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sla {
    pub queue: String,
    /// Working time allowed, in milliseconds.
    pub ms: i64,
    pub hours: Hours,
    pub zone: Tz,
    pub holidays: BTreeSet<NaiveDate>,
}

/// An SLA as stored and shown in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlaSpec {
    pub queue: String,
    pub sla_ms: i64,
    pub hours: String,
    pub tz: String,
    pub holidays: Vec<String>,
}

impl Sla {
    /// As stored: the hours and holidays as text.
    pub fn spec(&self) -> SlaSpec {
        SlaSpec {
            queue: self.queue.clone(),
            sla_ms: self.ms,
            hours: self.hours.text(),
            tz: self.zone.name().to_string(),
            holidays: self.holidays.iter().map(|d| d.to_string()).collect(),
        }
    }

    /// From what was stored; an unreadable part is named.
    pub fn from_spec(s: &SlaSpec) -> Result<Sla, String> {
        let holidays = parse_holidays(&s.holidays.join("\n"))?;
        if s.sla_ms <= 0 {
            return Err(format!("the SLA of queue {} is not positive", s.queue));
        }
        Ok(Sla {
            queue: s.queue.clone(),
            ms: s.sla_ms,
            hours: Hours::parse(&s.hours)?,
            zone: parse_zone(&s.tz)?,
            holidays,
        })
    }

    /// The working windows of the local day `date` as UTC milliseconds (none on a day
    /// off or a holiday). A window edge that does not exist locally (the hour skipped
    /// when clocks go forward) moves to the first instant that does; an hour that
    /// happens twice counts once, as it passes.
    fn window(&self, date: NaiveDate) -> Option<(Millis, Millis)> {
        if self.holidays.contains(&date) {
            return None;
        }
        let (a, b) = self.hours.of(date.weekday())?;
        let at = |m: u32| -> Option<Millis> {
            let base = date.and_time(NaiveTime::MIN) + Duration::minutes(i64::from(m));
            instant(&self.zone, base)
        };
        let (a, b) = (at(a)?, at(b)?);
        (a < b).then_some((a, b))
    }

    fn local_date(&self, t: Millis) -> Option<NaiveDate> {
        let utc = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(t)?;
        Some(utc.with_timezone(&self.zone).date_naive())
    }

    /// When `self.ms` of working time will have passed since `start`; `None` when the
    /// calendar has too little working time ahead (years of holidays).
    pub fn due(&self, start: Millis) -> Option<Millis> {
        self.after(start, self.ms)
    }

    /// When `work` milliseconds of working time will have passed since `start`.
    pub fn after(&self, start: Millis, work: i64) -> Option<Millis> {
        let mut left = work.max(0);
        let mut date = self.local_date(start)?;
        // The day before too: a window of the previous local day may still be open.
        date = date.pred_opt()?;
        for _ in 0..MAX_DAYS {
            if let Some((a, b)) = self.window(date) {
                let from = a.max(start);
                if from < b {
                    if b - from >= left {
                        return Some(from + left);
                    }
                    left -= b - from;
                }
            }
            date = date.succ_opt()?;
        }
        None
    }

    /// The working time between `from` and `to` (negative when `to` is before `from`).
    pub fn working_between(&self, from: Millis, to: Millis) -> i64 {
        if to < from {
            return -self.working_between(to, from);
        }
        let (Some(first), Some(last)) = (self.local_date(from), self.local_date(to)) else {
            return 0;
        };
        let mut total = 0;
        let mut date = first.pred_opt().unwrap_or(first);
        while date <= last {
            if let Some((a, b)) = self.window(date) {
                let (a, b) = (a.max(from), b.min(to));
                if a < b {
                    total += b - a;
                }
            }
            match date.succ_opt() {
                Some(d) => date = d,
                None => break,
            }
        }
        total
    }
}

/// An item of a queue with an SLA, as the Stats view weighs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    pub queue: String,
    pub created_at: Millis,
    pub due_at: Millis,
    /// Still open (else finished, at `finished_at`).
    pub open: bool,
    pub finished_at: Option<Millis>,
}

/// The SLA figures of the Stats view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SlaWatch {
    /// Items whose due time passed today (since local midnight) before they were
    /// finished.
    pub breaches_today: u64,
    /// Open items not yet due with 75 % or more of their working time spent.
    pub at_risk: u64,
}

/// Weighs `items` against their queues' SLAs at `now`, today starting at `day_start`.
pub fn watch(slas: &[Sla], items: &[Watched], now: Millis, day_start: Millis) -> SlaWatch {
    let mut w = SlaWatch::default();
    for it in items {
        let Some(sla) = slas.iter().find(|s| s.queue == it.queue) else {
            continue;
        };
        let due_today = it.due_at >= day_start && it.due_at <= now;
        let late_finish = it.finished_at.is_some_and(|f| f > it.due_at);
        if due_today && (it.open || late_finish) {
            w.breaches_today += 1;
        } else if it.open && it.due_at > now && spent(sla, it.created_at, it.due_at, now) >= AT_RISK
        {
            w.at_risk += 1;
        }
    }
    w
}

/// The share of its SLA spent at which an item is at risk, and its holder warned.
pub const AT_RISK: f64 = 0.75;

/// A change to a queue's SLA; `None` leaves a part as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlaUpdate {
    /// `Some(None)` removes the SLA.
    pub ms: Option<Option<i64>>,
    pub hours: Option<Hours>,
    pub zone: Option<Tz>,
    pub holidays: Option<BTreeSet<NaiveDate>>,
    /// The zone a new SLA gets when none is given (the supervisor's own).
    pub default_zone: Option<Tz>,
}

impl SlaUpdate {
    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.ms.is_none() && self.hours.is_none() && self.zone.is_none() && self.holidays.is_none()
    }

    /// The SLA of `queue` after this change to `cur` (`None`: it has none). A new SLA
    /// works `Mon-Fri 08:00-17:00` unless hours are given.
    pub fn apply(&self, queue: &str, cur: Option<&Sla>) -> Result<Option<Sla>, String> {
        if self.ms == Some(None) {
            if self.hours.is_some() || self.zone.is_some() || self.holidays.is_some() {
                return Err("--sla none removes the SLA; give no calendar with it".into());
            }
            return Ok(None);
        }
        let mut sla = match (cur, self.ms.flatten()) {
            (Some(c), _) => c.clone(),
            (None, Some(ms)) => Sla {
                queue: queue.to_string(),
                ms,
                hours: Hours::parse(DEFAULT_HOURS)?,
                zone: self.default_zone.unwrap_or(Tz::UTC),
                holidays: BTreeSet::new(),
            },
            (None, None) => {
                return Err(format!(
                    "queue '{}' has no SLA yet: give --sla DURATION (e.g. 4h) with its calendar",
                    super::sanitize::line(queue)
                ));
            }
        };
        if let Some(ms) = self.ms.flatten() {
            sla.ms = ms;
        }
        if let Some(h) = self.hours {
            sla.hours = h;
        }
        if let Some(z) = self.zone {
            sla.zone = z;
        }
        if let Some(h) = &self.holidays {
            sla.holidays = h.clone();
        }
        Ok(Some(sla))
    }
}

/// The working hours of a new SLA when none are given.
pub const DEFAULT_HOURS: &str = "Mon-Fri 08:00-17:00";

/// Parses an SLA's working time: `4h`, `90m`, `1h30m` (`none` or `off`: no SLA). Days
/// are refused: a working day is what the hours say, so `16h` says two 8-hour days.
pub fn parse_sla(s: &str) -> Result<Option<i64>, String> {
    let t = s.trim().to_ascii_lowercase();
    if t == "none" || t == "off" {
        return Ok(None);
    }
    let bad = || {
        format!(
            "SLA '{}': give working time as 4h, 90m or 1h30m (none removes it; no days:              16h is two 8-hour days)",
            super::sanitize::line(s)
        )
    };
    let mut total: i64 = 0;
    let mut digits = String::new();
    for c in t.chars() {
        match c {
            '0'..='9' => digits.push(c),
            'h' | 'm' if !digits.is_empty() => {
                let n: i64 = digits.parse().map_err(|_| bad())?;
                let per = if c == 'h' { 3_600_000 } else { 60_000 };
                total = n
                    .checked_mul(per)
                    .and_then(|v| total.checked_add(v))
                    .ok_or_else(bad)?;
                digits.clear();
            }
            _ => return Err(bad()),
        }
    }
    // At most 1000 h: half a year of 8-hour days, well inside how far a due time is
    // looked for.
    if !digits.is_empty() || total <= 0 || total > 1_000 * 3_600_000 {
        return Err(bad());
    }
    Ok(Some(total))
}

/// An SLA's working time as `parse_sla` reads it: `4h`, `1h30m`, `45m`.
pub fn sla_text(ms: i64) -> String {
    let m = ms / 60_000;
    match (m / 60, m % 60) {
        (0, m) => format!("{m}m"),
        (h, 0) => format!("{h}h"),
        (h, m) => format!("{h}h{m}m"),
    }
}

/// The first instant at or after local time `t` in `zone`.
fn instant(zone: &Tz, t: NaiveDateTime) -> Option<Millis> {
    // A gap lasts at most a few hours: step forward a minute at a time past it.
    (0..24 * 60).find_map(|m| {
        zone.from_local_datetime(&(t + Duration::minutes(m)))
            .earliest()
            .map(|d| d.timestamp_millis())
    })
}

/// How an item's working time left reads and how urgent it is: `3h05m`, `45m`, `LATE
/// 25m` (the time since it was due, in working time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    pub text: String,
    pub urgency: Urgency,
}

/// How near an item is to its due time, in working time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    /// An hour or more left.
    Plain,
    /// Under an hour.
    Soon,
    /// Under 30 minutes.
    Urgent,
    /// Past due.
    Late,
}

/// Beyond this much wall-clock time, a due time is shown and weighed as far off without
/// counting its working time day by day (a due time given years ahead would be walked on
/// every screen drawn).
const FAR_MS: i64 = 31 * 86_400_000;

/// The working time left until `due` at `now`.
pub fn left(sla: &Sla, now: Millis, due: Millis) -> Left {
    const MIN: i64 = 60_000;
    if due - now > FAR_MS {
        return Left {
            text: format!("in {}d", (due - now) / 86_400_000),
            urgency: Urgency::Plain,
        };
    }
    let ms = sla.working_between(now, due);
    // Past due on the clock is late, even when no working time has passed since.
    if now >= due {
        return Left {
            text: format!("LATE {}", span((-ms).max(0))),
            urgency: Urgency::Late,
        };
    }
    let urgency = match ms {
        m if m < 30 * MIN => Urgency::Urgent,
        m if m < 60 * MIN => Urgency::Soon,
        _ => Urgency::Plain,
    };
    Left {
        text: span(ms),
        urgency,
    }
}

/// `2h05m`, `45m`, `3d2h` (working time, so days are rare).
fn span(ms: i64) -> String {
    let m = ms / 60_000;
    match m {
        m if m < 60 => format!("{m}m"),
        m if m < 24 * 60 => format!("{}h{:02}m", m / 60, m % 60),
        m => format!("{}d{}h", m / (24 * 60), m % (24 * 60) / 60),
    }
}

/// The share of an item's SLA spent at `now`: working time since it arrived over the
/// working time it was given (arrival to due), 1 when it was given none, 0 while the due
/// time is more than a month away.
pub fn spent(sla: &Sla, created: Millis, due: Millis, now: Millis) -> f64 {
    if due - now > FAR_MS {
        // Far off (a due time given months ahead): not counted day by day.
        return 0.0;
    }
    let given = sla.working_between(created, due);
    if given <= 0 {
        return 1.0;
    }
    sla.working_between(created, now) as f64 / given as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    fn at(zone: &Tz, s: &str) -> Millis {
        let t = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap();
        zone.from_local_datetime(&t)
            .earliest()
            .unwrap()
            .timestamp_millis()
    }

    fn berlin(ms: i64) -> Sla {
        Sla {
            queue: "q".into(),
            ms,
            hours: Hours::parse("Mon-Fri 08:00-17:00").unwrap(),
            zone: parse_zone("Europe/Berlin").unwrap(),
            holidays: BTreeSet::new(),
        }
    }

    fn shown(sla: &Sla, t: Millis) -> String {
        let d = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(t)
            .unwrap()
            .with_timezone(&sla.zone);
        d.format("%a %Y-%m-%d %H:%M %Z").to_string()
    }

    #[test]
    fn hours_parse_and_read_back() {
        let h = Hours::parse("Mon-Fri 08:00-17:00, Sat 09:00-12:30").unwrap();
        assert_eq!(h.text(), "Mon-Fri 08:00-17:00, Sat 09:00-12:30");
        assert_eq!(Hours::parse("always").unwrap(), Hours::ALWAYS);
        assert_eq!(
            Hours::parse("Mon-Sun 00:00-24:00").unwrap().text(),
            "always"
        );
        assert_eq!(
            Hours::parse("fri-mon 10:00-11:00").unwrap().text(),
            "Mon 10:00-11:00, Fri-Sun 10:00-11:00"
        );
        for bad in [
            "",
            "Mon",
            "Mon 9-5",
            "Mun 08:00-17:00",
            "Mon 17:00-08:00",
            "Mon 08:00-25:00",
        ] {
            let e = Hours::parse(bad).unwrap_err();
            assert!(e.contains("e.g. 'Mon-Fri 08:00-17:00'"), "{bad}: {e}");
        }
    }

    #[test]
    fn sla_spans_parse_and_updates_merge() {
        assert_eq!(parse_sla("4h"), Ok(Some(4 * H)));
        assert_eq!(parse_sla("1h30m"), Ok(Some(90 * 60_000)));
        assert_eq!(parse_sla("none"), Ok(None));
        for bad in ["", "2d", "h", "4", "0h", "4h5", "-1h", "1001h"] {
            assert!(parse_sla(bad).is_err(), "{bad}");
        }
        assert_eq!(sla_text(90 * 60_000), "1h30m");
        assert_eq!(sla_text(4 * H), "4h");
        let u = SlaUpdate {
            ms: Some(Some(4 * H)),
            default_zone: Some(parse_zone("Europe/Berlin").unwrap()),
            ..SlaUpdate::default()
        };
        let sla = u.apply("q", None).unwrap().unwrap();
        assert_eq!(sla.hours.text(), DEFAULT_HOURS);
        assert_eq!(sla.zone.name(), "Europe/Berlin");
        let u = SlaUpdate {
            hours: Some(Hours::ALWAYS),
            ..SlaUpdate::default()
        };
        let changed = u.apply("q", Some(&sla)).unwrap().unwrap();
        assert_eq!((changed.ms, changed.hours), (4 * H, Hours::ALWAYS));
        assert!(u.apply("q", None).unwrap_err().contains("no SLA yet"));
        let off = SlaUpdate {
            ms: Some(None),
            ..SlaUpdate::default()
        };
        assert_eq!(off.apply("q", Some(&sla)), Ok(None));
    }

    #[test]
    fn holidays_files_name_a_bad_line() {
        let d = parse_holidays("# 2026\n2026-12-24 Christmas Eve\n\n2026-12-25\n").unwrap();
        assert_eq!(d.len(), 2);
        let e = parse_holidays("2026-12-24\n24.12.2026\n").unwrap_err();
        assert!(e.starts_with("line 2: '24.12.2026'"), "{e}");
        assert!(parse_zone("Europe/Berln").is_err());
    }

    #[test]
    fn an_sla_runs_over_the_weekend() {
        let sla = berlin(4 * H);
        // Friday 15:00 + 4 working hours: 2 on Friday, 2 on Monday from 08:00.
        let start = at(&sla.zone, "2026-11-27 15:00");
        let due = sla.due(start).unwrap();
        assert_eq!(shown(&sla, due), "Mon 2026-11-30 10:00 CET");
        assert_eq!(sla.working_between(start, due), 4 * H);
        // Arriving on Saturday: the clock starts on Monday at 08:00.
        let sat = at(&sla.zone, "2026-11-28 11:00");
        assert_eq!(
            shown(&sla, sla.due(sat).unwrap()),
            "Mon 2026-11-30 12:00 CET"
        );
        // Before opening on a working day: counted from 08:00.
        let early = at(&sla.zone, "2026-11-25 06:30");
        assert_eq!(
            shown(&sla, sla.due(early).unwrap()),
            "Wed 2026-11-25 12:00 CET"
        );
    }

    #[test]
    fn an_sla_over_a_daylight_saving_change_counts_working_hours_not_the_clock() {
        // Europe/Berlin goes back from CEST to CET on Sunday 2026-10-25 at 03:00.
        let sla = berlin(9 * H);
        let start = at(&sla.zone, "2026-10-23 12:00");
        let due = sla.due(start).unwrap();
        assert_eq!(shown(&sla, due), "Mon 2026-10-26 12:00 CET");
        // 5 h on Friday, 4 on Monday: 72 wall-clock hours plus the hour gained.
        assert_eq!(due - start, 73 * H);
        // Round the clock (24/7), the same 24 working hours over the change are 24 h of
        // real time, and the local clock shows an hour less.
        let always = Sla {
            hours: Hours::ALWAYS,
            ..berlin(24 * H)
        };
        let start = at(&always.zone, "2026-10-24 12:00");
        let due = always.due(start).unwrap();
        assert_eq!(due - start, 24 * H);
        assert_eq!(shown(&always, due), "Sun 2026-10-25 11:00 CET");
        // Spring forward (2026-03-29, 02:00 → 03:00): a night shift loses the hour.
        let night = Sla {
            hours: Hours::parse("Mon-Sun 00:00-06:00").unwrap(),
            ..berlin(6 * H)
        };
        let start = at(&night.zone, "2026-03-29 00:00");
        let due = night.due(start).unwrap();
        assert_eq!(shown(&night, due), "Mon 2026-03-30 01:00 CEST");
        assert_eq!(night.working_between(start, due), 6 * H);
    }

    #[test]
    fn holidays_are_skipped() {
        let mut sla = berlin(4 * H);
        sla.holidays = parse_holidays("2026-12-24\n2026-12-25\n").unwrap();
        // Wednesday 23rd 15:00: 2 h that day, then Thursday and Friday are holidays,
        // then the weekend: due on Monday the 28th at 10:00.
        let start = at(&sla.zone, "2026-12-23 15:00");
        assert_eq!(
            shown(&sla, sla.due(start).unwrap()),
            "Mon 2026-12-28 10:00 CET"
        );
    }

    #[test]
    fn time_left_is_working_time_and_marks_urgency() {
        let sla = berlin(4 * H);
        let due = at(&sla.zone, "2026-11-30 10:00");
        // Friday 16:00: an hour on Friday and two on Monday.
        let l = left(&sla, at(&sla.zone, "2026-11-27 16:00"), due);
        assert_eq!((l.text.as_str(), l.urgency), ("3h00m", Urgency::Plain));
        let l = left(&sla, at(&sla.zone, "2026-11-28 12:00"), due);
        assert_eq!(
            (l.text.as_str(), l.urgency),
            ("2h00m", Urgency::Plain),
            "weekend"
        );
        let l = left(&sla, at(&sla.zone, "2026-11-30 09:15"), due);
        assert_eq!((l.text.as_str(), l.urgency), ("45m", Urgency::Soon));
        let l = left(&sla, at(&sla.zone, "2026-11-30 09:40"), due);
        assert_eq!(l.urgency, Urgency::Urgent);
        // Far off: not walked day by day.
        let far = left(&sla, due - 400 * 24 * H, due);
        assert_eq!(
            (far.text.as_str(), far.urgency),
            ("in 400d", Urgency::Plain)
        );
        let l = left(&sla, at(&sla.zone, "2026-11-30 10:25"), due);
        assert_eq!((l.text.as_str(), l.urgency), ("LATE 25m", Urgency::Late));
        let created = at(&sla.zone, "2026-11-27 15:00");
        let s = spent(&sla, created, due, at(&sla.zone, "2026-11-30 09:00"));
        assert!((s - 0.75).abs() < 1e-9, "{s}");
    }
}
