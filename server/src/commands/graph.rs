//! FalkorDB's `GRAPH.*` commands: a graph key is a workspace; results in FalkorDB's compact
//! format (`--compact`, what its clients send) or its verbose one (redis-cli users).

use std::sync::Arc;

use super::values::{compact, falkor_stats, has_elements, verbose, Vocab};
use super::{arg, arity, deadline, engine, error_reply, require, Conn, QueryCall};
use crate::resp::Reply;
use crate::state::Shared;

/// Runs a `GRAPH.*` command.
pub(super) async fn run(shared: &Arc<Shared>, conn: &Conn, name: &str, args: &[Vec<u8>]) -> Reply {
    let who = conn.who();
    match name {
        "GRAPH.QUERY" | "GRAPH.RO_QUERY" | "GRAPH.PROFILE" | "GRAPH.EXPLAIN" => query(shared, who, name, args).await,
        "GRAPH.LIST" => {
            let names: Vec<Reply> = shared
                .db
                .workspaces()
                .iter()
                .filter(|w| who.may(&w.name, engram::Access::Read))
                .map(|w| Reply::text(w.name.to_string()))
                .collect();
            Reply::Array(names)
        }
        "GRAPH.DELETE" => {
            let Some(key) = arg(args, 1).map(ToOwned::to_owned) else { return arity(name) };
            if let Err(r) = require(&who, &key, engram::Access::Admin) {
                return r;
            }
            let s = shared.clone();
            match engine(shared, move |db| {
                if !db.workspaces().iter().any(|w| *w.name == *key) {
                    return Err(Reply::err("Invalid graph operation on empty key"));
                }
                db.drop_workspace(&key).map_err(|e| error_reply(&s, &e))
            })
            .await
            {
                Ok(Ok(())) => Reply::ok(),
                Ok(Err(r)) | Err(r) => r,
            }
        }
        "GRAPH.CONFIG"
            if arg(args, 1).is_some_and(|s| s.eq_ignore_ascii_case("SET")) && require(&who, "*", engram::Access::Admin).is_err() =>
        {
            require(&who, "*", engram::Access::Admin).err().unwrap_or_else(Reply::ok)
        }
        "GRAPH.CONFIG" => config(shared, args),
        "GRAPH.SLOWLOG" => slowlog(shared, &who, args),
        "GRAPH.INFO" => info(shared, &who, args),
        "GRAPH.MEMORY" => memory(shared, who, args).await,
        "GRAPH.COPY" => {
            let (Some(from), Some(to), 3) = (arg(args, 1).map(ToOwned::to_owned), arg(args, 2).map(ToOwned::to_owned), args.len()) else {
                return arity(name);
            };
            // The copy holds all of the source: its admins' to make, where they may write.
            if let Err(r) = require(&who, &from, engram::Access::Admin).and_then(|()| require(&who, &to, engram::Access::Write)) {
                return r;
            }
            let s = shared.clone();
            match engine(shared, move |db| engram::io::copy::copy_workspace(db, &from, &to)).await {
                Ok(Ok(_)) => Reply::ok(),
                Ok(Err(engram::io::jsonl::ImportError::Database(e))) => error_reply(&s, &e),
                Ok(Err(e)) => Reply::err(e.to_string()),
                Err(r) => r,
            }
        }
        "GRAPH.CONSTRAINT" => constraint(shared, who, args).await,
        _ => Reply::err(format!("unknown command '{name}'")),
    }
}

