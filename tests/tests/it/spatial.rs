//! Spatial points: the forms of Neo4j's manual and FalkorDB's own point tests (construction,
//! fields, text, distance, bounding boxes, nulls and errors), Cypher's rules for them (equality,
//! no ordering comparison, the sort order, grouping), storage (WAL replay, checkpoint, export and
//! import, JSON parameters), and property tests against formulas written independently here.

use engram::{Database, Params, QueryValue};
use proptest::prelude::*;

fn rows(db: &Database, text: &str) -> Vec<Vec<QueryValue>> {
    db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

/// The one value of a one-row, one-column query, as the CLI shows it.
fn one(db: &Database, text: &str) -> QueryValue {
    let mut r = rows(db, text);
    assert_eq!(r.len(), 1, "{text}: {r:?}");
    r.remove(0).remove(0)
}

fn text(db: &Database, q: &str) -> String {
    match one(db, q) {
        QueryValue::String(s) => s,
        QueryValue::Point(p) => p.to_string(),
        other => engram_tests::shown(&other),
    }
}

fn float(db: &Database, q: &str) -> f64 {
    match one(db, q) {
        QueryValue::Float(f) => f,
        other => panic!("{q}: expected a float, got {other:?}"),
    }
}

fn error(db: &Database, q: &str) -> String {
    match db.query("default", q, &Params::new()) {
        Ok(r) => panic!("{q}: expected an error, got {:?}", r.rows),
        Err(e) => e.to_string(),
    }
}

#[test]
fn construction_fields_and_text() {
    let db = Database::in_memory();
    for (q, want) in [
        ("point({x: 2.3, y: 4.5})", "point({x: 2.3, y: 4.5, crs: 'cartesian'})"),
        ("point({x: 2, y: 4, z: 1})", "point({x: 2.0, y: 4.0, z: 1.0, crs: 'cartesian-3d'})"),
        ("point({longitude: 56.7, latitude: 12.78})", "point({x: 56.7, y: 12.78, crs: 'wgs-84'})"),
        ("point({x: 2.3, y: 4.5, crs: 'WGS-84'})", "point({x: 2.3, y: 4.5, crs: 'wgs-84'})"),
        ("point({longitude: 56.7, latitude: 12.78, height: 8})", "point({x: 56.7, y: 12.78, z: 8.0, crs: 'wgs-84-3d'})"),
        ("point({x: 1, y: 2, srid: 4326})", "point({x: 1.0, y: 2.0, crs: 'wgs-84'})"),
        ("point({x: 1, y: 2, z: 3, srid: 9157})", "point({x: 1.0, y: 2.0, z: 3.0, crs: 'cartesian-3d'})"),
        ("point({x: 1, y: 2, crs: 'cartesian', srid: 7203, note: 'ignored'})", "point({x: 1.0, y: 2.0, crs: 'cartesian'})"),
    ] {
        assert_eq!(text(&db, &format!("RETURN {q}")), want, "{q}");
        // The text is a query that makes the same point again.
        assert_eq!(text(&db, &format!("RETURN {want} = {q}")), "true", "{q}");
    }
    let p = "point({longitude: 12.78, latitude: 56.7, height: 100})";
    let fields = rows(&db, &format!("WITH {p} AS p RETURN p.longitude, p.latitude, p.height, p.x, p.y, p.z, p.crs, p.srid"));
    assert_eq!(
        fields[0],
        [12.78, 56.7, 100.0, 12.78, 56.7, 100.0]
            .map(QueryValue::Float)
            .into_iter()
            .chain([QueryValue::String("wgs-84-3d".into()), QueryValue::Int(4979)])
            .collect::<Vec<_>>()
    );
    assert_eq!(text(&db, "RETURN point({x: 1, y: 2}).srid"), "7203");
    assert_eq!(text(&db, "RETURN toString(point({x: 1, y: 2}))"), "point({x: 1.0, y: 2.0, crs: 'cartesian'})");
    assert_eq!(text(&db, "RETURN valueType(point({x: 1, y: 2}))"), "POINT NOT NULL");
    assert_eq!(
        text(&db, "RETURN [point({x: 1, y: 2}) IS :: POINT, 1 IS :: POINT, point({x: 1, y: 2}) IS :: PROPERTY VALUE]"),
        "[true, false, true]"
    );
    // Null in, null out: the map, or any of its point keys.
    for q in [
        "point(null)",
        "point({x: null, y: 1})",
        "point({longitude: 1, latitude: 2, crs: null})",
        "point.distance(null, point({x: 1, y: 1}))",
        "point.withinBBox(point({x: 1, y: 1}), null, point({x: 2, y: 2}))",
    ] {
        assert_eq!(one(&db, &format!("RETURN {q}")), QueryValue::Null, "{q}");
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let db = Database::in_memory();
    for (q, want) in [
        // FalkorDB's own tests look for these words.
        ("RETURN point({latitude: 90.1, longitude: 20})", "latitude should be within [-90, 90]"),
        ("RETURN point({latitude: -90.1, longitude: 20})", "latitude should be within [-90, 90]"),
        ("RETURN point({latitude: 10, longitude: 180.1})", "longitude should be within [-180, 180]"),
        ("RETURN point({x: 1})", "a point needs both x and y"),
        ("RETURN point({latitude: 1})", "a point needs both longitude and latitude"),
        ("RETURN point({a: 1})", "a point needs x and y, or longitude and latitude"),
        ("RETURN point({x: 1, latitude: 2})", "not both"),
        ("RETURN point({x: 1, y: 2, crs: 'cartesian-3d'})", "a cartesian-3d point has 3 coordinates, given 2"),
        ("RETURN point({x: 1, y: 2, crs: 'mercator'})", "unknown coordinate reference system `mercator`"),
        ("RETURN point({x: 1, y: 2, srid: 3857})", "unknown srid 3857"),
        ("RETURN point({x: 1, y: 2, crs: 'wgs-84', srid: 7203})", "name different coordinate reference systems"),
        ("RETURN point({longitude: 1, latitude: 2, crs: 'cartesian'})", "not a cartesian one"),
        ("RETURN point({x: 'a', y: 2})", "x must be a number, got a string"),
        ("RETURN point({x: 1.0/0.0, y: 2})", "must be finite"),
        ("RETURN point('x')", "point() expects a map"),
        ("RETURN point({x: 1, y: 2}).latitude", "a cartesian point has no field `latitude` (its fields: x, y, crs, srid)"),
        ("RETURN point({longitude: 1, latitude: 2}).height", "a wgs-84 point has no field `height`"),
        ("RETURN point.distance(point({x: 1, y: 2}), 3)", "point.distance() expects two points, got a point and an integer"),
        ("RETURN distance(1, 2)", "distance() expects two points"),
        ("CREATE (n {p: {loc: point({x: 1, y: 2})}})", "cannot be stored"),
    ] {
        let e = error(&db, q);
        assert!(e.contains(want), "{q}: {e}");
    }
    assert_eq!(rows(&db, "MATCH (n) RETURN n").len(), 0, "a failed write writes nothing");
}

#[test]
fn distances_and_boxes() {
    let db = Database::in_memory();
    // Neo4j's manual: the station in Copenhagen to the office in Malmö, and two Cartesian points.
    rows(
        &db,
        "CREATE (:TrainStation {latitude: 55.672874, longitude: 12.564590, city: 'Copenhagen'})-[:TRAVEL_ROUTE]->\
         (:Office {latitude: 55.611784, longitude: 12.994341, city: 'Malmö'})",
    );
    let q = "MATCH (t:TrainStation)-[:TRAVEL_ROUTE]->(o:Office) \
             WITH point({longitude: t.longitude, latitude: t.latitude}) AS trainPoint, point({longitude: o.longitude, latitude: o.latitude}) AS officePoint \
             RETURN round(point.distance(trainPoint, officePoint)) AS travelDistance";
    assert_eq!(one(&db, q), QueryValue::Float(27842.0));
    let d = float(&db, "RETURN point.distance(point({x: 2.3, y: 4.5, crs: 'cartesian'}), point({x: 1.1, y: 5.4, crs: 'cartesian'}))");
    assert!((d - 1.5).abs() < 1e-12, "{d}");
    assert_eq!(one(&db, "RETURN point.distance(point({x: 0, y: 0, z: 0}), point({x: 2, y: 3, z: 6}))"), QueryValue::Float(7.0));
    // Heights: the arc at the mean height, then Pythagoras with the difference.
    assert_eq!(
        one(&db, "RETURN point.distance(point({longitude: 1, latitude: 2, height: 0}), point({longitude: 1, latitude: 2, height: 30}))"),
        QueryValue::Float(30.0)
    );
    // Across coordinate reference systems: null.
    assert_eq!(one(&db, "RETURN point.distance(point({x: 0, y: 0}), point({x: 0, y: 0, z: 0}))"), QueryValue::Null);
    // FalkorDB's tests (its tolerance: a tenth): 0 m, 160 m and 11,352 km apart; `distance` is its name.
    for (a, b, want) in [
        (("32.070794860", "34.820751118"), ("32.070794860", "34.820751118"), 0.0),
        (("32.070794860", "34.820751118"), ("32.070109656", "34.822351298"), 160.0),
        (("32.070794860", "34.820751118"), ("30.621734079", "-96.33775507"), 11_352_120.0),
    ] {
        let d = float(
            &db,
            &format!("RETURN distance(point({{latitude: {}, longitude: {}}}), point({{latitude: {}, longitude: {}}}))", a.0, a.1, b.0, b.1),
        );
        assert!((d - want).abs() <= 0.1 * want, "{d} against {want}");
    }
    // Bounding boxes, edges included; a box across the 180th meridian; a box upside down is empty.
    let bbox = |p: &str, ll: &str, ur: &str| text(&db, &format!("RETURN point.withinBBox({p}, {ll}, {ur})"));
    let geo = |lon: f64, lat: f64| format!("point({{longitude: {lon}, latitude: {lat}}})");
    assert_eq!(bbox(&geo(12.9, 55.6), &geo(12.5, 55.5), &geo(13.0, 55.7)), "true");
    assert_eq!(bbox(&geo(12.5, 55.5), &geo(12.5, 55.5), &geo(13.0, 55.7)), "true");
    assert_eq!(bbox(&geo(14.0, 55.6), &geo(12.5, 55.5), &geo(13.0, 55.7)), "false");
    assert_eq!(bbox(&geo(179.5, 0.0), &geo(170.0, -10.0), &geo(-170.0, 10.0)), "true");
    assert_eq!(bbox(&geo(-179.5, 0.0), &geo(170.0, -10.0), &geo(-170.0, 10.0)), "true");
    assert_eq!(bbox(&geo(0.0, 0.0), &geo(170.0, -10.0), &geo(-170.0, 10.0)), "false");
    assert_eq!(bbox(&geo(12.9, 55.6), &geo(12.5, 55.7), &geo(13.0, 55.5)), "false");
    assert_eq!(bbox("point({x: 1, y: 1, z: 1})", "point({x: 0, y: 0, z: 0})", "point({x: 2, y: 2, z: 0.5})"), "false");
    assert_eq!(bbox("point({x: 1, y: 1})", "point({x: 0, y: 0})", "point({x: 2, y: 2, z: 0})"), "null");
    // The demos' radius search: a filter on the distance to a parameter's point.
    let mut p = Params::new();
    p.insert(
        "here".into(),
        QueryValue::Map([("latitude".to_owned(), QueryValue::Float(55.6)), ("longitude".to_owned(), QueryValue::Float(12.9))].into()),
    );
    let r = db
        .query(
            "default",
            "MATCH (o) WHERE point.distance(point({latitude: o.latitude, longitude: o.longitude}), point($here)) < 10000 RETURN o.city",
            &p,
        )
        .unwrap();
    assert_eq!(r.rows, vec![vec![QueryValue::String("Malmö".into())]]);
}

#[test]
fn equality_comparison_order_and_grouping() {
    let db = Database::in_memory();
    assert_eq!(text(&db, "RETURN point({x: 1, y: 2}) = point({x: 1.0, y: 2.0, crs: 'cartesian'})"), "true");
    assert_eq!(text(&db, "RETURN point({x: 1, y: 2}) = point({x: 1, y: 2, crs: 'wgs-84'})"), "false");
    assert_eq!(text(&db, "RETURN point({x: 1, y: 2}) <> point({x: 1, y: 3})"), "true");
    assert_eq!(text(&db, "RETURN point({x: 0.0, y: 2}) = point({x: -0.0, y: 2})"), "true");
    // Points do not compare with < (null, as in Neo4j); ORDER BY orders them all the same.
    assert_eq!(one(&db, "RETURN point({x: 1, y: 2}) < point({x: 2, y: 3})"), QueryValue::Null);
    assert_eq!(one(&db, "RETURN point({x: 1, y: 2}) >= point({x: 1, y: 2})"), QueryValue::Null);
    // FalkorDB's test: geographic points sorted by longitude, then latitude.
    let sorted = text(
        &db,
        "UNWIND [point({latitude:33, longitude:35}), point({latitude:32, longitude:31}), point({latitude:32, longitude:32}), \
         point({latitude:31, longitude:32}), point({latitude:29, longitude:36})] AS p WITH p ORDER BY p RETURN collect([p.latitude, p.longitude])",
    );
    assert_eq!(sorted, "[[32.0, 31.0], [31.0, 32.0], [32.0, 32.0], [33.0, 35.0], [29.0, 36.0]]");
    // Across kinds: after paths and lists, before temporal values, strings and numbers.
    let mixed = text(
        &db,
        "UNWIND [1, 'a', date('2020-01-01'), point({x: 1, y: 1}), [1], point({longitude: 0, latitude: 0}), point({x: 0, y: 5})] AS v \
         WITH v ORDER BY v RETURN collect(valueType(v))",
    );
    assert_eq!(mixed, "['LIST<INTEGER NOT NULL> NOT NULL', 'POINT NOT NULL', 'POINT NOT NULL', 'POINT NOT NULL', 'DATE NOT NULL', 'STRING NOT NULL', 'INTEGER NOT NULL']");
    assert_eq!(
        text(&db, "UNWIND [point({longitude: 0, latitude: 0}), point({x: 0, y: 5}), point({x: 1, y: 1})] AS p WITH p ORDER BY p RETURN collect(p.crs + ':' + toString(p.y))"),
        "['cartesian:5.0', 'cartesian:1.0', 'wgs-84:0.0']"
    );
    assert_eq!(
        text(&db, "UNWIND [point({x: 1, y: 2}), point({x: 1.0, y: 2.0}), point({x: -0.0, y: 2}), point({x: 0, y: 2}), point({x: 1, y: 2, z: 0})] AS p RETURN count(DISTINCT p)"),
        "3"
    );
    assert_eq!(text(&db, "RETURN point({x: 1, y: 2}) IN [point({x: 1.0, y: 2.0})]"), "true");
}

/// Points as properties (alone and in lists), matched by equality with and without an index, and
/// their survival through a WAL replay, a checkpoint and the JSON-lines export and import.
#[test]
fn stored_points_survive_replay_checkpoint_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let q = "MATCH (n:Place) RETURN n.name, n.loc, n.path, toString(n.loc) ORDER BY n.name";
    let want = {
        let db = Database::open(dir.path()).unwrap();
        rows(
            &db,
            "CREATE (:Place {name: 'home', loc: point({latitude: 32.070794860, longitude: 34.820751118}), path: [point({x: 1, y: 2}), point({x: 3, y: 4, z: 5})]}), \
             (:Place {name: 'peak', loc: point({longitude: 86.925, latitude: 27.9881, height: 8848.86})})-[:NEAR {at: point({x: 0.5, y: -0.5})}]->(:Place {name: 'zero', loc: point({x: 0, y: 0})})",
        );
        let want = rows(&db, q);
        assert_eq!(want.len(), 3);
        assert!(matches!(&want[0][1], QueryValue::Point(p) if p.crs() == engram::spatial::Crs::Wgs84));
        assert_eq!(want[1][3], QueryValue::String("point({x: 86.925, y: 27.9881, z: 8848.86, crs: 'wgs-84-3d'})".into()));
        want
    };
    let rel = "MATCH ()-[r:NEAR]->() RETURN toString(r.at)";
    let find = "MATCH (n:Place {loc: point({x: 0.0, y: 0})}) RETURN n.name";
    {
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(rows(&db, q), want, "after WAL replay");
        assert_eq!(text(&db, rel), "point({x: 0.5, y: -0.5, crs: 'cartesian'})");
        assert_eq!(text(&db, find), "zero");
        rows(&db, "CREATE INDEX FOR (n:Place) ON (n.loc)");
        assert_eq!(text(&db, find), "zero", "with an index on the property");
        db.checkpoint().unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(rows(&db, q), want, "from a checkpoint");
    assert_eq!(text(&db, find), "zero");
    let text_lines = engram::jsonl::export(&db.snapshot()).join("\n");
    assert!(text_lines.contains(r#"{"$point":{"crs":"wgs-84","latitude":32.07079486,"longitude":34.820751118}}"#), "{text_lines}");
    assert!(text_lines.contains(r#"{"$point":{"crs":"cartesian-3d","x":3.0,"y":4.0,"z":5.0}}"#), "{text_lines}");
    let copy = Database::in_memory();
    engram::jsonl::import(&copy, &text_lines, "places.jsonl").unwrap();
    assert_eq!(rows(&copy, q), want, "through export and import");
    assert_eq!(text(&copy, rel), "point({x: 0.5, y: -0.5, crs: 'cartesian'})");
}

/// JSON parameters take a point as the export writes it; a query's JSON gives the map `point()`
/// takes; a bad `$point` names its key.
#[test]
fn json_parameters_and_results() {
    let db = Database::in_memory();
    let serde_json::Value::Object(map) =
        serde_json::json!({"p": {"$point": {"crs": "wgs-84", "longitude": 12.5, "latitude": 55.6}}, "q": {"x": 1}})
    else {
        unreachable!()
    };
    let p = engram::exec::params_from_json(&map).unwrap();
    let r = db.query("default", "WITH $q AS q RETURN $p, $p.latitude, point(q {.*, y: 2})", &p).unwrap();
    let shown: Vec<String> = r.rows[0].iter().map(|v| v.to_json().to_string()).collect();
    assert_eq!(shown, [r#"{"crs":"wgs-84","latitude":55.6,"longitude":12.5}"#, "55.6", r#"{"crs":"cartesian","x":1.0,"y":2.0}"#]);
    for (bad, want) in [
        (serde_json::json!({"t": {"$point": {"x": 1}}}), "parameter $t: $point: a point needs both x and y"),
        (serde_json::json!({"t": {"$point": {"x": "1", "y": 2}}}), r#"parameter $t: $point.x: a number, not "1""#),
        (serde_json::json!({"t": {"$point": {"x": 1, "y": 2, "w": 3}}}), "parameter $t: $point.w: not a point's key"),
        (serde_json::json!({"t": {"$point": [1, 2]}}), "parameter $t: {\"$point\": …} takes a map"),
        (serde_json::json!({"t": [{"$point": {"latitude": 91, "longitude": 0}}]}), "parameter $t: $point: latitude should be within"),
    ] {
        let serde_json::Value::Object(map) = bad else { unreachable!() };
        let e = engram::exec::params_from_json(&map).expect_err("refused");
        assert!(e.starts_with(want), "{e}");
    }
}

/// The distance on a sphere from the angle between the points' unit vectors (not the haversine
/// the engine uses), at the mean height, with the height difference by Pythagoras.
fn reference_distance(a: (f64, f64, f64), b: (f64, f64, f64)) -> f64 {
    let unit = |(lon, lat): (f64, f64)| {
        let (lon, lat) = (lon.to_radians(), lat.to_radians());
        [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
    };
    let (u, v) = (unit((a.0, a.1)), unit((b.0, b.1)));
    let cross = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    let sin = (cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]).sqrt();
    let cos = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    let arc = sin.atan2(cos) * (engram::spatial::EARTH_RADIUS_METERS + f64::midpoint(a.2, b.2));
    (arc * arc + (a.2 - b.2) * (a.2 - b.2)).sqrt()
}

fn coordinate() -> impl Strategy<Value = (f64, f64, f64)> {
    (-180.0f64..=180.0, -90.0f64..=90.0, -500.0f64..9000.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(engram_tests::cases(48)))]

    /// Geographic distances equal the reference (to a millimetre per thousand kilometres), are
    /// symmetric and zero to themselves; Cartesian ones are Euclid's.
    #[test]
    fn distances_equal_an_independent_formula(a in coordinate(), b in coordinate(), three_d in any::<bool>()) {
        let db = Database::in_memory();
        let pt = |c: (f64, f64, f64)| if three_d {
            format!("point({{longitude: {:?}, latitude: {:?}, height: {:?}}})", c.0, c.1, c.2)
        } else {
            format!("point({{longitude: {:?}, latitude: {:?}}})", c.0, c.1)
        };
        let r = rows(&db, &format!("WITH {} AS a, {} AS b RETURN point.distance(a, b), point.distance(b, a), point.distance(a, a)", pt(a), pt(b)));
        let (h_a, h_b) = if three_d { (a.2, b.2) } else { (0.0, 0.0) };
        let want = reference_distance((a.0, a.1, h_a), (b.0, b.1, h_b));
        let QueryValue::Float(d) = r[0][0] else { panic!("{r:?}") };
        prop_assert!((d - want).abs() <= 1e-6 * want.max(1.0), "{d} against {want}");
        prop_assert_eq!(&r[0][0], &r[0][1]);
        prop_assert_eq!(&r[0][2], &QueryValue::Float(0.0));
        let e = rows(&db, &format!("RETURN point.distance(point({{x: {:?}, y: {:?}, z: {:?}}}), point({{x: {:?}, y: {:?}, z: {:?}}}))", a.0, a.1, a.2, b.0, b.1, b.2));
        let want = ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2) + (a.2 - b.2).powi(2)).sqrt();
        let QueryValue::Float(d) = e[0][0] else { panic!("{e:?}") };
        prop_assert!((d - want).abs() <= 1e-9 * want.max(1.0));
    }

    /// `withinBBox` agrees with a naive test of each coordinate (the longitude wrapping when the
    /// box crosses the 180th meridian), and `ORDER BY` with a sort on (CRS, x, y).
    #[test]
    fn boxes_and_order_agree_with_naive_ones(points in proptest::collection::vec((-180i32..=180, -90i32..=90, any::<bool>()), 1..12), ll in (-180i32..=180, -90i32..=90), ur in (-180i32..=180, -90i32..=90)) {
        let db = Database::in_memory();
        let pt = |(x, y, geo): (i32, i32, bool)| if geo { format!("point({{longitude: {x}, latitude: {y}}})") } else { format!("point({{x: {x}, y: {y}}})") };
        let list = points.iter().map(|p| pt(*p)).collect::<Vec<_>>().join(", ");
        let q = format!("UNWIND [{list}] AS p WITH p ORDER BY p RETURN p.x, p.y, point.withinBBox(p, {}, {})", pt((ll.0, ll.1, true)), pt((ur.0, ur.1, true)));
        let got: Vec<(i64, i64, Option<bool>)> = rows(&db, &q).iter().map(|r| {
            let n = |v: &QueryValue| match v { QueryValue::Float(f) => *f as i64, other => panic!("{other:?}") };
            (n(&r[0]), n(&r[1]), match r[2] { QueryValue::Bool(b) => Some(b), _ => None })
        }).collect();
        let mut want: Vec<(bool, i32, i32)> = points.iter().map(|&(x, y, geo)| (geo, x, y)).collect();
        want.sort_unstable();
        let want: Vec<(i64, i64, Option<bool>)> = want.into_iter().map(|(geo, x, y)| {
            let lon_ok = if ll.0 > ur.0 { x >= ll.0 || x <= ur.0 } else { ll.0 <= x && x <= ur.0 };
            (i64::from(x), i64::from(y), geo.then_some(lon_ok && ll.1 <= y && y <= ur.1))
        }).collect();
        prop_assert_eq!(got, want);
    }
}
