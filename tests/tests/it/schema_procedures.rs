//! `SHOW PROCEDURES`, `SHOW FUNCTIONS` and the schema procedures tools call before they write a query
//! (`db.schema.nodeTypeProperties()`, `db.schema.relTypeProperties()`), in Neo4j's columns.

use engram::{Database, Params, QueryValue};

fn s(v: &str) -> QueryValue {
    QueryValue::String(v.to_owned())
}

fn list(items: &[&str]) -> QueryValue {
    QueryValue::List(items.iter().map(|i| s(i)).collect())
}

#[test]
fn show_procedures_lists_every_procedure_in_neo4js_columns() {
    let db = Database::in_memory();
    let q = |text: &str| db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}"));
    let all = q("SHOW PROCEDURES");
    assert_eq!(*all.columns, ["name", "description", "mode", "worksOnSystem"]);
    assert_eq!(all.rows.len(), engram_query::functions::PROCEDURES.len());
    let names: Vec<&QueryValue> = all.rows.iter().map(|r| &r[0]).collect();
    assert!(names.windows(2).all(|w| format!("{:?}", w[0]) < format!("{:?}", w[1])), "sorted by name");
    let recall = all.rows.iter().find(|r| r[0] == s("engram.recall")).expect("engram.recall is listed");
    assert_eq!((&recall[2], &recall[3]), (&s("READ"), &QueryValue::Bool(false)));
    assert!(matches!(&recall[1], QueryValue::String(d) if !d.is_empty()));
    let forget = q("SHOW PROCEDURES YIELD name, mode WHERE name = 'engram.forget' RETURN mode");
    assert_eq!(forget.rows, vec![vec![s("WRITE")]]);
    let filtered = q("SHOW BUILT IN PROCEDURES EXECUTABLE BY CURRENT USER WHERE name STARTS WITH 'db.schema.'");
    assert_eq!(
        filtered.rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        vec![s("db.schema.nodeTypeProperties"), s("db.schema.relTypeProperties")]
    );
    let star = q("SHOW ALL PROCEDURES YIELD * WHERE name = 'db.labels'");
    assert_eq!(
        *star.columns,
        ["name", "description", "mode", "worksOnSystem", "signature", "argumentDescription", "returnDescription", "isDeprecated"]
    );
    assert_eq!(star.rows[0][4], s("db.labels() :: (label :: ANY)"));
    let recall = q("SHOW PROCEDURES YIELD name, signature, argumentDescription WHERE name = 'engram.recall' RETURN signature, [a IN argumentDescription | a.name]");
    assert_eq!(recall.rows[0][0], s("engram.recall(text :: ANY, options = null :: ANY) :: (rank :: ANY, claim :: ANY, subject :: ANY, object :: ANY, text :: ANY, score :: ANY, evidence :: ANY, context :: ANY)"));
    assert_eq!(recall.rows[0][1], list(&["text", "options"]));
    assert_eq!(q("SHOW PROCEDURES YIELD name RETURN count(*) AS n").rows[0][0], QueryValue::Int(all.rows.len() as i64));
    for (text, says) in [
        ("SHOW PROCEDURES EXECUTABLE BY ann", "CURRENT USER"),
        ("SHOW PROCEDURES YIELD nope", "nope"),
        ("SHOW USERS", "INDEXES, CONSTRAINTS, PROCEDURES or FUNCTIONS"),
    ] {
        let e = db.query("default", text, &Params::new()).expect_err(text).to_string();
        assert!(e.contains(says), "{text}: {e}");
    }
}

