//! A runner for the openCypher TCK feature files (`../shared/tck`): each scenario on a fresh
//! graph, its setup queries, parameters and query, compared exactly as the TCK defines — rows in
//! any order or in order, graph values by their parts, side effects by counting, errors by type,
//! phase and detail. Skips come only from the committed list `tests/tck-skips.txt`.

pub mod feature;
pub mod harness;
pub mod value;

use std::collections::{BTreeMap, BTreeSet};

use feature::{Scenario, Step};
use value::Value;

/// What a query returned.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<Value>>,
}

/// How a query failed.
#[derive(Clone, Debug)]
pub struct Failure {
    /// TCK error type (`SyntaxError`, …).
    pub kind: String,
    /// `compile time` or `runtime`.
    pub phase: String,
    /// TCK detail (`UndefinedVariable`, …).
    pub detail: String,
    /// For people.
    pub message: String,
}

/// Everything side effects are counted from: element identities, distinct labels, and
/// (element, key, value) property triples.
#[derive(Clone, Debug, Default)]
pub struct Census {
    /// Node identities.
    pub nodes: BTreeSet<u64>,
    /// Relationship identities.
    pub rels: BTreeSet<u64>,
    /// Distinct label names present.
    pub labels: BTreeSet<String>,
    /// `(is_rel, id, key, printed value)`.
    pub props: BTreeSet<(bool, u64, String, String)>,
}

/// A graph the runner drives.
pub trait Graph {
    /// Runs one query with parameters.
    fn run(&mut self, query: &str, params: &BTreeMap<String, Value>) -> Result<Outcome, Failure>;
    /// What is in the graph now.
    fn census(&self) -> Census;
}

/// How a run gets its graphs: a fresh one per scenario from this factory.
pub enum Mode<'a> {
    /// Run on fresh graphs from this factory.
    Execute(&'a dyn Fn() -> Box<dyn Graph>),
}

/// A scenario's verdict.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Everything matched.
    Pass,
    /// Something did not; the reason.
    Fail(String),
}

/// How an expected error matched, part by part (so the rate on type alone is visible).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorMatch {
    /// The type matched.
    pub kind: bool,
    /// The phase matched.
    pub phase: bool,
    /// The detail matched.
    pub detail: bool,
}

/// The side-effect counters, as the TCK names them.
const COUNTERS: [&str; 8] = ["+nodes", "-nodes", "+relationships", "-relationships", "+labels", "-labels", "+properties", "-properties"];

/// The counters between two censuses.
pub fn side_effects(before: &Census, after: &Census) -> BTreeMap<&'static str, usize> {
    let counts = [
        after.nodes.difference(&before.nodes).count(),
        before.nodes.difference(&after.nodes).count(),
        after.rels.difference(&before.rels).count(),
        before.rels.difference(&after.rels).count(),
        after.labels.difference(&before.labels).count(),
        before.labels.difference(&after.labels).count(),
        after.props.difference(&before.props).count(),
        before.props.difference(&after.props).count(),
    ];
    COUNTERS.iter().copied().zip(counts).collect()
}

/// Compares a result with an expected table (header first). `ordered` for "in order",
/// `lists_unordered` for "ignoring element order for lists".
pub fn compare_rows(got: &Outcome, table: &[Vec<String>], ordered: bool, lists_unordered: bool) -> Result<(), String> {
    let Some((header, rows)) = table.split_first() else { return Err("expected table has no header".into()) };
    if &got.columns != header {
        return Err(format!("columns {:?}, expected {:?}", got.columns, header));
    }
    let mut want = Vec::with_capacity(rows.len());
    for r in rows {
        let mut row = Vec::with_capacity(r.len());
        for cell in r {
            row.push(value::parse(cell).map_err(|e| format!("expected cell {cell:?}: {e}"))?);
        }
        want.push(row);
    }
    let norm = |row: &Vec<Value>| -> Vec<Value> {
        if lists_unordered {
            row.iter().map(Value::lists_unordered).collect()
        } else {
            row.clone()
        }
    };
    let show = |rows: &[Vec<Value>]| -> String {
        rows.iter().map(|r| r.iter().map(ToString::to_string).collect::<Vec<_>>().join(" | ")).collect::<Vec<_>>().join("\n    ")
    };
    let mismatch = || format!("rows differ:\n  got:\n    {}\n  expected:\n    {}", show(&got.rows), show(&want));
    if got.rows.len() != want.len() {
        return Err(mismatch());
    }
    if ordered {
        if got.rows.iter().map(norm).eq(want.iter().map(norm)) {
            return Ok(());
        }
        return Err(mismatch());
    }
    // A multiset comparison: each expected row takes one equal row not yet taken.
    let got_rows: Vec<Vec<Value>> = got.rows.iter().map(norm).collect();
    let mut taken = vec![false; got_rows.len()];
    for w in want.iter().map(norm) {
        match (0..got_rows.len()).find(|&i| !taken[i] && got_rows[i] == w) {
            Some(i) => taken[i] = true,
            None => return Err(mismatch()),
        }
    }
    Ok(())
}

