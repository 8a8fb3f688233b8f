//! Cypher's temporal values: dates, times with and without a UTC offset, date-times with an
//! offset, a named time zone (`Europe/Stockholm`, see `zone`) or neither, and durations. Stored as
//! plain integers (so they persist, hash and compare without a calendar at hand); the `time` crate
//! does the calendar arithmetic. Years run from -9999 to 9999.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

mod fields;
mod text;
mod zone;
pub use fields::Fields;
use text::offset_text;
pub use text::parse_offset;
pub use zone::Zone;

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
const NANOS_PER_DAY: i64 = SECONDS_PER_DAY * NANOS_PER_SECOND;
/// The Julian day number of 1970-01-01.
const EPOCH_JULIAN_DAY: i64 = 2_440_588;
/// Neo4j's average month (365.2425 / 12 days), for fractions of a month and FalkorDB's seconds.
const SECONDS_PER_AVERAGE_MONTH: i64 = 2_629_746;
/// The largest offset from UTC accepted, in seconds (±18:00, as ISO 8601 and Java).
const OFFSET_MAX: i64 = 18 * 3600;

/// A temporal value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Temporal {
    /// A calendar date: days since 1970-01-01.
    Date(i64),
    /// A time of day without an offset: nanoseconds since midnight.
    LocalTime(i64),
    /// A time of day with an offset.
    Time {
        /// Local nanoseconds since midnight.
        nanos: i64,
        /// Seconds east of UTC.
        offset: i32,
    },
    /// A date and time without an offset.
    LocalDateTime {
        /// Local seconds since 1970-01-01T00:00.
        secs: i64,
        /// Nanoseconds of the second.
        nanos: u32,
    },
    /// An instant with an offset.
    DateTime {
        /// Seconds since the epoch (UTC).
        secs: i64,
        /// Nanoseconds of the second.
        nanos: u32,
        /// Seconds east of UTC.
        offset: i32,
    },
    /// An amount of time.
    Duration(Duration),
    /// An instant in a named time zone; `offset` is the zone's at that instant, kept so a value
    /// prints and compares without the zone's rules. (Appended last: older records decode
    /// unchanged.)
    ZonedDateTime {
        /// Seconds since the epoch (UTC).
        secs: i64,
        /// Nanoseconds of the second.
        nanos: u32,
        /// Seconds east of UTC at that instant.
        offset: i32,
        /// The zone.
        zone: Zone,
    },
}

/// Where a zoned value is: a fixed offset or a named zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeZone {
    /// Seconds east of UTC.
    Offset(i32),
    /// A named zone.
    Named(Zone),
}

impl TimeZone {
    /// An offset (`Z`, `+01:00`, …) or a zone's name (`Europe/Stockholm`, any case).
    pub fn parse(text: &str) -> Result<TimeZone, TemporalError> {
        // An offset is never a zone's name: no search of the zone names for it.
        if text.starts_with(['+', '-']) || text.eq_ignore_ascii_case("Z") {
            return parse_offset(text).map(TimeZone::Offset);
        }
        if let Some(zone) = Zone::named(text) {
            return Ok(TimeZone::Named(zone));
        }
        match parse_offset(text) {
            Ok(o) => Ok(TimeZone::Offset(o)),
            Err(e) if text.starts_with(['+', '-', 'Z', 'z']) => Err(e),
            Err(_) => err(format!(
                "timezone '{text}' is neither an offset such as 'Z', '+01:00' or '-08:00' nor a time zone name such as 'Europe/Stockholm'"
            )),
        }
    }

    /// Its offset at the instant `utc_secs`.
    pub fn offset_at(&self, utc_secs: i64) -> i32 {
        match self {
            TimeZone::Offset(o) => *o,
            TimeZone::Named(z) => z.offset_at(utc_secs),
        }
    }

    /// The offset of a local time here (see `Zone::resolve`).
    fn resolve(self, local_secs: i64, preferred: Option<i32>) -> i32 {
        match self {
            TimeZone::Offset(o) => o,
            TimeZone::Named(z) => z.resolve(local_secs, preferred),
        }
    }

    /// A date-time at local seconds and nanoseconds here.
    fn at_local(self, secs: i64, nanos: u32, preferred: Option<i32>) -> Temporal {
        // In a gap the instant comes from the offset before it and shows with the one after.
        self.at_instant(secs - i64::from(self.resolve(secs, preferred)), nanos)
    }

    /// A date-time at the instant `utc_secs` and nanoseconds here.
    fn at_instant(self, secs: i64, nanos: u32) -> Temporal {
        let offset = self.offset_at(secs);
        match self {
            TimeZone::Offset(_) => Temporal::DateTime { secs, nanos, offset },
            TimeZone::Named(zone) => Temporal::ZonedDateTime { secs, nanos, offset, zone },
        }
    }
}

/// An amount of time: months, days and seconds kept apart, since a month's and a day's length
/// depend on where they are added. `nanos` is in `0..1e9` (a negative second is `-1 s + nanos`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Duration {
    /// Months (a year is twelve).
    pub months: i64,
    /// Days.
    pub days: i64,
    /// Seconds.
    pub seconds: i64,
    /// Nanoseconds added to `seconds`, in `0..1_000_000_000`.
    pub nanos: i32,
}

/// The six kinds, for constructors and messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `date`.
    Date,
    /// `localtime`.
    LocalTime,
    /// `time`.
    Time,
    /// `localdatetime`.
    LocalDateTime,
    /// `datetime`.
    DateTime,
    /// `duration`.
    Duration,
}

impl Kind {
    /// The constructor's name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::LocalTime => "localtime",
            Kind::Time => "time",
            Kind::LocalDateTime => "localdatetime",
            Kind::DateTime => "datetime",
            Kind::Duration => "duration",
        }
    }

    /// The kind a constructor name makes.
    pub fn of_function(name: &str) -> Option<Kind> {
        Some(match name {
            "date" => Kind::Date,
            "localtime" => Kind::LocalTime,
            "time" => Kind::Time,
            "localdatetime" => Kind::LocalDateTime,
            "datetime" => Kind::DateTime,
            "duration" => Kind::Duration,
            _ => return None,
        })
    }
}

