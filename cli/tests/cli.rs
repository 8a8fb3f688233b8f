//! The `engram` binary's contracts: `import` (a bad row names file, line and column and leaves the
//! folder as it was), `stats` (plain integers, nothing clock- or size-dependent), `check` (exit 0
//! with only a torn tail or leftover temporary files, 1 on a checksum mismatch) and `checkpoint`.

#![allow(clippy::unwrap_used)] // Reason: a failed unwrap is a failed test, with its location.

use std::path::Path;
use std::process::{Command, Output};

fn engram(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_engram")).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn write_csvs(dir: &Path, bad_claim: bool) -> (String, String) {
    let ents = dir.join("entities.csv");
    let claims = dir.join("claims.csv");
    std::fs::write(&ents, "id,type,name,aliases\nauth,service,AuthService,auth-svc\nkafka,technology,Kafka,\nkinesis,technology,Kinesis,\nsvc,concept,Service,\n").unwrap();
    let mut c = String::from("id,subject,predicate,object,confidence,state,valid_from\n");
    c += "c1,auth,STREAMS_EVENTS_WITH,kafka,0.9,DEPRECATED,1700000000\n";
    c += "c2,auth,STREAMS_EVENTS_WITH,kinesis,0.95,ACCEPTED,1710000000\n";
    c += "c3,auth,SUBCLASS_OF,svc,1.0,PROPOSED,1700000000\n";
    if bad_claim {
        c += "c4,auth,USES,ghost,0.5,ACCEPTED,1700000000\n";
    }
    std::fs::write(&claims, c).unwrap();
    (ents.display().to_string(), claims.display().to_string())
}

