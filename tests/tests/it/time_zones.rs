//! Named time zones and the other ways to name a day (ISO week dates, ordinal dates, quarters):
//! the rows of the openCypher TCK's temporal features (Temporal1–3) that use them, daylight
//! saving gaps and overlaps, the clock seen from a zone, errors and the ordered index (storage:
//! `temporal.rs`).

use engram::{Database, Params, QueryValue, Temporal};
use proptest::prelude::*;

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

/// The one value of a one-row, one-column query as text (a temporal value as its ISO 8601 form).
fn one(db: &Database, text: &str) -> String {
    let r = rows(db, text);
    assert_eq!(r.len(), 1, "{text}: {r:?}");
    engram_tests::shown(&r[0][0])
}

fn error(db: &Database, text: &str) -> String {
    match db.query("default", text, &Params::new()) {
        Ok(r) => panic!("{text}: expected an error, got {:?}", r.rows),
        Err(e) => e.to_string(),
    }
}

const STOCKHOLM_1984: &str = "datetime({year: 1984, month: 10, day: 11, hour: 12, timezone: 'Europe/Stockholm'})";

#[test]
fn tck_rows_with_named_zones_and_other_day_forms() {
    let db = Database::in_memory();
    let s = STOCKHOLM_1984;
    let cases: Vec<(String, &str)> = vec![
        // Temporal1: construction from a map.
        ("datetime({year: 1984, month: 10, day: 11, hour: 12, minute: 31, second: 14, nanosecond: 645876123, timezone: 'Europe/Stockholm'})".into(), "1984-10-11T12:31:14.645876123+01:00[Europe/Stockholm]"),
        ("datetime({year: 1984, week: 10, dayOfWeek: 3, hour: 12, timezone: 'Europe/Stockholm'})".into(), "1984-03-07T12:00+01:00[Europe/Stockholm]"),
        ("datetime({year: 1984, ordinalDay: 202, timezone: 'Europe/Stockholm'})".into(), "1984-07-20T00:00+02:00[Europe/Stockholm]"),
        ("datetime({year: 1984, quarter: 3, dayOfQuarter: 45, hour: 12, minute: 31, timezone: 'Europe/Stockholm'})".into(), "1984-08-14T12:31+02:00[Europe/Stockholm]"),
        ("datetime({year: 1984, timezone: 'Europe/Stockholm'})".into(), "1984-01-01T00:00+01:00[Europe/Stockholm]"),
        ("date({year: 1816, week: 1})".into(), "1816-01-01"),
        ("date({year: 1817, week: 1})".into(), "1816-12-30"),
        ("date({year: 1818, week: 53})".into(), "1818-12-28"),
        ("date({dayOfWeek: 2, year: 1817, week: 1})".into(), "1816-12-31"),
        ("date({date: date('1816-12-30'), week: 2, dayOfWeek: 3})".into(), "1817-01-08"),
        ("date({date: date('1816-12-31'), week: 2})".into(), "1817-01-07"),
        ("date({date: date('1816-12-31'), year: 1817, week: 2})".into(), "1817-01-07"),
        ("date({year: 1984, ordinalDay: 202})".into(), "1984-07-20"),
        ("date({year: 1984, quarter: 3, dayOfQuarter: 45})".into(), "1984-08-14"),
        ("date({year: 1984, quarter: 3})".into(), "1984-07-01"),
        ("localdatetime({year: 1984, week: 10, dayOfWeek: 3, hour: 12, minute: 31, second: 14, millisecond: 645})".into(), "1984-03-07T12:31:14.645"),
        ("datetime.fromepoch(416779, 999999999)".into(), "1970-01-05T19:46:19.999999999Z"),
        ("datetime({epochSeconds: 0, timezone: 'America/New_York'})".into(), "1969-12-31T19:00-05:00[America/New_York]"),
        // Temporal2: parsing text.
        ("date('2015-07')".into(), "2015-07-01"),
        ("date('201507')".into(), "2015-07-01"),
        ("date('2015-W30-2')".into(), "2015-07-21"),
        ("date('2015W302')".into(), "2015-07-21"),
        ("date('2015-W30')".into(), "2015-07-20"),
        ("date('2015W30')".into(), "2015-07-20"),
        ("date('2015-202')".into(), "2015-07-21"),
        ("date('2015202')".into(), "2015-07-21"),
        ("date('2015')".into(), "2015-01-01"),
        ("localdatetime('2015-W30-2T214032.142')".into(), "2015-07-21T21:40:32.142"),
        ("localdatetime('2015-202T21:40:32')".into(), "2015-07-21T21:40:32"),
        ("localdatetime('2015T214032')".into(), "2015-01-01T21:40:32"),
        ("localdatetime('2015-W30T2140')".into(), "2015-07-20T21:40"),
        ("localdatetime('2015202T21')".into(), "2015-07-21T21:00"),
        ("datetime('2015-W30-2T214032.142Z')".into(), "2015-07-21T21:40:32.142Z"),
        ("datetime('2015T214032-0100')".into(), "2015-01-01T21:40:32-01:00"),
        ("datetime('2015-W30T2140-02')".into(), "2015-07-20T21:40-02:00"),
        ("datetime('2015202T21+18:00')".into(), "2015-07-21T21:00+18:00"),
        ("datetime('2015-07-21T21:40:32.142+02:00[Europe/Stockholm]')".into(), "2015-07-21T21:40:32.142+02:00[Europe/Stockholm]"),
        ("datetime('2015-07-21T21:40:32.142+0845[Australia/Eucla]')".into(), "2015-07-21T21:40:32.142+08:45[Australia/Eucla]"),
        ("datetime('2015-07-21T21:40:32.142-04[America/New_York]')".into(), "2015-07-21T21:40:32.142-04:00[America/New_York]"),
        ("datetime('2015-07-21T21:40:32.142[Europe/London]')".into(), "2015-07-21T21:40:32.142+01:00[Europe/London]"),
        ("datetime('1818-07-21T21:40:32.142[Europe/Stockholm]')".into(), "1818-07-21T21:40:32.142+00:53:28[Europe/Stockholm]"),
        ("datetime('2015-01-21T21:40[europe/london]')".into(), "2015-01-21T21:40Z[Europe/London]"),
        ("duration('P2012-02-02T14:37:21.545')".into(), "P2012Y2M2DT14H37M21.545S"),
        // Temporal3: values from other values; a new zone beside a zoned one moves its moment.
        ("date({date: date('1984-11-11'), week: 1})".into(), "1984-01-08"),
        ("date({date: date('1984-11-11'), ordinalDay: 28})".into(), "1984-01-28"),
        ("date({date: date('1984-11-11'), quarter: 3})".into(), "1984-08-11"),
        ("date({date: date('1984-11-11'), year: 28})".into(), "0028-11-11"),
        ("time({time: time('12:31:14.645876+01:00'), timezone: '+05:00'})".into(), "16:31:14.645876+05:00"),
        ("time({time: time('12:31:14.645876+01:00'), second: 42, timezone: '+05:00'})".into(), "16:31:42.645876+05:00"),
        ("time({time: localtime('12:31:14.645876123'), timezone: '+05:00'})".into(), "12:31:14.645876123+05:00"),
        (format!("time({s})"), "12:00+01:00"),
        (format!("time({{time: {s}, second: 42, timezone: '+05:00'}})"), "16:00:42+05:00"),
        (format!("localtime({s})"), "12:00"),
        (format!("datetime({{datetime: {s}}})"), "1984-10-11T12:00+01:00[Europe/Stockholm]"),
        (format!("datetime({s})"), "1984-10-11T12:00+01:00[Europe/Stockholm]"),
        (format!("datetime({{datetime: {s}, timezone: '+05:00'}})"), "1984-10-11T16:00+05:00"),
        (format!("datetime({{datetime: {s}, day: 28, second: 42}})"), "1984-10-28T12:00:42+01:00[Europe/Stockholm]"),
        (
            format!("datetime({{date: localdatetime('1984-03-07T00:00'), time: {s}, day: 28, second: 42, timezone: 'Pacific/Honolulu'}})"),
            "1984-03-28T00:00:42-10:00[Pacific/Honolulu]",
        ),
        ("datetime({datetime: localdatetime('1984-03-07T12:31:14.645'), timezone: '+05:00'})".into(), "1984-03-07T12:31:14.645+05:00"),
        // Components.
        // Temporal5: every component of a date-time in a named zone, and a duration's.
        (
            "[d IN [datetime({year: 1984, month: 11, day: 11, hour: 12, minute: 31, second: 14, nanosecond: 645876123, timezone: 'Europe/Stockholm'})] | \
             [d.year, d.quarter, d.month, d.week, d.weekYear, d.day, d.ordinalDay, d.weekDay, d.dayOfQuarter, d.hour, d.minute, d.second, \
             d.millisecond, d.microsecond, d.nanosecond, d.offsetMinutes, d.offsetSeconds, d.epochSeconds, d.epochMillis]][0]"
                .into(),
            "[1984, 4, 11, 45, 1984, 11, 316, 7, 42, 12, 31, 14, 645, 645876, 645876123, 60, 3600, 469020674, 469020674645]",
        ),
        ("[d IN [date('1984-01-01')] | [d.year, d.weekYear, d.week, d.weekDay, d.dayOfQuarter]][0]".into(), "[1984, 1983, 52, 7, 1]"),
        (
            "[d IN [duration({years: 1, months: 4, days: 10, hours: 1, minutes: 1, seconds: 1, nanoseconds: 111111111})] | \
             [d.years, d.quarters, d.months, d.weeks, d.days, d.hours, d.minutes, d.seconds, d.milliseconds, d.quartersOfYear, \
             d.monthsOfQuarter, d.monthsOfYear, d.daysOfWeek, d.minutesOfHour, d.secondsOfMinute, d.nanosecondsOfSecond]][0]"
                .into(),
            "[1, 5, 16, 1, 10, 1, 61, 3661, 3661111, 1, 1, 4, 3, 1, 1, 111111111]",
        ),
        (format!("{s}.timezone"), "'Europe/Stockholm'"),
        (format!("{s}.offset"), "'+01:00'"),
        (format!("{s}.offsetSeconds"), "3600"),
        (format!("{s}.epochSeconds"), "466340400"),
        ("datetime('2015-07-21T21:40+02:00').timezone".into(), "'+02:00'"),
        (format!("toString({s})"), "'1984-10-11T12:00+01:00[Europe/Stockholm]'"),
    ];
    for (q, want) in cases {
        assert_eq!(one(&db, &format!("RETURN {q}")), want, "{q}");
    }
}

