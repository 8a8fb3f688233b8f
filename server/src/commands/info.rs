//! What the server says about itself: INFO (real figures), COMMAND (enough for interactive
//! redis-cli), CONFIG GET/SET over the named limits.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use super::{arg, arity, require, Conn, COMMANDS};
use crate::resp::Reply;
use crate::state::Shared;

/// `INFO [section …]`: `key:value` lines under `# Section` headers.
pub(super) fn info(shared: &Shared, conn: &Conn, args: &[Vec<u8>]) -> Reply {
    let who = conn.who();
    let wanted: Vec<String> = args.iter().skip(1).map(|a| String::from_utf8_lossy(a).to_ascii_lowercase()).collect();
    let all = wanted.is_empty() || wanted.iter().any(|w| w == "all" || w == "everything" || w == "default");
    let want = |s: &str| all || wanted.iter().any(|w| w == s);
    let st = &shared.stats;
    let mut out = String::new();
    if want("server") {
        let _ = write!(
            out,
            "# Server\r\nredis_version:7.4.0\r\nengram_version:{}\r\nredis_mode:standalone\r\nos:{}\r\narch_bits:64\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{}\r\nio_threads:{}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::process::id(),
            shared.addr.port(),
            shared.started.elapsed().as_secs(),
            tokio::runtime::Handle::try_current().map_or(0, |h| h.metrics().num_workers())
        );
    }
    if want("clients") {
        let connected = shared.clients.lock().map_or(0, |c| c.len());
        let limits = shared.limits();
        let _ = write!(
            out,
            "# Clients\r\nconnected_clients:{connected}\r\nmaxclients:{}\r\npending_queries:{}\r\nmax_pending_queries:{}\r\n\r\n",
            limits.maxclients,
            limits.max_pending_queries.saturating_sub(shared.pending.available_permits()),
            limits.max_pending_queries
        );
    }
    // Database-wide totals only for who sees everything (a count is information too).
    if want("memory") && who.sees_all() {
        let snap = shared.db.snapshot();
        let m = snap.memory();
        let _ = write!(
            out,
            "# Memory\r\nused_memory:{}\r\nused_memory_text:{}\r\nbytes_per_claim:{:.1}\r\nbytes_per_entity:{:.1}\r\n\r\n",
            m.entity_bytes + m.claim_bytes + m.text_bytes + m.other_bytes,
            m.text_bytes,
            m.bytes_per_claim(),
            m.bytes_per_entity()
        );
    }
    if want("stats") {
        let _ = write!(
            out,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ntotal_error_replies:{}\r\nrejected_connections:{}\r\nrejected_queue_full:{}\r\nquery_timeouts:{}\r\nprotocol_errors:{}\r\nclient_buffer_overflows:{}\r\nidle_timeouts:{}\r\npipelined_write_groups:{}\r\ninline_queries:{}\r\ninline_overruns:{}\r\n\r\n",
            st.connections.load(Ordering::Relaxed),
            st.commands.load(Ordering::Relaxed),
            st.errors.load(Ordering::Relaxed),
            st.rejected_connections.load(Ordering::Relaxed),
            st.rejected_queue.load(Ordering::Relaxed),
            st.timeouts.load(Ordering::Relaxed),
            st.protocol_errors.load(Ordering::Relaxed),
            st.buffer_overflows.load(Ordering::Relaxed),
            st.idle_closed.load(Ordering::Relaxed),
            st.group_commits.load(Ordering::Relaxed),
            st.inline_queries.load(Ordering::Relaxed),
            st.inline_overruns.load(Ordering::Relaxed),
        );
    }
    if want("persistence") && who.sees_all() {
        let c = shared.db.commit_stats();
        let _ = write!(
            out,
            "# Persistence\r\nloading:0\r\naof_enabled:1\r\nwal_commits:{}\r\nwal_groups:{}\r\nwal_fsyncs:{}\r\nwal_apply_usec:{}\r\nwal_write_usec:{}\r\nwal_fsync_usec:{}\r\nwal_ack_usec:{}\r\n\r\n",
            c.commits,
            c.groups,
            c.fsyncs,
            c.apply_ns / 1000,
            c.wal_write_ns / 1000,
            c.fsync_ns / 1000,
            c.ack_ns / 1000
        );
    }
    if want("keyspace") {
        let _ = write!(out, "# Keyspace\r\n");
        let snap = shared.db.scope(who.clone()).audited_by_caller();
        for ws in shared.db.workspaces().into_iter().filter(|w| who.may(&w.name, engram::Access::Read)) {
            if let Ok(view) = snap.workspace(&ws.name) {
                let c = view.catalog();
                let _ = write!(out, "{}:entities={},claims={}\r\n", ws.name, c.entities, c.claims);
            }
        }
        out.push_str("\r\n");
    }
    if want("commandstats") {
        let _ = write!(out, "# Commandstats\r\n");
        if let Ok(per) = st.per_command.lock() {
            for (name, (calls, micros)) in per.iter() {
                let per_call = if *calls == 0 { 0.0 } else { *micros as f64 / *calls as f64 };
                let _ = write!(out, "cmdstat_{}:calls={calls},usec={micros},usec_per_call={per_call:.2}\r\n", name.to_ascii_lowercase());
            }
        }
        out.push_str("\r\n");
    }
    Reply::text(out)
}