/// `GRAPH.CONSTRAINT CREATE|DROP key UNIQUE|MANDATORY NODE|RELATIONSHIP label PROPERTIES n p…`:
/// the constraint statement it stands for, run as a query on `key` (the same checks, record and
/// errors). engram checks the stored data at once, so the reply is `OK` (FalkorDB answers
/// `PENDING` and builds it later); data that breaks it is an error, and nothing is declared.
async fn constraint(shared: &Arc<Shared>, principal: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let words: Option<Vec<&str>> = args.iter().skip(1).map(|a| std::str::from_utf8(a).ok()).collect();
    let Some(words) = words.filter(|w| w.len() >= 7) else { return arity("graph.constraint") };
    let upper: Vec<String> = words.iter().take(6).map(|w| w.to_ascii_uppercase()).collect();
    let (create, key, label) = (upper[0] == "CREATE", words[1], words[4]);
    let count = words[6].parse::<usize>().ok().filter(|n| *n >= 1 && words.len() == 7 + n);
    let (Some(n), true, true, true, true) = (
        count,
        create || upper[0] == "DROP",
        matches!(upper[2].as_str(), "UNIQUE" | "MANDATORY"),
        matches!(upper[3].as_str(), "NODE" | "RELATIONSHIP"),
        upper[5] == "PROPERTIES",
    ) else {
        return Reply::err("usage: GRAPH.CONSTRAINT CREATE|DROP key UNIQUE|MANDATORY NODE|RELATIONSHIP label PROPERTIES count property…");
    };
    let quote = |name: &str| format!("`{}`", name.replace('`', "``"));
    let props: Vec<String> = words[7..7 + n].iter().map(|p| format!("e.{}", quote(p))).collect();
    let pattern = if upper[3] == "NODE" { format!("(e:{})", quote(label)) } else { format!("()-[e:{}]-()", quote(label)) };
    let require = if upper[2] == "UNIQUE" { "UNIQUE" } else { "NOT NULL" };
    let text = format!("{} CONSTRAINT FOR {pattern} REQUIRE ({}) IS {require}", if create { "CREATE" } else { "DROP" }, props.join(", "));
    let timeout = match deadline(shared, None) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let call =
        QueryCall { workspace: key.to_owned(), text, params: engram::Params::new(), read_only: false, timeout, mode: None, principal };
    let s = shared.clone();
    let reply = super::run_query(shared, call, "graph.constraint".to_owned(), move |_, _, outcome, _| match outcome {
        Ok(_) => Reply::ok(),
        Err(Ok(e)) => error_reply(&s, &e),
        Err(Err(r)) => r,
    })
    .await;
    reply.unwrap_or_else(|r| r)
}

/// Entries `GRAPH.SLOWLOG` lists, as FalkorDB.
const GRAPH_SLOWLOG_ENTRIES: usize = 10;

/// `GRAPH.SLOWLOG key [RESET]`: the slowest query commands on `key` (at most ten, slowest first)
/// among those the slow log holds (`slowlog-log-slower-than`, `slowlog-max-len`), each as
/// FalkorDB lists them: `[unix seconds, command, query, milliseconds]`, the query without its
/// parameter header. `RESET` forgets the key's entries here, not in `SLOWLOG`. Admin on the key:
/// the texts are other users' queries.
fn slowlog(shared: &Shared, who: &engram::Principal, args: &[Vec<u8>]) -> Reply {
    let (Some(key), true) = (arg(args, 1), args.len() <= 3) else { return arity("graph.slowlog") };
    if let Err(r) = require(who, key, engram::Access::Admin) {
        return r;
    }
    match arg(args, 2) {
        None => {}
        Some(w) if w.eq_ignore_ascii_case("RESET") => {
            if let Ok(mut from) = shared.graph_slowlog_from.lock() {
                from.insert(key.to_owned(), shared.next_slow_id());
            }
            return Reply::ok();
        }
        Some(w) => return Reply::err(format!("Unknown subcommand '{w}' for GRAPH.SLOWLOG (RESET)")),
    }
    let from = shared.graph_slowlog_from.lock().ok().and_then(|f| f.get(key).copied()).unwrap_or(0);
    let Ok(log) = shared.slowlog.lock() else { return Reply::err("slowlog unavailable") };
    let mut mine: Vec<(&crate::state::SlowEntry, &str)> = log
        .iter()
        .filter(|e| e.id >= from)
        .filter_map(|e| e.query.as_ref().filter(|(k, _)| k == key).map(|(_, text)| (e, text.as_str())))
        .collect();
    mine.sort_by(|a, b| b.0.micros.cmp(&a.0.micros).then(b.0.id.cmp(&a.0.id)));
    Reply::Array(
        mine.iter()
            .take(GRAPH_SLOWLOG_ENTRIES)
            .map(|(e, text)| {
                Reply::Array(vec![
                    Reply::text(e.at.to_string()),
                    Reply::text(e.args.first().map(|c| c.to_ascii_uppercase()).unwrap_or_default()),
                    Reply::text((*text).to_owned()),
                    Reply::text(format!("{:.3}", e.micros as f64 / 1000.0)),
                ])
            })
            .collect(),
    )
}

