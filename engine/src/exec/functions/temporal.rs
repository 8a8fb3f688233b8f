//! The temporal functions: `date`, `localtime`, `time`, `localdatetime`, `datetime` and
//! `duration` (with no argument the current moment in UTC; from a map of components, an ISO 8601
//! string or another temporal value), and `duration.between` / `duration.inMonths` /
//! `duration.inDays` / `duration.inSeconds`. The values themselves live in `crate::temporal`.

use engram_query::{Detail, QueryError};

use super::super::eval::{arg_error, type_error};
use super::super::value::Val;
use crate::temporal::{Component, Duration, Fields, Kind, Temporal, TemporalError, TimeZone};

/// A temporal value that cannot be made, as the `ArgumentError` Cypher raises.
pub(crate) fn temporal_error(e: TemporalError) -> QueryError {
    arg_error(Detail::InvalidArgumentValue, e.0)
}

/// Calls `name` if it is a temporal function (lower case); `None` when it is not.
pub(super) fn call_temporal(name: &str, args: &[Val], now: &dyn Fn() -> i128) -> Option<Result<Val, QueryError>> {
    let arg = |i: usize| args.get(i).unwrap_or(&Val::Null);
    if let Some(kind) = Kind::of_function(name) {
        return Some(construct(kind, args.first(), now));
    }
    let between = |unit: Unit| match (arg(0), arg(1)) {
        (Val::Null, _) | (_, Val::Null) => Ok(Val::Null),
        (Val::Temporal(a), Val::Temporal(b)) if a.kind() != Kind::Duration && b.kind() != Kind::Duration => {
            Ok(between(a, b, unit).map_or(Val::Null, |d| Val::temporal(Temporal::Duration(d))))
        }
        (a, b) => Err(type_error(format!("{name}() expects two temporal values other than durations, got {} and {}", a.kind(), b.kind()))),
    };
    if let Some((kind, what)) = name.split_once('.').and_then(|(k, w)| Some((Kind::of_function(k).filter(|k| *k != Kind::Duration)?, w))) {
        return match what {
            "truncate" => Some(truncate(kind, args, now)),
            // One clock per statement: a transaction is one statement here.
            "transaction" | "statement" => Some(at_now(kind, args.first(), now())),
            "realtime" => Some(at_now(
                kind,
                args.first(),
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128),
            )),
            "fromepoch" | "fromepochmillis" if kind == Kind::DateTime => Some(from_epoch(what == "fromepochmillis", args)),
            _ => None,
        };
    }
    Some(match name {
        "duration.between" => between(Unit::Exact),
        "duration.inmonths" => between(Unit::Months),
        "duration.indays" => between(Unit::Days),
        "duration.inseconds" => between(Unit::Seconds),
        _ => return None,
    })
}

/// `kind.truncate(unit, value [, map])`: `value` truncated to `unit`, then the map's components
/// set (`date.truncate('month', d, {day: 5})`).
fn truncate(kind: Kind, args: &[Val], now: &dyn Fn() -> i128) -> Result<Val, QueryError> {
    let (unit, from) = match (args.first(), args.get(1)) {
        (Some(Val::Null), _) | (_, Some(Val::Null)) => return Ok(Val::Null),
        (Some(Val::Str(u)), Some(Val::Temporal(t))) => (u, t),
        (u, t) => {
            let kind_of = |v: Option<&Val>| v.map_or("nothing", Val::kind);
            return Err(type_error(format!(
                "{}.truncate() expects a unit and a temporal value, got {} and {}",
                kind.name(),
                kind_of(u),
                kind_of(t)
            )));
        }
    };
    let cut = Temporal::truncate(kind, unit, from).map_err(temporal_error)?;
    match args.get(2) {
        None | Some(Val::Null) => Ok(Val::temporal(cut)),
        Some(Val::Map(m)) => {
            let base = match kind {
                Kind::Date => "date",
                Kind::LocalTime | Kind::Time => "time",
                _ => "datetime",
            };
            let mut map: Vec<(std::sync::Arc<str>, Val)> = vec![(std::sync::Arc::from(base), Val::temporal(cut))];
            map.extend(m.iter().filter(|(k, _)| k.as_ref() != base).map(|(k, v)| (k.clone(), v.clone())));
            construct(kind, Some(&Val::map(map.into_iter().collect())), now)
        }
        Some(other) => Err(type_error(format!("{}.truncate()'s third argument is a map of components, got {}", kind.name(), other.kind()))),
    }
}

