//! `CALL { … } IN TRANSACTIONS [OF n ROWS] [ON ERROR FAIL | CONTINUE | BREAK] [REPORT STATUS AS
//! s]`: each batch its own transaction. A property test against a naive model of batches (which commit, which rows come
//! out, what the error says), the same answer as one transaction when nothing fails, batches that
//! survive a reopen after a later one failed, Neo4j's import idiom with `LOAD CSV`, and the places
//! it may not run.

use std::sync::Arc;

use engram::{Access, Database, Error, Params, Principal, QueryValue};
use proptest::prelude::*;

fn params(xs: &[i64], k: i64) -> Params {
    let mut p = Params::new();
    p.insert("xs".into(), QueryValue::List(xs.iter().map(|x| QueryValue::Int(*x)).collect()));
    p.insert("k".into(), QueryValue::Int(k));
    p
}

fn count(db: &Database, label: &str) -> i64 {
    let r = db.query("default", &format!("MATCH (n:{label}) RETURN count(n)"), &Params::new()).unwrap();
    match r.rows[0][0] {
        QueryValue::Int(n) => n,
        ref other => panic!("{other:?}"),
    }
}

/// Output rows `(i, ok)`.
type Rows = Vec<(i64, Option<i64>)>;

/// What the naive model says: per batch of `k` inputs, whether it commits (no zero in it), then
/// the output rows `(i, ok)` and the batches committed before the first failure.
fn model(xs: &[i64], k: usize, mode: &str) -> (Rows, Result<usize, usize>) {
    let mut out = Vec::new();
    let mut committed = 0;
    let mut stopped = false;
    for batch in xs.chunks(k) {
        let ok = !stopped && batch.iter().all(|x| *x != 0);
        if ok {
            committed += 1;
        } else if !stopped {
            match mode {
                "FAIL" => return (Vec::new(), Err(committed)),
                "BREAK" => stopped = true,
                _ => {}
            }
        }
        out.extend(batch.iter().map(|x| (*x, ok.then_some(*x))));
    }
    (out, Ok(committed))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(engram_tests::cases(40)))]

    #[test]
    fn batches_commit_as_a_naive_model_says(xs in proptest::collection::vec(0i64..6, 0..24), k in 1usize..7, mode in prop_oneof![Just("FAIL"), Just("CONTINUE"), Just("BREAK")]) {
        let db = Database::in_memory();
        let q = format!("UNWIND $xs AS i CALL (i) {{ CREATE (:N {{v: 60 / i}}) RETURN i AS ok }} IN TRANSACTIONS OF $k ROWS ON ERROR {mode} RETURN i, ok");
        let (want_rows, want) = model(&xs, k, mode);
        let got = db.query("default", &q, &params(&xs, k as i64));
        let batches_written = |committed: usize| xs.chunks(k).take(committed).map(<[i64]>::len).sum::<usize>();
        match (got, want) {
            (Ok(r), Ok(_)) => {
                let rows: Rows = r.rows.iter().map(|row| match (&row[0], &row[1]) {
                    (QueryValue::Int(i), QueryValue::Int(ok)) => (*i, Some(*ok)),
                    (QueryValue::Int(i), QueryValue::Null) => (*i, None),
                    other => panic!("{other:?}"),
                }).collect();
                prop_assert_eq!(&rows, &want_rows);
                let written = want_rows.iter().filter(|(_, ok)| ok.is_some()).count();
                prop_assert_eq!(count(&db, "N") as usize, written);
                prop_assert_eq!(r.stats.nodes_created as usize, written);
            }
            (Err(e), Err(committed)) => {
                let e = e.to_string();
                prop_assert!(e.contains("division by zero"), "{}", e);
                let said = match committed { 0 => "no batch before this one was committed".to_owned(), 1 => "the batch before this one is committed".to_owned(), n => format!("the {n} batches before this one are committed") };
                prop_assert!(e.contains(&said), "{} / {}", e, said);
                prop_assert_eq!(count(&db, "N") as usize, batches_written(committed));
            }
            (got, want) => prop_assert!(false, "got {:?}, the model {:?}", got.map(|r| r.rows), want),
        }
    }

    /// `REPORT STATUS AS s` gives each row its batch's status as the model says: started (not
    /// after a BREAK), committed, the batch's number as its id, and the error of a failed one.
    #[test]
    fn report_status_follows_the_model(xs in proptest::collection::vec(0i64..6, 0..24), k in 1usize..7, mode in prop_oneof![Just("CONTINUE"), Just("BREAK")]) {
        let db = Database::in_memory();
        let q = format!(
            "UNWIND $xs AS i CALL (i) {{ CREATE (:N {{v: 60 / i}}) }} IN TRANSACTIONS OF $k ROWS ON ERROR {mode} REPORT STATUS AS s \
             RETURN i, s.started, s.committed, s.transactionId, s.errorMessage"
        );
        let r = db.query("default", &q, &params(&xs, k as i64)).unwrap();
        let mut want = Vec::new();
        let mut stopped = false;
        for (b, batch) in xs.chunks(k).enumerate() {
            let started = !stopped;
            let ok = started && batch.iter().all(|x| *x != 0);
            stopped |= started && !ok && mode == "BREAK";
            for x in batch {
                want.push((*x, started, ok, started.then(|| (b + 1).to_string()), started && !ok));
            }
        }
        let got: Vec<(i64, bool, bool, Option<String>, bool)> = r.rows.iter().map(|row| match row.as_slice() {
            [QueryValue::Int(i), QueryValue::Bool(st), QueryValue::Bool(c), id, err] => (
                *i,
                *st,
                *c,
                match id { QueryValue::String(s) => Some(s.clone()), QueryValue::Null => None, other => panic!("{other:?}") },
                match err { QueryValue::String(e) => { assert!(e.contains("division by zero"), "{e}"); true }, QueryValue::Null => false, other => panic!("{other:?}") },
            ),
            other => panic!("{other:?}"),
        }).collect();
        prop_assert_eq!(got, want);
    }

    /// When nothing fails, the batches answer as one transaction does: the same rows, the same
    /// counters, the same graph.
    #[test]
    fn without_failures_batches_equal_one_transaction(xs in proptest::collection::vec(1i64..9, 0..20), k in 1usize..6) {
        let (batched, whole) = (Database::in_memory(), Database::in_memory());
        let body = "CALL (i) { MERGE (g:G {g: i % 3}) CREATE (g)-[:HAS]->(:M {i: i}) RETURN g.g AS g }";
        let a = batched.query("default", &format!("UNWIND $xs AS i {body} IN TRANSACTIONS OF $k ROWS RETURN g, count(*) AS c ORDER BY g"), &params(&xs, k as i64)).unwrap();
        let b = whole.query("default", &format!("UNWIND $xs AS i {body} RETURN g, count(*) AS c ORDER BY g"), &params(&xs, k as i64)).unwrap();
        prop_assert_eq!(&a.rows, &b.rows);
        prop_assert_eq!(a.stats, b.stats);
        let shape = "MATCH (g:G)-[:HAS]->(m) RETURN g.g, collect(m.i) ORDER BY g.g";
        prop_assert_eq!(batched.query("default", shape, &Params::new()).unwrap().rows, whole.query("default", shape, &Params::new()).unwrap().rows);
    }
}

