//! Shared helpers for engram's black-box tests: a naive reference model of the memory graph that
//! the engine is compared against, and seeded fixtures.

pub mod reference;
pub mod tck;

/// How many cases a property test runs: `default` (what CI runs), or `$PROPTEST_CASES` for a long
/// run (`PROPTEST_CASES=100000 cargo test --release -p engram-tests`). A config that names its cases
/// overrides proptest's own reading of that variable, so the tests read it through this.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A query's value as a test compares it: a temporal value as its ISO 8601 text, a point as
/// `point({…})`, a string quoted, a list of them bracketed, scalars as Cypher prints them.
pub fn shown(v: &engram::QueryValue) -> String {
    use engram::QueryValue as V;
    match v {
        V::Temporal(t) => t.to_string(),
        V::String(s) => format!("'{s}'"),
        V::Int(i) => i.to_string(),
        V::Float(f) => format!("{f:?}"),
        V::Point(p) => p.to_string(),
        V::Bool(b) => b.to_string(),
        V::Null => "null".to_owned(),
        V::List(items) => format!("[{}]", items.iter().map(shown).collect::<Vec<_>>().join(", ")),
        other => format!("{other:?}"),
    }
}

/// The folder of real third-party data (`../shared/data` beside the repository), or
/// `$ENGRAM_SHARED_DATA`. Tests that need it fail with this path in the message when it is absent.
pub fn shared_data() -> std::path::PathBuf {
    match std::env::var_os("ENGRAM_SHARED_DATA") {
        Some(p) => p.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
    }
}

/// The openCypher TCK feature files (`../shared/tck` beside the repository), or `$ENGRAM_SHARED_TCK`.
pub fn shared_tck() -> std::path::PathBuf {
    match std::env::var_os("ENGRAM_SHARED_TCK") {
        Some(p) => p.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tck"),
    }
}

/// Reads a file under [`shared_data`], decompressing `.gz`.
pub fn read_shared(rel: &str) -> String {
    use std::io::Read;
    let path = shared_data().join(rel);
    let bytes =
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (set ENGRAM_SHARED_DATA to the shared data folder)", path.display()));
    if std::path::Path::new(rel).extension().is_some_and(|e| e.eq_ignore_ascii_case("gz")) {
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        s
    } else {
        String::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

/// `WordNet` 3.0 noun synsets as engram term JSON lines: `wn:<offset>`, first lemma as label, the
/// others as synonyms, `@` and `@i` pointers as parents. `data` is `data.noun`; returns the
/// lines, the synset count and the hypernym link count.
pub fn wordnet_nouns_jsonl(data: &str) -> (String, usize, usize) {
    let mut out = String::from("{\"ontology\": \"wordnet\", \"version\": \"3.0\"}\n");
    let (mut synsets, mut links) = (0, 0);
    for line in data.lines().filter(|l| !l.starts_with("  ")) {
        let (fields, gloss) = line.split_once(" | ").unwrap_or((line, ""));
        let f: Vec<&str> = fields.split_whitespace().collect();
        let words = usize::from_str_radix(f[3], 16).expect("w_cnt");
        let lemmas: Vec<String> = (0..words).map(|i| f[4 + 2 * i].replace('_', " ")).collect();
        let p_at = 4 + 2 * words;
        let pointers: usize = f[p_at].parse().expect("p_cnt");
        let parents: Vec<String> = (0..pointers)
            .map(|i| &f[p_at + 1 + 4 * i..p_at + 5 + 4 * i])
            .filter(|p| (p[0] == "@" || p[0] == "@i") && p[2] == "n")
            .map(|p| format!("wn:{}", p[1]))
            .collect();
        synsets += 1;
        links += parents.len();
        let term = serde_json::json!({"id": format!("wn:{}", f[0]), "label": lemmas[0], "synonyms": lemmas[1..], "definition": gloss.trim(), "parents": parents});
        out.push_str(&term.to_string());
        out.push('\n');
    }
    (out, synsets, links)
}
