//! The TCK run as a whole: the skip list, one line per feature file, the closing summary. Shared by
//! the embedded run (`tests/tck.rs`) and the run over the wire (`tests/tck_resp.rs`), which must
//! give the same pass set.

use std::collections::BTreeMap;
use std::process::ExitCode;

use super::{feature, ErrorMatch, Graph, Mode, Verdict};

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
                match super::run(sc, &o.mode).0 {
                    Verdict::Pass => t.now_passing.push(format!("{rel}:{}\t{}", sc.ordinal, sc.title)),
                    Verdict::Fail(why) if o.verbose => println!("  skipped {rel}:{} {}: {why}", sc.ordinal, sc.title),
                    Verdict::Fail(_) => {}
                }
            }
            continue;
        }
        let (verdict, em) = super::run(sc, &o.mode);
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

/// Runs every scenario on fresh graphs from `make` and prints the summary; `label` names the run
/// (`TCK` or `TCK over RESP`). Fails on any scenario that neither passes nor is listed as skipped.
pub fn run_all(label: &str, make: &dyn Fn() -> Box<dyn Graph>) -> ExitCode {
    let root = crate::shared_tck();
    let features = root.join("features");
    let index = match scenario_index(&root) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("{label}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let files = match feature_files(&features) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{label}: {e} (set ENGRAM_SHARED_TCK)");
            return ExitCode::FAILURE;
        }
    };
    let skips_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tck-skips.txt");
    let skips = match load_skips(&skips_path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{label}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = Options {
        skips: &skips,
        verbose: std::env::var_os("TCK_VERBOSE").is_some(),
        run_skipped: std::env::var_os("TCK_RUN_SKIPPED").is_some(),
        mode: Mode::Execute(make),
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
                eprintln!("{label}: {e}");
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
    println!("{label}: {} passed, {} failed, {} skipped", t.passed, t.failed, t.skipped);
    if t.failed > 0 || !t.problems.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
