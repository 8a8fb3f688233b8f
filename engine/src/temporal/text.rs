//! Temporal values as ISO 8601 text: reading every form Cypher takes (calendar, week and ordinal
//! dates, times, offsets, a zone's name in brackets, durations in both ISO forms) and writing the
//! forms Java and Neo4j print.

use std::fmt;

use super::fields::Fields;
use super::{
    calendar, check_day_range, err, local, make_date, make_time, split, Component, Duration, Kind, Temporal, TemporalError, TimeZone, Zone,
    NANOS_PER_SECOND, OFFSET_MAX,
};

/// Parses an offset: `Z`, `+HH`, `+HH:MM`, `+HHMM`, `+HH:MM:SS`.
pub fn parse_offset(text: &str) -> Result<i32, TemporalError> {
    if text == "Z" || text == "z" {
        return Ok(0);
    }
    let bad = || TemporalError(format!("timezone '{text}' is not an offset such as 'Z', '+01:00' or '-08:00'"));
    let (sign, rest) = match text.as_bytes().first() {
        Some(b'+') => (1, &text[1..]),
        Some(b'-') => (-1, &text[1..]),
        _ => return Err(bad()),
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !matches!(digits.len(), 2 | 4 | 6) {
        return Err(bad());
    }
    let n = |i: usize| digits.get(i..i + 2).and_then(|s| s.parse::<i64>().ok()).unwrap_or(0);
    let (h, m, s) = (n(0), n(2), n(4));
    if m > 59 || s > 59 {
        return Err(bad());
    }
    let total = h * 3600 + m * 60 + s;
    if total > OFFSET_MAX {
        return err(format!("timezone '{text}' is beyond ±18:00"));
    }
    Ok((sign * total) as i32)
}

pub(super) fn offset_text(offset: i32) -> String {
    if offset == 0 {
        return "Z".to_owned();
    }
    let sign = if offset < 0 { '-' } else { '+' };
    let a = offset.unsigned_abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    if s == 0 {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}:{m:02}:{s:02}")
    }
}

fn write_date(f: &mut fmt::Formatter<'_>, days: i64) -> fmt::Result {
    let (y, m, d) = calendar(days).to_calendar_date();
    if y < 0 {
        write!(f, "-{:04}-{:02}-{:02}", -y, m as u8, d)
    } else {
        write!(f, "{y:04}-{:02}-{d:02}", m as u8)
    }
}

/// A time of day as Java and Neo4j print it: seconds only when not zero (or a fraction is
/// there), the fraction in groups of three digits.
fn write_time(f: &mut fmt::Formatter<'_>, nanos_of_day: i64) -> fmt::Result {
    let secs = nanos_of_day / NANOS_PER_SECOND;
    let frac = nanos_of_day % NANOS_PER_SECOND;
    write!(f, "{:02}:{:02}", secs / 3600, secs / 60 % 60)?;
    if secs % 60 != 0 || frac != 0 {
        write!(f, ":{:02}", secs % 60)?;
    }
    write_fraction(f, frac)
}

fn write_fraction(f: &mut fmt::Formatter<'_>, frac: i64) -> fmt::Result {
    if frac == 0 {
        Ok(())
    } else if frac % 1_000_000 == 0 {
        write!(f, ".{:03}", frac / 1_000_000)
    } else if frac % 1000 == 0 {
        write!(f, ".{:06}", frac / 1000)
    } else {
        write!(f, ".{frac:09}")
    }
}

impl fmt::Display for Temporal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Temporal::Date(d) => write_date(f, d),
            Temporal::LocalTime(n) => write_time(f, n),
            Temporal::Time { nanos, offset } => {
                write_time(f, nanos)?;
                f.write_str(&offset_text(offset))
            }
            Temporal::LocalDateTime { secs, nanos } => {
                let (d, n) = split(secs, nanos);
                write_date(f, d)?;
                f.write_str("T")?;
                write_time(f, n)
            }
            Temporal::DateTime { secs, nanos, offset } | Temporal::ZonedDateTime { secs, nanos, offset, .. } => {
                let (d, n) = split(secs.saturating_add(i64::from(offset)), nanos);
                write_date(f, d)?;
                f.write_str("T")?;
                write_time(f, n)?;
                f.write_str(&offset_text(offset))?;
                match self {
                    Temporal::ZonedDateTime { zone, .. } => write!(f, "[{}]", zone.name()),
                    _ => Ok(()),
                }
            }
            Temporal::Duration(d) => d.fmt(f),
        }
    }
}