#[test]
fn schema_procedures_give_each_label_set_and_types_keys() {
    let db = Database::in_memory();
    let q = |text: &str| db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}")).rows;
    q("CREATE (:Person {name: 'Ada', born: 1815})-[:WROTE {year: 1843, pages: [1, 2]}]->(:Book:Notes {title: 'Notes'}), \
       (:Person {name: 'Lin', born: 1990.5, tags: ['x']}), (), (:Person:Admin {since: date('2020-01-01')})-[:WROTE]->(:Book:Notes)");
    let t = QueryValue::Bool(true);
    let f = QueryValue::Bool(false);
    let rows = q("CALL db.schema.nodeTypeProperties()");
    let want = vec![
        vec![s(""), list(&[]), QueryValue::Null, QueryValue::Null, f.clone()],
        vec![s(":`Admin`:`Person`"), list(&["Admin", "Person"]), s("since"), list(&["Date"]), t.clone()],
        vec![s(":`Book`:`Notes`"), list(&["Book", "Notes"]), s("title"), list(&["String"]), f.clone()],
        vec![s(":`Person`"), list(&["Person"]), s("born"), list(&["Double", "Long"]), t.clone()],
        vec![s(":`Person`"), list(&["Person"]), s("name"), list(&["String"]), t.clone()],
        vec![s(":`Person`"), list(&["Person"]), s("tags"), list(&["StringArray"]), f.clone()],
    ];
    assert_eq!(rows, want);
    let rows = q("CALL db.schema.relTypeProperties() YIELD relType, propertyName, propertyTypes, mandatory RETURN relType, propertyName, propertyTypes, mandatory");
    assert_eq!(
        rows,
        vec![vec![s(":`WROTE`"), s("pages"), list(&["LongArray"]), f.clone()], vec![s(":`WROTE`"), s("year"), list(&["Long"]), f.clone()],]
    );
    // What a deleted element had is not the graph's shape any more.
    q("MATCH (p:Person {name: 'Lin'}) DELETE p");
    let keys = q("CALL db.schema.nodeTypeProperties() YIELD propertyName RETURN collect(propertyName)");
    assert_eq!(keys, vec![vec![list(&["since", "title", "born", "name"])]]);
}

#[test]
fn show_functions_lists_every_function_with_its_category_and_line() {
    let db = Database::in_memory();
    let q = |text: &str| db.query("default", text, &Params::new()).unwrap_or_else(|e| panic!("{text}: {e}"));
    let all = q("SHOW FUNCTIONS");
    assert_eq!(*all.columns, ["name", "category", "description"]);
    assert_eq!(all.rows.len(), engram_query::functions::FUNCTIONS.len());
    let lower = all.rows.iter().find(|r| r[0] == s("toLower")).expect("toLower, as documented");
    assert_eq!(lower[1], s("String"));
    let agg = q("SHOW BUILT IN FUNCTIONS YIELD name, aggregating WHERE aggregating RETURN collect(name) AS names");
    let QueryValue::List(names) = &agg.rows[0][0] else { panic!("{agg:?}") };
    assert!(names.contains(&s("percentileCont")) && names.contains(&s("count")) && !names.contains(&s("size")), "{names:?}");
    let star = q("SHOW FUNCTIONS YIELD * WHERE name = 'substring'");
    assert_eq!(*star.columns, ["name", "category", "description", "signature", "isBuiltIn", "aggregating", "isDeprecated"]);
    assert_eq!(star.rows[0][3], s("substring(string, start[, length])"));
    assert_eq!(star.rows[0][4], QueryValue::Bool(true));
    // Every name listed is one a query can call, in the case shown.
    for row in &q("SHOW FUNCTIONS YIELD name WHERE name STARTS WITH 'to' AND name ENDS WITH 'Null'").rows {
        let QueryValue::String(name) = &row[0] else { panic!("{row:?}") };
        assert!(db.query("default", &format!("RETURN {name}('1')"), &Params::new()).is_ok(), "{name}");
    }
    assert!(q("SHOW USER DEFINED FUNCTIONS").rows.is_empty());
    assert!(q("SHOW USER DEFINED PROCEDURES").rows.is_empty());
    assert_eq!(q("SHOW FUNCTIONS EXECUTABLE BY CURRENT USER WHERE category = 'Spatial' RETURN count(*)").rows[0][0], QueryValue::Int(4));
}
