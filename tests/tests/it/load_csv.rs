//! `LOAD CSV` from a database's import folder: the rows (lists or maps, quoting, nulls, a field
//! terminator), FalkorDB's documented import of actors and movies, URLs per row, a write that
//! fails writing nothing, what is never read (outside the folder, links out, the network, an
//! in-memory database, files over the limit), and who may read the folder (admins of every
//! workspace: a canary file's text never reaches anyone else, on every entry point).

use std::sync::Arc;

use engram::{Access, Config, Database, Error, OsVfs, Params, Principal, QueryValue};

fn db_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let folder = db.import_folder().unwrap();
    for (name, text) in files {
        let path = folder.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (dir, db)
}

fn rows(db: &Database, q: &str) -> Vec<Vec<String>> {
    let r = db.query("default", q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}"));
    r.rows.iter().map(|row| row.iter().map(engram_tests::shown).collect()).collect()
}

fn error(db: &Database, q: &str) -> String {
    match db.query("default", q, &Params::new()) {
        Ok(r) => panic!("{q}: expected an error, got {:?}", r.rows),
        Err(e) => e.to_string(),
    }
}

const ACTORS: &[u8] = b"name,birthyear\nLee Pace,1979\nVin Diesel,1967\nChris Pratt,1979\nZoe Saldana,1978\n";
const ACTED_IN: &[u8] = b"actor,movie\nLee Pace,The Fall\nLee Pace,Guardians of the Galaxy\nVin Diesel,Fast & Furious\nVin Diesel,Guardians of the Galaxy\nChris Pratt,Guardians of the Galaxy\nZoe Saldana,Avatar\nZoe Saldana,Guardians of the Galaxy\n";

#[test]
fn rows_as_lists_or_maps() {
    let (_dir, db) = db_with(&[
        ("plain.csv", b"a,b,c\n\"x, y\",\"say \"\"hi\"\"\",\n\n1,2\n".as_slice()),
        ("semi.csv", "\u{feff}name;city\r\nÅsa;Malmö\r\nBo;\r\n".as_bytes()),
        ("tabs/t.tsv", b"k\tv\n1\t2\n"),
        ("empty.csv", b""),
    ]);
    assert_eq!(
        rows(&db, "LOAD CSV FROM 'file:///plain.csv' AS row RETURN row, size(row)"),
        [["['a', 'b', 'c']", "3"], ["['x, y', 'say \"hi\"', null]", "3"], ["['1', '2']", "2"]]
    );
    // A byte order mark and CRLF line ends; an empty field is null; FalkorDB's `file://name`.
    assert_eq!(
        rows(&db, "LOAD CSV WITH HEADERS FROM 'file://semi.csv' AS row FIELDTERMINATOR ';' RETURN row.name, row.city"),
        [["'Åsa'", "'Malmö'"], ["'Bo'", "null"]]
    );
    assert_eq!(
        rows(&db, "LOAD CSV WITH HEADERS FROM 'tabs/t.tsv' AS row FIELDTERMINATOR '\\t' RETURN keys(row), row.v"),
        [["['k', 'v']", "'2'"]]
    );
    assert_eq!(rows(&db, "LOAD CSV WITH HEADERS FROM 'empty.csv' AS row RETURN count(row)"), [["0"]]);
    // The URL is an expression: a parameter, or a value of each row (each file read once).
    let mut p = Params::new();
    p.insert("f".into(), QueryValue::String("file:///plain.csv".into()));
    let r = db.query("default", "LOAD CSV FROM $f AS row RETURN count(*)", &p).unwrap();
    assert_eq!(r.rows, [[QueryValue::Int(3)]]);
    assert_eq!(
        rows(&db, "UNWIND ['plain.csv', 'semi.csv', 'plain.csv'] AS f LOAD CSV FROM f AS row RETURN f, count(*) ORDER BY f"),
        [["'plain.csv'", "6"], ["'semi.csv'", "3"]]
    );
    let plan = rows(&db, "EXPLAIN LOAD CSV FROM 'plain.csv' AS row RETURN row");
    assert!(plan.is_empty());
    let explained = db.query("default", "EXPLAIN LOAD CSV FROM 'plain.csv' AS row RETURN row", &Params::new()).unwrap().plan.unwrap();
    assert!(explained.contains("LoadCSV row"), "{explained}");
}