/// Compares a failure with `TYPE should be raised at PHASE: DETAIL`, with the TCK's wildcards
/// (`Error`, `any time`, `*`).
pub fn compare_error(got: &Failure, kind: &str, phase: &str, detail: &str) -> ErrorMatch {
    ErrorMatch {
        kind: kind == "Error" || got.kind == kind,
        phase: phase == "any time" || got.phase == phase,
        detail: detail == "*" || got.detail == detail,
    }
}

/// Parses `a TYPE should be raised at PHASE: DETAIL`.
pub fn expected_error(step: &str) -> Option<(&str, &str, &str)> {
    let rest = step.strip_prefix("a ").or_else(|| step.strip_prefix("an "))?;
    let (kind, rest) = rest.split_once(" should be raised at ")?;
    let (phase, detail) = rest.split_once(": ")?;
    Some((kind, phase, detail.trim()))
}

/// Runs one scenario; the second value says how an expected error matched, if one was expected.
#[allow(clippy::too_many_lines)] // Reason: one arm per TCK step, in the order a scenario meets them.
pub fn run(scenario: &Scenario, mode: &Mode<'_>) -> (Verdict, Option<ErrorMatch>) {
    let Mode::Execute(factory) = mode;
    let mut graph = factory();
    let mut params: BTreeMap<String, Value> = BTreeMap::new();
    let mut result: Option<Result<Outcome, Failure>> = None;
    let mut censuses: Option<(Census, Census)> = None;
    let mut error_match = None;
    let fail = |why: String, m: Option<ErrorMatch>| (Verdict::Fail(why), m);
    for step in &scenario.steps {
        let Step { text, doc, table } = step;
        let doc = doc.as_deref().unwrap_or("");
        match text.as_str() {
            "an empty graph" | "any graph" => {}
            "having executed:" => {
                if let Err(e) = graph.run(doc, &BTreeMap::new()) {
                    return fail(format!("setup query failed: {} ({}: {})", e.message, e.kind, e.detail), None);
                }
            }
            "parameters are:" => {
                for row in table.iter().flatten() {
                    let [name, v] = row.as_slice() else { return fail(format!("bad parameter row {row:?}"), None) };
                    match value::parse(v) {
                        Ok(v) => {
                            params.insert(name.clone(), v);
                        }
                        Err(e) => return fail(format!("parameter {name}: {e}"), None),
                    }
                }
            }
            "executing query:" | "executing control query:" => {
                let before = graph.census();
                let r = graph.run(doc, &params);
                let after = graph.census();
                if text == "executing query:" {
                    censuses = Some((before, after));
                }
                result = Some(r);
            }
            "the result should be empty" => match &result {
                Some(Ok(o)) if o.rows.is_empty() => {}
                Some(Ok(o)) => return fail(format!("expected no rows, got {}", o.rows.len()), None),
                Some(Err(e)) => return fail(format!("query failed: {} ({}: {})", e.message, e.kind, e.detail), None),
                None => return fail("no query ran before this step".into(), None),
            },
            t if t.starts_with("the result should be") => {
                let ordered = t.contains("in order");
                let lists_unordered = t.contains("ignoring element order for lists");
                match &result {
                    Some(Ok(o)) => {
                        if let Err(why) = compare_rows(o, table.as_deref().unwrap_or(&[]), ordered, lists_unordered) {
                            return fail(why, None);
                        }
                    }
                    Some(Err(e)) => return fail(format!("query failed: {} ({}: {})", e.message, e.kind, e.detail), None),
                    None => return fail("no query ran before this step".into(), None),
                }
            }
            t if t.contains(" should be raised at ") => {
                let Some((kind, phase, detail)) = expected_error(t) else { return fail(format!("bad step {t:?}"), None) };
                match &result {
                    Some(Err(e)) => {
                        let m = compare_error(e, kind, phase, detail);
                        error_match = Some(m);
                        if m != (ErrorMatch { kind: true, phase: true, detail: true }) {
                            return fail(
                                format!(
                                    "raised {} at {}: {} ({}), expected {kind} at {phase}: {detail}",
                                    e.kind, e.phase, e.detail, e.message
                                ),
                                error_match,
                            );
                        }
                        // An error implies the graph is unchanged.
                        if let Some((b, a)) = &censuses {
                            if side_effects(b, a).values().any(|&n| n > 0) {
                                return fail("the failing query changed the graph".into(), error_match);
                            }
                        }
                    }
                    Some(Ok(_)) => {
                        return fail(format!("expected {kind} at {phase}: {detail}, the query succeeded"), Some(ErrorMatch::default()))
                    }
                    None => return fail("no query ran before this step".into(), Some(ErrorMatch::default())),
                }
            }
            "no side effects" | "the side effects should be:" => {
                let Some((before, after)) = &censuses else { return fail("no query ran before this step".into(), error_match) };
                let got = side_effects(before, after);
                let mut want: BTreeMap<&str, usize> = COUNTERS.iter().map(|c| (*c, 0)).collect();
                for row in table.iter().flatten() {
                    let [name, n] = row.as_slice() else { return fail(format!("bad side-effect row {row:?}"), None) };
                    let Some(slot) = want.get_mut(name.as_str()) else { return fail(format!("unknown counter {name}"), None) };
                    *slot = n.parse().unwrap_or(usize::MAX);
                }
                if got != want {
                    let diff: Vec<String> =
                        COUNTERS.iter().filter(|c| got[*c] != want[*c]).map(|c| format!("{c} {} (expected {})", got[c], want[c])).collect();
                    return fail(format!("side effects differ: {}", diff.join(", ")), error_match);
                }
            }
            other => return fail(format!("unknown step {other:?}"), None),
        }
    }
    (Verdict::Pass, error_match)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[&[&str]]) -> Vec<Vec<String>> {
        rows.iter().map(|r| r.iter().map(|c| (*c).to_owned()).collect()).collect()
    }

    fn outcome(cols: &[&str], rows: Vec<Vec<Value>>) -> Outcome {
        Outcome { columns: cols.iter().map(|c| (*c).to_owned()).collect(), rows }
    }

    #[test]
    fn a_lax_comparator_cannot_pass() {
        let t = table(&[&["x"], &["1"], &["2"]]);
        // 1 vs 1.0.
        let floats = outcome(&["x"], vec![vec![Value::Float(1.0)], vec![Value::Int(2)]]);
        assert!(compare_rows(&floats, &t, false, false).is_err());
        // The wrong order under "in order", the right one in any order.
        let reversed = outcome(&["x"], vec![vec![Value::Int(2)], vec![Value::Int(1)]]);
        assert!(compare_rows(&reversed, &t, true, false).is_err());
        assert!(compare_rows(&reversed, &t, false, false).is_ok());
        // Duplicates count.
        let dup = outcome(&["x"], vec![vec![Value::Int(1)], vec![Value::Int(1)]]);
        assert!(compare_rows(&dup, &t, false, false).is_err());
        // Column names compare exactly.
        let renamed = outcome(&["y"], vec![vec![Value::Int(1)], vec![Value::Int(2)]]);
        assert!(compare_rows(&renamed, &t, false, false).is_err());
        // List order matters unless the step says otherwise.
        let lt = table(&[&["l"], &["[1, 2]"]]);
        let swapped = outcome(&["l"], vec![vec![Value::List(vec![Value::Int(2), Value::Int(1)])]]);
        assert!(compare_rows(&swapped, &lt, false, false).is_err());
        assert!(compare_rows(&swapped, &lt, false, true).is_ok());
    }

    #[test]
    fn a_wrong_error_detail_or_a_missing_side_effect_fails() {
        // A graph that creates nothing, run below against a scenario expecting +nodes 1.
        struct Inert;
        impl Graph for Inert {
            fn run(&mut self, _: &str, _: &BTreeMap<String, Value>) -> Result<Outcome, Failure> {
                Ok(Outcome::default())
            }
            fn census(&self) -> Census {
                Census::default()
            }
        }
        let got = Failure {
            kind: "SyntaxError".into(),
            phase: "compile time".into(),
            detail: "UndefinedVariable".into(),
            message: String::new(),
        };
        let m = compare_error(&got, "SyntaxError", "compile time", "VariableTypeConflict");
        assert_eq!(m, ErrorMatch { kind: true, phase: true, detail: false });
        assert_eq!(compare_error(&got, "Error", "any time", "*"), ErrorMatch { kind: true, phase: true, detail: true });
        assert_eq!(
            expected_error("a SyntaxError should be raised at compile time: UndefinedVariable"),
            Some(("SyntaxError", "compile time", "UndefinedVariable"))
        );

        let text = "Feature: F\n  Scenario: [1] s\n    Given an empty graph\n    When executing query:\n      \"\"\"\n      CREATE ()\n      \"\"\"\n    Then the result should be empty\n    And the side effects should be:\n      | +nodes | 1 |\n";
        let scenarios = feature::parse("F.feature", text).expect("parses");
        let factory = || -> Box<dyn Graph> { Box::new(Inert) };
        let (verdict, _) = run(&scenarios[0], &Mode::Execute(&factory));
        assert!(matches!(verdict, Verdict::Fail(ref why) if why.contains("+nodes 0 (expected 1)")), "{verdict:?}");
    }
}