/// `COMMAND`, `COMMAND COUNT`, `COMMAND DOCS [name …]`, `COMMAND INFO [name …]`.
pub(super) fn command(args: &[Vec<u8>]) -> Reply {
    let named = |from: usize| -> Vec<&(&str, i64, &str)> {
        if args.len() <= from {
            return COMMANDS.iter().collect();
        }
        let names: Vec<String> = args[from..].iter().map(|a| String::from_utf8_lossy(a).to_ascii_uppercase()).collect();
        COMMANDS.iter().filter(|(n, _, _)| names.iter().any(|x| x == n)).collect()
    };
    let info = |(n, a, _): &(&str, i64, &str)| {
        let first = i64::from(n.starts_with("GRAPH.") || n.starts_with("ENGRAM."));
        Reply::Array(vec![
            Reply::text(n.to_ascii_lowercase()),
            Reply::Int(*a),
            Reply::Array(Vec::new()),
            Reply::Int(first),
            Reply::Int(first),
            Reply::Int(first),
        ])
    };
    match arg(args, 1).map(str::to_ascii_uppercase).as_deref() {
        None => Reply::Array(COMMANDS.iter().map(info).collect()),
        Some("COUNT") => Reply::Int(i64::try_from(COMMANDS.len()).unwrap_or(0)),
        Some("INFO") => Reply::Array(named(2).into_iter().map(info).collect()),
        Some("DOCS") => Reply::Map(
            named(2)
                .into_iter()
                .map(|(n, _, summary)| {
                    let group = if n.starts_with("GRAPH.") {
                        "graph"
                    } else if n.starts_with("ENGRAM.") {
                        "engram"
                    } else {
                        "connection"
                    };
                    (
                        n.to_ascii_lowercase(),
                        Reply::Map(vec![
                            ("summary".to_owned(), Reply::text(*summary)),
                            ("since".to_owned(), Reply::text("0.1.0")),
                            ("group".to_owned(), Reply::text(group)),
                        ]),
                    )
                })
                .collect(),
        ),
        Some(other) => Reply::err(format!("unknown subcommand '{other}'. Try COMMAND HELP.")),
    }
}

/// A glob as Redis's CONFIG GET takes it: `*` any run, `?` one character.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match (pattern.first(), text.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&pattern[1..], text) || (!text.is_empty() && glob(pattern, &text[1..])),
        (Some(b'?'), Some(_)) => glob(&pattern[1..], &text[1..]),
        (Some(p), Some(t)) if p.eq_ignore_ascii_case(t) => glob(&pattern[1..], &text[1..]),
        _ => false,
    }
}

/// `CONFIG GET pattern …`, `CONFIG SET name value …`, `CONFIG RESETSTAT`.
pub(super) fn config(shared: &Shared, conn: &Conn, args: &[Vec<u8>]) -> Reply {
    let sub = arg(args, 1).map(str::to_ascii_uppercase);
    if matches!(sub.as_deref(), Some("SET" | "RESETSTAT")) {
        if let Err(r) = require(&conn.who(), "*", engram::Access::Admin) {
            return r;
        }
    }
    match arg(args, 1).map(str::to_ascii_uppercase).as_deref() {
        Some("GET") if args.len() >= 3 => {
            let limits = shared.limits();
            let mut named = limits.named();
            // What redis-benchmark asks before it starts: engram persists every write (a WAL).
            named.push(("save", String::new()));
            named.push(("appendonly", "yes".to_owned()));
            let mut out = Vec::new();
            for (name, value) in named {
                if args[2..].iter().any(|p| glob(p, name.as_bytes())) {
                    out.push((name.to_owned(), Reply::text(value)));
                }
            }
            Reply::Map(out)
        }
        Some("SET") if args.len() >= 4 && args.len().is_multiple_of(2) => {
            let set = shared.set_limits(|next| {
                for pair in args[2..].chunks(2) {
                    let (name, value) = (String::from_utf8_lossy(&pair[0]), String::from_utf8_lossy(&pair[1]));
                    if name.eq_ignore_ascii_case("max-pending-queries") {
                        return Err("CONFIG SET max-pending-queries: fixed when the server starts".to_owned());
                    }
                    next.set(&name, &value)?;
                }
                Ok(())
            });
            set.map_or_else(Reply::err, |()| Reply::ok())
        }
        Some("RESETSTAT") => {
            if let Ok(mut per) = shared.stats.per_command.lock() {
                per.clear();
            }
            Reply::ok()
        }
        _ => arity("config"),
    }
}

/// `SLOWLOG GET [n] | LEN | RESET` (admin on `*`: the arguments are other users' queries).
pub(super) fn slowlog(shared: &Shared, conn: &Conn, args: &[Vec<u8>]) -> Reply {
    if let Err(r) = require(&conn.who(), "*", engram::Access::Admin) {
        return r;
    }
    let Ok(mut log) = shared.slowlog.lock() else { return Reply::err("slowlog unavailable") };
    match arg(args, 1).map(str::to_ascii_uppercase).as_deref() {
        Some("LEN") => Reply::Int(i64::try_from(log.len()).unwrap_or(i64::MAX)),
        Some("RESET") => {
            log.clear();
            Reply::ok()
        }
        Some("GET") => {
            let n = match arg(args, 2).map(str::parse::<i64>) {
                None => 10,
                Some(Ok(n)) if n < 0 => usize::MAX,
                Some(Ok(n)) => usize::try_from(n).unwrap_or(usize::MAX),
                Some(Err(_)) => return Reply::err("value is out of range, must be positive"),
            };
            let int = |v: u64| Reply::Int(i64::try_from(v).unwrap_or(i64::MAX));
            Reply::Array(
                log.iter()
                    .rev()
                    .take(n)
                    .map(|e| {
                        Reply::Array(vec![
                            int(e.id),
                            int(e.at),
                            int(e.micros),
                            Reply::Array(e.args.iter().map(|a| Reply::text(a.clone())).collect()),
                            Reply::text(e.addr.clone()),
                            Reply::text(e.name.clone()),
                        ])
                    })
                    .collect(),
            )
        }
        _ => arity("slowlog"),
    }
}