/// Each batch is durable on its own: after a later batch fails, a reopened database holds the
/// batches before it.
#[test]
fn committed_batches_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        let e = db
            .query(
                "default",
                "UNWIND [1, 2, 3, 4, 0, 6] AS i CALL (i) { CREATE (:N {v: 10 / i}) } IN TRANSACTIONS OF 2 ROWS",
                &Params::new(),
            )
            .unwrap_err();
        assert!(e.to_string().contains("the 2 batches before this one are committed"), "{e}");
    }
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(count(&db, "N"), 4);
}

/// Neo4j's import idiom: `LOAD CSV … CALL { … } IN TRANSACTIONS OF n ROWS`.
#[test]
fn load_csv_in_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let folder = db.import_folder().unwrap();
    std::fs::create_dir_all(&folder).unwrap();
    let csv: String = std::iter::once("name,team\n".to_owned()).chain((0..2500).map(|i| format!("p{i},t{}\n", i % 7))).collect();
    std::fs::write(folder.join("people.csv"), csv).unwrap();
    let r = db
        .query(
            "default",
            "LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS row \
             CALL { WITH row MERGE (t:Team {name: row.team}) CREATE (:Person {name: row.name})-[:IN]->(t) } IN TRANSACTIONS OF 1000 ROWS",
            &Params::new(),
        )
        .unwrap();
    assert!(r.rows.is_empty(), "a query ending in the subquery returns no rows");
    assert_eq!((r.stats.nodes_created, r.stats.relationships_created), (2507, 2500));
    assert_eq!(count(&db, "Person"), 2500);
    assert_eq!(count(&db, "Team"), 7);
}