/// A component given to a constructor's map: an integer, a float (durations only) or text
/// (`timezone`).
#[derive(Clone, Debug, PartialEq)]
pub enum Component {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// Text.
    Str(String),
    /// A temporal value (`date({date: other, …})`).
    Temporal(Temporal),
}

/// Why a temporal value cannot be made; the text names the field or the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemporalError(pub String);

impl fmt::Display for TemporalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(text: impl Into<String>) -> Result<T, TemporalError> {
    Err(TemporalError(text.into()))
}

fn calendar(days: i64) -> time::Date {
    // Every stored date is in the calendar's range: constructors and arithmetic check it.
    i32::try_from(days + EPOCH_JULIAN_DAY).ok().and_then(|j| time::Date::from_julian_day(j).ok()).unwrap_or(time::Date::MIN)
}

fn days_of(d: time::Date) -> i64 {
    i64::from(d.to_julian_day()) - EPOCH_JULIAN_DAY
}

fn make_date(year: i64, month: i64, day: i64) -> Result<i64, TemporalError> {
    let y = i32::try_from(year).ok().filter(|y| (-9999..=9999).contains(y));
    let Some(y) = y else { return err(format!("year {year} is outside -9999..9999")) };
    let m = u8::try_from(month).ok().and_then(|m| time::Month::try_from(m).ok());
    let Some(m) = m else { return err(format!("month {month} is outside 1..12")) };
    match u8::try_from(day).ok().and_then(|d| time::Date::from_calendar_date(y, m, d).ok()) {
        Some(d) => Ok(days_of(d)),
        None => err(format!("day {day} is not a day of {year}-{month:02}")),
    }
}

fn make_time(hour: i64, minute: i64, second: i64, nanos: i64) -> Result<i64, TemporalError> {
    for (name, v, max) in [("hour", hour, 23), ("minute", minute, 59), ("second", second, 59), ("nanosecond", nanos, NANOS_PER_SECOND - 1)]
    {
        if !(0..=max).contains(&v) {
            return err(format!("{name} {v} is outside 0..{max}"));
        }
    }
    Ok(((hour * 60 + minute) * 60 + second) * NANOS_PER_SECOND + nanos)
}

/// Local seconds since the epoch and nanoseconds from a day count and nanoseconds of the day.
fn local(days: i64, nanos_of_day: i64) -> (i64, u32) {
    (days * SECONDS_PER_DAY + nanos_of_day / NANOS_PER_SECOND, (nanos_of_day % NANOS_PER_SECOND) as u32)
}

/// The day count and nanoseconds of the day of local seconds and nanoseconds.
fn split(secs: i64, nanos: u32) -> (i64, i64) {
    (secs.div_euclid(SECONDS_PER_DAY), secs.rem_euclid(SECONDS_PER_DAY) * NANOS_PER_SECOND + i64::from(nanos))
}

fn check_day_range(days: i64) -> Result<i64, TemporalError> {
    let (lo, hi) = (
        days_of(time::Date::from_calendar_date(-9999, time::Month::January, 1).unwrap_or(time::Date::MIN)),
        days_of(time::Date::from_calendar_date(9999, time::Month::December, 31).unwrap_or(time::Date::MAX)),
    );
    if (lo..=hi).contains(&days) {
        Ok(days)
    } else {
        err("the result is outside the years -9999..9999")
    }
}

impl Duration {
    /// A duration from whole months and days and a signed count of nanoseconds.
    pub fn new(months: i64, days: i64, nanos: i128) -> Result<Duration, TemporalError> {
        let n = i128::from(NANOS_PER_SECOND);
        let seconds = i64::try_from(nanos.div_euclid(n)).map_err(|_| TemporalError("the duration is too long".to_owned()))?;
        Ok(Duration { months, days, seconds, nanos: nanos.rem_euclid(n) as i32 })
    }

    /// `-d`.
    pub fn negated(&self) -> Result<Duration, TemporalError> {
        Duration::default().minus(self)
    }

    fn total_nanos(&self) -> i128 {
        i128::from(self.seconds) * i128::from(NANOS_PER_SECOND) + i128::from(self.nanos)
    }

    fn combine(&self, other: &Duration, sign: i64) -> Result<Duration, TemporalError> {
        let months = self.months.checked_add(other.months.checked_mul(sign).unwrap_or(i64::MAX));
        let days = self.days.checked_add(other.days.checked_mul(sign).unwrap_or(i64::MAX));
        let (Some(months), Some(days)) = (months, days) else { return err("the duration is too long") };
        Duration::new(months, days, self.total_nanos() + i128::from(sign) * other.total_nanos())
    }

    /// `a + b`.
    pub fn plus(&self, other: &Duration) -> Result<Duration, TemporalError> {
        self.combine(other, 1)
    }

    /// `a - b`.
    pub fn minus(&self, other: &Duration) -> Result<Duration, TemporalError> {
        self.combine(other, -1)
    }

    /// `d * factor`: each component scaled; a fraction of a month carries into days (an
    /// average month) and a fraction of a day into seconds.
    pub fn times(&self, factor: f64) -> Result<Duration, TemporalError> {
        if !factor.is_finite() {
            return err("a duration cannot be multiplied by NaN or an infinity");
        }
        let months = self.months as f64 * factor;
        let days = self.days as f64 * factor + months.fract() * (SECONDS_PER_AVERAGE_MONTH as f64 / SECONDS_PER_DAY as f64);
        let nanos = self.total_nanos() as f64 * factor + days.fract() * NANOS_PER_DAY as f64;
        let fits = |v: f64| v.abs() < 9.2e18;
        if !fits(months) || !fits(days) || nanos.abs() >= 1.7e38 || nanos.is_nan() {
            return err("the duration is too long");
        }
        Duration::new(months.trunc() as i64, days.trunc() as i64, nanos.round() as i128)
    }

