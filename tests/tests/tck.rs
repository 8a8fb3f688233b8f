//! The openCypher TCK, run as a `harness = false` test: one line per feature file and the closing
//! line `TCK: N passed, N failed, N skipped`. A scenario is skipped only when `tests/tck-skips.txt`
//! lists it with a reason; any other scenario that does not pass fails the test.
//!
//! `TCK_RUN_SKIPPED=1` runs the listed scenarios too and names those that now pass (so the list
//! can shrink); `TCK_VERBOSE=1` prints each failure's reason; `TCK_FILTER=Match1` runs matching
//! files only.

use std::collections::BTreeMap;
use std::process::ExitCode;

use engram::{Database, QueryValue};
use engram_tests::tck::{self, feature, value, Census, ErrorMatch, Failure, Graph, Mode, Outcome, Verdict};

fn failure(e: &engram_query::QueryError) -> Failure {
    Failure {
        kind: e.kind.as_str().to_owned(),
        phase: e.phase.as_str().to_owned(),
        detail: e.detail.as_str().to_owned(),
        message: match (e.line(), e.column()) {
            (Some(l), Some(c)) => format!("{} at {l}:{c}", e.message),
            _ => e.message.clone(),
        },
    }
}

/// A fresh in-memory engram database, driven through the query language.
struct Engine {
    db: Database,
}

fn to_tck(v: &QueryValue) -> value::Value {
    use value::Value as V;
    let props = |p: &BTreeMap<String, QueryValue>| p.iter().map(|(k, v)| (k.clone(), to_tck(v))).collect();
    let node = |n: &engram::exec::Node| value::Node { labels: n.labels.iter().cloned().collect(), props: props(&n.properties) };
    let rel = |r: &engram::exec::Relationship| value::Rel { ty: r.rel_type.clone(), props: props(&r.properties) };
    match v {
        QueryValue::Null => V::Null,
        QueryValue::Bool(b) => V::Bool(*b),
        QueryValue::Int(i) => V::Int(*i),
        QueryValue::Float(f) => V::Float(*f),
        QueryValue::String(s) => V::Str(s.clone()),
        QueryValue::List(items) => V::List(items.iter().map(to_tck).collect()),
        QueryValue::Map(m) => V::Map(props(m)),
        QueryValue::Node(n) => V::Node(node(n)),
        QueryValue::Relationship(r) => V::Rel(rel(r)),
        QueryValue::Path(p) => {
            let Some(first) = p.nodes.first() else { return V::Null };
            let steps = p.relationships.iter().zip(p.nodes.windows(2)).map(|(r, w)| (rel(r), r.start == w[0].id, node(&w[1]))).collect();
            V::Path(node(first), steps)
        }
    }
}

fn from_tck(v: &value::Value) -> QueryValue {
    use value::Value as V;
    match v {
        // Graph values are never parameters in the TCK.
        V::Null | V::Node(_) | V::Rel(_) | V::Path(..) => QueryValue::Null,
        V::Bool(b) => QueryValue::Bool(*b),
        V::Int(i) => QueryValue::Int(*i),
        V::Float(f) => QueryValue::Float(*f),
        V::Str(s) => QueryValue::String(s.clone()),
        V::List(items) => QueryValue::List(items.iter().map(from_tck).collect()),
        V::Map(m) => QueryValue::Map(m.iter().map(|(k, v)| (k.clone(), from_tck(v))).collect()),
    }
}

impl Graph for Engine {
    fn run(&mut self, query: &str, params: &BTreeMap<String, value::Value>) -> Result<Outcome, Failure> {
        let params: engram::Params = params.iter().map(|(k, v)| (k.clone(), from_tck(v))).collect();
        let result = self.db.query(engram::DEFAULT_WORKSPACE, query, &params).map_err(|e| match e {
            engram::Error::Query(q) => failure(&q),
            other => Failure { kind: "Error".into(), phase: "runtime".into(), detail: "Harness".into(), message: other.to_string() },
        })?;
        Ok(Outcome { columns: result.columns, rows: result.rows.iter().map(|r| r.iter().map(to_tck).collect()).collect() })
    }