/// Clocks set forward skip a local hour (a time in it moves later by the gap); clocks set back
/// repeat one (the earlier instant unless an offset says otherwise). Months and days move the
/// local time, hours the instant; a day across the change is 23 or 25 hours long.
#[test]
fn daylight_saving_gaps_overlaps_and_arithmetic() {
    let db = Database::in_memory();
    for (q, want) in [
        ("datetime('2021-03-28T02:30[Europe/Berlin]')", "2021-03-28T03:30+02:00[Europe/Berlin]"),
        (
            "datetime({year: 2021, month: 3, day: 28, hour: 2, minute: 30, timezone: 'Europe/Berlin'})",
            "2021-03-28T03:30+02:00[Europe/Berlin]",
        ),
        ("datetime('2021-10-31T02:30[Europe/Berlin]')", "2021-10-31T02:30+02:00[Europe/Berlin]"),
        ("datetime('2021-10-31T02:30+01:00[Europe/Berlin]')", "2021-10-31T02:30+01:00[Europe/Berlin]"),
        ("datetime('2021-03-27T12:00[Europe/Berlin]') + duration({days: 1})", "2021-03-28T12:00+02:00[Europe/Berlin]"),
        ("datetime('2021-03-27T12:00[Europe/Berlin]') + duration({hours: 24})", "2021-03-28T13:00+02:00[Europe/Berlin]"),
        ("datetime('2021-03-28T12:00[Europe/Berlin]') - duration({months: 1})", "2021-02-28T12:00+01:00[Europe/Berlin]"),
        ("datetime('2021-10-31T02:30+02:00[Europe/Berlin]') + duration({minutes: 60})", "2021-10-31T02:30+01:00[Europe/Berlin]"),
        ("datetime('2021-10-30T02:30+02:00[Europe/Berlin]') + duration({days: 1})", "2021-10-31T02:30+02:00[Europe/Berlin]"),
        ("duration.between(datetime('2021-03-27T12:00[Europe/Berlin]'), datetime('2021-03-28T12:00[Europe/Berlin]'))", "PT23H"),
        ("duration.inSeconds(datetime('2021-10-30T12:00[Europe/Berlin]'), datetime('2021-10-31T12:00[Europe/Berlin]'))", "PT25H"),
        ("datetime.truncate('day', datetime('2021-03-28T12:00[Europe/Berlin]'))", "2021-03-28T00:00+01:00[Europe/Berlin]"),
        ("datetime.truncate('hour', datetime('2021-10-31T02:30+01:00[Europe/Berlin]'))", "2021-10-31T02:00+01:00[Europe/Berlin]"),
        (
            "datetime.truncate('month', datetime('2021-07-15T12:00[America/New_York]'), {day: 4})",
            "2021-07-04T00:00-04:00[America/New_York]",
        ),
        // The same instant in two zones: equal instants compare by offset, then by zone.
        ("datetime('2021-06-01T12:00[Europe/Berlin]') = datetime('2021-06-01T12:00+02:00')", "false"),
        ("datetime('2021-06-01T12:00[Europe/Berlin]') > datetime('2021-06-01T12:00+02:00')", "true"),
        ("datetime('2021-06-01T12:00[Europe/Berlin]') < datetime('2021-06-01T12:00[Europe/Paris]')", "true"),
        ("datetime('2021-06-01T12:00[Europe/Berlin]') = datetime('2021-06-01T12:00+02:00[europe/berlin]')", "true"),
    ] {
        assert_eq!(one(&db, &format!("RETURN {q}")), want, "{q}");
    }
}