impl fmt::Display for Duration {
    /// ISO 8601 as Neo4j prints it: `P1Y2M3DT4H5M6.5S`, `PT0S` when zero.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("P")?;
        let (years, months) = (self.months / 12, self.months % 12);
        for (v, unit) in [(years, 'Y'), (months, 'M'), (self.days, 'D')] {
            if v != 0 {
                write!(f, "{v}{unit}")?;
            }
        }
        let total = i128::from(self.seconds) * i128::from(NANOS_PER_SECOND) + i128::from(self.nanos);
        if total == 0 {
            if self.months == 0 && self.days == 0 {
                f.write_str("T0S")?;
            }
            return Ok(());
        }
        f.write_str("T")?;
        let sign = if total < 0 { "-" } else { "" };
        let a = total.unsigned_abs();
        let nanos_per_second = NANOS_PER_SECOND as u128;
        let (secs, frac) = (a / nanos_per_second, (a % nanos_per_second) as i64);
        let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
        if h != 0 {
            write!(f, "{sign}{h}H")?;
        }
        if m != 0 {
            write!(f, "{sign}{m}M")?;
        }
        if s != 0 || frac != 0 {
            write!(f, "{sign}{s}")?;
            if frac != 0 {
                let digits = format!("{frac:09}");
                write!(f, ".{}", digits.trim_end_matches('0'))?;
            }
            f.write_str("S")?;
        }
        Ok(())
    }
}

impl Duration {
    /// Parses ISO 8601: `P1Y2M3W4DT5H6M7.5S` (each number may carry a sign; a fraction on any).
    pub fn parse(text: &str) -> Result<Duration, TemporalError> {
        let bad = |why: &str| TemporalError(format!("'{text}' is not an ISO 8601 duration ({why})"));
        let mut rest = text.strip_prefix(['P', 'p']).ok_or_else(|| bad("it must start with P"))?;
        if let Some(d) = Duration::parse_alternative(rest) {
            return d;
        }
        let mut in_time = false;
        let mut fields: Vec<(&str, Component)> = Vec::new();
        if rest.is_empty() {
            return Err(bad("nothing follows P"));
        }
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix(['T', 't']) {
                if in_time {
                    return Err(bad("T twice"));
                }
                in_time = true;
                rest = r;
                continue;
            }
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == ','))
                .ok_or_else(|| bad("a number has no unit"))?;
            let number = rest[..end].replace(',', ".");
            let unit = rest[end..].chars().next().unwrap_or(' ').to_ascii_uppercase();
            rest = &rest[end + unit.len_utf8()..];
            let name = match (in_time, unit) {
                (false, 'Y') => "years",
                (false, 'M') => "months",
                (false, 'W') => "weeks",
                (false, 'D') => "days",
                (true, 'H') => "hours",
                (true, 'M') => "minutes",
                (true, 'S') => "seconds",
                _ => return Err(bad(&format!("unexpected unit '{unit}'"))),
            };
            let value = match number.parse::<i64>() {
                Ok(i) => Component::Int(i),
                Err(_) => Component::Float(number.parse::<f64>().map_err(|_| bad(&format!("'{number}' is not a number")))?),
            };
            fields.push((name, value));
        }
        Duration::from_components(&fields)
    }

    /// ISO 8601's alternative form, `PYYYY-MM-DDThh:mm:ss[.f]`: `None` when `rest` (after the `P`)
    /// is not in it.
    fn parse_alternative(rest: &str) -> Option<Result<Duration, TemporalError>> {
        let (date, time) = rest.split_once(['T', 't'])?;
        let date: Vec<&str> = date.split('-').collect();
        let (hms, frac) = time.split_once(['.', ',']).map_or((time, None), |(a, b)| (a, Some(b)));
        let hms: Vec<&str> = hms.split(':').collect();
        let num = |p: &&str| -> Option<i64> { p.bytes().all(|b| b.is_ascii_digit()).then(|| p.parse().ok()).flatten() };
        let ([y, mo, d], [h, mi, se]) = (date.as_slice(), hms.as_slice()) else { return None };
        if y.len() != 4 || [mo, d, h, mi, se].iter().any(|p| p.len() != 2) {
            return None;
        }
        let mut fields: Vec<(&str, Component)> = Vec::new();
        for (name, p) in [("years", y), ("months", mo), ("days", d), ("hours", h), ("minutes", mi), ("seconds", se)] {
            fields.push((name, Component::Int(num(p)?)));
        }
        if let Some(f) = frac {
            if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            fields.push(("nanoseconds", Component::Int(format!("{f:0<9}").parse().ok()?)));
        }
        Some(Duration::from_components(&fields))
    }
}