    fn census(&self) -> Census {
        let mut c = Census::default();
        let snap = self.db.snapshot();
        let Ok(ws) = snap.workspace(engram::DEFAULT_WORKSPACE) else { return c };
        let Ok(all) = ws.query("MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN n, r", &engram::Params::new()) else { return c };
        for row in all.rows {
            if let QueryValue::Node(n) = &row[0] {
                c.nodes.insert(n.id);
                c.labels.extend(n.labels.iter().cloned());
                for (k, v) in &n.properties {
                    c.props.insert((false, n.id, k.clone(), format!("{v:?}")));
                }
            }
            if let QueryValue::Relationship(r) = &row[1] {
                c.rels.insert(r.id);
                for (k, v) in &r.properties {
                    c.props.insert((true, r.id, k.clone(), format!("{v:?}")));
                }
            }
        }
        c
    }
}

struct Skip {
    title: String,
    reason: String,
}

fn load_skips(path: &std::path::Path) -> Result<BTreeMap<(String, usize), Skip>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(3, '\t');
        let (Some(place), Some(title), Some(reason)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("{}:{}: expected `file:ordinal<TAB>title<TAB>reason`", path.display(), n + 1));
        };
        let Some((file, ordinal)) = place.rsplit_once(':') else {
            return Err(format!("{}:{}: expected file:ordinal, got {place:?}", path.display(), n + 1));
        };
        let ordinal: usize = ordinal.parse().map_err(|_| format!("{}:{}: bad ordinal {ordinal:?}", path.display(), n + 1))?;
        if reason.trim().is_empty() {
            return Err(format!("{}:{}: a skip needs a reason", path.display(), n + 1));
        }
        out.insert((file.to_owned(), ordinal), Skip { title: title.to_owned(), reason: reason.to_owned() });
    }
    Ok(out)
}

/// Every `.feature` file under `dir`, sorted.
fn feature_files(dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>, String> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "feature") {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// What a run counted.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    seen_skips: usize,
    errors_expected: usize,
    /// Expected errors matched on type, phase and detail.
    error_parts: [usize; 3],
    now_passing: Vec<String>,
    skip_reasons: BTreeMap<String, usize>,
    problems: Vec<String>,
}

struct Options<'a> {
    skips: &'a BTreeMap<(String, usize), Skip>,
    verbose: bool,
    run_skipped: bool,
    mode: Mode<'a>,
}

/// Runs one file's scenarios; gives its passed, failed and skipped counts.
fn run_file(rel: &str, scenarios: &[feature::Scenario], o: &Options<'_>, t: &mut Tally) -> (usize, usize, usize) {
    let (mut p, mut f, mut s) = (0, 0, 0);
    for sc in scenarios.iter().filter(|sc| !sc.ignored) {
        let skip = o.skips.get(&(rel.to_owned(), sc.ordinal));
        if let Some(skip) = skip {
            t.seen_skips += 1;
            *t.skip_reasons.entry(skip.reason.clone()).or_default() += 1;
            if skip.title != sc.title {
                t.problems.push(format!("skip list: {rel}:{} is titled {:?}, the list says {:?}", sc.ordinal, sc.title, skip.title));
            }
            s += 1;
            if o.run_skipped {
                match tck::run(sc, &o.mode).0 {
                    Verdict::Pass => t.now_passing.push(format!("{rel}:{}\t{}", sc.ordinal, sc.title)),
                    Verdict::Fail(why) if o.verbose => println!("  skipped {rel}:{} {}: {why}", sc.ordinal, sc.title),
                    Verdict::Fail(_) => {}
                }
            }
            continue;
        }
        let (verdict, em) = tck::run(sc, &o.mode);
        if let Some(ErrorMatch { kind, phase, detail }) = em {
            t.errors_expected += 1;
            t.error_parts[0] += usize::from(kind);
            t.error_parts[1] += usize::from(phase);
            t.error_parts[2] += usize::from(detail);
        }
        match verdict {
            Verdict::Pass => p += 1,
            Verdict::Fail(why) => {
                f += 1;
                if o.verbose {
                    println!("  FAIL {rel}:{} {}: {why}", sc.ordinal, sc.title);
                } else {
                    t.problems.push(format!("{rel}:{}\t{}\t{}", sc.ordinal, sc.title, why.lines().next().unwrap_or("")));
                }
            }
        }
    }
    (p, f, s)
}

