//! Temporal values from a constructor's map of components (`date({year: 2024, week: 10})`,
//! `datetime({datetime: d, timezone: 'Asia/Tokyo'})`, `datetime({epochSeconds: …})`) and from the
//! clock.

use super::{
    calendar, check_day_range, days_of, err, local, make_date, make_time, split, Component, Duration, Kind, Temporal, TemporalError,
    TimeZone, NANOS_PER_DAY, NANOS_PER_SECOND, SECONDS_PER_DAY,
};

/// The fields a constructor map may give, looked up by name.
pub struct Fields<'a>(pub &'a [(&'a str, Component)]);

impl Fields<'_> {
    fn get(&self, name: &str) -> Option<&Component> {
        self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    fn int(&self, name: &str) -> Result<Option<i64>, TemporalError> {
        match self.get(name) {
            None => Ok(None),
            Some(Component::Int(i)) => Ok(Some(*i)),
            Some(_) => err(format!("'{name}' must be an integer")),
        }
    }

    fn int_or(&self, name: &str, default: i64) -> Result<i64, TemporalError> {
        Ok(self.int(name)?.unwrap_or(default))
    }

    /// Nanoseconds of the second from `millisecond`, `microsecond` and `nanosecond` (each adds).
    fn fraction(&self) -> Result<i64, TemporalError> {
        let ms = self.int_or("millisecond", 0)?;
        let us = self.int_or("microsecond", 0)?;
        let ns = self.int_or("nanosecond", 0)?;
        for (name, v, max) in [("millisecond", ms, 999), ("microsecond", us, 999_999), ("nanosecond", ns, 999_999_999)] {
            if !(0..=max).contains(&v) {
                return err(format!("{name} {v} is outside 0..{max}"));
            }
        }
        let total = ms * 1_000_000 + us * 1000 + ns;
        if total >= NANOS_PER_SECOND {
            return err("millisecond, microsecond and nanosecond add up to a second or more");
        }
        Ok(total)
    }

    fn time_zone(&self) -> Result<Option<TimeZone>, TemporalError> {
        match self.get("timezone") {
            None => Ok(None),
            Some(Component::Str(s)) => TimeZone::parse(s).map(Some),
            Some(_) => err("'timezone' must be a string such as '+01:00' or 'Europe/Stockholm'"),
        }
    }

    /// The date the date components give, each missing one taken from `base` (days since the
    /// epoch) or else at its least. One style only: calendar (`month`, `day`), week (`week`,
    /// `dayOfWeek`), ordinal (`ordinalDay`) or quarter (`quarter`, `dayOfQuarter`).
    pub(super) fn date(&self, kind: Kind, base: Option<i64>) -> Result<i64, TemporalError> {
        let has = |names: &[&str]| names.iter().any(|n| self.get(n).is_some());
        let styles = [&["month", "day"][..], &["week", "dayOfWeek"], &["ordinalDay"], &["quarter", "dayOfQuarter"]];
        let given: Vec<usize> = (0..styles.len()).filter(|i| has(styles[*i])).collect();
        if given.len() > 1 {
            let names: Vec<String> = given.iter().map(|i| styles[*i].join("/")).collect();
            return err(format!("{}() takes one way to name a day, not {}", kind.name(), names.join(" and ")));
        }
        let b = base.map(calendar);
        let year = |default: Option<i32>| -> Result<i32, TemporalError> {
            match self.int("year")? {
                Some(y) => i32::try_from(y)
                    .ok()
                    .filter(|y| (-9999..=9999).contains(y))
                    .ok_or_else(|| TemporalError(format!("year {y} is outside -9999..9999"))),
                None => default.ok_or_else(|| TemporalError(format!("{}() needs 'year'", kind.name()))),
            }
        };
        let small = |name: &str, default: i64, max: i64| -> Result<i64, TemporalError> {
            let v = self.int_or(name, default)?;
            if (1..=max).contains(&v) {
                Ok(v)
            } else {
                err(format!("{name} {v} is outside 1..{max}"))
            }
        };
        match given.first() {
            Some(1) => {
                let (wy, w, wd) = b.map_or((None, 1, 1), |d| {
                    let (wy, w, wd) = d.to_iso_week_date();
                    (Some(wy), i64::from(w), i64::from(wd.number_from_monday()))
                });
                let y = year(wy)?;
                let (w, wd) = (small("week", w, 53)?, small("dayOfWeek", wd, 7)?);
                let weekday = time::Weekday::Sunday.nth_next(wd as u8);
                time::Date::from_iso_week_date(y, w as u8, weekday)
                    .map(days_of)
                    .map_err(|_| TemporalError(format!("week {w} is not a week of {y}")))
            }
            Some(2) => {
                let y = year(b.map(time::Date::year))?;
                let o = small("ordinalDay", b.map_or(1, |d| i64::from(d.ordinal())), 366)?;
                time::Date::from_ordinal_date(y, o as u16)
                    .map(days_of)
                    .map_err(|_| TemporalError(format!("ordinalDay {o} is not a day of {y}")))
            }
            Some(3) => {
                let (q, dq) = b.map_or((1, 1), |d| {
                    let q = (i64::from(d.month() as u8) - 1) / 3 + 1;
                    let start = make_date(i64::from(d.year()), (q - 1) * 3 + 1, 1).unwrap_or(0);
                    (q, days_of(d) - start + 1)
                });
                let y = year(b.map(time::Date::year))?;
                let (q, dq) = (small("quarter", q, 4)?, small("dayOfQuarter", dq, 92)?);
                let start = make_date(i64::from(y), (q - 1) * 3 + 1, 1)?;
                let next = if q == 4 { make_date(i64::from(y) + 1, 1, 1) } else { make_date(i64::from(y), q * 3 + 1, 1) };
                let last = next.map_or(start + 91, |n| n - 1);
                if start + dq - 1 > last {
                    return err(format!("dayOfQuarter {dq} is not a day of quarter {q} of {y}"));
                }
                Ok(start + dq - 1)
            }
            _ => {
                let (by, bm, bd) = b.map_or((None, 1, 1), |d| (Some(d.year()), i64::from(d.month() as u8), i64::from(d.day())));
                make_date(i64::from(year(by)?), self.int_or("month", bm)?, self.int_or("day", bd)?)
            }
        }
    }

    /// Nanoseconds of the day from the time components, each missing one taken from `base`.
    fn time(&self, base: i64) -> Result<i64, TemporalError> {
        let bs = base / NANOS_PER_SECOND;
        let (bh, bmin, bsec, bfrac) = (bs / 3600, bs / 60 % 60, bs % 60, base % NANOS_PER_SECOND);
        let has_fraction = ["millisecond", "microsecond", "nanosecond"].iter().any(|k| self.get(k).is_some());
        let frac = if has_fraction { self.fraction()? } else { bfrac };
        make_time(self.int_or("hour", bh)?, self.int_or("minute", bmin)?, self.int_or("second", bsec)?, frac)
    }

    fn base(&self, key: &str) -> Option<Temporal> {
        match self.get(key) {
            Some(Component::Temporal(t)) => Some(*t),
            _ => None,
        }
    }

    fn check_names(&self, kind: Kind, allowed: &[&str]) -> Result<(), TemporalError> {
        for (k, _) in self.0 {
            if !allowed.contains(k) {
                return err(format!("{}() has no component '{k}'", kind.name()));
            }
        }
        Ok(())
    }
}

const DATE_FIELDS: &[&str] = &["year", "month", "day", "week", "dayOfWeek", "ordinalDay", "quarter", "dayOfQuarter", "date"];
const TIME_FIELDS: &[&str] = &["hour", "minute", "second", "millisecond", "microsecond", "nanosecond", "time"];

impl Temporal {
    /// `kind(map)`: a value from its components. The date from `year` with `month` and `day`,
    /// `week` and `dayOfWeek` (an ISO week date), `ordinalDay`, or `quarter` and `dayOfQuarter`;
    /// missing smaller components default to their least value (`date({year: 2024})` is
    /// 2024-01-01) or, with a `date` / `time` / `datetime` key, to that value's (`date({date: d,
    /// week: 2})` keeps `d`'s day of the week). `timezone` is an offset or a zone's name and
    /// defaults to the base value's, then UTC; given beside a base value that has one, the base's
    /// moment is moved there before the time components apply (`datetime({datetime: d, timezone:
    /// '+05:00'})` is the same instant). A time in a named zone takes the zone's offset at
    /// `now_nanos` (the statement's clock).
    pub fn from_fields(kind: Kind, fields: &Fields<'_>, now_nanos: i128) -> Result<Temporal, TemporalError> {
        let now_secs = i64::try_from(now_nanos.div_euclid(i128::from(NANOS_PER_SECOND))).unwrap_or(0);
        match kind {
            Kind::Date => {
                fields.check_names(kind, DATE_FIELDS)?;
                Ok(Temporal::Date(fields.date(kind, fields.base("date").and_then(|t| t.date_part()))?))
            }
            Kind::LocalTime => {
                fields.check_names(kind, TIME_FIELDS)?;
                let base = fields.base("time").and_then(|t| t.time_part()).map_or(0, |t| t.0);
                Ok(Temporal::LocalTime(fields.time(base)?))
            }
            Kind::Time => {
                fields.check_names(kind, &[TIME_FIELDS, &["timezone"]].concat())?;
                let (base, base_offset) = fields.base("time").and_then(|t| t.time_part()).unwrap_or((0, None));
                let target = fields.time_zone()?.map(|tz| tz.offset_at(now_secs));
                // Moved to the new offset first, then the components set.
                let (base, offset) = match (base_offset, target) {
                    (Some(from), Some(to)) => ((base + i64::from(to - from) * NANOS_PER_SECOND).rem_euclid(NANOS_PER_DAY), to),
                    _ => (base, target.or(base_offset).unwrap_or(0)),
                };
                Ok(Temporal::Time { nanos: fields.time(base)?, offset })
            }
            Kind::LocalDateTime | Kind::DateTime => {
                let epoch = ["epochSeconds", "epochMillis"];
                if kind == Kind::DateTime && epoch.iter().any(|k| fields.get(k).is_some()) {
                    fields.check_names(kind, &["epochSeconds", "epochMillis", "nanosecond", "timezone"])?;
                    return Temporal::from_epoch(fields);
                }
                let allowed = [DATE_FIELDS, TIME_FIELDS, &["timezone", "datetime"]].concat();
                fields.check_names(kind, &allowed)?;
                let whole = fields.base("datetime");
                let date_base = fields.base("date").or(whole).and_then(|t| t.date_part());
                let time_base = fields.base("time").or(whole);
                let mut days = check_day_range(fields.date(kind, date_base)?)?;
                let mut time_of_day = time_base.and_then(|t| t.time_part()).map_or(0, |t| t.0);
                let base_zone = time_base.and_then(|t| t.time_zone());
                let target = fields.time_zone()?;
                if kind == Kind::LocalDateTime {
                    let (secs, nanos) = local(days, fields.time(time_of_day)?);
                    return Ok(Temporal::LocalDateTime { secs, nanos });
                }
                let mut preferred = time_base.and_then(|t| t.offset());
                let zone = match (base_zone, target) {
                    (Some(from), Some(to)) if from != to => {
                        // The base's moment (on the date the date components give) seen from `to`.
                        let (secs, nanos) = local(days, time_of_day);
                        let instant = secs - i64::from(from.resolve(secs, preferred));
                        let (d, t) = split(instant.saturating_add(i64::from(to.offset_at(instant))), nanos);
                        (days, time_of_day, preferred) = (check_day_range(d)?, t, None);
                        to
                    }
                    _ => target.or(base_zone).unwrap_or(TimeZone::Offset(0)),
                };
                let (secs, nanos) = local(days, fields.time(time_of_day)?);
                let made = zone.at_local(secs, nanos, preferred);
                made.validate()?;
                Ok(made)
            }
            Kind::Duration => Ok(Temporal::Duration(Duration::from_components(fields.0)?)),
        }
    }

    fn from_epoch(fields: &Fields<'_>) -> Result<Temporal, TemporalError> {
        let extra = fields.int_or("nanosecond", 0)?;
        if !(0..NANOS_PER_SECOND).contains(&extra) {
            return err(format!("nanosecond {extra} is outside 0..999999999"));
        }
        let total: i128 = match (fields.int("epochSeconds")?, fields.int("epochMillis")?) {
            (Some(s), None) => i128::from(s) * i128::from(NANOS_PER_SECOND),
            (None, Some(ms)) => i128::from(ms) * 1_000_000,
            _ => return err("datetime() takes one of 'epochSeconds' and 'epochMillis'"),
        } + i128::from(extra);
        let n = i128::from(NANOS_PER_SECOND);
        let secs = i64::try_from(total.div_euclid(n)).map_err(|_| TemporalError("the epoch time is out of range".to_owned()))?;
        check_day_range(secs.div_euclid(SECONDS_PER_DAY))?;
        let zone = fields.time_zone()?.unwrap_or(TimeZone::Offset(0));
        let made = zone.at_instant(secs, total.rem_euclid(n) as u32);
        made.validate()?;
        Ok(made)
    }

    /// The current moment as `kind` at `timezone` (UTC when `None`): `datetime({timezone:
    /// 'Asia/Tokyo'})`, `date.statement('-08:00')`.
    pub fn now_at(kind: Kind, epoch_nanos: i128, timezone: Option<TimeZone>) -> Temporal {
        let n = i128::from(NANOS_PER_SECOND);
        let secs = i64::try_from(epoch_nanos.div_euclid(n)).unwrap_or(0);
        let nanos = epoch_nanos.rem_euclid(n) as u32;
        let now = timezone.unwrap_or(TimeZone::Offset(0)).at_instant(secs, nanos);
        Temporal::convert(kind, &now).unwrap_or(now)
    }
}
