//! The parser and checker never panic: random token streams and random text give a query or a
//! typed error. CI runs a few hundred cases; a long run is `PROPTEST_CASES=200000 cargo test -p
//! engram-query --test no_panic --release`.

use proptest::prelude::*;

const WORDS: &[&str] = &[
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "RETURN",
    "WITH",
    "UNWIND",
    "AS",
    "ORDER",
    "BY",
    "SKIP",
    "LIMIT",
    "DESC",
    "CREATE",
    "MERGE",
    "ON",
    "SET",
    "REMOVE",
    "DELETE",
    "DETACH",
    "CALL",
    "YIELD",
    "UNION",
    "ALL",
    "DISTINCT",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "IS",
    "NULL",
    "TRUE",
    "FALSE",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "EXPLAIN",
    "PROFILE",
    "KNOWN",
    "OF",
    "VERSIONS",
    "count",
    "collect",
    "size",
    "range",
    "any",
    "exists",
    "db.labels",
    "shortestPath",
    "allShortestPaths",
    "reduce",
    "FOREACH",
    "EXISTS",
    "COUNT",
    "round",
    "n",
    "m",
    "r",
    "p",
    "x",
    "`q`",
    "$p",
    "$0",
    "0",
    "1",
    "-1",
    "1.5",
    "0x1F",
    "9223372036854775808",
    "'s'",
    "\"t\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "..",
    ":",
    ";",
    "|",
    "=",
    "<>",
    "<",
    ">",
    "<=",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "=~",
    "+=",
    "->",
    "<-",
    "--",
    "!",
    "&",
    "SHOW",
    "PROCEDURES",
    "EXECUTABLE",
    "TRANSACTIONS",
    "ON ERROR CONTINUE",
    "REPORT STATUS AS s",
];

fn compile(text: &str) {
    if let Ok(statement) = engram_query::parse(text) {
        if engram_query::check(text, &statement).is_ok() {
            // What checks also plans (the planner's own refusals are errors, not panics).
            let _ = engram_query::compile(text);
        }
    }
}

proptest! {
    #[test]
    fn token_streams_never_panic(tokens in prop::collection::vec(0..WORDS.len(), 0..40)) {
        let text: Vec<&str> = tokens.iter().map(|i| WORDS[*i]).collect();
        compile(&text.join(" "));
        compile(&text.concat());
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
        compile(&text);
    }

    #[test]
    fn valid_prefixes_never_panic(cut in 0usize..260, which in 0usize..6) {
        let q = [
            "MATCH p = (a:A {id: $s})-[r:T|U*1..3 WHERE r.w > 0.5]->(b) WITH a, count(DISTINCT b) AS n, collect(r) AS rs \
             WHERE n > 1 RETURN a.name AS name, [x IN rs | type(x)][0..2] AS ts ORDER BY n DESC SKIP 1 LIMIT 10 \
             UNION ALL MATCH (c) RETURN c.name AS name, CASE WHEN c:B THEN [] ELSE null END AS ts",
            "MATCH p = allShortestPaths((a:A {id: $s})-[r:T* WHERE r.w > 0]-(b:B)) WHERE EXISTS { MATCH (b)-->(c) WHERE c.x = 1 } \
             RETURN shortestPath((a)-[:T*..4]->(b)) AS sp, COUNT { (a)--() } AS d, reduce(t = 0, x IN relationships(p) | t + x.w) AS w",
            "UNWIND $rows AS row FOREACH (x IN row.items | MERGE (n:N {id: x}) FOREACH (y IN [1, 2] | SET n.v = round(y * 1.5, 1, 'HALF_EVEN')))",
            "MATCH (n) WHERE COUNT { MATCH (n)-->(m) WITH m WHERE m.k > $t RETURN m } > 1 RETURN COLLECT { MATCH (n)--(o:O) \
             RETURN o.name ORDER BY o.name LIMIT 3 } AS names, EXISTS { (x:X) WHERE x.k = n.k } AS e",
            "MATCH (a:A {id: $s}) ((x:B)-[r:!T WHERE r.w > 0]->(y)<-[s:U|V]-(z) WHERE x.k < z.k){1,3} (b)-[:(T|U)&!V]->(c) \
             WHERE c:X|Y RETURN [v IN x | v.k] AS ks, size(s) AS n, ((:B)-[:T]->())+ AS bad",
            "SHOW BUILT IN PROCEDURES EXECUTABLE BY CURRENT USER YIELD name, signature WHERE name STARTS WITH 'db.' RETURN name",
        ][which];
        let mut end = cut.min(q.len());
        while !q.is_char_boundary(end) {
            end -= 1;
        }
        compile(&q[..end]);
    }
}
