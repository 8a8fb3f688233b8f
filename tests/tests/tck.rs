//! The openCypher TCK, run as a `harness = false` test: one line per feature file and the closing
//! line `TCK: N passed, N failed, N skipped`. A scenario is skipped only when `tests/tck-skips.txt`
//! lists it with a reason; any other scenario that does not pass fails the test.
//!
//! `TCK_RUN_SKIPPED=1` runs the listed scenarios too and names those that now pass (so the list
//! can shrink); `TCK_VERBOSE=1` prints each failure's reason; `TCK_FILTER=Match1` runs matching
//! files only.

use std::collections::BTreeMap;
use std::process::ExitCode;

use engram_tests::tck::{self, feature, ErrorMatch, Failure, Mode, Verdict};

/// Compiles (parses and checks) a query the way the engine will before running it.
fn compile(text: &str) -> Result<Vec<String>, Failure> {
    let failure = |e: engram_query::QueryError| Failure {
        kind: e.kind.as_str().to_owned(),
        phase: e.phase.as_str().to_owned(),
        detail: e.detail.as_str().to_owned(),
        message: match (e.line(), e.column()) {
            (Some(l), Some(c)) => format!("{} at {l}:{c}", e.message),
            _ => e.message.clone(),
        },
    };
    let statement = engram_query::parse(text).map_err(failure)?;
    engram_query::check(text, &statement).map(|c| c.columns).map_err(failure)
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

fn main() -> ExitCode {
    let root = engram_tests::shared_tck();
    let features = root.join("features");
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
    let verbose = std::env::var_os("TCK_VERBOSE").is_some();
    let run_skipped = std::env::var_os("TCK_RUN_SKIPPED").is_some();
    let filter = std::env::var("TCK_FILTER").ok();
    let mode = Mode::CompileOnly(&compile);

    let (mut passed, mut failed, mut skipped, mut expanded) = (0usize, 0usize, 0usize, 0usize);
    let mut seen_skips = 0usize;
    let mut errors_expected = 0usize;
    let mut error_parts = [0usize; 3];
    let mut now_passing = Vec::new();
    let mut skip_reasons: BTreeMap<&str, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&features).unwrap_or(path).to_string_lossy().replace('\\', "/");
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("TCK: {rel}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let scenarios = match feature::parse(&rel, &text) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("TCK: {e}");
                return ExitCode::FAILURE;
            }
        };
        expanded += scenarios.len();
        if filter.as_ref().is_some_and(|f| !rel.contains(f.as_str())) {
            continue;
        }
        let (mut p, mut f, mut s) = (0, 0, 0);
        for sc in &scenarios {
            if sc.ignored {
                continue;
            }
            let skip = skips.get(&(rel.clone(), sc.ordinal));
            if let Some(skip) = skip {
                seen_skips += 1;
                *skip_reasons.entry(skip.reason.as_str()).or_default() += 1;
                if skip.title != sc.title {
                    problems.push(format!("skip list: {rel}:{} is titled {:?}, the list says {:?}", sc.ordinal, sc.title, skip.title));
                }
                if !run_skipped {
                    s += 1;
                    continue;
                }
            }
            let (verdict, em) = tck::run(sc, &mode);
            if skip.is_some() {
                s += 1;
                if verdict == Verdict::Pass {
                    now_passing.push(format!("{rel}:{}\t{}", sc.ordinal, sc.title));
                }
                continue;
            }
            if let Some(m) = em {
                errors_expected += 1;
                let ErrorMatch { kind, phase, detail } = m;
                error_parts[0] += usize::from(kind);
                error_parts[1] += usize::from(phase);
                error_parts[2] += usize::from(detail);
            }
            match verdict {
                Verdict::Pass => p += 1,
                Verdict::Fail(why) => {
                    f += 1;
                    if verbose {
                        println!("  FAIL {rel}:{} {}: {why}", sc.ordinal, sc.title);
                    } else {
                        problems.push(format!("{rel}:{}\t{}\t{}", sc.ordinal, sc.title, why.lines().next().unwrap_or("")));
                    }
                }
            }
        }
        println!("{rel}: {p} passed, {f} failed, {s} skipped");
        passed += p;
        failed += f;
        skipped += s;
    }
    if filter.is_none() && seen_skips != skips.len() {
        problems.push(format!("skip list: {} entries name no runnable scenario", skips.len() - seen_skips));
    }
    if filter.is_none() && expanded != 1245 {
        problems.push(format!("expanded {expanded} scenarios; the TCK's SOURCE.md counts 1,245"));
    }
    if errors_expected > 0 {
        println!(
            "expected errors run: {errors_expected}; matched on type {}, phase {}, detail {}",
            error_parts[0], error_parts[1], error_parts[2]
        );
    }
    for (reason, n) in &skip_reasons {
        println!("skipped {n}: {reason}");
    }
    for p in &now_passing {
        println!("now passes (remove from tck-skips.txt): {p}");
    }
    for p in &problems {
        eprintln!("{p}");
    }
    println!("TCK: {passed} passed, {failed} failed, {skipped} skipped");
    if failed > 0 || !problems.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