/// FalkorDB's documented example: actors, then movies and `ACTED_IN` from a second file.
#[test]
fn falkordbs_actors_and_movies() {
    let (_dir, db) = db_with(&[("actors.csv", ACTORS), ("acted_in.csv", ACTED_IN)]);
    let r = db
        .query(
            "default",
            "LOAD CSV WITH HEADERS FROM 'file://actors.csv' AS row MERGE (a:Actor {name: row['name'], birth_year: toInteger(row['birthyear'])}) RETURN a.name, a.birth_year ORDER BY a.name",
            &Params::new(),
        )
        .unwrap();
    assert_eq!(r.stats.nodes_created, 4);
    assert_eq!(r.rows[0], [QueryValue::String("Chris Pratt".into()), QueryValue::Int(1979)]);
    let r = db
        .query(
            "default",
            "LOAD CSV WITH HEADERS FROM 'file://acted_in.csv' AS row MATCH (a:Actor {name: row['actor']}) MERGE (m:Movie {title: row['movie']}) MERGE (a)-[:ACTED_IN]->(m)",
            &Params::new(),
        )
        .unwrap();
    assert_eq!((r.stats.nodes_created, r.stats.relationships_created), (4, 7));
    assert_eq!(rows(&db, "MATCH (a:Actor)-[:ACTED_IN]->(m:Movie {title: 'Guardians of the Galaxy'}) RETURN count(a)"), [["4"]]);
}

#[test]
fn a_failing_load_writes_nothing() {
    let (_dir, db) = db_with(&[("bad.csv", b"n\n1\n2\nx\n")]);
    let e = error(&db, "LOAD CSV WITH HEADERS FROM 'bad.csv' AS row CREATE (:N {n: 10 / (toInteger(row.n) - 2)})");
    assert!(e.contains("/ by zero") || e.contains("division by zero"), "{e}");
    assert_eq!(rows(&db, "MATCH (n:N) RETURN count(n)"), [["0"]]);
    let (_dir2, db2) = db_with(&[("utf8.csv", b"a\nok\n\xFF\xFE\n")]);
    let e = error(&db2, "LOAD CSV FROM 'utf8.csv' AS row CREATE (:N {v: row[0]})");
    assert!(e.contains("utf8.csv line 3: field 1 is not UTF-8"), "{e}");
    assert_eq!(rows(&db2, "MATCH (n:N) RETURN count(n)"), [["0"]]);
}

#[test]
fn nothing_outside_the_folder_is_read() {
    let (dir, db) = db_with(&[("a.csv", b"x\n1\n"), ("sub/b.csv", b"y\n")]);
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "canary-outside\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, db.import_folder().unwrap().join("link.csv")).unwrap();
    for (q, want) in [
        ("LOAD CSV FROM 'file:///../secret.csv' AS r RETURN r", "leads out of the import folder"),
        ("LOAD CSV FROM 'sub/../../secret.csv' AS r RETURN r", "leads out of the import folder"),
        ("LOAD CSV FROM 'https://example.com/a.csv' AS r RETURN r", "not https:// URLs: nothing is fetched from the network"),
        ("LOAD CSV FROM 'missing.csv' AS r RETURN r", "no file missing.csv in the import folder"),
        ("LOAD CSV FROM 'sub' AS r RETURN r", "sub is not a file"),
        ("LOAD CSV FROM 'file:///' AS r RETURN r", "names no file"),
        ("LOAD CSV FROM 42 AS r RETURN r", "takes the file's URL as a string, got an integer"),
        ("LOAD CSV FROM 'a.csv' AS r FIELDTERMINATOR '' RETURN r", "FIELDTERMINATOR takes one ASCII character"),
        ("LOAD CSV FROM 'a.csv' AS r FIELDTERMINATOR 'é' RETURN r", "FIELDTERMINATOR takes one ASCII character"),
        ("LOAD CSV FROM 'a.csv' AS r FIELDTERMINATOR 5 RETURN r", "expected a string after FIELDTERMINATOR"),
    ] {
        let e = error(&db, q);
        assert!(e.contains(want), "{q}: {e}");
        assert!(!e.contains("canary"), "{q}: {e}");
    }
    #[cfg(unix)]
    {
        let e = error(&db, "LOAD CSV FROM 'link.csv' AS r RETURN r");
        assert!(e.contains("link.csv leads out of the import folder") && !e.contains("canary"), "{e}");
    }
    // In memory there is no folder; over the limit, the file is not read.
    let e = Database::in_memory().query("default", "LOAD CSV FROM 'a.csv' AS r RETURN r", &Params::new()).unwrap_err().to_string();
    assert!(e.contains("this one is in memory"), "{e}");
    let small = Config { limits: engram::Limits { import_file_bytes_max: 3, ..engram::Limits::default() }, ..Config::default() };
    drop(db);
    let tight = Database::open_with(dir.path().join("db"), small, Arc::new(OsVfs)).unwrap();
    let e = tight.query("default", "LOAD CSV FROM 'a.csv' AS r RETURN r", &Params::new()).unwrap_err().to_string();
    assert!(e.contains("a.csv is 4 bytes, over import_file_bytes_max (3)"), "{e}");
}