/// `kind.statement([timezone])` and its kin (and `kind({timezone: …})`): now as `kind`, seen
/// from `timezone` (an offset or a zone's name) if given: `date.statement('Asia/Tokyo')` is the
/// date in Tokyo.
fn at_now(kind: Kind, timezone: Option<&Val>, now: i128) -> Result<Val, QueryError> {
    let zone = match timezone {
        None | Some(Val::Null) => None,
        Some(Val::Str(zone)) => Some(TimeZone::parse(zone).map_err(temporal_error)?),
        Some(other) => return Err(type_error(format!("{}'s time zone is a string, got {}", kind.name(), other.kind()))),
    };
    Ok(Val::temporal(Temporal::now_at(kind, now, zone)))
}

/// `datetime.fromepoch(seconds, nanoseconds)` and `datetime.fromepochmillis(ms)`, in UTC.
fn from_epoch(millis: bool, args: &[Val]) -> Result<Val, QueryError> {
    if args.iter().any(|a| matches!(a, Val::Null)) {
        return Ok(Val::Null);
    }
    let fields: Vec<(std::sync::Arc<str>, Val)> = if millis {
        vec![(std::sync::Arc::from("epochMillis"), args.first().cloned().unwrap_or(Val::Null))]
    } else {
        vec![
            (std::sync::Arc::from("epochSeconds"), args.first().cloned().unwrap_or(Val::Null)),
            (std::sync::Arc::from("nanosecond"), args.get(1).cloned().unwrap_or(Val::Int(0))),
        ]
    };
    construct(Kind::DateTime, Some(&Val::map(fields.into_iter().collect())), &|| 0)
}

/// `kind()`, `kind(map)`, `kind(text)`, `kind(temporal)`.
fn construct(kind: Kind, arg: Option<&Val>, now: &dyn Fn() -> i128) -> Result<Val, QueryError> {
    let made = match arg {
        None => {
            if kind == Kind::Duration {
                return Err(arg_error(Detail::InvalidArgumentValue, "duration() needs a map or a string"));
            }
            Ok(Temporal::now(kind, now()))
        }
        Some(Val::Null) => return Ok(Val::Null),
        Some(Val::Str(s)) => Temporal::parse(kind, s.trim()),
        Some(Val::Temporal(t)) => Temporal::convert(kind, t),
        // Only a time zone: now, there (`datetime({timezone: 'Europe/Paris'})`).
        Some(Val::Map(m)) if kind != Kind::Duration && m.len() == 1 && m.contains_key("timezone") => {
            return at_now(kind, m.get("timezone"), now());
        }
        Some(Val::Map(m)) => {
            let mut fields = Vec::with_capacity(m.len());
            for (k, v) in m.iter() {
                let c = match v {
                    Val::Null => continue,
                    Val::Int(i) => Component::Int(*i),
                    Val::Float(f) => Component::Float(*f),
                    Val::Str(s) => Component::Str(s.to_string()),
                    Val::Temporal(t) => Component::Temporal(**t),
                    other => return Err(type_error(format!("{}()'s '{k}' cannot be {}", kind.name(), other.kind()))),
                };
                fields.push((k.as_ref(), c));
            }
            Temporal::from_fields(kind, &Fields(&fields), now())
        }
        Some(other) => {
            return Err(type_error(format!("{}() expects a map, a string or a temporal value, got {}", kind.name(), other.kind())))
        }
    };
    made.map(Val::temporal).map_err(temporal_error)
}