/// `GRAPH.INFO [RunningQueries] [WaitingQueries]` (both when neither is named): the queries
/// running now and those accepted but waiting for the engine pool, as FalkorDB lists them: per
/// section its title and one flat record per query (`Received at` in Unix milliseconds, `Graph
/// name`, `Query` without its parameter header, `Execution duration` or `Wait duration` in
/// milliseconds, `Replicated command` 0). Only queries on graphs the caller administers: the texts
/// are other users' queries.
fn info(shared: &Shared, who: &engram::Principal, args: &[Vec<u8>]) -> Reply {
    let (mut running, mut waiting) = (args.len() == 1, args.len() == 1);
    for a in args.iter().skip(1).filter_map(|a| std::str::from_utf8(a).ok()) {
        running |= a.eq_ignore_ascii_case("RunningQueries");
        waiting |= a.eq_ignore_ascii_case("WaitingQueries");
    }
    if !running && !waiting {
        return Reply::Simple("no section found");
    }
    let all: Vec<Arc<crate::state::InFlight>> = match shared.in_flight.lock() {
        Ok(all) => all.values().filter(|q| who.may(&q.workspace, engram::Access::Admin)).cloned().collect(),
        Err(_) => return Reply::err("the in-flight list is unavailable"),
    };
    let record = |q: &crate::state::InFlight, label: &str, ms: f64, replicated: bool| {
        let mut r = vec![
            Reply::text("Received at".to_owned()),
            Reply::Int(i64::try_from(q.received_ms).unwrap_or(i64::MAX)),
            Reply::text("Graph name".to_owned()),
            Reply::text(q.workspace.clone()),
            Reply::text("Query".to_owned()),
            Reply::text(q.query.clone()),
            Reply::text(label.to_owned()),
            Reply::Double(ms),
        ];
        if replicated {
            r.extend([Reply::text("Replicated command".to_owned()), Reply::Int(0)]);
        }
        Reply::Array(r)
    };
    let mut out = Vec::new();
    if running {
        let rows =
            all.iter().filter_map(|q| q.started().map(|s| record(q, "Execution duration", s.elapsed().as_secs_f64() * 1000.0, true)));
        out.extend([Reply::text("# Running queries".to_owned()), Reply::Array(rows.collect())]);
    }
    if waiting {
        let rows = all
            .iter()
            .filter(|q| q.started().is_none())
            .map(|q| record(q, "Wait duration", q.received.elapsed().as_secs_f64() * 1000.0, false));
        out.extend([Reply::text("# Waiting queries".to_owned()), Reply::Array(rows.collect())]);
    }
    Reply::Array(out)
}

