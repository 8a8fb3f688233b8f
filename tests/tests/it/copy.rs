//! Copying a workspace (`engram::io::copy`, FalkorDB's `GRAPH.COPY`): the copy reads as its
//! source does, keeps its protections (constraints, sensitive keys) and is a workspace of its own.

use engram::{Database, Params, QueryValue, WriteBatch};

fn rows(db: &Database, ws: &str, text: &str) -> Vec<Vec<QueryValue>> {
    db.query(ws, text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows
}

/// The rows in an order of their own (ids differ between the workspaces; values do not).
fn sorted(db: &Database, ws: &str, text: &str) -> Vec<String> {
    let mut out: Vec<String> = rows(db, ws, text).iter().map(|r| format!("{r:?}")).collect();
    out.sort();
    out
}

#[test]
fn a_copy_reads_as_its_source_and_keeps_its_protections() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open(dir.path()).expect("opens");
    db.create_workspace("src").expect("creates");
    let p = Params::new();
    db.query("src", "CREATE (a:P:Admin {email: 'a', ssn: 'S-1', n: [1.5, 2.5]})-[:KNOWS {since: 2020}]->(b:P {email: 'b'}), (:Gone)", &p)
        .expect("writes");
    db.query("src", "MATCH (g:Gone) DELETE g", &p).expect("deletes");
    let mut b = WriteBatch::new("src");
    b.upsert_entity("auth", "service", "AuthService").upsert_entity("db", "service", "Postgres");
    db.write(&b).expect("writes");
    db.query("src", "CREATE CONSTRAINT FOR (x:P) REQUIRE x.email IS UNIQUE", &p).expect("declares");
    db.query("src", "CREATE INDEX FOR (x:P) ON (x.email)", &p).expect("declares");
    db.set_workspace_setting("src", "sensitive_properties", "ssn").expect("sets");

    engram::io::copy::copy_workspace(&db, "src", "dst").expect("copies");
    let read = [
        "MATCH (n) RETURN labels(n), properties(n)",
        "MATCH (a)-[r]->(b) RETURN a.email, type(r), properties(r), b.email",
        "ALL VERSIONS MATCH (n) RETURN count(n)",
        "CALL db.indexes() YIELD label, properties RETURN label, properties",
        "CALL db.constraints()",
    ];
    for text in read {
        assert_eq!(sorted(&db, "dst", text), sorted(&db, "src", text), "{text}");
    }
    assert_eq!(rows(&db, "dst", "ALL VERSIONS MATCH (n) RETURN count(n)"), vec![vec![QueryValue::Int(5)]], "the deleted node too");
    // Its own workspace: a write to the copy leaves the source as it was, and its constraint holds.
    db.query("dst", "CREATE (:P {email: 'c'})", &p).expect("writes");
    assert_eq!(rows(&db, "src", "MATCH (x:P {email: 'c'}) RETURN count(x)"), vec![vec![QueryValue::Int(0)]]);
    let e = db.query("dst", "CREATE (:P {email: 'a'})", &p).expect_err("the copy's constraint");
    assert!(e.to_string().contains("same values"), "{e}");
    // A reader without see_sensitive does not see the copy's sensitive key either.
    let reader = std::sync::Arc::new(engram::Principal::named("r").grant("dst", engram::Access::Read, false));
    let seen = db.scope(reader).query("dst", "MATCH (x:Admin) RETURN x.ssn, keys(x)", &p).expect("reads").rows;
    assert_eq!(
        seen,
        vec![vec![QueryValue::Null, QueryValue::List(vec![QueryValue::String("email".into()), QueryValue::String("n".into())])]]
    );
    // Refused: a name taken, an unknown source; neither leaves anything behind.
    assert!(engram::io::copy::copy_workspace(&db, "src", "dst").unwrap_err().to_string().contains("already exists"));
    assert!(engram::io::copy::copy_workspace(&db, "nope", "other").unwrap_err().to_string().contains("unknown workspace"));
    assert!(db.workspaces().iter().all(|w| &*w.name != "other"));
    // Durable like any write.
    drop(db);
    let db = Database::open(dir.path()).expect("reopens");
    assert_eq!(rows(&db, "dst", "MATCH (x:P) RETURN count(x)"), vec![vec![QueryValue::Int(3)]]);
}

/// An admin's export carries each workspace's settings (`setting` lines), and an import stores
/// them before the rows: a restored workspace keeps its sensitive keys, constraints and index
/// declarations, and export → import → export gives the same lines. A reader's export has none.
#[test]
fn an_export_carries_the_settings_and_an_import_stores_them_first() {
    let db = Database::in_memory();
    let p = Params::new();
    db.query("default", "CREATE (:P {email: 'a', ssn: 'S-1'})", &p).expect("writes");
    db.query("default", "CREATE CONSTRAINT FOR (x:P) REQUIRE x.email IS UNIQUE", &p).expect("declares");
    db.set_workspace_setting("default", "sensitive_properties", "ssn").expect("sets");
    let lines = engram::jsonl::export(&db.snapshot());
    let settings: Vec<&String> = lines.iter().filter(|l| l.contains(r#""kind":"setting""#)).collect();
    assert_eq!(settings.len(), 2, "{settings:?}");
    assert!(settings.iter().any(|l| l.contains(r#""key":"sensitive_properties","value":"ssn""#)));
    let first_entity = lines.iter().position(|l| l.contains(r#""kind":"entity""#)).expect("an entity");
    assert!(lines.iter().rposition(|l| l.contains(r#""kind":"setting""#)).expect("a setting") < first_entity);

    let restored = Database::in_memory();
    engram::jsonl::import(&restored, &lines.join("\n"), "dump.jsonl").expect("imports");
    assert_eq!(engram::jsonl::export(&restored.snapshot()), lines, "export → import → export");
    let reader = std::sync::Arc::new(engram::Principal::named("r").grant("default", engram::Access::Read, false));
    let seen = restored.scope(reader.clone()).query("default", "MATCH (x:P) RETURN x.ssn", &p).expect("reads").rows;
    assert_eq!(seen, vec![vec![QueryValue::Null]], "still sensitive");
    let e = restored.query("default", "CREATE (:P {email: 'a'})", &p).expect_err("still unique");
    assert!(e.to_string().contains("same values"), "{e}");
    // A reader's export gives no settings (they are an administrator's).
    let theirs = engram::jsonl::export_scope(&db.scope(reader)).expect("exports");
    assert!(theirs.iter().all(|l| !l.contains(r#""kind":"setting""#)));
    // A bad setting line is named and nothing is written.
    let bad = format!("{}\n{}", lines[0], r#"{"kind":"setting","workspace":"default","key":"retention_days","value":"zero"}"#);
    let empty = Database::in_memory();
    let e = engram::jsonl::import(&empty, &bad, "bad.jsonl").expect_err("refused");
    assert!(e.to_string().starts_with("bad.jsonl:2:1: setting `retention_days`"), "{e}");
    assert!(engram::jsonl::export(&empty.snapshot()).iter().all(|l| !l.contains(r#""kind":"entity""#) && !l.contains("retention")));
}