/// Nanoseconds in a day.
const DAY: i128 = 86_400_000_000_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Exact,
    Months,
    Days,
    Seconds,
}

/// The duration from `a` to `b` (Neo4j's `duration.between`): whole months, then whole days,
/// then the time between, each counted where both values have those parts; `None` when the two
/// share none (a date and a time).
fn between(a: &Temporal, b: &Temporal, unit: Unit) -> Option<Duration> {
    let parts = |t: &Temporal| -> (Option<i64>, Option<i128>, Option<i64>) {
        let day = Temporal::convert(Kind::Date, t).ok().and_then(|d| match d {
            Temporal::Date(d) => Some(d),
            _ => None,
        });
        let time = Temporal::convert(Kind::LocalTime, t).ok().and_then(|x| match x {
            Temporal::LocalTime(n) => Some(i128::from(n)),
            _ => None,
        });
        let offset = t.offset().map(i64::from);
        (day, time, offset)
    };
    let (da, ta, oa) = parts(a);
    let (db, tb, ob) = parts(b);
    // Both with offsets: compare instants, so move `a` into `b`'s offset.
    let shift = match (oa, ob) {
        (Some(x), Some(y)) => i128::from(y - x) * 1_000_000_000,
        _ => 0,
    };
    match (da, db) {
        (Some(da), Some(db)) => {
            let (ta, tb) = (ta.unwrap_or(0) + shift, tb.unwrap_or(0));
            let start = i128::from(da) * DAY + ta;
            let end = i128::from(db) * DAY + tb;
            let total = end - start;
            match unit {
                Unit::Seconds => Duration::new(0, 0, total).ok(),
                Unit::Days => Duration::new(0, i64::try_from(total / DAY).ok()?, 0).ok(),
                Unit::Exact | Unit::Months => {
                    let months = whole_months(start, end)?;
                    let moved = add_months(start, months)?;
                    let rest = end - moved;
                    if unit == Unit::Months {
                        return Duration::new(months, 0, 0).ok();
                    }
                    Duration::new(months, i64::try_from(rest / DAY).ok()?, rest % DAY).ok()
                }
            }
        }
        _ => {
            let (ta, tb) = (ta? + shift, tb?);
            match unit {
                Unit::Months | Unit::Days => Some(Duration::default()),
                _ => Duration::new(0, 0, tb - ta).ok(),
            }
        }
    }
}

/// Nanoseconds since the epoch (local) as a date and nanoseconds of its day.
fn civil(t: i128) -> Option<(i64, i128)> {
    Some((i64::try_from(t.div_euclid(DAY)).ok()?, t.rem_euclid(DAY)))
}

fn add_months(t: i128, months: i64) -> Option<i128> {
    let (day, rest) = civil(t)?;
    let shifted = Temporal::Date(day).plus(&Duration { months, ..Duration::default() }).ok()?;
    match shifted {
        Temporal::Date(d) => Some(i128::from(d) * DAY + rest),
        _ => None,
    }
}

/// The most whole months from `start` that do not pass `end` (toward it, either direction).
fn whole_months(start: i128, end: i128) -> Option<i64> {
    let (ds, _) = civil(start)?;
    let (de, _) = civil(end)?;
    let ym = |d: i64| match Temporal::Date(d).component("year").zip(Temporal::Date(d).component("month")) {
        Some((Component::Int(y), Component::Int(m))) => Some(y * 12 + m),
        _ => None,
    };
    let mut months = ym(de)? - ym(ds)?;
    let past = |m: i64| add_months(start, m).map(|t| if end >= start { t > end } else { t < end });
    while months != 0 && past(months)? {
        months -= months.signum();
    }
    Some(months)
}