/// `kind({timezone: z})`, `kind.statement(z)` and `kind.transaction(z)` read the statement's
/// clock as seen from `z`.
#[test]
fn the_clock_seen_from_a_zone() {
    let clock = std::sync::Arc::new(engram::ManualClock::new(engram::Timestamp::parse("2030-06-01T23:30:00Z").unwrap()));
    let db = Database::with_config(engram::Config { clock, ..engram::Config::default() });
    for (q, want) in [
        ("date({timezone: 'Asia/Tokyo'})", "2030-06-02"),
        ("date.statement('America/Los_Angeles')", "2030-06-01"),
        ("datetime({timezone: 'Asia/Tokyo'})", "2030-06-02T08:30+09:00[Asia/Tokyo]"),
        ("datetime.transaction('+05:30')", "2030-06-02T05:00+05:30"),
        ("time({timezone: 'Asia/Kolkata'})", "05:00+05:30"),
        ("localtime.statement('Asia/Kolkata')", "05:00"),
        ("localdatetime({timezone: 'Pacific/Kiritimati'})", "2030-06-02T13:30"),
        ("datetime()", "2030-06-01T23:30Z"),
    ] {
        assert_eq!(one(&db, &format!("RETURN {q}")), want, "{q}");
    }
}

#[test]
fn bad_zones_and_days_are_refused_by_name() {
    let db = Database::in_memory();
    for (q, says) in [
        ("datetime('2015-07-21T21:40+05:00[Europe/Stockholm]')", "+05:00 is not Europe/Stockholm's offset"),
        ("datetime('2015-07-21T21:40[Mars/Olympus]')", "'Mars/Olympus'"),
        ("datetime({year: 2020, timezone: 'Mars/Olympus'})", "'Mars/Olympus' is neither an offset"),
        ("datetime({year: 2020, timezone: '+19:00'})", "beyond ±18:00"),
        ("localdatetime('2015-07-21T21:40[Europe/Stockholm]')", "is not a date-time"),
        ("date({year: 2020, month: 1, week: 2})", "one way to name a day"),
        ("date({year: 2021, week: 53})", "week 53 is not a week of 2021"),
        ("date({year: 2021, quarter: 1, dayOfQuarter: 91})", "dayOfQuarter 91 is not a day of quarter 1 of 2021"),
        ("date({year: 2021, ordinalDay: 366})", "ordinalDay 366 is not a day of 2021"),
        ("date({year: 2021, dayOfWeek: 8, week: 1})", "dayOfWeek 8 is outside 1..7"),
        ("date('2015-W30-9')", "'2015-W30-9'"),
        ("date.statement(5)", "time zone is a string"),
    ] {
        let e = error(&db, &format!("RETURN {q}"));
        assert!(e.contains(says), "{q}: {e}");
    }
}