/// `GRAPH.MEMORY USAGE key [SAMPLES n]`: the graph's share of the heap in megabytes, as FalkorDB
/// names its parts (`total_graph_sz_mb`, `label_matrices_sz_mb`, `relation_matrices_sz_mb`,
/// `amortized_node_storage_sz_mb`, `amortized_edge_storage_sz_mb`, `indices_sz_mb`, each rounded
/// down, the total their sum), plus `total_graph_sz_bytes`. Exact for the graph's own strings
/// and properties, so `SAMPLES` changes nothing. Admin on the key: a size tells how much is there.
async fn memory(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    const MB: usize = 1 << 20;
    if !matches!(args.len(), 3 | 5) {
        return arity("graph.memory");
    }
    let sub = arg(args, 1).unwrap_or("");
    if !sub.eq_ignore_ascii_case("USAGE") {
        return Reply::err(format!("ERR unknown subcommand '{sub}'. expecting GRAPH.MEMORY USAGE <key>"));
    }
    if args.len() == 5 {
        let word = arg(args, 3).unwrap_or("");
        if !word.eq_ignore_ascii_case("SAMPLES") {
            return Reply::err(format!("ERR unknown subcommand '{word}'. expecting GRAPH.MEMORY USAGE <key> SAMPLES <x>"));
        }
        if !arg(args, 4).and_then(|n| n.parse::<f64>().ok()).is_some_and(|n| n >= 0.0) {
            return Reply::err("ERR SAMPLES must be a non-negative number");
        }
    }
    let Some(key) = arg(args, 2).map(ToOwned::to_owned) else { return Reply::err("the graph key must be UTF-8") };
    let s = shared.clone();
    let got = engine(shared, move |db| db.scope(who).workspace_memory(&key)).await;
    let m = match got {
        Ok(Ok(Some(m))) => m,
        Ok(Ok(None)) => return Reply::err("ERR Invalid graph operation on empty key"),
        Ok(Err(e)) => return error_reply(&s, &e),
        Err(r) => return r,
    };
    let parts = [m.label_bytes / MB, m.relation_bytes / MB, m.node_bytes / MB, m.edge_bytes / MB, m.index_bytes / MB];
    let int = |n: usize| Reply::Int(i64::try_from(n).unwrap_or(i64::MAX));
    Reply::Map(vec![
        ("total_graph_sz_mb".to_owned(), int(parts.iter().sum())),
        ("label_matrices_sz_mb".to_owned(), int(parts[0])),
        ("relation_matrices_sz_mb".to_owned(), int(parts[1])),
        ("amortized_node_storage_sz_mb".to_owned(), int(parts[2])),
        ("amortized_edge_storage_sz_mb".to_owned(), int(parts[3])),
        ("indices_sz_mb".to_owned(), int(parts[4])),
        ("total_graph_sz_bytes".to_owned(), int(m.total())),
    ])
}

/// `GRAPH.CONFIG GET name` → `[name, value]` (`*`: all); `GRAPH.CONFIG SET name value`.
fn config(shared: &Shared, args: &[Vec<u8>]) -> Reply {
    let settings = |l: &crate::Limits| {
        vec![
            ("TIMEOUT", l.query_timeout_default_ms),
            ("TIMEOUT_DEFAULT", l.query_timeout_default_ms),
            ("TIMEOUT_MAX", l.query_timeout_max_ms),
            ("MAX_QUEUED_QUERIES", l.max_pending_queries as u64),
        ]
    };
    match (arg(args, 1).map(str::to_ascii_uppercase).as_deref(), arg(args, 2).map(str::to_ascii_uppercase)) {
        (Some("GET"), Some(name)) => {
            let all = settings(&shared.limits());
            let pair = |(n, v): &(&str, u64)| Reply::Array(vec![Reply::text(*n), Reply::Int(i64::try_from(*v).unwrap_or(i64::MAX))]);
            if name == "*" {
                return Reply::Array(all.iter().map(pair).collect());
            }
            all.iter().find(|(n, _)| *n == name).map_or_else(|| Reply::err("Unknown configuration field"), pair)
        }
        (Some("SET"), Some(name)) if args.len() == 4 => {
            let value = arg(args, 3).unwrap_or_default();
            let key = match name.as_str() {
                "TIMEOUT" | "TIMEOUT_DEFAULT" => "query-timeout-default",
                "TIMEOUT_MAX" => "query-timeout-max",
                _ => return Reply::err("Unknown configuration field"),
            };
            shared.set_limits(|limits| limits.set(key, value)).map_or_else(Reply::err, |()| Reply::ok())
        }
        _ => arity("graph.config"),
    }
}

