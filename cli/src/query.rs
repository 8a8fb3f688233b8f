//! `engram query` and `engram shell`: the query language from the command line. Results print as
//! a table like cypher-shell's, or as one JSON object; a query error exits 2 (4 for a limit or
//! deadline) with its line and column.

use std::fmt::Write as _;
use std::path::Path;

use engram::query::QueryError;
use engram::{ErrorClass, Params, QueryResult, QueryValue};

use crate::admin::open_for_reading;
use crate::fail::{bug, fail, Failure};
use crate::out;

/// Parses `--param name=JSON` values.
fn parse_params(raw: &[String]) -> Result<Params, Failure> {
    let mut params = Params::new();
    for p in raw {
        let Some((name, json)) = p.split_once('=') else {
            return Err(format!("--param {p:?}: expected NAME=JSON").into());
        };
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| Failure::from(format!("--param {name}: not JSON ({e}): {json}")))?;
        params.insert(name.to_owned(), QueryValue::from_json(&value).map_err(|e| Failure::from(format!("--param {name}: {e}")))?);
    }
    Ok(params)
}

fn class_of(e: &QueryError) -> ErrorClass {
    engram::Error::Query(e.clone()).class()
}

/// The `--json` form of a query error.
fn error_json(e: &QueryError) -> serde_json::Value {
    serde_json::json!({"error": {
        "type": e.kind.as_str(),
        "detail": e.detail.as_str(),
        "phase": e.phase.short(),
        "message": e.message,
        "line": e.line(),
        "column": e.column(),
    }})
}