    /// A duration from its map's components (`years`, `quarters`, `months`, `weeks`, `days`,
    /// `hours`, `minutes`, `seconds`, `milliseconds`, `microseconds`, `nanoseconds`), each an
    /// integer or a float; fractions carry down.
    pub fn from_components(fields: &[(&str, Component)]) -> Result<Duration, TemporalError> {
        let mut d = Duration::default();
        for (name, value) in fields {
            let (months, days, nanos): (f64, f64, f64) = match *name {
                "years" => (12.0, 0.0, 0.0),
                "quarters" => (3.0, 0.0, 0.0),
                "months" => (1.0, 0.0, 0.0),
                "weeks" => (0.0, 7.0, 0.0),
                "days" => (0.0, 1.0, 0.0),
                "hours" => (0.0, 0.0, 3.6e12),
                "minutes" => (0.0, 0.0, 6e10),
                "seconds" => (0.0, 0.0, 1e9),
                "milliseconds" => (0.0, 0.0, 1e6),
                "microseconds" => (0.0, 0.0, 1e3),
                "nanoseconds" => (0.0, 0.0, 1.0),
                other => return err(format!("duration() has no component '{other}'")),
            };
            let part = match value {
                Component::Int(i) => {
                    let i = i128::from(*i);
                    let sum = Duration::new(
                        i64::try_from(i * months as i128).map_err(|_| TemporalError(format!("duration's '{name}' is too large")))?,
                        i64::try_from(i * days as i128).map_err(|_| TemporalError(format!("duration's '{name}' is too large")))?,
                        i * nanos as i128,
                    )?;
                    sum
                }
                Component::Float(x) => {
                    Duration { months: months as i64, days: days as i64, seconds: 0, nanos: 0 }.with_nanos(nanos).times(*x)?
                }
                _ => return err(format!("duration's '{name}' must be a number")),
            };
            d = d.plus(&part)?;
        }
        Ok(d)
    }

    fn with_nanos(mut self, nanos: f64) -> Duration {
        let n = nanos as i64;
        self.seconds = n / NANOS_PER_SECOND;
        self.nanos = (n % NANOS_PER_SECOND) as i32;
        self
    }

    /// Months, days and nanoseconds as one number of seconds with Neo4j's average month:
    /// what FalkorDB's clients take for a duration.
    pub fn approximate_seconds(&self) -> i64 {
        self.months
            .saturating_mul(SECONDS_PER_AVERAGE_MONTH)
            .saturating_add(self.days.saturating_mul(SECONDS_PER_DAY))
            .saturating_add(self.seconds)
    }
}

impl Temporal {
    /// Whether every part is in its range (what the constructors guarantee): checked on a value
    /// a program hands in as a parameter, whose fields are public.
    pub fn validate(&self) -> Result<(), TemporalError> {
        let bad = || TemporalError(format!("{} is out of range", self.kind_text()));
        let offset_ok = |o: i32| i64::from(o).abs() <= OFFSET_MAX;
        let ok = match *self {
            Temporal::Date(d) => check_day_range(d).is_ok(),
            Temporal::LocalTime(n) => (0..NANOS_PER_DAY).contains(&n),
            Temporal::Time { nanos, offset } => (0..NANOS_PER_DAY).contains(&nanos) && offset_ok(offset),
            Temporal::LocalDateTime { secs, nanos } => {
                i64::from(nanos) < NANOS_PER_SECOND && check_day_range(secs.div_euclid(SECONDS_PER_DAY)).is_ok()
            }
            Temporal::DateTime { secs, nanos, offset } | Temporal::ZonedDateTime { secs, nanos, offset, .. } => {
                i64::from(nanos) < NANOS_PER_SECOND
                    && offset_ok(offset)
                    && check_day_range(secs.div_euclid(SECONDS_PER_DAY)).is_ok()
                    && check_day_range(secs.saturating_add(i64::from(offset)).div_euclid(SECONDS_PER_DAY)).is_ok()
                    && match self {
                        Temporal::ZonedDateTime { zone, .. } => zone.offset_at(secs) == offset,
                        _ => true,
                    }
            }
            Temporal::Duration(d) => (0..NANOS_PER_SECOND).contains(&i64::from(d.nanos)),
        };
        if ok {
            Ok(())
        } else {
            Err(bad())
        }
    }

    /// The duration it is, if it is one.
    pub fn as_duration(&self) -> Option<Duration> {
        match self {
            Temporal::Duration(d) => Some(*d),
            _ => None,
        }
    }

    /// Its kind.
    pub fn kind(&self) -> Kind {
        match self {
            Temporal::Date(_) => Kind::Date,
            Temporal::LocalTime(_) => Kind::LocalTime,
            Temporal::Time { .. } => Kind::Time,
            Temporal::LocalDateTime { .. } => Kind::LocalDateTime,
            Temporal::DateTime { .. } | Temporal::ZonedDateTime { .. } => Kind::DateTime,
            Temporal::Duration(_) => Kind::Duration,
        }
    }

    /// The instant (seconds and nanoseconds since the epoch) and offset of a date-time.
    fn instant(&self) -> Option<(i64, u32, i32)> {
        match *self {
            Temporal::DateTime { secs, nanos, offset } | Temporal::ZonedDateTime { secs, nanos, offset, .. } => Some((secs, nanos, offset)),
            _ => None,
        }
    }

    /// Seconds east of UTC, for the kinds that have an offset (times and date-times).
    pub fn offset(&self) -> Option<i32> {
        match *self {
            Temporal::Time { offset, .. } | Temporal::DateTime { offset, .. } | Temporal::ZonedDateTime { offset, .. } => Some(offset),
            _ => None,
        }
    }