/// `GRAPH.QUERY key query [--compact] [timeout ms]` and its read-only, explain and profile forms.
async fn query(shared: &Arc<Shared>, principal: Arc<engram::Principal>, name: &str, args: &[Vec<u8>]) -> Reply {
    let (Some(key), Some(text)) = (arg(args, 1), arg(args, 2)) else {
        return if args.len() < 3 { arity(name) } else { Reply::err("the graph key and the query must be UTF-8") };
    };
    let mut compact_form = false;
    let mut timeout = None;
    let mut i = 3;
    while i < args.len() {
        match arg(args, i).map(str::to_ascii_lowercase).as_deref() {
            Some("--compact") => compact_form = true,
            Some("timeout") => {
                let Some(ms) = arg(args, i + 1).and_then(|t| t.parse::<u64>().ok()) else {
                    return Reply::err("Failed to parse query timeout value");
                };
                timeout = Some(ms).filter(|ms| *ms > 0);
                i += 1;
            }
            Some("version") => i += 1,
            _ => return Reply::err(format!("Unknown argument '{}'", String::from_utf8_lossy(&args[i]))),
        }
        i += 1;
    }
    let timeout = match deadline(shared, timeout) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let call = QueryCall {
        workspace: key.to_owned(),
        text: text.to_owned(),
        params: engram::Params::new(),
        read_only: name == "GRAPH.RO_QUERY" || name == "GRAPH.EXPLAIN",
        timeout,
        mode: super::mode_of(name),
        principal,
    };
    let command = name.replace("GRAPH.", "graph.");
    let s = shared.clone();
    let explain_or_profile = call.mode.is_some();
    let reply = super::run_query(shared, call, command, move |db, call, outcome, started| {
        let result = match outcome {
            Ok(r) => r,
            Err(Ok(e)) => return error_reply(&s, &e),
            Err(Err(r)) => return r,
        };
        if explain_or_profile {
            let plan = result.plan.unwrap_or_default();
            return Reply::Array(plan.lines().map(|l| Reply::text(l.to_owned())).collect());
        }
        falkor_reply(db, &call.workspace, &result, compact_form, started.elapsed().as_secs_f64() * 1000.0)
    })
    .await;
    reply.unwrap_or_else(|r| r)
}

/// A result as FalkorDB answers it: `[stats]` for a query without columns, else `[header, rows,
/// stats]`, compact (typed cells, label/type/key ids of `workspace`) or verbose.
pub(super) fn falkor_reply(db: &engram::Database, workspace: &str, result: &engram::QueryResult, compact_form: bool, millis: f64) -> Reply {
    let stats = falkor_stats(result, millis);
    if result.columns.is_empty() {
        return Reply::Array(vec![stats]);
    }
    if compact_form {
        let vocab = if has_elements(result) {
            let snap = db.snapshot();
            snap.workspace(workspace).ok().map(|ws| Vocab::new(&ws.vocabulary()))
        } else {
            None
        };
        let header = Reply::Array(result.columns.iter().map(|c| Reply::Array(vec![Reply::Int(1), Reply::text(c.clone())])).collect());
        let rows =
            Reply::Array(result.rows.iter().map(|row| Reply::Array(row.iter().map(|v| compact(v, vocab.as_ref())).collect())).collect());
        Reply::Array(vec![header, rows, stats])
    } else {
        let header = Reply::Array(result.columns.iter().map(|c| Reply::text(c.clone())).collect());
        let rows = Reply::Array(result.rows.iter().map(|row| Reply::Array(row.iter().map(verbose).collect())).collect());
        Reply::Array(vec![header, rows, stats])
    }
}
