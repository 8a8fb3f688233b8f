//! Temporal values in the language: constructors, text, components, arithmetic, comparison and
//! the sort order, errors that name the field, and storage (WAL replay, checkpoint, JSON lines).

use engram::query::{Detail, ErrorType};
use engram::{Database, Params, QueryValue};
use proptest::prelude::*;

fn run(db: &Database, text: &str) -> Result<Vec<Vec<QueryValue>>, engram::query::QueryError> {
    db.query("default", text, &Params::new()).map(|r| r.rows).map_err(|e| match e {
        engram::Error::Query(q) => q,
        other => panic!("{text}: {other}"),
    })
}

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    run(db, text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The one value a one-row, one-column query returns, as text (a temporal value as its ISO 8601
/// form, which is how `toString` and every interface print it).
fn one(db: &Database, text: &str) -> String {
    let r = rows(db, text);
    assert_eq!(r.len(), 1, "{text}: {r:?}");
    engram_tests::shown(&r[0][0])
}

#[test]
fn constructors_text_and_components() {
    let db = Database::in_memory();
    for (q, want) in [
        ("RETURN date({year: 1984, month: 10, day: 11})", "1984-10-11"),
        ("RETURN date('2015-07-21')", "2015-07-21"),
        ("RETURN date({year: 2024})", "2024-01-01"),
        ("RETURN localtime({hour: 12, minute: 31, second: 14, nanosecond: 645876123})", "12:31:14.645876123"),
        ("RETURN localtime({hour: 10, minute: 35})", "10:35"),
        ("RETURN time({hour: 10, minute: 35, timezone: '-08:00'})", "10:35-08:00"),
        ("RETURN time('21:40:32.142+0100')", "21:40:32.142+01:00"),
        ("RETURN localdatetime('2015-07-21T21:40:32')", "2015-07-21T21:40:32"),
        (
            "RETURN datetime({year: 1, month: 1, day: 1, hour: 1, minute: 1, second: 1, nanosecond: 1, timezone: '-11:59'})",
            "0001-01-01T01:01:01.000000001-11:59",
        ),
        ("RETURN datetime('2015-07-21T21:40:32.142Z')", "2015-07-21T21:40:32.142Z"),
        ("RETURN datetime({epochSeconds: 0})", "1970-01-01T00:00Z"),
        ("RETURN datetime({epochMillis: 1500000000123, timezone: '+02:00'})", "2017-07-14T04:40:00.123+02:00"),
        ("RETURN date(datetime('2015-07-21T23:30-05:00'))", "2015-07-21"),
        ("RETURN datetime(date('2015-07-21'))", "2015-07-21T00:00Z"),
        ("RETURN datetime({date: date('2015-07-21'), hour: 9, timezone: '+01:00'})", "2015-07-21T09:00+01:00"),
        ("RETURN localtime(datetime('2015-07-21T21:40:32+01:00'))", "21:40:32"),
        ("RETURN duration({days: 14, hours: 16, minutes: 12})", "P14DT16H12M"),
        ("RETURN duration({years: 1, months: 14})", "P2Y2M"),
        ("RETURN duration({days: 1.5})", "P1DT12H"),
        ("RETURN duration('P1Y2M3W4DT5H6M7.5S')", "P1Y2M25DT5H6M7.5S"),
        ("RETURN duration({seconds: -1, milliseconds: 500})", "PT-0.5S"),
        ("RETURN duration({})", "PT0S"),
        ("RETURN date('2015-07-21').year", "2015"),
        ("RETURN date('2015-07-21').dayOfWeek", "2"),
        ("RETURN date('2015-07-21').quarter", "3"),
        ("RETURN datetime('2015-07-21T21:40:32.142+01:00').millisecond", "142"),
        ("RETURN datetime('2015-07-21T21:40:32+01:00').timezone", "'+01:00'"),
        ("RETURN datetime('2015-07-21T21:40:32+01:00').epochSeconds", "1437511232"),
        ("RETURN duration('P1DT26H').hours", "26"),
        ("RETURN duration('P1DT2H').days", "1"),
        ("RETURN duration('P14M').years", "1"),
        ("RETURN toString(date('2015-07-21'))", "'2015-07-21'"),
        ("RETURN typeOf(datetime())", "'Datetime'"),
        ("RETURN date(null)", "null"),
    ] {
        assert_eq!(one(&db, q), want, "{q}");
    }
}

/// `datetime()`, `date()` and `timestamp()` read one clock per statement: a write's transaction
/// time (which the database's clock gives), or for a read the time its first call asks.
#[test]
fn now_is_one_instant_per_statement() {
    let clock = std::sync::Arc::new(engram::ManualClock::new(engram::Timestamp::parse("2030-06-01T11:00:00Z").unwrap()));
    let db = Database::with_config(engram::Config { clock: clock.clone(), ..engram::Config::default() });
    clock.advance_seconds(3600);
    rows(&db, "UNWIND range(1, 500) AS i CREATE (:Tick {at: datetime(), day: date(), ms: timestamp()})");
    assert_eq!(one(&db, "MATCH (t:Tick) RETURN count(DISTINCT [t.at, t.day, t.ms])"), "1",);
    assert_eq!(one(&db, "MATCH (t:Tick) RETURN DISTINCT t.at"), "2030-06-01T12:00Z");
    assert_eq!(one(&db, "MATCH (t:Tick) RETURN DISTINCT t.ms"), "1906545600000");
    assert_eq!(
        one(&db, "UNWIND range(1, 2000) AS i WITH datetime() AS a, localtime() AS b, timestamp() AS c RETURN count(DISTINCT [a, b, c])"),
        "1"
    );
    // A read's clock is the database's (its snapshot's time), as its visibility is.
    clock.advance_seconds(60);
    assert_eq!(one(&db, "RETURN datetime()"), "2030-06-01T12:01Z");
    assert_eq!(one(&db, "RETURN timestamp()"), "1906545660000");
    let snap = db.snapshot();
    clock.advance_seconds(60);
    let r = snap.workspace("default").expect("workspace").query("RETURN toString(date()), localtime()", &Params::new()).expect("runs");
    assert_eq!(r.rows[0][0], QueryValue::String("2030-06-01".to_owned()));
    assert!(matches!(&r.rows[0][1], QueryValue::Temporal(t) if t.to_string() == "12:01"), "{:?}", r.rows[0]);
    assert_eq!(one(&db, "RETURN localtime()"), "12:02");
}

#[test]
fn arithmetic_adds_months_then_days_then_time() {
    let db = Database::in_memory();
    for (q, want) in [
        ("RETURN date('2021-01-31') + duration({months: 1})", "2021-02-28"),
        ("RETURN date('2020-01-31') + duration({months: 1, days: 2})", "2020-03-02"),
        ("RETURN duration({months: 1, days: 2}) + date('2020-01-31')", "2020-03-02"),
        ("RETURN date('2020-03-01') - duration({days: 1})", "2020-02-29"),
        ("RETURN date('2020-03-01') + duration({hours: 47})", "2020-03-02"),
        ("RETURN localtime('23:30') + duration({hours: 1})", "00:30"),
        ("RETURN time('23:30+05:00') - duration({minutes: 45})", "22:45+05:00"),
        ("RETURN datetime('2020-02-28T23:30+02:00') + duration({hours: 1})", "2020-02-29T00:30+02:00"),
        ("RETURN localdatetime('2020-12-31T23:59:59') + duration({seconds: 1})", "2021-01-01T00:00"),
        ("RETURN duration({days: 1}) + duration({hours: 2})", "P1DT2H"),
        ("RETURN duration({days: 1}) - duration({hours: 2})", "P1DT-2H"),
        ("RETURN duration({hours: 3}) * 2", "PT6H"),
        ("RETURN 0.5 * duration({days: 1})", "PT12H"),
        ("RETURN duration({hours: 3}) / 2", "PT1H30M"),
        ("RETURN duration.between(date('2020-01-31'), date('2021-03-01'))", "P1Y1M1D"),
        ("RETURN duration.between(datetime('2020-01-01T00:00Z'), datetime('2020-01-01T03:00+01:00'))", "PT2H"),
        ("RETURN duration.inDays(date('2020-01-01'), date('2020-03-01'))", "P60D"),
        ("RETURN duration.inSeconds(localtime('10:00'), localtime('11:30'))", "PT1H30M"),
        ("RETURN duration.between(date('2020-01-01'), localtime('10:00'))", "null"),
        ("UNWIND [duration({hours: 1}), duration({days: 1, minutes: 30}), null] AS d RETURN sum(d)", "P1DT1H30M"),
        ("UNWIND [duration({hours: 1}), duration({hours: 2})] AS d RETURN avg(d)", "PT1H30M"),
        ("UNWIND [duration({hours: 1}), duration({hours: 1})] AS d RETURN sum(DISTINCT d)", "PT1H"),
    ] {
        assert_eq!(one(&db, q), want, "{q}");
    }
}

#[test]
fn comparison_equality_and_grouping() {
    let db = Database::in_memory();
    for (q, want) in [
        ("RETURN date('2020-01-01') < date('2020-01-02')", "true"),
        ("RETURN date('2020-01-01') = date('2020-01-01')", "true"),
        // The same instant at two offsets: ordered by the instant, equal only with the same offset.
        ("RETURN datetime('2020-01-01T01:00+01:00') = datetime('2020-01-01T00:00Z')", "false"),
        ("RETURN datetime('2020-01-01T01:30+01:00') > datetime('2020-01-01T00:00Z')", "true"),
        ("RETURN time('12:00+01:00') < time('11:30Z')", "true"),
        // Across kinds, and durations among themselves, there is no order: null.
        ("RETURN date('2020-01-01') < localdatetime('2020-01-01T00:00')", "null"),
        ("RETURN duration({days: 1}) < duration({days: 2})", "null"),
        ("RETURN duration({days: 1}) = duration({hours: 24})", "false"),
        ("RETURN date('2020-01-01') = '2020-01-01'", "false"),
        ("UNWIND [date('2020-01-01'), date('2020-01-01'), date('2020-01-02')] AS d RETURN count(DISTINCT d)", "2"),
        ("RETURN date('2020-01-01') IN [date('2019-01-01'), date('2020-01-01')]", "true"),
    ] {
        assert_eq!(one(&db, q), want, "{q}");
    }
    // ORDER BY puts temporal values between paths and strings, date-times first.
    let r = rows(
        &db,
        "UNWIND [1, 'a', duration('P1D'), localtime('10:00'), time('10:00Z'), date('2020-01-01'), localdatetime('2020-01-01T00:00'), datetime('2020-01-01T00:00Z'), [1]] AS v RETURN v ORDER BY v",
    );
    let kinds: Vec<String> = r
        .iter()
        .map(|row| match &row[0] {
            QueryValue::Temporal(t) => t.kind_text().to_owned(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        ["List([Int(1)])", "a date-time", "a local date-time", "a date", "a time", "a local time", "a duration", "String(\"a\")", "Int(1)"]
    );
}

#[test]
fn bad_input_is_refused_by_name() {
    let db = Database::in_memory();
    for (q, ty, names) in [
        ("RETURN date({year: 2020, month: 13})", ErrorType::ArgumentError, "month 13"),
        ("RETURN date({year: 2021, month: 2, day: 29})", ErrorType::ArgumentError, "day 29"),
        ("RETURN date({yaer: 2020})", ErrorType::ArgumentError, "'yaer'"),
        ("RETURN date({month: 2})", ErrorType::ArgumentError, "'year'"),
        ("RETURN localtime({hour: 24})", ErrorType::ArgumentError, "hour 24"),
        ("RETURN datetime({year: 2020, timezone: 'Europe/Pariss'})", ErrorType::ArgumentError, "'Europe/Pariss' is neither"),
        ("RETURN time({hour: 1, timezone: '+19:00'})", ErrorType::ArgumentError, "+19:00"),
        ("RETURN date('2020-02-30')", ErrorType::ArgumentError, "day 30"),
        ("RETURN date('21 July 2015')", ErrorType::ArgumentError, "21 July 2015"),
        ("RETURN duration('P1X')", ErrorType::ArgumentError, "'X'"),
        ("RETURN duration({fortnights: 1})", ErrorType::ArgumentError, "'fortnights'"),
        ("RETURN date({year: 10000})", ErrorType::ArgumentError, "year 10000"),
        ("RETURN date('9999-12-31') + duration({days: 1})", ErrorType::ArgumentError, "9999"),
        ("RETURN date('2020-01-01').hour", ErrorType::ArgumentError, "`hour`"),
        ("RETURN date('2020-01-01') + 1", ErrorType::TypeError, "a date and an integer"),
        ("RETURN date('2020-01-01') + date('2020-01-01')", ErrorType::TypeError, "a date and a date"),
        ("RETURN duration({days: 1}) / 0", ErrorType::ArithmeticError, "division by zero"),
        ("RETURN date([2020])", ErrorType::TypeError, "a list"),
        ("RETURN duration()", ErrorType::SyntaxError, "duration"),
        ("UNWIND [duration({hours: 1}), 2] AS d RETURN sum(d)", ErrorType::TypeError, "numbers or durations (not both)"),
        ("UNWIND [2, duration({hours: 1})] AS d RETURN avg(d)", ErrorType::TypeError, "numbers or durations (not both)"),
        ("UNWIND [date('2020-01-01')] AS d RETURN sum(d)", ErrorType::TypeError, "a date"),
    ] {
        let e = run(&db, q).expect_err(q);
        assert_eq!(e.kind, ty, "{q}: {e}");
        assert!(e.to_string().contains(names), "{q}: {e}");
    }
    // A property holding a map of temporal values is still refused (maps cannot be stored).
    let e = run(&db, "CREATE ({m: {d: date('2020-01-01')}})").expect_err("a map");
    assert_eq!(e.detail, Detail::InvalidPropertyType, "{e}");
    assert!(e.to_string().contains("property m: a map cannot be stored"), "{e}");
}

/// A program may pass a temporal value as a parameter; one out of range (its fields are public)
/// is refused by name, not printed or computed with.
#[test]
fn temporal_parameters_are_checked() {
    let db = Database::in_memory();
    let mut p = Params::new();
    p.insert("t".to_owned(), QueryValue::Temporal(engram::Temporal::DateTime { secs: 86_400, nanos: 5, offset: 3600 }));
    let r = db.query("default", "RETURN $t + duration('P1D'), $t.offsetSeconds", &p).expect("a valid parameter");
    assert_eq!(format!("{:?}", r.rows[0][1]), "Int(3600)");
    assert!(matches!(&r.rows[0][0], QueryValue::Temporal(t) if t.to_string() == "1970-01-03T01:00:00.000000005+01:00"));
    for bad in [
        engram::Temporal::DateTime { secs: i64::MAX, nanos: 0, offset: 0 },
        engram::Temporal::DateTime { secs: 0, nanos: 1_000_000_000, offset: 0 },
        engram::Temporal::Time { nanos: 0, offset: 90_000 },
        engram::Temporal::LocalTime(-1),
        engram::Temporal::Date(i64::MIN),
        engram::Temporal::Duration(engram::Duration { months: 0, days: 0, seconds: 0, nanos: -1 }),
    ] {
        p.insert("t".to_owned(), QueryValue::Temporal(bad));
        let e = db.query("default", "RETURN $t", &p).expect_err("out of range");
        assert!(e.to_string().contains("out of range"), "{e}");
    }
}

/// JSON parameters (`PARAMS`, HTTP, MCP, `--param`, Python dicts) take a temporal value as the
/// export writes it, a one-key object naming its kind; any other object stays a map, and a tag
/// whose text is not of its kind is refused with the parameter's name and the text.
#[test]
fn json_parameters_take_tagged_temporal_values() {
    let db = Database::in_memory();
    let json = serde_json::json!({
        "at": {"$datetime": "2024-05-06T07:08:09.5+02:00"},
        "list": [{"$duration": "P1DT2H"}, {"$localtime": "10:11"}, {"$time": "10:11:12Z"}, {"$localdatetime": "2020-01-01T00:00"}],
        "two_keys": {"$date": "2024-01-01", "x": 1},
        "other_tag": {"$geo": "x"},
        "plain": {"d": {"$date": "2024-01-01"}},
    });
    let serde_json::Value::Object(map) = json else { unreachable!() };
    let p = engram::exec::params_from_json(&map).expect("valid parameters");
    let r = db
        .query("default", "RETURN $at.epochMillis, [x IN $list | toString(x)], size(keys($two_keys)), $other_tag, $plain.d.year", &p)
        .expect("runs");
    let shown: Vec<String> = r.rows[0].iter().map(|v| v.to_json().to_string()).collect();
    assert_eq!(shown, ["1714972089500", r#"["P1DT2H","10:11","10:11:12Z","2020-01-01T00:00"]"#, "2", r#"{"$geo":"x"}"#, "2024",]);
    for (bad, want) in [
        (serde_json::json!({"t": {"$date": "2024-02-30"}}), r#"parameter $t: {"$date": "2024-02-30"}: "#),
        (serde_json::json!({"t": [1, {"x": {"$duration": "1 day"}}]}), r#"parameter $t: x: {"$duration": "1 day"}: "#),
        (serde_json::json!({"t": {"$datetime": 5}}), r#"parameter $t: {"$datetime": …} takes the value's ISO 8601 text"#),
    ] {
        let serde_json::Value::Object(map) = bad else { unreachable!() };
        let e = engram::exec::params_from_json(&map).expect_err("refused");
        assert!(e.starts_with(want), "{e}");
    }
}

/// Temporal properties (alone and in lists, date-times in a named zone among them), and a packed
/// list of floats, come back the same after a WAL replay, from a checkpoint, and through the
/// JSON-lines export and import.
#[test]
fn stored_temporal_values_survive_replay_checkpoint_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let q = "MATCH (n:Event) RETURN n.at, n.day, n.t, n.lt, n.ldt, n.took, n.days, toString(n.at), n.emb, n.zoned, [z IN n.zoned | z.timezone] ORDER BY n.at";
    let want = {
        let db = Database::open(dir.path()).unwrap();
        rows(
            &db,
            "CREATE (:Event {at: datetime('2024-05-06T07:08:09.123456789+02:00'), day: date('2024-05-06'), t: time('10:00-03:30'), \
             lt: localtime('23:59:59.5'), ldt: localdatetime('1900-02-28T12:00'), took: duration('P1Y2M3DT4H5M6.007S'), \
             days: [date('2024-01-01'), date('-0044-03-15')], emb: [0.5, -1.0, 1e-300], \
             zoned: [datetime('2021-10-31T02:30+01:00[Europe/Berlin]'), datetime('1818-07-21T21:40[Europe/Stockholm]')]})",
        );
        rows(&db, "CREATE (:Event {at: datetime({epochSeconds: 0})})-[:THEN {gap: duration({days: 2})}]->(:Event {at: datetime('1970-01-03T00:00Z')})");
        let want = rows(&db, q);
        assert_eq!(want.len(), 3);
        assert_eq!(want[1][7], QueryValue::String("1970-01-03T00:00Z".to_owned()));
        // A list of floats only (stored packed) reads back as the list written.
        assert_eq!(want[2][8], QueryValue::List(vec![QueryValue::Float(0.5), QueryValue::Float(-1.0), QueryValue::Float(1e-300)]));
        // A named zone is kept by name (record and snapshot format 10).
        assert_eq!(
            want[2][10],
            QueryValue::List(vec![QueryValue::String("Europe/Berlin".into()), QueryValue::String("Europe/Stockholm".into())])
        );
        want
    };
    let gap = "MATCH ()-[r:THEN]->() RETURN r.gap";
    {
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(rows(&db, q), want, "after WAL replay");
        assert_eq!(one(&db, gap), "P2D");
        db.checkpoint().unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(rows(&db, q), want, "from a checkpoint");
    let lines = engram::jsonl::export(&db.snapshot());
    let text = lines.join("\n");
    assert!(text.contains(r#"{"$date":"2024-05-06"}"#), "{text}");
    assert!(text.contains(r#"{"$duration":"P1Y2M3DT4H5M6.007S"}"#), "{text}");
    assert!(text.contains(r#"{"$datetime":"2021-10-31T02:30+01:00[Europe/Berlin]"}"#), "{text}");
    let copy = Database::in_memory();
    engram::jsonl::import(&copy, &text, "events.jsonl").unwrap();
    assert_eq!(rows(&copy, q), want, "through export and import");
    assert_eq!(one(&copy, gap), "P2D");
}

fn datetime_text(secs: i64, nanos: u32, offset_minutes: i32) -> String {
    let t = engram::Temporal::DateTime { secs, nanos, offset: offset_minutes * 60 };
    format!("datetime('{t}')")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// ORDER BY, `<`, `=`, DISTINCT and `min`/`max` agree with one another and with the instant
    /// (then the offset) on random date-times at random offsets, as the TCK asks of the order
    /// where comparisons are defined.
    #[test]
    fn the_order_agrees_with_comparison(values in prop::collection::vec((-2_000_000_000i64..2_000_000_000, prop::sample::select(vec![0u32, 1, 500_000_000]), -3i32..3), 1..12)) {
        let db = Database::in_memory();
        let list = values.iter().map(|(s, n, o)| datetime_text(*s, *n, *o * 90)).collect::<Vec<_>>().join(", ");
        let mut want: Vec<(i64, u32, i32)> = values.iter().map(|(s, n, o)| (*s, *n, *o * 90 * 60)).collect();
        want.sort_unstable();
        let sorted: Vec<QueryValue> = rows(&db, &format!("UNWIND [{list}] AS v RETURN v ORDER BY v")).into_iter().map(|mut r| r.remove(0)).collect();
        let as_tuples: Vec<(i64, u32, i32)> = sorted
            .iter()
            .map(|v| match v {
                QueryValue::Temporal(engram::Temporal::DateTime { secs, nanos, offset }) => (*secs, *nanos, *offset),
                other => panic!("{other:?}"),
            })
            .collect();
        prop_assert_eq!(&as_tuples, &want);
        // `x < v` counts exactly the values sorted before v's first place.
        let consistent = one(&db, &format!(
            "WITH [{list}] AS vs UNWIND vs AS v WITH vs, v ORDER BY v WITH vs, collect(v) AS s \
             RETURN all(i IN range(0, size(s) - 1) WHERE size([x IN vs WHERE x < s[i]]) = size([x IN s[..i] WHERE x <> s[i]]))"
        ));
        prop_assert_eq!(consistent, "true");
        want.dedup();
        prop_assert_eq!(one(&db, &format!("UNWIND [{list}] AS v RETURN count(DISTINCT v)")), want.len().to_string());
        let (first, last) = (want[0], want[want.len() - 1]);
        prop_assert_eq!(one(&db, &format!("UNWIND [{list}] AS v RETURN min(v)")), engram::Temporal::DateTime { secs: first.0, nanos: first.1, offset: first.2 }.to_string());
        prop_assert_eq!(one(&db, &format!("UNWIND [{list}] AS v RETURN max(v)")), engram::Temporal::DateTime { secs: last.0, nanos: last.1, offset: last.2 }.to_string());
    }

    /// `duration.between(a, b)` is what takes `a` to `b`: months (the day clamped), then days,
    /// then time; and `inSeconds` is the plain difference.
    #[test]
    fn between_is_what_takes_one_to_the_other(a in -5_000_000_000i64..5_000_000_000, b in -5_000_000_000i64..5_000_000_000, dates in any::<bool>()) {
        let db = Database::in_memory();
        let text = |secs: i64| {
            if dates {
                format!("date('{}')", engram::Temporal::Date(secs.div_euclid(86_400)))
            } else {
                format!("localdatetime('{}')", engram::Temporal::LocalDateTime { secs, nanos: 0 })
            }
        };
        let (x, y) = (text(a), text(b));
        prop_assert_eq!(one(&db, &format!("RETURN {x} + duration.between({x}, {y}) = {y}")), "true", "{} {}", x, y);
        if !dates {
            prop_assert_eq!(one(&db, &format!("RETURN duration.inSeconds({x}, {y}).seconds")), (b - a).to_string());
        }
    }

    /// Adding a duration of days and seconds and subtracting it again gives the value back, and
    /// adding it moves the instant by exactly its length.
    #[test]
    fn adding_days_and_seconds_moves_the_instant(secs in -2_000_000_000i64..2_000_000_000, offset in -12i32..12, days in -5000i64..5000, seconds in -200_000i64..200_000) {
        let db = Database::in_memory();
        let dt = datetime_text(secs, 0, offset * 60);
        let d = format!("duration({{days: {days}, seconds: {seconds}}})");
        prop_assert_eq!(one(&db, &format!("RETURN {dt} + {d} - {d} = {dt}")), "true");
        prop_assert_eq!(one(&db, &format!("RETURN ({dt} + {d}).epochSeconds")), (secs + days * 86_400 + seconds).to_string());
    }
}

#[test]
fn truncation_epochs_and_named_clocks() {
    let db = Database::in_memory();
    for (q, want) in [
        ("RETURN date.truncate('millennium', date('2019-05-17'))", "2000-01-01"),
        ("RETURN date.truncate('century', date('1999-05-17'))", "1900-01-01"),
        ("RETURN date.truncate('decade', date('2019-05-17'))", "2010-01-01"),
        ("RETURN date.truncate('year', date('2019-05-17'))", "2019-01-01"),
        ("RETURN date.truncate('weekYear', date('2021-01-01'))", "2019-12-30"),
        ("RETURN date.truncate('quarter', date('2024-05-17'))", "2024-04-01"),
        ("RETURN date.truncate('month', date('2024-05-17'))", "2024-05-01"),
        ("RETURN date.truncate('week', date('2024-05-19'))", "2024-05-13"),
        ("RETURN date.truncate('day', datetime('2024-05-17T23:30-02:00'))", "2024-05-17"),
        ("RETURN date.truncate('month', date('2024-05-17'), {day: 5})", "2024-05-05"),
        ("RETURN datetime.truncate('hour', datetime('2024-05-17T13:45:12.5+02:00'))", "2024-05-17T13:00+02:00"),
        ("RETURN datetime.truncate('day', date('2024-05-17'), {hour: 9, timezone: '+01:00'})", "2024-05-17T09:00+01:00"),
        ("RETURN datetime.truncate('week', localdatetime('2024-05-19T10:00'))", "2024-05-13T00:00Z"),
        ("RETURN localdatetime.truncate('millisecond', localdatetime('2024-05-17T10:11:12.123456'))", "2024-05-17T10:11:12.123"),
        ("RETURN localtime.truncate('minute', localtime('10:11:12'))", "10:11"),
        ("RETURN time.truncate('microsecond', time('10:11:12.1234567-05:00'))", "10:11:12.123456-05:00"),
        ("RETURN time.truncate('day', time('10:11+01:00'))", "00:00+01:00"),
        ("RETURN datetime.fromepoch(1714972089, 5)", "2024-05-06T05:08:09.000000005Z"),
        ("RETURN datetime.fromepochmillis(-1)", "1969-12-31T23:59:59.999Z"),
        ("RETURN date.truncate(null, date('2024-01-01'))", "null"),
        ("RETURN datetime.fromepoch(null, 0)", "null"),
        ("RETURN datetime.statement() = datetime() AND date.transaction() = date() AND localtime.statement() = localtime()", "true"),
        ("RETURN datetime.statement('+02:00').offset", "'+02:00'"),
        ("RETURN time.statement('-05:30') = time(datetime.statement('-05:30')) AND datetime.statement('+02:00').epochMillis = timestamp()", "true"),
        ("RETURN datetime.realtime() >= datetime.statement()", "true"),
    ] {
        assert_eq!(one(&db, q), want, "{q}");
    }
    for (q, why) in [
        ("RETURN date.truncate('hour', date('2024-05-17'))", "cannot truncate to 'hour'"),
        ("RETURN localtime.truncate('month', localtime('10:00'))", "cannot truncate to 'month'"),
        ("RETURN date.truncate('fortnight', date('2024-05-17'))", "'fortnight' is not a unit"),
        ("RETURN date.truncate('day', localtime('10:00'))", "cannot take a local time"),
        ("RETURN date.truncate('month', date('2024-05-17'), {day: 31, month: 2})", "day"),
        ("RETURN date.truncate(1, date('2024-05-17'))", "expects a unit and a temporal value"),
        ("RETURN datetime.fromepoch('x', 0)", "epochSeconds"),
    ] {
        let e = run(&db, q).expect_err(q);
        assert!(e.message.contains(why), "{q}: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(64), ..ProptestConfig::default() })]

    /// A truncated value is at or before the value, truncating it again changes nothing, and it is
    /// the start of the unit that holds the value (the next unit starts after the value).
    #[test]
    fn truncation_is_the_start_of_the_unit(secs in -60_000_000_000i64..60_000_000_000, nanos in 0u32..1_000_000_000, offset in -14i32..14, unit in 0usize..13) {
        let db = Database::in_memory();
        let units = ["millennium", "century", "decade", "year", "weekYear", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond"];
        let steps = ["P1000Y", "P100Y", "P10Y", "P1Y", "P1W", "P3M", "P1M", "P1W", "P1D", "PT1H", "PT1M", "PT1S", "PT0.001S"];
        let (u, step) = (units[unit], steps[unit]);
        let x = datetime_text(secs, nanos, offset * 60);
        let t = format!("datetime.truncate('{u}', {x})");
        prop_assert_eq!(one(&db, &format!("RETURN {t} <= {x} AND datetime.truncate('{u}', {t}) = {t} AND {t}.offset = {x}.offset")), "true", "{} {}", u, x);
        if u == "weekYear" {
            // The next week year starts 52 or 53 weeks on, on a Monday.
            prop_assert_eq!(one(&db, &format!("RETURN {t}.dayOfWeek = 1 AND {t}.week = 1 AND {t} + duration('P53W') > {x}")), "true", "{}", x);
        } else {
            prop_assert_eq!(one(&db, &format!("RETURN {t} + duration('{step}') > {x}")), "true", "{} {}", u, x);
        }
        // Where the unit starts: on a Monday, the first of a month, of a quarter, of a decade.
        let starts = match u {
            "week" => "t.dayOfWeek = 1",
            "quarter" => "t.day = 1 AND t.month % 3 = 1",
            "month" => "t.day = 1",
            "millennium" => "t.year % 1000 = 0 AND t.ordinalDay = 1",
            "century" => "t.year % 100 = 0 AND t.ordinalDay = 1",
            "decade" => "t.year % 10 = 0 AND t.ordinalDay = 1",
            "year" => "t.ordinalDay = 1",
            _ => "true",
        };
        prop_assert_eq!(one(&db, &format!("WITH {t} AS t RETURN {starts}")), "true", "{} {}", u, x);
    }
}