impl Temporal {
    /// `kind(text)`: ISO 8601 (`2015-07-21`, `2015-W30-2`, `2015-202`, `2015-07`, `21:40:32.142`,
    /// `21:40+01:00`, `2015-07-21T21:40:32Z`, `P1DT2H`) and a zone's name after a date-time
    /// (`2015-07-21T21:40[Europe/Stockholm]`; an offset given with it must be the zone's there).
    /// A missing offset is UTC.
    pub fn parse(kind: Kind, text: &str) -> Result<Temporal, TemporalError> {
        // Every refusal names the text it refuses.
        Temporal::parse_text(kind, text).map_err(|e| if e.0.contains(text) { e } else { TemporalError(format!("'{text}': {}", e.0)) })
    }

    fn parse_text(kind: Kind, text: &str) -> Result<Temporal, TemporalError> {
        let bad = |what: &str| TemporalError(format!("'{text}' is not {what}"));
        match kind {
            Kind::Duration => Ok(Temporal::Duration(Duration::parse(text)?)),
            Kind::Date => Ok(Temporal::Date(parse_date(text).ok_or_else(|| bad("a date such as '2015-07-21'"))??)),
            Kind::LocalTime => Ok(Temporal::LocalTime(parse_time(text).ok_or_else(|| bad("a time such as '21:40:32'"))??)),
            Kind::Time => {
                let (t, off) = split_offset(text);
                let nanos = parse_time(t).ok_or_else(|| bad("a time such as '21:40:32+01:00'"))??;
                Ok(Temporal::Time { nanos, offset: off.map(parse_offset).transpose()?.unwrap_or(0) })
            }
            Kind::LocalDateTime | Kind::DateTime => {
                let want = if kind == Kind::DateTime {
                    "a date-time such as '2015-07-21T21:40:32Z'"
                } else {
                    "a date-time such as '2015-07-21T21:40:32'"
                };
                let (body, zone) = match text.strip_suffix(']').and_then(|t| t.rsplit_once('[')) {
                    Some((body, name)) if kind == Kind::DateTime => {
                        let zone =
                            Zone::named(name).ok_or_else(|| TemporalError(format!("'{name}' in '{text}' is not a time zone name")))?;
                        (body, Some(zone))
                    }
                    _ => (text, None),
                };
                let (d, t) = body.split_once(['T', 't', ' ']).unwrap_or((body, "00:00"));
                let days = check_day_range(parse_date(d).ok_or_else(|| bad(want))??)?;
                let (t, off) = split_offset(t);
                if kind == Kind::LocalDateTime && off.is_some() {
                    return Err(bad(want));
                }
                let nanos = parse_time(t).ok_or_else(|| bad(want))??;
                let offset = off.map(parse_offset).transpose()?;
                let Some(zone) = zone else { return Ok(Temporal::date_time(kind, days, nanos, offset.unwrap_or(0))) };
                let (secs, nanos) = local(days, nanos);
                if let Some(o) = offset.filter(|o| !zone.accepts(secs, *o)) {
                    return err(format!("'{text}': {} is not {}'s offset at that time", offset_text(o), zone.name()));
                }
                let made = TimeZone::Named(zone).at_local(secs, nanos, offset);
                made.validate()?;
                Ok(made)
            }
        }
    }
}