const ZONES: &[&str] = &[
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "UTC",
    "America/St_Johns",
    "Africa/Casablanca",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A zoned value reads back from its text; its local fields name it again in its zone (but in
    /// a repeated hour, where the offset decides); comparison and the ordered index agree with
    /// the instants; a day added keeps the local time of day unless it lands in a skipped hour.
    #[test]
    fn zoned_values_agree_with_their_instants(
        values in prop::collection::vec((-3_000_000_000i64..4_000_000_000, 0usize..ZONES.len()), 1..10),
        probe in -3_000_000_000i64..4_000_000_000,
        days in -400i64..400,
    ) {
        let made: Vec<Temporal> = values.iter().map(|(secs, z)| {
            let db = Database::in_memory();
            let r = rows(&db, &format!("RETURN datetime({{epochSeconds: {secs}, timezone: '{}'}})", ZONES[*z]));
            match &r[0][0] { QueryValue::Temporal(t) => *t, other => panic!("{other:?}") }
        }).collect();
        let db = Database::in_memory();
        for t in &made {
            prop_assert_eq!(Temporal::parse(engram::temporal::Kind::DateTime, &t.to_string()), Ok(*t));
            let fields = format!(
                "datetime({{year: {d}.year, month: {d}.month, day: {d}.day, hour: {d}.hour, minute: {d}.minute, second: {d}.second, timezone: {d}.timezone}})",
                d = format!("datetime('{t}')")
            );
            let t_text = format!("datetime('{t}')");
            let back = one(&db, &format!("RETURN {fields}"));
            // Named by its local fields it is itself, or (in a repeated hour) the earlier instant.
            let same_local = one(&db, &format!("RETURN localdatetime({fields}) = localdatetime({t_text})"));
            let earlier = one(&db, &format!("RETURN {fields}.epochSeconds < {t_text}.epochSeconds AND {fields}.offsetSeconds > {t_text}.offsetSeconds"));
            prop_assert_eq!(same_local, "true");
            prop_assert!(back == t.to_string() || earlier == "true", "{} named again is {}", t, back);
            let kept = one(&db, &format!("RETURN localtime({t_text} + duration({{days: {days}}})) = localtime({t_text})"));
            let in_gap = one(&db, &format!("RETURN localdatetime({t_text}) + duration({{days: {days}}}) <> localdatetime({t_text} + duration({{days: {days}}}))"));
            prop_assert!(kept == "true" || in_gap == "true", "{} + {} days", t, days);
        }
        // The ordered index and a scan agree, and both agree with the epoch seconds.
        let list = made.iter().map(|t| format!("datetime('{t}')")).collect::<Vec<_>>().join(", ");
        let indexed = Database::in_memory();
        rows(&indexed, "CREATE INDEX FOR (m:M) ON (m.at)");
        for d in [&db, &indexed] {
            rows(d, &format!("UNWIND [{list}] AS at CREATE (:M {{at: at}})"));
        }
        let probe_text = format!("datetime({{epochSeconds: {probe}, timezone: 'Asia/Kathmandu'}})");
        let want = values.iter().filter(|(s, _)| *s > probe).count().to_string();
        for d in [&db, &indexed] {
            prop_assert_eq!(one(d, &format!("MATCH (m:M) WHERE m.at > {probe_text} RETURN count(m)")), want.clone());
        }
        let mut by_epoch: Vec<i64> = values.iter().map(|(s, _)| *s).collect();
        by_epoch.sort_unstable();
        let ordered = rows(&db, "MATCH (m:M) RETURN m.at.epochSeconds ORDER BY m.at");
        prop_assert_eq!(ordered.iter().map(|r| match r[0] { QueryValue::Int(i) => i, _ => i64::MIN }).collect::<Vec<_>>(), by_epoch);
    }
}