/// The `--json` form of a result.
pub fn result_json(r: &QueryResult) -> serde_json::Value {
    let stats: serde_json::Map<String, serde_json::Value> =
        r.stats.counters().iter().map(|(k, v)| ((*k).to_owned(), serde_json::json!(v))).collect();
    let mut out = serde_json::json!({
        "columns": &*r.columns,
        "rows": r.rows.iter().map(|row| row.iter().map(QueryValue::to_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "stats": stats,
    });
    if let (Some(plan), Some(map)) = (&r.plan, out.as_object_mut()) {
        map.insert("plan".to_owned(), serde_json::json!(plan));
    }
    out
}

/// A value as a table cell: strings quoted, nodes `(:L {k: v})`, relationships `[:T {k: v}]`.
fn cell(v: &QueryValue) -> String {
    fn props(out: &mut String, p: &std::collections::BTreeMap<String, QueryValue>) {
        if p.is_empty() {
            return;
        }
        let inner: Vec<String> = p.iter().map(|(k, v)| format!("{k}: {}", cell(v))).collect();
        let _ = write!(out, " {{{}}}", inner.join(", "));
    }
    fn node(n: &engram::exec::Node) -> String {
        let mut s = String::from("(");
        for l in &n.labels {
            let _ = write!(s, ":{l}");
        }
        props(&mut s, &n.properties);
        s.push(')');
        s.replace("( ", "(")
    }
    fn rel(r: &engram::exec::Relationship) -> String {
        let mut s = format!("[:{}", r.rel_type);
        props(&mut s, &r.properties);
        s.push(']');
        s
    }
    match v {
        QueryValue::Null => "NULL".to_owned(),
        QueryValue::Bool(b) => b.to_string(),
        QueryValue::Int(i) => i.to_string(),
        QueryValue::Float(f) if f.is_nan() => "NaN".to_owned(),
        QueryValue::Float(f) if f.is_infinite() => if *f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned(),
        QueryValue::Float(f) => format!("{f:?}"),
        QueryValue::String(s) => format!("{s:?}"),
        QueryValue::Temporal(t) => t.to_string(),
        QueryValue::Point(p) => p.to_string(),
        QueryValue::List(items) => format!("[{}]", items.iter().map(cell).collect::<Vec<_>>().join(", ")),
        QueryValue::Map(m) => format!("{{{}}}", m.iter().map(|(k, v)| format!("{k}: {}", cell(v))).collect::<Vec<_>>().join(", ")),
        QueryValue::Node(n) => node(n),
        QueryValue::Relationship(r) => rel(r),
        QueryValue::Path(p) => {
            let mut s = String::from("<");
            if let Some(first) = p.nodes.first() {
                s.push_str(&node(first));
            }
            for (r, pair) in p.relationships.iter().zip(p.nodes.windows(2)) {
                if r.start == pair[0].id {
                    let _ = write!(s, "-{}->{}", rel(r), node(&pair[1]));
                } else {
                    let _ = write!(s, "<-{}-{}", rel(r), node(&pair[1]));
                }
            }
            s.push('>');
            s
        }
    }
}

/// Whether `text` asks for the plan only (`EXPLAIN …`, after any parameter header).
fn explains(text: &str) -> bool {
    let body = engram::query::header::body(text).unwrap_or(text).trim_start();
    body.get(..7).is_some_and(|w| w.eq_ignore_ascii_case("EXPLAIN"))
}

/// A result as a cypher-shell-like table, with the row count and any write counters; for
/// `EXPLAIN`, the plan alone.
pub fn table(r: &QueryResult, explain: bool) -> String {
    let mut out = String::new();
    if let Some(plan) = &r.plan {
        out.push_str(plan);
    }
    if explain {
        return out;
    }
    if !r.columns.is_empty() {
        let cells: Vec<Vec<String>> = r.rows.iter().map(|row| row.iter().map(cell).collect()).collect();
        let widths: Vec<usize> = r
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| cells.iter().map(|row| row[i].chars().count()).chain([c.chars().count()]).max().unwrap_or(0))
            .collect();
        let rule = format!("+{}+\n", widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("+"));
        let line = |values: &[String]| -> String {
            let parts: Vec<String> =
                values.iter().zip(&widths).map(|(v, w)| format!(" {v}{} ", " ".repeat(w - v.chars().count()))).collect();
            format!("|{}|\n", parts.join("|"))
        };
        out.push_str(&rule);
        out.push_str(&line(&r.columns));
        out.push_str(&rule);
        for row in &cells {
            out.push_str(&line(row));
        }
        out.push_str(&rule);
    }
    let n = r.rows.len();
    let _ = writeln!(out, "{n} row{}", if n == 1 { "" } else { "s" });
    let written: Vec<String> = r.stats.counters().iter().filter(|(_, v)| *v > 0).map(|(k, v)| format!("{k}: {v}")).collect();
    if !written.is_empty() {
        let _ = writeln!(out, "{}", written.join(", "));
    }
    out
}

fn run_one(db: &engram::Database, workspace: &str, text: &str, params: &Params) -> Result<Result<QueryResult, QueryError>, Failure> {
    match db.query(workspace, text, params) {
        Ok(r) => Ok(Ok(r)),
        Err(engram::Error::Query(e)) => Ok(Err(e)),
        Err(e) => Err(fail(e)),
    }
}

/// `engram query DIR TEXT`.
pub fn run(dir: &Path, workspace: &str, text: &str, params: &[String], json: bool) -> Result<(), Failure> {
    let params = parse_params(params)?;
    // A read query opens the folder read-only (beside a writer, on read-only media); a query that
    // does not compile is reported by the run.
    let db = if engram::exec::writes(text).unwrap_or(false) { crate::admin::open_existing(dir)? } else { open_for_reading(dir)? };
    match run_one(&db, workspace, text, &params)? {
        Ok(r) if json => out::print(&format!("{}\n", serde_json::to_string(&result_json(&r)).map_err(bug)?)),
        Ok(r) => out::print(&table(&r, explains(text))),
        Err(e) if json => {
            out::print(&format!("{}\n", serde_json::to_string(&error_json(&e)).map_err(bug)?))?;
            Err(Failure { code: class_of(&e).exit_code(), message: String::new() })
        }
        Err(e) => Err(Failure::of(class_of(&e), e.to_string())),
    }
}

const SHELL_HELP: &str = "Statements end with `;` and may span lines.
  :explain QUERY;   the plan, without running it
  :profile QUERY;   run it, with rows and time per operator
  :schema           the labels, types and property keys, with their value types
  SHOW PROCEDURES;  the procedures (engram.recall, engram.neighbors, …)
  SHOW FUNCTIONS;   the functions, each with a line
  :help             this text
  :quit             leave (or Ctrl-D)
";

/// What `:schema` runs: the graph's shape as Neo4j's schema procedures give it.
const SCHEMA: [&str; 2] = [
    "CALL db.schema.nodeTypeProperties() YIELD nodeType, propertyName, propertyTypes, mandatory",
    "CALL db.schema.relTypeProperties() YIELD relType, propertyName, propertyTypes, mandatory",
];

/// `engram shell DIR`: a read-eval-print loop with history.
pub fn shell(dir: &Path, workspace: &str) -> Result<(), Failure> {
    let (db, writable) = crate::admin::open_for_either(dir)?;
    let mut editor = rustyline::DefaultEditor::new().map_err(|e| Failure::operator(format!("the terminal: {e}")))?;
    // History lives in the home folder: a read command writes nothing into the database folder.
    let history = std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".engram_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    let mode = if writable { "" } else { ", read-only: another process has it open for writing, or the media is read-only" };
    out::print(&format!("engram shell on {} (workspace {workspace}{mode}); :help for help\n", dir.display()))?;
    let mut pending = String::new();
    loop {
        let prompt = if pending.is_empty() { "engram> " } else { "   ...> " };
        let line = match editor.readline(prompt) {
            Ok(l) => l,
            Err(rustyline::error::ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(Failure::operator(format!("reading input: {e}"))),
        };
        let trimmed = line.trim();
        if pending.is_empty() {
            match trimmed {
                "" => continue,
                ":help" | ":h" => {
                    out::print(SHELL_HELP)?;
                    continue;
                }
                ":quit" | ":q" | ":exit" => break,
                ":schema" => {
                    for text in SCHEMA {
                        match run_one(&db, workspace, text, &Params::new())? {
                            Ok(r) => out::print(&table(&r, false))?,
                            Err(e) => out::print(&format!("error: {e}\n"))?,
                        }
                    }
                    continue;
                }
                _ => {}
            }
        }
        pending.push_str(&line);
        pending.push('\n');
        if !trimmed.ends_with(';') {
            continue;
        }
        let statement = std::mem::take(&mut pending);
        let _ = editor.add_history_entry(statement.trim());
        let body = statement.trim().trim_end_matches(';').trim();
        let text = if let Some(rest) = body.strip_prefix(":explain") {
            format!("EXPLAIN {rest}")
        } else if let Some(rest) = body.strip_prefix(":profile") {
            format!("PROFILE {rest}")
        } else {
            body.to_owned()
        };
        match run_one(&db, workspace, &text, &Params::new())? {
            Ok(r) => out::print(&table(&r, explains(&text)))?,
            Err(e) => out::print(&format!("error: {e}\n"))?,
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(())
}