/// `text` split at its offset (`Z`, `+…`, `-…` after the time), if it has one.
fn split_offset(text: &str) -> (&str, Option<&str>) {
    match text.find(['Z', 'z', '+', '-']) {
        Some(i) => (&text[..i], Some(&text[i..])),
        None => (text, None),
    }
}

/// A date: calendar `YYYY-MM-DD` / `YYYYMMDD`, month `YYYY-MM` / `YYYYMM`, year `YYYY`, week
/// `YYYY-Www-D` / `YYYYWwwD` / `YYYY-Www` / `YYYYWww`, ordinal `YYYY-DDD` / `YYYYDDD`; `None` when
/// the shape is wrong, an error when the date is.
fn parse_date(text: &str) -> Option<Result<i64, TemporalError>> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if !body.is_ascii() || body.len() < 4 || !body.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let year: i64 = body[..4].parse().ok()?;
    let year = if neg { -year } else { year };
    let rest = &body[4..];
    let dashed = rest.starts_with('-');
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if let Some(week) = rest.strip_prefix('W') {
        // `Www`, then `-D` (dashed) or `D`.
        let (w, d) = match (week.get(..2), week.get(2..)) {
            (Some(w), Some("")) => (w, None),
            (Some(w), Some(d)) if dashed => (w, Some(d.strip_prefix('-')?)),
            (Some(w), Some(d)) => (w, Some(d)),
            _ => return None,
        };
        if !digits(w) || d.is_some_and(|d| d.len() != 1 || !digits(d)) {
            return None;
        }
        let mut fields = vec![("year", Component::Int(year)), ("week", Component::Int(w.parse().ok()?))];
        if let Some(d) = d {
            fields.push(("dayOfWeek", Component::Int(d.parse().ok()?)));
        }
        return Some(Fields(&fields).date(Kind::Date, None));
    }
    let parts: Vec<&str> = if dashed { rest.split('-').collect() } else { vec![rest] };
    let (month, day) = match parts.as_slice() {
        [""] if !dashed => (1, 1),
        [p] if !dashed && p.len() == 4 && digits(p) => (p[..2].parse().ok()?, p[2..].parse().ok()?),
        [p] if p.len() == 2 && digits(p) => (p.parse().ok()?, 1),
        [p] if p.len() == 3 && digits(p) => {
            let f = [("year", Component::Int(year)), ("ordinalDay", Component::Int(p.parse().ok()?))];
            return Some(Fields(&f).date(Kind::Date, None));
        }
        [m, d] if dashed && m.len() == 2 && d.len() == 2 && digits(m) && digits(d) => (m.parse().ok()?, d.parse().ok()?),
        _ => return None,
    };
    Some(make_date(year, month, day))
}

/// `HH:MM`, `HH:MM:SS`, `HH:MM:SS.f…` (or without colons); `None` when the shape is wrong.
fn parse_time(text: &str) -> Option<Result<i64, TemporalError>> {
    let (main, frac) = match text.split_once(['.', ',']) {
        Some((m, f)) => (m, Some(f)),
        None => (text, None),
    };
    let digits: String = main.chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !matches!(digits.len(), 2 | 4 | 6) || (frac.is_some() && digits.len() != 6) {
        return None;
    }
    if main.contains(':') && !matches!(main.len(), 5 | 8) {
        return None;
    }
    let n = |i: usize| digits.get(i..i + 2).and_then(|s| s.parse::<i64>().ok()).unwrap_or(0);
    let nanos = match frac {
        None => 0,
        Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|b| b.is_ascii_digit()) => format!("{f:0<9}").parse::<i64>().ok()?,
        Some(_) => return None,
    };
    Some(make_time(n(0), n(2), n(4), nanos))
}