    /// Where it is: its named zone, else its offset; `None` for the kinds without either.
    pub fn time_zone(&self) -> Option<TimeZone> {
        match *self {
            Temporal::ZonedDateTime { zone, .. } => Some(TimeZone::Named(zone)),
            _ => self.offset().map(TimeZone::Offset),
        }
    }

    /// Its named zone, if it has one.
    pub fn zone(&self) -> Option<Zone> {
        match *self {
            Temporal::ZonedDateTime { zone, .. } => Some(zone),
            _ => None,
        }
    }

    /// The type's name, for messages.
    pub fn kind_text(&self) -> &'static str {
        match self {
            Temporal::Date(_) => "a date",
            Temporal::LocalTime(_) => "a local time",
            Temporal::Time { .. } => "a time",
            Temporal::LocalDateTime { .. } => "a local date-time",
            Temporal::DateTime { .. } | Temporal::ZonedDateTime { .. } => "a date-time",
            Temporal::Duration(_) => "a duration",
        }
    }

    /// The date part (days since the epoch), local to its offset.
    fn date_part(&self) -> Option<i64> {
        match *self {
            Temporal::Date(d) => Some(d),
            Temporal::LocalDateTime { secs, nanos } => Some(split(secs, nanos).0),
            Temporal::DateTime { secs, nanos, offset } | Temporal::ZonedDateTime { secs, nanos, offset, .. } => {
                Some(split(secs.saturating_add(i64::from(offset)), nanos).0)
            }
            _ => None,
        }
    }

    /// The time-of-day part (local nanoseconds) and the offset, if there is one.
    fn time_part(&self) -> Option<(i64, Option<i32>)> {
        match *self {
            Temporal::LocalTime(n) => Some((n, None)),
            Temporal::Time { nanos, offset } => Some((nanos, Some(offset))),
            Temporal::LocalDateTime { secs, nanos } => Some((split(secs, nanos).1, None)),
            Temporal::DateTime { secs, nanos, offset } | Temporal::ZonedDateTime { secs, nanos, offset, .. } => {
                Some((split(secs.saturating_add(i64::from(offset)), nanos).1, Some(offset)))
            }
            _ => None,
        }
    }

    fn date_time(kind: Kind, days: i64, nanos_of_day: i64, offset: i32) -> Temporal {
        let (secs, nanos) = local(days, nanos_of_day);
        match kind {
            Kind::LocalDateTime => Temporal::LocalDateTime { secs, nanos },
            _ => Temporal::DateTime { secs: secs - i64::from(offset), nanos, offset },
        }
    }

    /// `kind(other)`: the parts of another temporal value (`date(datetime)` is its date,
    /// `datetime(date)` its midnight in UTC).
    pub fn convert(kind: Kind, from: &Temporal) -> Result<Temporal, TemporalError> {
        let cannot = || TemporalError(format!("{}() cannot be made from {}", kind.name(), from.kind_text()));
        Ok(match kind {
            Kind::Date => Temporal::Date(from.date_part().ok_or_else(cannot)?),
            Kind::LocalTime => Temporal::LocalTime(from.time_part().ok_or_else(cannot)?.0),
            Kind::Time => {
                let (nanos, offset) = from.time_part().ok_or_else(cannot)?;
                Temporal::Time { nanos, offset: offset.unwrap_or(0) }
            }
            // A date-time stays itself, named zone and all.
            Kind::DateTime if from.instant().is_some() => *from,
            Kind::LocalDateTime | Kind::DateTime => {
                let days = from.date_part().ok_or_else(cannot)?;
                let (nanos, offset) = from.time_part().unwrap_or((0, None));
                Temporal::date_time(kind, days, nanos, offset.unwrap_or(0))
            }
            Kind::Duration => match from {
                Temporal::Duration(_) => *from,
                _ => return Err(cannot()),
            },
        })
    }

    /// `kind.truncate(unit, from)`: `from`'s parts as `kind`, everything below `unit` at its
    /// least (`millennium`, `century`, `decade`, `year`, `weekYear` (the Monday of its ISO week
    /// year's first week), `quarter`, `month`, `week` (its Monday), `day`, `hour`, `minute`,
    /// `second`, `millisecond`, `microsecond`). A zoned result keeps `from`'s offset (UTC when it
    /// has none); a unit `kind` cannot hold, or a part `from` lacks, is refused by name.
    pub fn truncate(kind: Kind, unit: &str, from: &Temporal) -> Result<Temporal, TemporalError> {
        const DATE_UNITS: &[&str] = &["millennium", "century", "decade", "year", "weekyear", "quarter", "month", "week", "day"];
        const TIME_UNITS: &[(&str, i64)] = &[
            ("day", 86_400 * NANOS_PER_SECOND),
            ("hour", 3_600 * NANOS_PER_SECOND),
            ("minute", 60 * NANOS_PER_SECOND),
            ("second", NANOS_PER_SECOND),
            ("millisecond", 1_000_000),
            ("microsecond", 1_000),
        ];
        let lower = unit.to_ascii_lowercase();
        let is_date_unit = DATE_UNITS.contains(&lower.as_str());
        let time_unit = TIME_UNITS.iter().find(|(u, _)| *u == lower).map(|(_, n)| *n);
        if !is_date_unit && time_unit.is_none() {
            return err(format!("'{unit}' is not a unit to truncate to (millennium, century, decade, year, weekYear, quarter, month, week, day, hour, minute, second, millisecond, microsecond)"));
        }
        let has_date = matches!(kind, Kind::Date | Kind::LocalDateTime | Kind::DateTime);
        let has_time = matches!(kind, Kind::LocalTime | Kind::Time | Kind::LocalDateTime | Kind::DateTime);
        if kind == Kind::Duration || (!has_time && time_unit.is_some() && lower != "day") || (!has_date && is_date_unit && lower != "day") {
            return err(format!("{}.truncate() cannot truncate to '{unit}'", kind.name()));
        }
        let cannot = || TemporalError(format!("{}.truncate() cannot take {}", kind.name(), from.kind_text()));
        let days = if has_date { Some(from.date_part().ok_or_else(cannot)?) } else { None };
        let (nanos, offset) = match from.time_part() {
            Some(t) => t,
            None if has_date => (0, None),
            None => return Err(cannot()),
        };
        let nanos = match time_unit {
            Some(n) => nanos - nanos.rem_euclid(n),
            None => 0,
        };
        let days = match days {
            Some(d) if is_date_unit => {
                let date = calendar(d);
                let (y, m) = (i64::from(date.year()), i64::from(date.month() as u8));
                let floor = |n: i64| y - y.rem_euclid(n);
                Some(match lower.as_str() {
                    "millennium" => make_date(floor(1000), 1, 1)?,
                    "century" => make_date(floor(100), 1, 1)?,
                    "decade" => make_date(floor(10), 1, 1)?,
                    "year" => make_date(y, 1, 1)?,
                    "weekyear" => {
                        let first = time::Date::from_iso_week_date(date.to_iso_week_date().0, 1, time::Weekday::Monday);
                        days_of(first.map_err(|_| TemporalError(format!("the week year of {} is out of range", from.kind_text())))?)
                    }
                    "quarter" => make_date(y, m - (m - 1) % 3, 1)?,
                    "month" => make_date(y, m, 1)?,
                    "week" => d - i64::from(date.weekday().number_days_from_monday()),
                    _ => d,
                })
            }
            other => other,
        };
        let days = days.map(check_day_range).transpose()?;
        Ok(match (kind, from.zone()) {
            (Kind::Date, _) => Temporal::Date(days.unwrap_or(0)),
            (Kind::LocalTime, _) => Temporal::LocalTime(nanos),
            (Kind::Time, _) => Temporal::Time { nanos, offset: offset.unwrap_or(0) },
            // A named zone is kept: the truncated local time takes the zone's offset there.
            (Kind::DateTime, Some(zone)) => {
                let (secs, n) = local(days.unwrap_or(0), nanos);
                let made = TimeZone::Named(zone).at_local(secs, n, offset);
                made.validate()?;
                made
            }
            _ => Temporal::date_time(kind, days.unwrap_or(0), nanos, offset.unwrap_or(0)),
        })
    }

    /// The current moment as `kind` (UTC), from nanoseconds since the epoch.
    pub fn now(kind: Kind, epoch_nanos: i128) -> Temporal {
        Temporal::now_at(kind, epoch_nanos, None)
    }

    /// `t + d` (and `t - d` with `d` negated): months first (the day clamped to the month's
    /// last), then days, then seconds. A date ignores less than a day; a time wraps at midnight.
    pub fn plus(&self, d: &Duration) -> Result<Temporal, TemporalError> {
        let shift_date = |days: i64| -> Result<i64, TemporalError> {
            let (y, m, dd) = calendar(days).to_calendar_date();
            let Some(months) = (i64::from(y) * 12 + i64::from(m as u8) - 1).checked_add(d.months) else {
                return err("the result is outside the years -9999..9999");
            };
            let (ny, nm) = (months.div_euclid(12), months.rem_euclid(12) + 1);
            if !(-9999..=9999).contains(&ny) {
                return err("the result is outside the years -9999..9999");
            }
            let last = time::Month::try_from(nm as u8).unwrap_or(time::Month::January).length(ny as i32);
            let shifted = make_date(ny, nm, i64::from(dd.min(last)))?;
            check_day_range(shifted.checked_add(d.days).ok_or_else(|| TemporalError("the result is out of range".to_owned()))?)
        };
        let shift_time = |nanos: i64| -> i64 { (i128::from(nanos) + d.total_nanos()).rem_euclid(i128::from(NANOS_PER_DAY)) as i64 };
        Ok(match *self {
            Temporal::Duration(a) => Temporal::Duration(a.plus(d)?),
            Temporal::Date(days) => {
                let whole_days = d.total_nanos().div_euclid(i128::from(NANOS_PER_DAY));
                let extra = i64::try_from(whole_days).map_err(|_| TemporalError("the result is out of range".to_owned()))?;
                Temporal::Date(check_day_range(shift_date(days)?.checked_add(extra).unwrap_or(i64::MAX))?)
            }
            Temporal::LocalTime(n) => Temporal::LocalTime(shift_time(n)),
            Temporal::Time { nanos, offset } => Temporal::Time { nanos: shift_time(nanos), offset },
            // Months and days on the local time line (the zone's offset there, the old one if it
            // still holds), then the time on the instant's (Java's and Neo4j's order).
            Temporal::ZonedDateTime { secs, nanos, offset, zone } => {
                let (days, nanos_of_day) = split(secs.saturating_add(i64::from(offset)), nanos);
                let (local_secs, n) = local(shift_date(days)?, nanos_of_day);
                let moved = local_secs - i64::from(zone.resolve(local_secs, Some(offset)));
                let total = i128::from(moved) * i128::from(NANOS_PER_SECOND) + i128::from(n) + d.total_nanos();
                let per = i128::from(NANOS_PER_SECOND);
                let secs = i64::try_from(total.div_euclid(per)).map_err(|_| TemporalError("the result is out of range".to_owned()))?;
                let made = TimeZone::Named(zone).at_instant(secs, total.rem_euclid(per) as u32);
                made.validate().map_err(|_| TemporalError("the result is outside the years -9999..9999".to_owned()))?;
                made
            }
            Temporal::LocalDateTime { .. } | Temporal::DateTime { .. } => {
                let offset = match *self {
                    Temporal::DateTime { offset, .. } => offset,
                    _ => 0,
                };
                let (days, nanos_of_day) = (self.date_part().unwrap_or(0), self.time_part().map_or(0, |t| t.0));
                let days = shift_date(days)?;
                let total = i128::from(days) * i128::from(NANOS_PER_DAY) + i128::from(nanos_of_day) + d.total_nanos();
                let day_nanos = i128::from(NANOS_PER_DAY);
                let days = check_day_range(i64::try_from(total.div_euclid(day_nanos)).unwrap_or(i64::MAX))?;
                Temporal::date_time(self.kind(), days, total.rem_euclid(day_nanos) as i64, offset)
            }
        })
    }

    /// `a < b` and friends: within one kind; durations do not compare (null).
    pub fn compare(&self, other: &Temporal) -> Option<Ordering> {
        if self.kind() != other.kind() || matches!(self, Temporal::Duration(_)) {
            return None;
        }
        Some(self.key().cmp(&other.key()).then_with(|| self.zone_name().cmp(&other.zone_name())))
    }

    /// The zone's name, for the last tie-break between equal instants at equal offsets.
    fn zone_name(&self) -> Option<&'static str> {
        self.zone().map(|z| z.name())
    }

    /// The kind's rank and the instant part of the comparison's key, which orders values of
    /// one kind (equal instants may differ by offset); `None` for a duration, which does not
    /// compare. For the ordered property index.
    pub(crate) fn order_key(&self) -> Option<(u8, i128)> {
        (!matches!(self, Temporal::Duration(_))).then(|| (self.rank(), self.key().0))
    }

    /// The key both comparison and the sort order use within one kind: the instant (UTC) first,
    /// then the offset, so equal values and only they compare equal.
    fn key(&self) -> (i128, i64) {
        match *self {
            Temporal::Date(d) => (i128::from(d), 0),
            Temporal::LocalTime(n) => (i128::from(n), 0),
            Temporal::Time { nanos, offset } => (i128::from(nanos) - i128::from(offset) * i128::from(NANOS_PER_SECOND), i64::from(offset)),
            Temporal::LocalDateTime { secs, nanos } => (i128::from(secs) * i128::from(NANOS_PER_SECOND) + i128::from(nanos), 0),
            Temporal::DateTime { secs, nanos, offset } | Temporal::ZonedDateTime { secs, nanos, offset, .. } => {
                (i128::from(secs) * i128::from(NANOS_PER_SECOND) + i128::from(nanos), i64::from(offset))
            }
            Temporal::Duration(d) => (d.total_nanos(), 0),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Temporal::DateTime { .. } | Temporal::ZonedDateTime { .. } => 0,
            Temporal::LocalDateTime { .. } => 1,
            Temporal::Date(_) => 2,
            Temporal::Time { .. } => 3,
            Temporal::LocalTime(_) => 4,
            Temporal::Duration(_) => 5,
        }
    }

    /// The total order of `ORDER BY` among temporal values: date-times, local date-times,
    /// dates, times, local times, durations; within a kind by `compare` (durations by their
    /// months, days, then time).
    pub fn order(&self, other: &Temporal) -> Ordering {
        self.rank().cmp(&other.rank()).then_with(|| match (self, other) {
            (Temporal::Duration(a), Temporal::Duration(b)) => (a.months, a.days, a.total_nanos()).cmp(&(b.months, b.days, b.total_nanos())),
            _ => self.key().cmp(&other.key()).then_with(|| self.zone_name().cmp(&other.zone_name())),
        })
    }

    /// A component by name (`year`, `month`, `day`, `hour`, …, `timezone`, `offsetSeconds`,
    /// `epochSeconds`; a duration's `years`, `months`, `days`, `hours`, …): `None` when this kind has no
    /// such component.
    pub fn component(&self, name: &str) -> Option<Component> {
        if let Temporal::Duration(d) = self {
            return duration_component(d, name).map(Component::Int);
        }
        let date = self.date_part().map(calendar);
        let time = self.time_part();
        let offset = self.offset();
        let int = |v: i64| Some(Component::Int(v));
        match (name, date, time, offset) {
            ("year", Some(d), ..) => int(i64::from(d.year())),
            ("quarter", Some(d), ..) => int((i64::from(d.month() as u8) - 1) / 3 + 1),
            ("month", Some(d), ..) => int(i64::from(d.month() as u8)),
            ("week", Some(d), ..) => int(i64::from(d.iso_week())),
            ("weekYear", Some(d), ..) => int(i64::from(d.to_iso_week_date().0)),
            ("day", Some(d), ..) => int(i64::from(d.day())),
            ("ordinalDay", Some(d), ..) => int(i64::from(d.ordinal())),
            ("dayOfQuarter", Some(d), ..) => {
                let m = i64::from(d.month() as u8);
                let start = make_date(i64::from(d.year()), m - (m - 1) % 3, 1).unwrap_or(0);
                int(days_of(d) - start + 1)
            }
            ("dayOfWeek" | "weekDay", Some(d), ..) => int(i64::from(d.weekday().number_from_monday())),
            ("hour", _, Some((n, _)), _) => int(n / NANOS_PER_SECOND / 3600),
            ("minute", _, Some((n, _)), _) => int(n / NANOS_PER_SECOND / 60 % 60),
            ("second", _, Some((n, _)), _) => int(n / NANOS_PER_SECOND % 60),
            ("millisecond", _, Some((n, _)), _) => int(n % NANOS_PER_SECOND / 1_000_000),
            ("microsecond", _, Some((n, _)), _) => int(n % NANOS_PER_SECOND / 1000),
            ("nanosecond", _, Some((n, _)), _) => int(n % NANOS_PER_SECOND),
            ("timezone", ..) if self.zone().is_some() => Some(Component::Str(self.zone_name().unwrap_or("").to_owned())),
            ("timezone" | "offset", .., Some(o)) => {
                Some(Component::Str(if o == 0 && name == "offset" { "+00:00".to_owned() } else { offset_text(o) }))
            }
            ("offsetMinutes", .., Some(o)) => int(i64::from(o) / 60),
            ("offsetSeconds", .., Some(o)) => int(i64::from(o)),
            ("epochSeconds" | "epochMillis", ..) => match *self {
                Temporal::DateTime { secs, nanos, .. }
                | Temporal::ZonedDateTime { secs, nanos, .. }
                | Temporal::LocalDateTime { secs, nanos } => {
                    int(if name == "epochSeconds" { secs } else { secs.saturating_mul(1000) + i64::from(nanos / 1_000_000) })
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whole seconds since the epoch as FalkorDB's clients read a temporal cell: a date at its
    /// midnight, a time of day since midnight (UTC), a duration with an average month.
    pub fn falkordb_seconds(&self) -> i64 {
        match *self {
            Temporal::Date(d) => d * SECONDS_PER_DAY,
            Temporal::LocalTime(n) => n / NANOS_PER_SECOND,
            Temporal::Time { .. } => (self.key().0.rem_euclid(i128::from(NANOS_PER_DAY)) / i128::from(NANOS_PER_SECOND)) as i64,
            Temporal::LocalDateTime { secs, .. } | Temporal::DateTime { secs, .. } | Temporal::ZonedDateTime { secs, .. } => secs,
            Temporal::Duration(d) => d.approximate_seconds(),
        }
    }
}

fn duration_component(d: &Duration, name: &str) -> Option<i64> {
    let total = d.total_nanos();
    let n = i128::from(NANOS_PER_SECOND);
    let of = |div: i128| i64::try_from(total.div_euclid(div)).ok();
    match name {
        "years" => Some(d.months / 12),
        "quarters" => Some(d.months / 3),
        "months" => Some(d.months),
        "monthsOfYear" => Some(d.months % 12),
        "monthsOfQuarter" => Some(d.months % 3),
        "quartersOfYear" => Some(d.months / 3 % 4),
        "weeks" => Some(d.days / 7),
        "days" => Some(d.days),
        "daysOfWeek" => Some(d.days % 7),
        "hours" => of(3600 * n),
        "minutes" => of(60 * n),
        "seconds" => Some(d.seconds),
        "milliseconds" => of(1_000_000),
        "microseconds" => of(1000),
        "nanoseconds" => of(1),
        "minutesOfHour" => of(60 * n).map(|m| m % 60),
        "secondsOfMinute" => Some(d.seconds % 60),
        "millisecondsOfSecond" => Some(i64::from(d.nanos) / 1_000_000),
        "microsecondsOfSecond" => Some(i64::from(d.nanos) / 1000),
        "nanosecondsOfSecond" => Some(i64::from(d.nanos)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(items: &[(&'static str, i64)]) -> Vec<(&'static str, Component)> {
        items.iter().map(|(k, v)| (*k, Component::Int(*v))).collect()
    }

    fn make(kind: Kind, items: &[(&'static str, i64)], tz: Option<&str>) -> Temporal {
        let mut f = fields(items);
        if let Some(tz) = tz {
            f.push(("timezone", Component::Str(tz.to_owned())));
        }
        Temporal::from_fields(kind, &Fields(&f), 0).expect("valid")
    }

    #[test]
    fn values_print_as_neo4j_does() {
        assert_eq!(make(Kind::Date, &[("year", 1910), ("month", 5), ("day", 6)], None).to_string(), "1910-05-06");
        assert_eq!(make(Kind::LocalTime, &[("hour", 10), ("minute", 35)], None).to_string(), "10:35");
        assert_eq!(
            make(Kind::LocalTime, &[("hour", 12), ("minute", 31), ("second", 14), ("nanosecond", 645_876_123)], None).to_string(),
            "12:31:14.645876123"
        );
        assert_eq!(make(Kind::Time, &[("hour", 10), ("minute", 35)], Some("-08:00")).to_string(), "10:35-08:00");
        assert_eq!(make(Kind::Time, &[("hour", 10), ("minute", 35)], None).to_string(), "10:35Z");
        let dt = make(
            Kind::DateTime,
            &[("year", 1), ("month", 1), ("day", 1), ("hour", 1), ("minute", 1), ("second", 1), ("nanosecond", 1)],
            Some("-11:59"),
        );
        assert_eq!(dt.to_string(), "0001-01-01T01:01:01.000000001-11:59");
        let ldt =
            make(Kind::LocalDateTime, &[("year", 1980), ("month", 12), ("day", 11), ("hour", 12), ("minute", 31), ("second", 14)], None);
        assert_eq!(ldt.to_string(), "1980-12-11T12:31:14");
        assert_eq!(make(Kind::LocalTime, &[("hour", 1), ("millisecond", 5)], None).to_string(), "01:00:00.005");
        assert_eq!(Duration::parse("P1Y2M10DT2H30M").map(|d| d.to_string()), Ok("P1Y2M10DT2H30M".to_owned()));
        assert_eq!(Duration::parse("PT0S").map(|d| d.to_string()), Ok("PT0S".to_owned()));
        assert_eq!(Duration::parse("PT-0.5S").map(|d| d.to_string()), Ok("PT-0.5S".to_owned()));
        assert_eq!(Duration::parse("P1.5D").map(|d| d.to_string()), Ok("P1DT12H".to_owned()));
    }

    #[test]
    fn text_reads_back_as_the_value() {
        for (kind, text) in [
            (Kind::Date, "2015-07-21"),
            (Kind::Date, "-0044-03-15"),
            (Kind::LocalTime, "21:40:32.142"),
            (Kind::Time, "21:40:32+01:00"),
            (Kind::LocalDateTime, "2015-07-21T21:40:32.000000001"),
            (Kind::DateTime, "2015-07-21T21:40:32.500-08:00"),
            (Kind::DateTime, "2015-07-21T21:40Z"),
            (Kind::DateTime, "2015-07-21T21:40:32.142+02:00[Europe/Stockholm]"),
            (Kind::DateTime, "1818-07-21T21:40:32.142+00:53:28[Europe/Stockholm]"),
            (Kind::DateTime, "2015-01-21T21:40Z[Europe/London]"),
            (Kind::Duration, "P14DT16H12M"),
        ] {
            let t = Temporal::parse(kind, text).expect(text);
            assert_eq!(t.to_string(), text);
            assert_eq!(Temporal::parse(kind, &t.to_string()), Ok(t));
        }
        assert!(Temporal::parse(Kind::Date, "2015-02-30").is_err());
        assert!(Temporal::parse(Kind::Time, "25:00").is_err());
        assert!(Temporal::parse(Kind::DateTime, "2015-07-21T21:40[Europe/Atlantis]").is_err());
        assert!(Temporal::parse(Kind::DateTime, "2015-07-21T21:40+05:00[Europe/Stockholm]").is_err());
        assert!(Temporal::parse(Kind::LocalDateTime, "2015-07-21T21:40[Europe/Stockholm]").is_err());
        assert!(Temporal::parse(Kind::Duration, "P1Q").is_err());
    }

    #[test]
    fn arithmetic_clamps_months_and_wraps_times() {
        let jan31 = Temporal::parse(Kind::Date, "2021-01-31").expect("date");
        let month = Duration { months: 1, ..Duration::default() };
        assert_eq!(jan31.plus(&month).map(|t| t.to_string()), Ok("2021-02-28".to_owned()));
        let late = Temporal::parse(Kind::LocalTime, "23:30").expect("time");
        let hour = Duration::parse("PT1H").expect("duration");
        assert_eq!(late.plus(&hour).map(|t| t.to_string()), Ok("00:30".to_owned()));
        let dt = Temporal::parse(Kind::DateTime, "2020-02-28T23:30+02:00").expect("datetime");
        assert_eq!(dt.plus(&hour).map(|t| t.to_string()), Ok("2020-02-29T00:30+02:00".to_owned()));
        assert!(Temporal::parse(Kind::Date, "9999-12-31").expect("date").plus(&Duration { days: 1, ..Duration::default() }).is_err());
    }

    #[test]
    fn times_compare_by_instant_then_offset() {
        let a = Temporal::parse(Kind::Time, "12:00+01:00").expect("time");
        let b = Temporal::parse(Kind::Time, "11:30Z").expect("time");
        assert_eq!(a.compare(&b), Some(Ordering::Less));
        let c = Temporal::parse(Kind::DateTime, "2020-01-01T01:00+01:00").expect("datetime");
        let d = Temporal::parse(Kind::DateTime, "2020-01-01T00:00Z").expect("datetime");
        assert_ne!(c, d);
        assert_eq!(c.compare(&d), Some(Ordering::Greater));
        assert_eq!(Temporal::Duration(Duration::default()).compare(&Temporal::Duration(Duration::default())), None);
        assert_eq!(a.compare(&c), None);
    }

    proptest::proptest! {
        #[test]
        fn dates_agree_with_the_calendar(days in -3_000_000i64..2_900_000, months in -400i64..400, plus in -1000i64..1000) {
            let d = Temporal::Date(days);
            let text = d.to_string();
            proptest::prop_assert_eq!(Temporal::parse(Kind::Date, &text), Ok(d));
            let shifted = d.plus(&Duration { months, days: plus, seconds: 0, nanos: 0 });
            // The reference: the `time` crate's own month arithmetic, then days.
            let c = calendar(days);
            let m = i64::from(c.year()) * 12 + i64::from(c.month() as u8) - 1 + months;
            let (y, mo) = (m.div_euclid(12) as i32, time::Month::try_from((m.rem_euclid(12) + 1) as u8).expect("month"));
            let day = c.day().min(mo.length(y));
            let want = time::Date::from_calendar_date(y, mo, day).ok().map(|x| days_of(x) + plus).filter(|x| check_day_range(*x).is_ok());
            proptest::prop_assert_eq!(shifted.ok(), want.map(Temporal::Date));
        }

        #[test]
        fn date_times_read_back_and_order_by_instant(secs in -300_000_000_000i64..250_000_000_000, nanos in 0u32..1_000_000_000, offset in -64_800i32..64_800, secs2 in -300_000_000_000i64..250_000_000_000) {
            let a = Temporal::DateTime { secs, nanos, offset };
            proptest::prop_assert_eq!(Temporal::parse(Kind::DateTime, &a.to_string()), Ok(a));
            let b = Temporal::DateTime { secs: secs2, nanos, offset: 0 };
            proptest::prop_assert_eq!(a.compare(&b), Some((secs, offset).cmp(&(secs2, 0))));
            let l = Temporal::LocalDateTime { secs, nanos };
            proptest::prop_assert_eq!(Temporal::parse(Kind::LocalDateTime, &l.to_string()), Ok(l));
        }

        #[test]
        fn any_text_is_a_value_or_an_error(text in "\\PC{0,24}", digits in "[-+0-9:.TZPYMDHSWz ]{0,24}") {
            for kind in [Kind::Date, Kind::LocalTime, Kind::Time, Kind::LocalDateTime, Kind::DateTime, Kind::Duration] {
                for t in [&text, &digits] {
                    if let Ok(v) = Temporal::parse(kind, t) {
                        // Whatever reads as a value prints as text that reads back as it.
                        proptest::prop_assert_eq!(Temporal::parse(kind, &v.to_string()), Ok(v));
                    }
                }
            }
        }

        #[test]
        fn durations_read_back(months in -100_000i64..100_000, days in -100_000i64..100_000, seconds in -10_000_000_000i64..10_000_000_000, nanos in 0i32..1_000_000_000) {
            let d = Duration { months, days, seconds, nanos };
            proptest::prop_assert_eq!(Duration::parse(&d.to_string()), Ok(d));
        }
    }
}