/// `scenarios.tsv`: (file, ordinal) → title, to check the expansion against the TCK's own index.
fn scenario_index(root: &std::path::Path) -> Result<BTreeMap<(String, usize), String>, String> {
    let path = root.join("scenarios.tsv");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [file, ordinal, title, ..] = cols.as_slice() {
            let ordinal = ordinal.parse().map_err(|_| format!("{}: bad ordinal in {line:?}", path.display()))?;
            out.insert(((*file).to_owned(), ordinal), (*title).to_owned());
        }
    }
    Ok(out)
}

fn main() -> ExitCode {
    let root = engram_tests::shared_tck();
    let features = root.join("features");
    let index = match scenario_index(&root) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("TCK: {e}");
            return ExitCode::FAILURE;
        }
    };
    let files = match feature_files(&features) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("TCK: {e} (set ENGRAM_SHARED_TCK)");
            return ExitCode::FAILURE;
        }
    };
    let skips_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tck-skips.txt");
    let skips = match load_skips(&skips_path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("TCK: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = Options {
        skips: &skips,
        verbose: std::env::var_os("TCK_VERBOSE").is_some(),
        run_skipped: std::env::var_os("TCK_RUN_SKIPPED").is_some(),
        mode: Mode::Execute(&|| -> Box<dyn Graph> { Box::new(Engine { db: Database::in_memory() }) }),
    };
    let filter = std::env::var("TCK_FILTER").ok();
    let mut t = Tally::default();
    let mut expanded = 0;
    for path in &files {
        let rel = path.strip_prefix(&features).unwrap_or(path).to_string_lossy().replace('\\', "/");
        let scenarios = match std::fs::read_to_string(path).map_err(|e| format!("{rel}: {e}")).and_then(|text| feature::parse(&rel, &text))
        {
            Ok(s) => s,
            Err(e) => {
                eprintln!("TCK: {e}");
                return ExitCode::FAILURE;
            }
        };
        expanded += scenarios.len();
        for sc in &scenarios {
            if index.get(&(rel.clone(), sc.ordinal)) != Some(&sc.title) {
                t.problems.push(format!("{rel}:{} {:?} is not in scenarios.tsv under that place", sc.ordinal, sc.title));
            }
        }
        if filter.as_ref().is_some_and(|f| !rel.contains(f.as_str())) {
            continue;
        }
        let (p, f, s) = run_file(&rel, &scenarios, &options, &mut t);
        println!("{rel}: {p} passed, {f} failed, {s} skipped");
        t.passed += p;
        t.failed += f;
        t.skipped += s;
    }
    if filter.is_none() && t.seen_skips != skips.len() {
        t.problems.push(format!("skip list: {} entries name no runnable scenario", skips.len() - t.seen_skips));
    }
    if filter.is_none() && expanded != 1245 {
        t.problems.push(format!("expanded {expanded} scenarios; the TCK's SOURCE.md counts 1,245"));
    }
    if t.errors_expected > 0 {
        let [kind, phase, detail] = t.error_parts;
        println!("expected errors run: {}; matched on type {kind}, phase {phase}, detail {detail}", t.errors_expected);
    }
    for (reason, n) in &t.skip_reasons {
        println!("skipped {n}: {reason}");
    }
    for p in &t.now_passing {
        println!("now passes (remove from tck-skips.txt): {p}");
    }
    for p in &t.problems {
        eprintln!("{p}");
    }
    println!("TCK: {} passed, {} failed, {} skipped", t.passed, t.failed, t.skipped);
    if t.failed > 0 || !t.problems.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