#[test]
fn import_then_stats_then_check() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db").display().to_string();
    let out = engram(&["import", &db, "--entities", &ents, "--claims", &claims]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = engram(&["stats", &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "entities 4\nclaims 3\nstate PROPOSED 1\nstate ACCEPTED 1\nstate DEPRECATED 1\nworkspace default entities 4 claims 3\n\
         vocabulary default labels 3 relationship_types 2 property_keys 5\n"
    );
    // The external ids are the CSV ids, verbatim.
    let d = engram::Database::open(&db).unwrap();
    let snap = d.snapshot();
    let ws = snap.workspace("default").unwrap();
    let auth = ws.entity_id("auth").unwrap();
    assert_eq!(ws.find_by_name("auth svc"), vec![auth]);
    assert_eq!(
        ws.ancestors(auth, "subclass_of", &engram::Visibility { states: engram::StateSet::ALL, ..Default::default() }).unwrap().len(),
        1
    );
    drop(d);
    let out = engram(&["check", &db]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    let out = engram(&["checkpoint", &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let copy = tmp.path().join("copy").display().to_string();
    let out = engram(&["backup", &db, &copy]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&engram(&["stats", &copy]).stdout), text(&engram(&["stats", &db]).stdout));
    assert!(Path::new(text(&out.stdout).trim_end()).extension().is_some_and(|e| e == "snap"));
}

#[test]
fn bad_row_is_named_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), true);
    let db = tmp.path().join("db");
    let out = engram(&["import", &db.display().to_string(), "--entities", &ents, "--claims", &claims]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{claims}:5:14: unknown entity `ghost`")), "{err}");
    assert!(!db.exists(), "the folder was not created");
}

#[test]
fn check_tells_torn_tails_from_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db");
    let dbs = db.display().to_string();
    assert!(engram(&["import", &dbs, "--entities", &ents, "--claims", &claims]).status.success());
    {
        // No preallocated zeros after the record, so the tail below follows it directly.
        let config = engram::Config { wal_preallocate_bytes: 0, ..engram::Config::default() };
        let d = engram::Database::open_with(&db, config, std::sync::Arc::new(engram::OsVfs)).unwrap();
        let mut b = engram::WriteBatch::new("default");
        b.upsert_entity("x", "t", "X");
        d.write(&b).unwrap();
    }
    // A torn tail: half a record after the last one.
    let wal =
        std::fs::read_dir(&db).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "wal")).max().unwrap();
    let mut bytes = std::fs::read(&wal).unwrap();
    bytes.extend_from_slice(&[40, 0, 0, 0, 1, 2, 3]);
    std::fs::write(&wal, &bytes).unwrap();
    std::fs::write(db.join("0000000000000009.snap.tmp"), b"partial").unwrap();
    let out = engram(&["check", &dbs]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.contains("torn tail: 7 bytes") && report.contains("leftover temporary file"), "{report}");
    // Corruption: a flipped byte in the snapshot.
    let snap = std::fs::read_dir(&db).unwrap().flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "snap")).unwrap();
    let mut bytes = std::fs::read(&snap).unwrap();
    let at = bytes.len() - 3;
    bytes[at] ^= 0x20;
    std::fs::write(&snap, &bytes).unwrap();
    for cmd in ["check", "stats"] {
        let out = engram(&[cmd, &dbs]);
        // `check` reports damage as its finding (1); other commands refuse with the corruption code (6).
        assert_eq!(out.status.code(), Some(if cmd == "check" { 1 } else { 6 }), "{cmd}");
        let err = text(&out.stderr);
        assert!(
            err.contains("checksum mismatch") && err.contains(&snap.display().to_string()) && err.contains("byte offset"),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn config_is_stored_in_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db").display().to_string();
    drop(engram::Database::open(&db).unwrap());
    assert!(engram(&["config", &db, "fsync", "batch:50"]).status.success());
    assert!(engram(&["config", &db, "vector_dim", "384"]).status.success());
    assert_eq!(text(&engram(&["config", &db, "fsync"]).stdout), "batch:50\n");
    let all = text(&engram(&["config", &db]).stdout);
    assert!(all.starts_with("fsync batch:50\ncheckpoint_wal_bytes -\n") && all.contains("vector_dim 384\n"), "{all}");
    let out = engram(&["config", &db, "vector_dim", "768"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("already set and cannot change"));
    let out = engram(&["config", &db, "colour", "blue"]);
    assert!(text(&out.stderr).contains("unknown setting `colour`"));
    let out = engram(&["config", &db, "fsync", "sometimes"]);
    assert!(text(&out.stderr).contains("`sometimes` is not"));
    // Stored across a checkpoint too.
    assert!(engram(&["checkpoint", &db]).status.success());
    assert_eq!(engram::Database::open(&db).unwrap().settings().fsync.as_deref(), Some("batch:50"));
}

#[test]
fn export_import_round_trips_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let a = tmp.path().join("a").display().to_string();
    assert!(engram(&["import", &a, "--entities", &ents, "--claims", &claims]).status.success());
    // Give it lifecycle, properties, evidence and a second workspace through the library.
    {
        let db = engram::Database::open(&a).unwrap();
        let mut b = engram::WriteBatch::new("default");
        b.push(engram::Op::SetProperty { entity: "auth".into(), key: "tier".into(), value: engram::Value::Float(1.5) });
        b.add_claim(engram::AddClaim::new("auth", "streams_events_with", "kafka").id("c4").text("back to Kafka"));
        b.push(engram::Op::Deprecate { claim: "c2".into(), superseded_by: Some("c4".into()) });
        b.push(engram::Op::AddEvidence(engram::AddEvidence {
            ext_id: Some("v1".into()),
            claim: Some("c2".into()),
            conversation_id: Some("conv-41".into()),
            reasoning: Some("the architect said so".into()),
            ..Default::default()
        }));
        b.push(engram::Op::DeleteClaim { claim: "c3".into() });
        db.write(&b).unwrap();
        db.create_workspace("team").unwrap();
        let mut t = engram::WriteBatch::new("team");
        t.upsert_entity("x", "t", "X").upsert_entity("y", "t", "Y").add_claim(engram::AddClaim::new("x", "r", "y").id("k").text("x r y"));
        t.upsert_entity("z", "t", "Zed").upsert_entity("w", "t", "Wu");
        t.add_claim(engram::AddClaim::new("z", "r", "y").id("k2")).add_claim(engram::AddClaim::new("w", "r", "z").id("k3"));
        db.write(&t).unwrap();
        // Chained merges (w into z, then z into x), then a claim about the survivor.
        for (from, into) in [("w", "z"), ("z", "x")] {
            let mut m = engram::WriteBatch::new("team");
            m.push(engram::Op::MergeEntities { from: from.into(), into: into.into() });
            db.write(&m).unwrap();
        }
        let mut t = engram::WriteBatch::new("team");
        t.add_claim(engram::AddClaim::new("x", "s", "y").id("k4"));
        db.write(&t).unwrap();
        // What the query language writes: labels as written, typed properties, a deleted one.
        let none = engram::Params::new();
        let q = "CREATE (a:Team:Core {name: 'Platform', size: 4})-[:OWNS {since: 2024, share: 0.5}]->(:Service), (:Gone)";
        db.query("default", q, &none).unwrap();
        db.query("default", "MATCH (n {id: 'auth'}) SET n:Critical MATCH (g:Gone) DELETE g", &none).unwrap();
        db.query("default", "MATCH ({id: 'auth'})-[r]->() SET r.note = 'checked'", &none).unwrap();
    }
    let first = tmp.path().join("first.jsonl");
    assert!(engram(&["export", &a, "--out", &first.display().to_string()]).status.success());
    let b = tmp.path().join("b").display().to_string();
    let out = engram(&["import", &b, "--jsonl", &first.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let second = text(&engram(&["export", &b]).stdout);
    assert_eq!(second, std::fs::read_to_string(&first).unwrap(), "export → import → export is the identity");
    assert!(second.contains("\"superseded_by\":\"c4\"") && second.contains("\"tier\":1.5") && second.contains("\"kind\":\"evidence\""));
    assert!(second.contains("\"reasoning\":\"the architect said so\""));
    assert!(second.contains("\"labels\":[\"Team\",\"Core\"]") && second.contains("\"bare\":true"), "{second}");
    assert!(second.contains("\"labels\":[\"service\",\"Critical\"]") && second.contains("\"note\":\"checked\""), "{second}");
    assert!(second.contains("{\"kind\":\"merge\",\"workspace\":\"team\",\"from\":\"w\",\"into\":\"z\"}"));
    // The imported merges are real ones: undoing them puts the claims back where they were.
    {
        let db = engram::Database::open(&b).unwrap();
        let claim_ends = |db: &engram::Database, c: &str| {
            let snap = db.snapshot();
            let ws = snap.workspace("team").unwrap();
            let claim = ws.claim(ws.claim_id(c).unwrap()).unwrap();
            let ext = |e| ws.entity(e).unwrap().ext_id.to_string();
            (ext(claim.subject), ext(claim.object))
        };
        assert_eq!(claim_ends(&db, "k3"), ("x".to_owned(), "x".to_owned()));
        for e in ["z", "w"] {
            let mut u = engram::WriteBatch::new("team");
            u.push(engram::Op::UnmergeEntity { entity: e.into() });
            db.write(&u).unwrap();
        }
        assert_eq!(claim_ends(&db, "k2"), ("z".to_owned(), "y".to_owned()));
        assert_eq!(claim_ends(&db, "k3"), ("w".to_owned(), "z".to_owned()));
        assert_eq!(claim_ends(&db, "k4"), ("x".to_owned(), "y".to_owned()));
    }
    // A bad line is named and leaves the folder as it was.
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"kind\":\"workspace\",\"name\":\"w\"}\n{\"kind\":\"workspace\",\"name\":\"v\",\"colour\":1}\n").unwrap();
    let c = tmp.path().join("c");
    let out = engram(&["import", &c.display().to_string(), "--jsonl", &bad.display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("bad.jsonl:2:"), "{}", text(&out.stderr));
    assert!(!c.exists());
}

#[test]
fn vectors_are_imported_and_verified_on_every_open() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let vecs = tmp.path().join("vectors.f32");
    let values: Vec<f32> = (0..4 * 3).map(|i| i as f32 / 10.0).collect();
    std::fs::write(&vecs, values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let db = tmp.path().join("db");
    let dbs = db.display().to_string();
    let out = engram(&["import", &dbs, "--entities", &ents, "--claims", &claims, "--vectors", &vecs.display().to_string(), "--dim", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    {
        let d = engram::Database::open(&db).unwrap();
        let kafka = d.snapshot().workspace("default").unwrap().entity_id("kafka").unwrap();
        assert_eq!(d.entity_vector(kafka).unwrap(), vec![0.3, 0.4, 0.5]);
        assert_eq!(d.settings().vector_dim, Some(3));
    }
    // The wrong size is named before anything is written.
    let other = tmp.path().join("other");
    let out = engram(&[
        "import",
        &other.display().to_string(),
        "--entities",
        &ents,
        "--claims",
        &claims,
        "--vectors",
        &vecs.display().to_string(),
        "--dim",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("expected 4 rows × 4 dimensions"), "{}", text(&out.stderr));
    assert!(!other.exists());
    // A flipped bit in the vector file fails every open, `stats` included.
    let path = db.join(engram::VECTOR_FILE);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[64 + 5] ^= 0x01;
    std::fs::write(&path, bytes).unwrap();
    for cmd in ["stats", "check"] {
        let out = engram(&[cmd, &dbs]);
        assert_eq!(out.status.code(), Some(if cmd == "check" { 1 } else { 6 }), "{cmd}");
        let err = text(&out.stderr);
        assert!(err.contains("checksum mismatch") && err.contains("vectors.f32v") && err.contains("byte offset 64"), "{cmd}: {err}");
    }
}

fn json(b: &[u8]) -> serde_json::Value {
    serde_json::from_slice(b).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(b)))
}

#[test]
fn neighbors_resolves_ids_names_and_aliases_and_prints_json() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db").display().to_string();
    assert!(engram(&["import", &db, "--entities", &ents, "--claims", &claims]).status.success());
    let ids = |out: &Output| -> Vec<(String, u64)> {
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v = json(&out.stdout);
        let mut got: Vec<(String, u64)> =
            v.as_array().unwrap().iter().map(|o| (o["id"].as_str().unwrap().to_owned(), o["depth"].as_u64().unwrap())).collect();
        got.sort();
        got
    };
    // The deprecated c1 (to kafka) is not followed; the start is not listed.
    let want = vec![("kinesis".to_owned(), 1), ("svc".to_owned(), 1)];
    for start in ["auth", "AuthService", "auth svc", "AUTH-SVC"] {
        assert_eq!(ids(&engram(&["neighbors", &db, start, "--json"])), want, "{start}");
    }
    let out = engram(&["neighbors", &db, "auth", "--json"]);
    let v = json(&out.stdout);
    let kinesis = v.as_array().unwrap().iter().find(|o| o["id"] == "kinesis").unwrap();
    assert_eq!((kinesis["name"].as_str(), kinesis["type"].as_str()), (Some("Kinesis"), Some("technology")));
    assert_eq!(kinesis["claims"][0]["id"], "c2");
    assert!(ids(&engram(&["neighbors", &db, "kinesis", "--direction", "out", "--json"])).is_empty());
    assert_eq!(ids(&engram(&["neighbors", &db, "kinesis", "--direction", "in", "--json"])), vec![("auth".to_owned(), 1)]);
    assert_eq!(ids(&engram(&["neighbors", &db, "Kinesis", "--hops", "2", "--json"])), vec![("auth".to_owned(), 1), ("svc".to_owned(), 2)]);
    // Plain text: depth, id, type, name.
    let out = engram(&["neighbors", &db, "kinesis"]);
    assert_eq!(text(&out.stdout), "1\tauth\tservice\tAuthService\n");
    let out = engram(&["neighbors", &db, "nobody", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no entity `nobody`"), "{}", text(&out.stderr));
    let out = engram(&["neighbors", &db, "auth", "--direction", "sideways"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn recall_prints_only_visible_facts_within_the_budget() {
    use engram::{AddClaim, AddEvidence, ClaimState, Op, WriteBatch};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    {
        let db = engram::Database::open(&dir).unwrap();
        let mut b = WriteBatch::new("default");
        b.upsert_entity("team", "team", "Platform team")
            .upsert_entity("kafka", "tool", "Kafka")
            .upsert_entity("kinesis", "tool", "Kinesis");
        b.add_claim(
            AddClaim::new("team", "streams_events_with", "kafka")
                .id("old")
                .text("We use Kafka for event streaming")
                .state(ClaimState::Accepted),
        );
        b.add_claim(
            AddClaim::new("team", "streams_events_with", "kinesis")
                .id("new")
                .text("We switched to Kinesis for event streaming")
                .state(ClaimState::Accepted),
        );
        b.push(Op::AddEvidence(AddEvidence { ext_id: Some("msg-7".into()), claim: Some("new".into()), ..AddEvidence::default() }));
        b.push(Op::Deprecate { claim: "old".into(), superseded_by: Some("new".into()) });
        b.set_claim_vector("new", vec![1.0, 0.0, 0.0]).set_claim_vector("old", vec![0.9, 0.1, 0.0]);
        db.write(&b).unwrap();
    }
    let db = dir.display().to_string();
    let out = engram(&["recall", &db, "event streaming", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = json(&out.stdout);
    let facts = v["facts"].as_array().unwrap();
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0]["claim_id"], "new");
    assert_eq!(facts[0]["evidence"][0], "msg-7");
    assert!(!text(&out.stdout).to_lowercase().contains("kafka"), "{}", text(&out.stdout));
    assert!(v["tokens_used"].as_u64().unwrap() <= 800);
    assert_eq!(v["cut"], 0);
    assert_eq!(v["paths_run"], serde_json::json!(["lexical", "graph", "recency"]));
    assert!(text(&out.stderr).contains("semantic path not run"), "{}", text(&out.stderr));
    // The line cites the evidence's source, not an internal row.
    assert!(facts[0]["line"].as_str().unwrap().ends_with(", source msg-7)"), "{}", facts[0]["line"]);
    // A query vector of the wrong dimension is the caller's error.
    let out = engram(&["recall", &db, "event streaming", "--vector", "[1, 0]", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--vector has 2 components; the stored vectors have 3"), "{}", text(&out.stderr));
    let out = engram(&["recall", &db, "what do we stream with", "--vector", "[0.9, 0.1, 0.0]", "--json"]);
    let v = json(&out.stdout);
    assert_eq!(v["paths_run"], serde_json::json!(["semantic", "lexical", "graph", "recency"]));
    assert_eq!(v["facts"][0]["ranks"]["semantic"], 1);
    // History shows the superseded claim; a zero budget cuts everything.
    let out = engram(&["recall", &db, "event streaming", "--history", "--json"]);
    assert!(text(&out.stdout).contains("Kafka"));
    let out = engram(&["recall", &db, "event streaming", "--budget", "0", "--json"]);
    let v = json(&out.stdout);
    assert_eq!((v["facts"].as_array().unwrap().len(), v["cut"].as_u64().unwrap()), (0, 1));
    // The plain form prints the context block.
    let out = engram(&["recall", &db, "event streaming", "--seed", "Platform team"]);
    assert!(text(&out.stdout).starts_with("[new] Platform team STREAMS_EVENTS_WITH Kinesis"), "{}", text(&out.stdout));
    let out = engram(&["recall", &db, "x", "--as-of", "yesterday"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--as-of `yesterday`"));

    // `engram context`: an entity's current facts, nearest first (the superseded one left out);
    // with --text, its neighbourhood ranked by the text (by keywords: no embedder here).
    let claims = |args: &[&str]| {
        let out = engram(&[&["context", &db], args, &["--json"]].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v = json(&out.stdout);
        let ids: Vec<String> = v["facts"].as_array().unwrap().iter().map(|f| f["claim_id"].as_str().unwrap().to_owned()).collect();
        (ids, v["paths_run"].clone())
    };
    assert_eq!(claims(&["Platform team"]), (vec!["new".to_owned()], serde_json::json!(["graph"])));
    assert_eq!(claims(&["kinesis", "--text", "event streaming"]), (vec!["new".to_owned()], serde_json::json!(["graph", "lexical"])));
    assert_eq!(claims(&["kinesis", "--type", "team", "--predicate", "streams_events_with", "--depth", "1"]).0, ["new"]);
    assert!(claims(&["kinesis", "--type", "tool"]).0.is_empty());
    assert!(claims(&["kinesis", "--as-of", "2000-01-01T00:00:00Z"]).0.is_empty());
    let out = engram(&["context", &db, "kinesis"]);
    assert!(text(&out.stdout).starts_with("[new] Platform team STREAMS_EVENTS_WITH Kinesis"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("1 facts"), "{}", text(&out.stderr));
    let out = engram(&["context", &db, "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no entity `nobody`"), "{}", text(&out.stderr));
    let out = engram(&["context", &db, "kinesis", "--depth", "99"]);
    assert!(out.status.success(), "the command line is the database's owner: no scope limits, {}", text(&out.stderr));
}

#[test]
fn ingest_takes_json_and_jsonl_and_names_bad_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db").display().to_string();
    let one = tmp.path().join("doc.json");
    std::fs::write(
        &one,
        r#"{"source": {"conversation_id": "c1", "message_id": "m1"},
            "entities": [{"name": "AuthService", "type": "service"}, {"name": "Kafka", "type": "technology"}],
            "claims": [{"subject": "AuthService", "predicate": "uses", "object": "Kafka", "confidence": 0.95}]}"#,
    )
    .unwrap();
    let out = engram(&["ingest", &db, one.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = json(&out.stdout);
    assert_eq!(report["claims"][0]["outcome"], "created");
    assert_eq!(report["entities"][0]["how"], "created");
    // Again: a duplicate, nothing written.
    let out = engram(&["ingest", &db, one.to_str().unwrap()]);
    assert_eq!(json(&out.stdout)["duplicate"], true);
    let many = tmp.path().join("docs.jsonl");
    std::fs::write(
        &many,
        concat!(
            r#"{"source": {"conversation_id": "c2", "message_id": "m1"}, "claims": [{"subject": "auth-service", "predicate": "uses", "object": "kafka", "confidence": 0.5}]}"#,
            "\n\n",
            r#"{"claims": [{"subject": "AuthService", "predicate": "uses", "object": "Kafka", "confidence": 2}]}"#,
            "\n",
        ),
    )
    .unwrap();
    // A bad document anywhere in the file: every bad line named, nothing written.
    let out = engram(&["ingest", &db, many.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("docs.jsonl: line 3: claims[0].confidence: 2 is outside 0..=1"), "{err}");
    assert!(err.contains("1 document(s) invalid; nothing was written"), "{err}");
    assert!(out.stdout.is_empty());
    // Fixed, plus a document the engine rejects when it plans it (a verdict about no claim):
    // that one is reported, the others commit.
    std::fs::write(
        &many,
        concat!(
            r#"{"source": {"conversation_id": "c2", "message_id": "m1"}, "claims": [{"subject": "auth-service", "predicate": "uses", "object": "kafka", "confidence": 0.5}]}"#,
            "\n",
            r#"{"source": {"conversation_id": "c3", "message_id": "m1"}, "claims": [{"subject": "AuthService", "predicate": "uses", "object": "Kafka", "confidence": 0.5, "relation": {"refines": "nope"}}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = engram(&["ingest", &db, many.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("docs.jsonl: line 2: "), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("1 document(s) rejected; the other 1 were ingested"), "{}", text(&out.stderr));
    let report = json(text(&out.stdout).lines().next().unwrap().as_bytes());
    assert_eq!(report["claims"][0]["outcome"], "corroborated");
    let out = engram(&["stats", &db]);
    assert!(text(&out.stdout).starts_with("entities 2\nclaims 1\n"), "{}", text(&out.stdout));
    // The report and the attribution trace.
    let out = engram(&["report", &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json(&out.stdout)["claims_per_predicate"]["uses"], 1);
    let out = engram(&["report", &db, "--trace", "c1/m1/0"]);
    let trace = json(&out.stdout);
    assert_eq!(trace["evidence"].as_array().unwrap().len(), 2);
    assert_eq!(trace["evidence"][1]["conversation_id"], "c2");
    assert_eq!(engram(&["report", &db, "--trace", "nope"]).status.code(), Some(2));
}

const TINY_OBO: &str = "format-version: 1.2\ndata-version: tiny/1\nontology: tiny\n\n\
[Term]\nid: T:1\nname: cell\n\n\
[Term]\nid: T:2\nname: neuron\nis_a: T:1\nsynonym: \"nerve cell\" EXACT []\nsynonym: \"neurone\" RELATED []\n\n\
[Term]\nid: T:3\nname: motor neuron\nis_a: T:2\nrelationship: part_of T:8\n\n\
[Term]\nid: T:8\nname: spinal cord\n\n\
[Term]\nid: T:9\nname: old neuron\nis_obsolete: true\nsynonym: \"nerve-cell\" EXACT []\n";

#[test]
fn ontology_import_hierarchy_and_resolve_contracts() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.obo");
    std::fs::write(&file, TINY_OBO).unwrap();
    let db = tmp.path().join("db").display().to_string();
    let out = engram(&["import-ontology", &db, &file.display().to_string(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = json(&out.stdout);
    assert_eq!((report["terms"].as_u64(), report["is_a"].as_u64(), report["obsolete"].as_u64()), (Some(5), Some(2), Some(1)));

    // TERM as a label; relations default to is_a; the term itself excluded; shortest distances.
    let out = engram(&["ancestors", &db, "motor neuron", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        json(&out.stdout),
        serde_json::json!([{"id": "T:2", "name": "neuron", "distance": 1}, {"id": "T:1", "name": "cell", "distance": 2}])
    );
    let out = engram(&["ancestors", &db, "T:3", "--relations", "is_a,part_of", "--json"]);
    let ids: Vec<String> = json(&out.stdout).as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids, ["T:2", "T:8", "T:1"]);
    // TERM as a synonym (the live term wins over the obsolete one with the same key).
    let out = engram(&["descendants", &db, "Nerve Cell", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json(&out.stdout), serde_json::json!([{"id": "T:3", "name": "motor neuron", "distance": 1}]));
    let out = engram(&["descendants", &db, "no such term"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no concept `no such term`"), "{}", text(&out.stderr));

    // resolve: one JSON array, best first, case-insensitive, obsolete below live.
    let out = engram(&["resolve", &db, "NERVE CELL", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let found = json(&out.stdout);
    let first = &found[0];
    assert_eq!(
        (first["id"].as_str(), first["label"].as_str(), first["matched_by"].as_str()),
        (Some("T:2"), Some("neuron"), Some("synonym:exact"))
    );
    assert!(first["score"].as_f64().unwrap() > 0.9);
    let ids: Vec<String> = found.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect();
    let (live, obsolete) = (ids.iter().position(|i| i == "T:2"), ids.iter().position(|i| i == "T:9"));
    assert!(live < obsolete && obsolete.is_some(), "{ids:?}");

    // Mappings are consulted first.
    let out = engram(&["mapping", &db, "set", "motor system", "--to", "T:3", "--to", "T:8"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = engram(&["resolve", &db, "Motor System", "--json"]);
    let found = json(&out.stdout);
    assert_eq!(found[0]["matched_by"], "mapping");
    assert_eq!(found[1]["matched_by"], "mapping");
    let out = engram(&["mapping", &db, "list"]);
    assert_eq!(json(&out.stdout)[0]["targets"], serde_json::json!(["T:3", "T:8"]));
    let out = engram(&["mapping", &db, "set", "motor system", "--to", "T:404"]);
    assert!(!out.status.success());

    // A bad file names the position and creates nothing.
    let bad = tmp.path().join("bad.obo");
    std::fs::write(&bad, "format-version: 1.2\n\n[Term]\nid: T:1\nis_a T:2\n").unwrap();
    let fresh = tmp.path().join("fresh");
    let out = engram(&["import-ontology", &fresh.display().to_string(), &bad.display().to_string()]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("OBO syntax error"), "{}", text(&out.stderr));
    assert!(!fresh.exists(), "a failed parse creates no folder");
}

#[test]
fn embed_prints_one_json_array_per_text_and_names_missing_files() {
    let out = engram(&["embed", "--embedder", "hash", "AuthService streams events", "Kinesis"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|v| v.as_array().unwrap().len() == 384));
    assert!(text(&out.stderr).contains("embedder hash"), "the log line goes to stderr");
    let out = engram(&["embed", "--embedder", "hash", "--dim", "64", "x"]);
    assert_eq!(json(&out.stdout).as_array().unwrap().len(), 64);
    let empty = tempfile::tempdir().unwrap();
    let out = engram(&["embed", "--embedder", "minilm", "--model-dir", &empty.path().display().to_string(), "x"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("scripts/fetch-model.sh"), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "no silent fallback");
}

#[test]
fn ingest_and_recall_embed_with_the_recorded_embedder() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db").display().to_string();
    let doc = tmp.path().join("doc.json");
    std::fs::write(
        &doc,
        r#"{"source": {"conversation_id": "c1", "message_id": "m1"},
        "entities": [{"name": "AuthService", "type": "service"}, {"name": "Kinesis", "type": "technology"}],
        "claims": [{"subject": "AuthService", "predicate": "streams_events_with", "object": "Kinesis", "confidence": 0.95,
                    "text": "AuthService streams events with Kinesis"},
                   {"subject": "Kinesis", "predicate": "owned_by", "object": "AuthService", "confidence": 0.9,
                    "text": "the platform team owns the billing ledger"},
                   {"subject": "AuthService", "predicate": "keeps", "object": "Kinesis", "confidence": 0.9,
                    "text": "login streams are kept for a year"}]}"#,
    )
    .unwrap();
    let out = engram(&["ingest", &db, &doc.display().to_string(), "--embedder", "hash"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = engram(&["config", &db, "embedder"]);
    assert_eq!(text(&out.stdout).trim(), "hash/1/384");
    // recall needs no flag: the database says which embedder made its vectors.
    let out = engram(&["recall", &db, "which stream does auth use", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r = json(&out.stdout);
    assert!(r["paths_run"].as_array().unwrap().iter().any(|p| p == "semantic"), "{r}");
    // What is embedded is the question and what it asks, without the name of AuthService, whose
    // facts the graph path reaches, averaged: the same facts and scores as given that vector, not
    // the whole question's.
    let scores = |args: &[&str]| {
        let out = engram(&[&["recall", &db, "which stream does AuthService use", "--json"], args].concat());
        assert!(out.status.success(), "{}", text(&out.stderr));
        json(&out.stdout)["facts"].as_array().unwrap().iter().map(|f| (f["claim_id"].clone(), f["score"].clone())).collect::<Vec<_>>()
    };
    let vector = |t: &str| serde_json::from_slice::<Vec<f32>>(&engram(&["embed", "--embedder", "hash", t]).stdout).unwrap();
    let whole = vector("which stream does AuthService use");
    let mean = engram::search::semantic::question_vector(Some(whole.clone()), Some(vector("which stream does use"))).unwrap();
    let got = scores(&[]);
    assert_eq!(got.len(), 3);
    assert_eq!(got, scores(&["--vector", &serde_json::to_string(&mean).unwrap()]));
    assert_ne!(got, scores(&["--vector", &serde_json::to_string(&whole).unwrap()]));
    // Naming the same embedder works too; hashing needs no model folder.
    let out = engram(&["recall", &db, "x", "--embedder", "hash", "--model-dir", "/nonexistent"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn workspace_settings_and_retention_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db").display().to_string();
    drop(engram::Database::open(&db).unwrap());
    let out = engram(&["retention", &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "0", "unset retention keeps everything");
    assert!(engram(&["config", &db, "retention_days", "30", "--workspace", "default"]).status.success());
    assert!(engram(&["config", &db, "accept_confidence", "0.8", "--workspace", "default"]).status.success());
    let out = engram(&["config", &db, "--workspace", "default"]);
    assert_eq!(
        text(&out.stdout),
        "accept_confidence 0.8\nresolve_similarity -\nretention_days 30\nsensitive_properties -\nproperty_tags -\n"
    );
    let out = engram(&["config", &db, "retention_days", "none", "--workspace", "default"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("retention_days"), "{}", text(&out.stderr));
    let out = engram(&["retention", &db]);
    assert_eq!(text(&out.stdout).trim(), "0");
}

#[test]
fn merge_and_unmerge_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db").display().to_string();
    assert!(engram(&["import", &db, "--entities", &ents, "--claims", &claims]).status.success());
    // Kinesis turns out to be a duplicate of Kafka: its one claim (c2) moves.
    let out = engram(&["merge", &db, "Kinesis", "kafka"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1 claims moved\n");
    let sorted = |out: Output| -> Vec<String> {
        let mut v: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(engram(&["neighbors", &db, "auth"])), ["1\tkafka\ttechnology\tKafka", "1\tsvc\tconcept\tService"]);
    let out = engram(&["neighbors", &db, "kinesis"]);
    assert_eq!(text(&out.stdout), "1\tauth\tservice\tAuthService\n", "the old name now finds the survivor");
    // The retired id finds the survivor, so merging it again names the mistake.
    let out = engram(&["merge", &db, "kinesis", "kafka"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot be merged into itself"), "{}", text(&out.stderr));
    let out = engram(&["unmerge", &db, "kinesis"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sorted(engram(&["neighbors", &db, "auth"])), ["1\tkinesis\ttechnology\tKinesis", "1\tsvc\tconcept\tService"]);
    let out = engram(&["unmerge", &db, "kinesis"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not merged"), "{}", text(&out.stderr));
    let out = engram(&["check", &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Runs `engram args` with stdout a pipe whose reader is already gone.
fn engram_into_closed_pipe(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_engram")).args(args).stdout(writer).output().unwrap()
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db").display().to_string();
    assert!(engram(&["import", &db, "--entities", &ents, "--claims", &claims]).status.success());
    let commands: &[&[&str]] = &[
        &["stats", &db],
        &["check", &db],
        &["config", &db],
        &["export", &db],
        &["checkpoint", &db],
        &["neighbors", &db, "auth"],
        &["merge", &db, "kinesis", "kafka"],
        &["embed", "--embedder", "hash", "--dim", "8", "hello"],
        &["--help"],
    ];
    for args in commands {
        let out = engram_into_closed_pipe(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("broken pipe"), "{args:?}: {err}");
    }
    // Commands whose only output is stdout say nothing at all.
    for args in [&["stats", &db][..], &["check", &db], &["export", &db]] {
        assert!(engram_into_closed_pipe(args).stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn exit_codes_follow_the_error_classes() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db").display().to_string();
    assert!(engram(&["import", &db, "--entities", &ents, "--claims", &claims]).status.success());
    // Caller: usage, and bad input.
    assert_eq!(engram(&["stats"]).status.code(), Some(2));
    assert_eq!(engram(&["neighbors", &db, "nobody"]).status.code(), Some(2));
    assert_eq!(engram(&["recall", &db, "kafka", "--as-of", "yesterday-ish", "--embedder", "hash"]).status.code(), Some(2));
    // Conflict: a setting that cannot change once set.
    assert!(engram(&["config", &db, "vector_dim", "8"]).status.success());
    let out = engram(&["config", &db, "vector_dim", "16"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    // Operator: not a database (nothing is written into the folder), or a missing one.
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join("notes.txt"), "mine").unwrap();
    for cmd in ["stats", "check", "export", "checkpoint"] {
        let out = engram(&[cmd, &plain.display().to_string()]);
        assert_eq!(out.status.code(), Some(5), "{cmd}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("is not an engram database"), "{cmd}: {}", text(&out.stderr));
    }
    assert_eq!(std::fs::read_dir(&plain).unwrap().count(), 1, "a read command wrote into a folder that is not a database");
    let out = engram(&["stats", &tmp.path().join("missing").display().to_string()]);
    assert_eq!(out.status.code(), Some(5));
    assert!(text(&out.stderr).contains("does not exist: `engram init"), "{}", text(&out.stderr));
    assert!(!tmp.path().join("missing").exists());
    // The table is in --help.
    let help = text(&engram(&["--help"]).stdout);
    assert!(help.contains("Exit codes: 0 ok; 1 a finding") && help.contains("70 bug"), "{help}");
}

#[test]
fn query_prints_a_table_json_and_typed_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db").display().to_string();
    assert!(engram(&["import", &db, "--entities", &ents, "--claims", &claims]).status.success());
    let q = "MATCH (a {id: $s})-[r:STREAMS_EVENTS_WITH]->(b) RETURN b.name AS name, r.confidence AS c, 1 AS one ORDER BY name";
    let out = engram(&["query", &db, q, "--param", "s=\"auth\"", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["columns"], serde_json::json!(["name", "c", "one"]));
    // Confidences are floats (always with a point), integers stay integers.
    assert!(text(&out.stdout).contains("\"rows\":[[\"Kinesis\",0.95,1]]"), "{}", text(&out.stdout));
    let out = engram(&["query", &db, "MATCH ()-[r:SUBCLASS_OF]->() RETURN r.confidence, 2 / 1", "--json"]);
    assert!(text(&out.stdout).contains("\"rows\":[[1.0,2]]"), "{}", text(&out.stdout));
    assert_eq!(v["stats"]["nodes_created"], 0);
    // Deprecated claims are not visible now; ALL VERSIONS sees them.
    let out = engram(&["query", &db, "ALL VERSIONS MATCH ()-[r]->() RETURN count(r) AS n", "--json"]);
    assert!(text(&out.stdout).contains("[[3]]"), "{}", text(&out.stdout));

    let out = engram(&["query", &db, "MATCH (n:technology) RETURN n.name ORDER BY n.name"]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "+-----------+\n| n.name    |\n+-----------+\n| \"Kafka\"   |\n| \"Kinesis\" |\n+-----------+\n2 rows\n");

    let out = engram(&["query", &db, "MATCH (a)-[:T]->(b WHERE a.x = 1 RETURN a", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["type"], "SyntaxError");
    assert_eq!(v["error"]["detail"], "UnexpectedSyntax");
    assert_eq!(v["error"]["phase"], "compile");
    assert_eq!((v["error"]["line"].as_u64(), v["error"]["column"].as_u64()), (Some(1), Some(20)));
    let out = engram(&["query", &db, "MATCH (n)\nRETURN m"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("variable `m` not defined at 2:8"), "{}", text(&out.stderr));
    let out = engram(&["query", &db, "RETURN 1", "--param", "s=nope"]);
    assert_eq!(out.status.code(), Some(2));
    // A temporal parameter is the export's tagged object; a bad one is refused by name.
    let out = engram(&["query", &db, "RETURN $d + duration('P1D') AS d", "--param", r#"d={"$date": "2024-02-28"}"#, "--json"]);
    assert!(text(&out.stdout).contains(r#""rows":[["2024-02-29"]]"#), "{}{}", text(&out.stdout), text(&out.stderr));
    let out = engram(&["query", &db, "RETURN $d", "--param", r#"d={"$date": "2024-02-30"}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(r#"--param d: {"$date": "2024-02-30"}"#), "{}", text(&out.stderr));

    // A write query commits; its stats say what it wrote, and the next process reads it back.
    let out = engram(&["query", &db, "CREATE (:Team {name: 'Platform'})-[:OWNS]->(:Service:Critical) ", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["stats"]["nodes_created"].as_u64(), v["stats"]["relationships_created"].as_u64()), (Some(2), Some(1)));
    assert_eq!(v["rows"], serde_json::json!([]));
    let out = engram(&["query", &db, "MATCH (t:Team)-[r:OWNS]->(s) RETURN t.name, type(r), labels(s)", "--json"]);
    assert!(text(&out.stdout).contains("\"rows\":[[\"Platform\",\"OWNS\",[\"Service\",\"Critical\"]]]"), "{}", text(&out.stdout));
}

#[test]
fn the_shell_reads_statements_until_a_semicolon() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db").display().to_string();
    assert!(engram(&["import", &db, "--entities", &ents, "--claims", &claims]).status.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_engram"))
        .args(["shell", &db])
        .env("HOME", tmp.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"MATCH (n)\nRETURN count(n) AS n;\n:explain MATCH (n:technology) RETURN n;\nRETURN nope;\n:schema\n:quit\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("| 4 |"), "{stdout}");
    assert!(stdout.contains("NodeByLabelScan (n:technology)"), "{stdout}");
    assert!(stdout.contains("error: variable `nope` not defined"), "{stdout}");
    assert!(stdout.contains("\":`technology`\"") && stdout.contains("| relType"), "{stdout}");
}

/// A `.json` file is one document or an array of them: a second document or trailing garbage is
/// an error naming its byte offset, and nothing is written (the folder is not even created);
/// empty ids are refused by field; a byte order mark is skipped.
#[test]
fn ingest_refuses_what_it_would_drop_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let dbs = db.display().to_string();
    let doc = |c: &str, m: &str| {
        format!(
            r#"{{"source": {{"conversation_id": "{c}", "message_id": "{m}"}}, "entities": [{{"name": "A", "type": "t"}}, {{"name": "B", "type": "t"}}], "claims": [{{"subject": "A", "predicate": "p{m}", "object": "B", "confidence": 0.9}}]}}"#
        )
    };
    let file = tmp.path().join("in.json");
    let files = file.display().to_string();
    for (content, want) in [
        (format!("{}\n{}", doc("c", "1"), doc("c", "2")), format!("byte {}: more after the first JSON value", doc("c", "1").len() + 1)),
        (format!("{} }}", doc("c", "1")), format!("byte {}: more after", doc("c", "1").len() + 1)),
        (doc("", ""), "byte 0: source.conversation_id: must not be empty".to_owned()),
        (
            format!("[{}, {}]", doc("c", "1"), doc("c", "")),
            format!("byte {} (document 1): source.message_id: must not be empty", doc("c", "1").len() + 3),
        ),
    ] {
        std::fs::write(&file, &content).unwrap();
        let out = engram(&["ingest", &dbs, &files]);
        assert_eq!(out.status.code(), Some(2), "{content}");
        assert!(text(&out.stderr).contains(&format!("{files}: {want}")), "{}", text(&out.stderr));
        assert!(!db.exists(), "nothing may be written for {content}");
    }
    // An array ingests every document; a BOM is skipped.
    std::fs::write(&file, format!("\u{feff}[{}, {}]", doc("c", "1"), doc("c", "2"))).unwrap();
    let out = engram(&["ingest", &dbs, &files]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 2);
    assert!(text(&engram(&["stats", &dbs]).stdout).starts_with("entities 2\nclaims 2\n"));
    // The report says the state as everything else does.
    assert_eq!(json(text(&out.stdout).lines().next().unwrap().as_bytes())["claims"][0]["state"], "ACCEPTED");
}

/// CSV import is all-or-nothing for values too: a header that is not the format's, a confidence
/// out of range or a NaN vector is named by file, line and column (or byte), the folder is not
/// created, and the corrected input then imports.
#[test]
fn csv_value_errors_name_file_line_column_and_touch_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let db = tmp.path().join("db");
    let dbs = db.display().to_string();
    let vectors = tmp.path().join("v.bin");
    let good: Vec<u8> = (0..8).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let mut nan = good.clone();
    nan[20..24].copy_from_slice(&f32::NAN.to_le_bytes());
    let original = std::fs::read_to_string(&claims).unwrap();
    let cases: [(String, &[u8], String); 3] = [
        (original.replace("id,subject,", "id,subj,"), &good, format!("{claims}:1:4: header: expected `subject`")),
        (original.replace("0.95,ACCEPTED", "1.5,ACCEPTED"), &good, format!("{claims}:3:37: confidence: 1.5 is outside 0..=1")),
        (original.clone(), &nan, format!("{}: byte 20: row 2, component 1: a vector component is NaN", vectors.display())),
    ];
    for (claim_text, vector_bytes, want) in cases {
        std::fs::write(&claims, &claim_text).unwrap();
        std::fs::write(&vectors, vector_bytes).unwrap();
        let out = engram(&["import", &dbs, "--entities", &ents, "--claims", &claims, "--vectors", vectors.to_str().unwrap(), "--dim", "2"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains(&want), "{}", text(&out.stderr));
        assert!(!db.exists(), "the folder was not created");
    }
    std::fs::write(&claims, &original).unwrap();
    std::fs::write(&vectors, &good).unwrap();
    let out = engram(&["import", &dbs, "--entities", &ents, "--claims", &claims, "--vectors", vectors.to_str().unwrap(), "--dim", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// `init` makes an empty database (and refuses a folder that holds one or holds other files);
/// `delete` / `restore` are the soft delete and its undo, `forget` the erasure; confidences print
/// as the shortest decimal of the stored f32 everywhere.
#[test]
fn init_delete_restore_forget_and_confidences_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db").display().to_string();
    let out = engram(&["init", &db]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&engram(&["stats", &db]).stdout).starts_with("entities 0\nclaims 0\n"));
    assert_eq!(engram(&["init", &db]).status.code(), Some(3));
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    assert_eq!(engram(&["init", other.to_str().unwrap()]).status.code(), Some(5));
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1, "nothing written into a folder that is not empty");

    let doc = tmp.path().join("doc.json");
    std::fs::write(
        &doc,
        r#"{"source": {"conversation_id": "c1", "message_id": "m1"}, "entities": [{"name": "A", "type": "t"}, {"name": "B", "type": "t"}],
            "claims": [{"subject": "A", "predicate": "uses", "object": "B", "confidence": 0.985}]}"#,
    )
    .unwrap();
    assert!(engram(&["ingest", &db, doc.to_str().unwrap()]).status.success());
    let neighbors = json(&engram(&["neighbors", &db, "t:a", "--json"]).stdout);
    assert_eq!(neighbors[0]["claims"][0]["confidence"].to_string(), "0.985");
    let trace = engram(&["report", &db, "--trace", "c1/m1/0"]);
    assert!(text(&trace.stdout).contains(r#""confidence":0.985,"#), "{}", text(&trace.stdout));
    assert!(text(&trace.stdout).contains(r#""raw_confidence":0.985,"#), "{}", text(&trace.stdout));

    let claims = |db: &str| {
        let out = engram(&["query", db, "MATCH ()-[r]->() RETURN count(r)", "--json"]);
        format!("claims {}", json(&out.stdout)["rows"][0][0])
    };
    let out = engram(&["delete", &db, "--claim", "c1/m1/0"]);
    assert_eq!(text(&out.stdout), "deleted claim c1/m1/0\n", "{}", text(&out.stderr));
    assert_eq!(claims(&db), "claims 0");
    assert!(engram(&["restore", &db, "--claim", "c1/m1/0"]).status.success());
    assert_eq!(claims(&db), "claims 1");
    assert!(engram(&["delete", &db, "--entity", "t:b"]).status.success());
    assert_eq!(claims(&db), "claims 0");
    assert!(engram(&["restore", &db, "--entity", "t:b"]).status.success());
    assert_eq!(claims(&db), "claims 1");
    assert_eq!(engram(&["delete", &db, "--claim", "nope"]).status.code(), Some(2));
    assert_eq!(engram(&["delete", &db]).status.code(), Some(2), "a target is required");
    let out = engram(&["forget", &db, "--conversation", "c1"]);
    assert_eq!(text(&out.stdout), "forgot conversation c1\n", "{}", text(&out.stderr));
    let export = text(&engram(&["export", &db]).stdout);
    assert!(!export.contains("c1/m1"), "the erased claim is in no export: {export}");
}

/// Read commands open the folder read-only: beside a writer holding it, they work, and they
/// change nothing in it (not a byte, not a file; what lets them run on read-only media).
#[test]
fn reads_work_beside_a_writer_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let dir = tmp.path().join("db");
    let db = dir.display().to_string();
    assert!(engram(&["import", &db, "--entities", &ents, "--claims", &claims]).status.success());
    let writer = engram::Database::open(&dir).unwrap();
    let mut b = engram::WriteBatch::new("default");
    b.upsert_entity("late", "service", "Late");
    writer.write(&b).unwrap();
    // Every file, the access history's folder included.
    let files = || {
        let mut v: Vec<(String, Vec<u8>)> = Vec::new();
        for sub in [dir.clone(), dir.join("audit")] {
            for e in std::fs::read_dir(&sub).unwrap().map(|e| e.unwrap()).filter(|e| e.path().is_file()) {
                v.push((e.path().display().to_string(), std::fs::read(e.path()).unwrap()));
            }
        }
        v.sort();
        v
    };
    let before = files();
    let backup = tmp.path().join("copy").display().to_string();
    for args in [
        vec!["stats", &db],
        vec!["check", &db],
        vec!["config", &db],
        vec!["export", &db],
        vec!["recall", &db, "kafka"],
        vec!["neighbors", &db, "auth"],
        vec!["report", &db],
        vec!["query", &db, "MATCH (n) RETURN count(n)"],
        vec!["descendants", &db, "svc"],
        vec!["backup", &db, &backup],
    ] {
        let out = engram(&args);
        assert!(out.status.success(), "{args:?} beside a writer: {}", text(&out.stderr));
        assert_eq!(files(), before, "{args:?} changed the folder");
    }
    assert!(text(&engram(&["stats", &db]).stdout).starts_with("entities 5\n"), "the writer's commit is seen");
    // A write beside the writer is refused, and says why.
    let out = engram(&["query", &db, "CREATE (:X)"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(text(&out.stderr).contains("locked"), "{}", text(&out.stderr));
}

/// Total loss does not go unnoticed: a WAL segment deleted or truncated below its header, or a
/// flipped byte in the last (acknowledged) record, makes `check` exit non-zero naming the file
/// and what may be lost, and every other command refuse; nothing opens empty or shortened.
#[test]
fn check_notices_a_lost_or_damaged_log() {
    let tmp = tempfile::tempdir().unwrap();
    let (ents, claims) = write_csvs(tmp.path(), false);
    let base = tmp.path().join("base");
    assert!(engram(&["import", base.to_str().unwrap(), "--entities", &ents, "--claims", &claims]).status.success());
    {
        let d = engram::Database::open(&base).unwrap();
        let mut b = engram::WriteBatch::new("default");
        b.upsert_entity("x", "t", "X");
        d.write(&b).unwrap();
    }
    let copy = |name: &str| {
        let to = tmp.path().join(name);
        std::fs::create_dir(&to).unwrap();
        for e in std::fs::read_dir(&base).unwrap().flatten().filter(|e| e.path().is_file()) {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
        let wal = std::fs::read_dir(&to)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "wal"))
            .max()
            .unwrap();
        (to, wal)
    };
    let refused = |db: &Path, want: &str| {
        let dbs = db.display().to_string();
        let out = engram(&["check", &dbs]);
        assert_eq!(out.status.code(), Some(1), "check: {}{}", text(&out.stdout), text(&out.stderr));
        assert!(text(&out.stderr).contains(want), "check: {}", text(&out.stderr));
        for cmd in ["stats", "export"] {
            let out = engram(&[cmd, &dbs]);
            assert_eq!(out.status.code(), Some(6), "{cmd}: {}", text(&out.stdout));
            assert!(text(&out.stderr).contains(want), "{cmd}: {}", text(&out.stderr));
        }
    };
    let (db, wal) = copy("deleted");
    std::fs::remove_file(&wal).unwrap();
    refused(&db, "missing");
    for cut in [0usize, 5, 10] {
        let (db, wal) = copy(&format!("cut{cut}"));
        let bytes = std::fs::read(&wal).unwrap();
        std::fs::write(&wal, &bytes[..cut]).unwrap();
        refused(&db, "shorter than its header");
    }
    // The last record: find its end (before the preallocated zeros) and flip a byte inside it.
    let (db, wal) = copy("flipped");
    let mut bytes = std::fs::read(&wal).unwrap();
    let end = bytes.iter().rposition(|b| *b != 0).unwrap();
    bytes[end - 2] ^= 0x04;
    std::fs::write(&wal, &bytes).unwrap();
    refused(&db, "an acknowledged commit was damaged");
}

/// "What was true on 15 January" shows what was valid then, superseded since or not, on both
/// time axes, in recall (with and without --history), neighbours and export.
#[test]
fn as_of_shows_what_was_true_then_whatever_is_known_now() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db").display().to_string();
    for (i, (city, at, text)) in
        [("Paris", "2026-01-01T00:00:00Z", "Ann lives in Paris"), ("Berlin", "2026-02-01T00:00:00Z", "Ann moved to Berlin")]
            .iter()
            .enumerate()
    {
        let doc = tmp.path().join(format!("d{i}.json"));
        std::fs::write(
            &doc,
            format!(
                r#"{{"source": {{"conversation_id": "c{i}", "message_id": "m", "extracted_at": "{at}"}}, "predicates": [{{"name": "lives_in", "cardinality": "one"}}],
                    "entities": [{{"name": "Ann", "type": "person"}}, {{"name": "{city}", "type": "city"}}],
                    "claims": [{{"subject": "Ann", "predicate": "lives_in", "object": "{city}", "confidence": 0.95, "text": "{text}"}}]}}"#
            ),
        )
        .unwrap();
        assert!(engram(&["ingest", &db, doc.to_str().unwrap()]).status.success());
    }
    let jan = "2026-01-15T00:00:00Z";
    let recall = |extra: &[&str]| {
        let mut args = vec!["recall", &db, "where does Ann live", "--json"];
        args.extend_from_slice(extra);
        let out = engram(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        json(&out.stdout)["facts"].as_array().unwrap().iter().map(|f| f["claim_id"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(recall(&[]), ["c1/m/0"]);
    assert_eq!(recall(&["--as-of", jan]), ["c0/m/0"], "the superseded value was true then");
    assert_eq!(recall(&["--as-of", jan, "--history"]), ["c0/m/0"], "--history keeps the valid time");
    assert_eq!(recall(&["--as-of", "2025-12-01T00:00:00Z"]), Vec::<String>::new());
    let mut all = recall(&["--history"]);
    all.sort();
    assert_eq!(all, ["c0/m/0", "c1/m/0"]);
    let n = text(&engram(&["neighbors", &db, "Ann", "--as-of", jan]).stdout);
    assert_eq!(n, "1\tcity:paris\tcity\tParis\n");
    // Transaction time: before anything was recorded, nothing; now, Berlin.
    assert_eq!(text(&engram(&["neighbors", &db, "Ann", "--known-as-of", "2020-01-01T00:00:00Z"]).stdout), "");
    let export = text(&engram(&["export", &db, "--as-of", jan]).stdout);
    assert!(export.contains(r#""id":"c0/m/0""#) && !export.contains(r#""id":"c1/m/0""#), "{export}");
    assert_eq!(engram(&["recall", &db, "x", "--known-as-of", "soon"]).status.code(), Some(2));
}

/// `engram replay`: `LoCoMo`'s format in, recall scored by evidence turn out. A two-session
/// conversation checks the figures exactly; the dev set (three conversations, static table) checks
/// the shape and that the same input gives the same figures.
#[test]
fn replay_scores_recall_by_evidence_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("mini.json");
    std::fs::write(
        &file,
        r#"[{"sample_id": "s1", "conversation": {"speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a greyhound called Pixel last week"},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! I am training for the Berlin marathon"}],
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Pixel chewed my running shoes", "blip_caption": "a dog with a shoe"},
                          {"speaker": "Bo", "dia_id": "D2:2", "text": "The marathon went well, finished in four hours"}]},
          "qa": [{"question": "What is the name of Ann's greyhound?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
                 {"question": "Which marathon is Bo training for?", "answer": "Berlin", "evidence": ["D1:2"], "category": 4},
                 {"question": "What did the dog chew?", "answer": "shoes", "evidence": ["D2:1", "D9:9"], "category": 1},
                 {"question": "No evidence here", "answer": "-", "evidence": ["D7:7"], "category": 2}]}]"#,
    )
    .unwrap();
    let out = engram(&["replay", file.to_str().unwrap(), "--embedder", "hash", "--k", "1,4", "--budgets", "1000", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = json(&out.stdout);
    assert_eq!(v["overall"]["n"], 3, "{v}");
    assert_eq!(v["skipped_questions"], 1);
    assert_eq!(v["by_category"]["4"]["n"], 2);
    // Four turns: at k = 4 and within 1,000 tokens every evidence turn is found.
    assert_eq!(v["overall"]["recall@4"], 1.0, "{v}");
    assert_eq!(v["overall"]["recall@budget1000"], 1.0, "{v}");
    assert!(v["overall"]["mrr"].as_f64().unwrap() > 0.5, "{v}");
    assert_eq!(v["timings"]["turns"], 4);
    // The human table.
    let out = engram(&["replay", file.to_str().unwrap(), "--embedder", "hash"]);
    assert!(
        text(&out.stdout).contains("recall@10") && text(&out.stdout).lines().any(|l| l.starts_with("overall")),
        "{}",
        text(&out.stdout)
    );

    let dev = engram_tests_data().join("locomo-dev/locomo-dev.json.gz");
    let run_with = |extra: &[&str]| {
        let mut args = vec!["replay", dev.to_str().unwrap(), "--embedder", "static", "--json"];
        args.extend_from_slice(extra);
        let out = engram(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut v = json(&out.stdout);
        v.as_object_mut().unwrap().remove("timings");
        v
    };
    let first = run_with(&[]);
    assert_eq!(first["overall"]["n"], 382, "the dev set's questions of categories 1-4");
    for key in ["recall@5", "recall@10", "recall@20", "all@10", "mrr", "recall@budget256", "recall@budget1024", "recall@budget2048"] {
        assert!(first["overall"][key].as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)), "{key}: {first}");
    }
    // Where the figures of bench/README.md stand: a regression shows here.
    assert!(first["overall"]["recall@10"].as_f64().unwrap() > 0.75, "{first}");
    assert!(first["overall"]["recall@budget1024"].as_f64().unwrap() > 0.79, "{first}");
    assert!(first["by_category"]["1"]["recall@10"].as_f64().unwrap() > 0.45, "multi-hop: {first}");
    assert!(first["context"]["line_tokens_per_text_token"].as_f64().unwrap() < 1.5, "{first}");
    // The questions that name a time ("in December 2023"): 0.79 at R@10 before recall read them.
    assert_eq!(first["by_category"]["dated"]["n"], 40, "{first}");
    assert!(first["by_category"]["dated"]["recall@10"].as_f64().unwrap() > 0.85, "{first}");
    let misses = tmp.path().join("misses.jsonl");
    assert_eq!(run_with(&["--misses", misses.to_str().unwrap()]), first, "the same input gives the same figures");
    // --misses: one line per question of 1-4 whose evidence is not all in the top 10.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&misses).unwrap().lines().map(|l| json(l.as_bytes())).collect();
    let expected: f64 = ["1", "2", "3", "4"]
        .iter()
        .map(|c| first["by_category"][c]["n"].as_f64().unwrap() * (1.0 - first["by_category"][c]["all@10"].as_f64().unwrap()))
        .sum();
    assert_eq!(lines.len(), expected.round() as usize, "{first}");
    for m in &lines {
        let ranks: Vec<Option<u64>> = m["evidence"].as_array().unwrap().iter().map(|e| e["rank"].as_u64()).collect();
        assert!(ranks.iter().any(|r| r.is_none_or(|r| r > 10)), "{m}");
        assert!(m["evidence"].as_array().unwrap().iter().all(|e| !e["text"].as_str().unwrap().is_empty()), "{m}");
        let top: Vec<u64> = m["top"].as_array().unwrap().iter().map(|t| t["rank"].as_u64().unwrap()).collect();
        assert_eq!(top, (1..=10).collect::<Vec<u64>>(), "{m}");
        assert!(m["question"].is_string() && ["1", "2", "3", "4"].contains(&m["category"].as_str().unwrap()), "{m}");
    }
    let unwritable = engram(&[
        "replay",
        file.to_str().unwrap(),
        "--embedder",
        "hash",
        "--misses",
        tmp.path().join("no/such/dir/m.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(unwritable.status.code(), Some(5), "an operator's error: {}", text(&unwritable.stderr));
    assert!(text(&unwritable.stderr).contains("--misses"), "{}", text(&unwritable.stderr));
    // The fusion does no worse than its best path alone (the lexical one, on this set).
    let lexical = run_with(&["--weights", "0,1,0,0"]);
    for key in ["recall@5", "recall@10", "recall@20", "mrr", "recall@budget1024"] {
        let (fused, alone) = (first["overall"][key].as_f64().unwrap(), lexical["overall"][key].as_f64().unwrap());
        assert!(fused >= alone, "{key}: fused {fused} < lexical alone {alone}");
    }
    let bad = engram(&["replay", dev.to_str().unwrap(), "--weights", "1,2"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
    assert!(text(&bad.stderr).contains("--weights"), "{}", text(&bad.stderr));
}

/// The shared data folder (`../shared/data`, or `$ENGRAM_SHARED_DATA`).
fn engram_tests_data() -> std::path::PathBuf {
    std::env::var_os("ENGRAM_SHARED_DATA").map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"), Into::into)
}

/// `engram ingest --conversation`: a transcript without an extractor. Each turn is one durable
/// document (one report each), recall cites the turns, and a bad turn is named by its JSON path
/// with nothing written.
#[test]
fn ingest_conversation_keeps_turns_as_claims() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, file) = (tmp.path().join("db"), tmp.path().join("trip.jsonl"));
    let conv = r#"{"id": "trip", "turns": [{"id": "t1", "speaker": "Caroline", "text": "I moved here from Sweden four years ago.", "at": "2023-05-08T13:56:00Z"}, {"id": "t2", "speaker": "Melanie", "text": "Do you miss Sweden?", "at": "2023-05-08T13:57:00Z"}]}"#;
    std::fs::write(&file, format!("{conv}\n")).unwrap();
    let (d, f) = (db.to_str().unwrap(), file.to_str().unwrap());
    let out = engram(&["ingest", d, f, "--conversation", "--embedder", "hash"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reports: Vec<serde_json::Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(reports.len(), 2, "one document per turn");
    assert_eq!(reports[0]["claims"][0]["claim"], "t1");
    let out = engram(&["recall", d, "Where did Caroline move from?", "--json", "--embedder", "hash"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r = json(&out.stdout);
    let facts = r["facts"].as_array().unwrap();
    assert_eq!(facts[0]["claim_id"], "t1", "{}", r["context"]);
    assert!(facts.iter().all(|f| f["predicate"] == "said"), "links are not facts: {}", r["context"]);
    assert_eq!(facts[0]["valid_from"], "2023-05-08T13:56:00Z");
    // A turn without a speaker: named by line and path; nothing written.
    let before = text(&engram(&["stats", d]).stdout);
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, r#"{"id": "c2", "turns": [{"id": "x1", "speaker": "Ann", "text": "hello"}, {"id": "x2", "text": "hi"}]}"#)
        .unwrap();
    let out = engram(&["ingest", d, bad.to_str().unwrap(), "--conversation", "--embedder", "hash"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("line 1: turns[1]: missing field `speaker`"), "{}", text(&out.stderr));
    assert_eq!(text(&engram(&["stats", d]).stdout), before, "nothing of the bad file was written");
}