/// The folder is every workspace's: only a principal with admin on `*` reads it. Anyone else is
/// refused before anything is read, on every entry point, and the canary never shows.
#[test]
fn only_admins_of_every_workspace_read_the_folder() {
    let (_dir, db) = db_with(&[("canary.csv", b"name\ncanary-7f3a\n")]);
    db.query("default", "CREATE (:Seed)", &Params::new()).unwrap();
    let writer = db.scope(Arc::new(Principal::named("ann").grant("default", Access::Admin, true)));
    let load = "LOAD CSV WITH HEADERS FROM 'canary.csv' AS row RETURN row.name";
    let copy = "LOAD CSV WITH HEADERS FROM 'canary.csv' AS row CREATE (:Copy {name: row.name})";
    let nested = "MATCH (s:Seed) CALL { LOAD CSV WITH HEADERS FROM 'canary.csv' AS row RETURN row.name AS name } RETURN name";
    let params = Params::new();
    let mut refusals: Vec<String> = Vec::new();
    for q in [load, copy, nested] {
        let e = writer.query("default", q, &params).expect_err(q);
        assert!(matches!(e, Error::Denied { ref workspace, needed: Access::Admin, .. } if workspace == "*"), "{q}: {e:?}");
        refusals.push(e.to_string());
    }
    let e = writer.query_read("default", load, &params).expect_err("read entry");
    assert!(matches!(e, Error::Denied { .. }), "{e:?}");
    refusals.push(e.to_string());
    let e = writer.transaction("default", &[(copy, &params)]).expect_err("transaction");
    assert!(matches!(e, Error::Denied { .. }), "{e:?}");
    refusals.push(e.to_string());
    let group = writer.query_group(&[("default", copy, &params)]);
    let e = group.into_iter().next().unwrap().expect_err("group");
    assert!(matches!(e, Error::Denied { .. }), "{e:?}");
    refusals.push(e.to_string());
    for e in &refusals {
        assert!(!e.contains("canary-7f3a"), "{e}");
    }
    assert_eq!(db.query("default", "MATCH (c:Copy) RETURN count(c)", &params).unwrap().rows, [[QueryValue::Int(0)]]);
    // An admin of every workspace reads it, through the same entry points.
    let admin = db.scope(Arc::new(Principal::named("root-ish").grant("*", Access::Admin, true)));
    assert_eq!(admin.query("default", load, &params).unwrap().rows, [[QueryValue::String("canary-7f3a".into())]]);
    assert_eq!(admin.query_read("default", load, &params).unwrap().rows.len(), 1);
    assert_eq!(admin.query("default", copy, &params).unwrap().stats.nodes_created, 1);
    assert_eq!(admin.query("default", nested, &params).unwrap().rows.len(), 1);
}

/// `linenumber()` is the line a row's record starts on (the header is line 1; a quoted field may
/// span lines) and `file()` the file's path; both null where no `LOAD CSV` is in scope.
#[test]
fn line_numbers_and_the_file() {
    let (_dir, db) = db_with(&[("lines.csv", b"name,note\nAnn,\"two\nlines\"\n\nBob,x\n")]);
    assert_eq!(
        rows(&db, "LOAD CSV WITH HEADERS FROM 'lines.csv' AS row RETURN row.name, linenumber() AS line"),
        [["'Ann'", "2"], ["'Bob'", "5"]]
    );
    let path = db.import_folder().unwrap().canonicalize().unwrap().join("lines.csv");
    assert_eq!(rows(&db, "LOAD CSV FROM 'file:///lines.csv' AS row RETURN DISTINCT file()"), [[format!("'{}'", path.display())]]);
    assert_eq!(
        rows(&db, "LOAD CSV FROM 'lines.csv' AS row WITH row WHERE row[0] = 'Bob' RETURN linenumber(), file()"),
        [["null", "null"]],
        "a WITH ends the LOAD CSV's scope"
    );
    assert_eq!(rows(&db, "RETURN linenumber(), file()"), [["null", "null"]]);
}