#[test]
fn where_it_may_not_run() {
    let db = Database::in_memory();
    let p = Params::new();
    for q in [
        "CALL { CALL { CREATE (:U) } IN TRANSACTIONS } RETURN 1",
        "CREATE (:V) WITH 1 AS x CALL { CREATE (:W) } IN TRANSACTIONS",
        "UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS CREATE (:V)",
        "UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS RETURN 1 AS a UNION RETURN 2 AS a",
    ] {
        let e = db.query("default", q, &p).unwrap_err().to_string();
        assert!(e.contains("IN TRANSACTIONS runs at the top of a query of one part"), "{q}: {e}");
    }
    let e = db.transaction("default", &[("UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS", &p)]).unwrap_err().to_string();
    assert!(e.contains("IN TRANSACTIONS runs at the top"), "{e}");
    let root = db.scope(Arc::new(Principal::root()));
    let group = root.query_group(&[("default", "UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS", &p)]);
    assert!(group[0].as_ref().unwrap_err().to_string().contains("IN TRANSACTIONS runs at the top"));
    for (q, want) in [
        ("UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS OF 0 ROWS", "takes a positive integer, got 0"),
        ("UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS OF 'a' ROWS", "takes a positive integer, got a string"),
        ("UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS OF x ROWS", "x"),
        ("UNWIND [1] AS x OPTIONAL CALL (x) { CREATE (:W) } IN TRANSACTIONS", "OPTIONAL CALL { … } cannot run IN TRANSACTIONS"),
        ("UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS ON ERROR RETRY", "ON ERROR RETRY is not supported"),
        (
            "UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS REPORT STATUS AS s",
            "REPORT STATUS needs ON ERROR CONTINUE or ON ERROR BREAK",
        ),
        ("UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS ON ERROR CONTINUE REPORT STATUS AS x RETURN x", "`x`"),
        ("UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS ON ERROR CONTINUE REPORT AS s", "expected STATUS"),
        ("UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS OF 2", "expected ROWS"),
    ] {
        let e = db.query("default", q, &p).unwrap_err().to_string();
        assert!(e.contains(want), "{q}: {e}");
    }
    assert_eq!(count(&db, "W") + count(&db, "U") + count(&db, "V"), 0, "a refused query writes nothing");
    // A principal without write access is refused before any batch.
    let reader = db.scope(Arc::new(Principal::named("r").grant("default", Access::Read, false)));
    let e = reader.query("default", "UNWIND [1, 2] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS", &p).unwrap_err();
    assert!(matches!(e, Error::Denied { .. }), "{e:?}");
    assert_eq!(count(&db, "W"), 0);
    // A read-only subquery needs no transactions of its own: it runs as is.
    let r =
        db.query("default", "UNWIND [1, 2, 3] AS x CALL (x) { RETURN x * 2 AS y } IN TRANSACTIONS OF 2 ROWS RETURN sum(y)", &p).unwrap();
    assert_eq!(r.rows, [[QueryValue::Int(12)]]);
    // With REPORT STATUS, its batches' rows carry their status too, every one committed.
    let r = db
        .query(
            "default",
            "UNWIND [1, 2, 3] AS x CALL (x) { RETURN x * 2 AS y } IN TRANSACTIONS OF 2 ROWS ON ERROR CONTINUE REPORT STATUS AS s \
             RETURN y, s.transactionId, s.committed",
            &p,
        )
        .unwrap();
    let b = |y: i64, id: &str| vec![QueryValue::Int(y), QueryValue::String(id.to_owned()), QueryValue::Bool(true)];
    assert_eq!(r.rows, [b(2, "1"), b(4, "1"), b(6, "2")]);
    let plan = db
        .query("default", "EXPLAIN UNWIND [1] AS x CALL (x) { CREATE (:W) } IN TRANSACTIONS OF 10 ROWS ON ERROR CONTINUE", &p)
        .unwrap()
        .plan
        .unwrap();
    assert!(plan.contains("InTransactions batches, on error CONTINUE"), "{plan}");
    let profiled = db.query("default", "PROFILE UNWIND [1, 2, 3] AS x CALL (x) { CREATE (:P) } IN TRANSACTIONS OF 2 ROWS", &p).unwrap();
    assert!(profiled.plan.as_deref().is_some_and(|p| p.contains("InTransactions") && p.contains("Create")), "{:?}", profiled.plan);
    assert_eq!(profiled.stats.nodes_created, 3);
}
