//! Pipelined writes: consecutive write queries of one connection that arrived together run as
//! one commit group (one WAL write, one fsync), each still its own atomic transaction, applied in
//! order, and each reply sent only once the group is durable. So a `redis-cli --pipe` load is
//! not one fsync per command.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::graph::falkor_reply;
use super::values::engram_result;
use super::{arg, dispatch, engine, error_reply, Conn, Flow};
use crate::resp::Reply;
use crate::state::Shared;

/// A write query that may join a group: `ENGRAM.QUERY ws q [PARAMS json]` or `GRAPH.QUERY ws q
/// [--compact]` whose query writes, on a workspace the user sees and may write.
struct Grouped {
    /// The command as sent (for its record in the access history).
    args: Vec<Vec<u8>>,
    graph: Option<bool>,
    workspace: String,
    text: String,
    params: engram::Params,
}

fn groupable(shared: &Shared, conn: &Conn, args: &[Vec<u8>]) -> Option<Grouped> {
    let name = String::from_utf8_lossy(args.first()?).to_ascii_uppercase();
    let (workspace, text) = (arg(args, 1)?, arg(args, 2)?);
    let mut params = engram::Params::new();
    let graph = match (name.as_str(), args.len()) {
        ("ENGRAM.QUERY", 3) => None,
        ("ENGRAM.QUERY", 5) if arg(args, 3)?.eq_ignore_ascii_case("PARAMS") => {
            let serde_json::Value::Object(map) = serde_json::from_str(arg(args, 4)?).ok()? else { return None };
            params = map.into_iter().map(|(k, v)| (k, engram::QueryValue::from_json(&v))).collect();
            None
        }
        ("GRAPH.QUERY", 3) => Some(false),
        ("GRAPH.QUERY", 4) if arg(args, 3)?.eq_ignore_ascii_case("--compact") => Some(true),
        _ => return None,
    };
    let who = conn.principal.as_ref()?;
    if !who.may(workspace, engram::Access::Write) || !shared.db.workspaces().iter().any(|w| *w.name == *workspace) {
        return None;
    }
    if !engram::exec::writes(text).ok()? || engram::exec::is_index_statement(text) {
        return None;
    }
    Some(Grouped { args: args.to_vec(), graph, workspace: workspace.to_owned(), text: text.to_owned(), params })
}

/// Runs the commands that arrived together, in order, with their replies in order.
pub async fn dispatch_all(shared: &Arc<Shared>, conn: &mut Conn, mut commands: Vec<Vec<Vec<u8>>>) -> Vec<(Reply, Flow)> {
    let mut out = Vec::with_capacity(commands.len());
    let mut i = 0;
    while i < commands.len() {
        let mut group = Vec::new();
        if conn.multi.is_none() && conn.authenticated() {
            while let Some(g) = commands.get(i + group.len()).and_then(|c| groupable(shared, conn, c)) {
                group.push(g);
            }
        }
        if group.len() < 2 {
            let args = std::mem::take(&mut commands[i]);
            out.push(dispatch(shared, conn, args).await);
            i += 1;
            continue;
        }
        i += group.len();
        out.extend(run_group(shared, conn, group).await.into_iter().map(|r| (r, Flow::Continue)));
    }
    out
}

async fn run_group(shared: &Arc<Shared>, conn: &Conn, group: Vec<Grouped>) -> Vec<Reply> {
    let n = group.len();
    let who = conn.who();
    let s = shared.clone();
    let started = Instant::now();
    let at = engram::Clock::now(&engram::SystemClock);
    let sent: Vec<Vec<Vec<u8>>> = group.iter().map(|g| g.args.clone()).collect();
    let answered = engine(shared, move |db| {
        let scope = db.scope(who).audited_by_caller();
        let queries: Vec<(&str, &str, &engram::Params)> =
            group.iter().map(|g| (g.workspace.as_str(), g.text.as_str(), &g.params)).collect();
        let results = scope.query_group(&queries);
        let millis = started.elapsed().as_secs_f64() * 1000.0;
        group
            .iter()
            .zip(results)
            .map(|(g, r)| {
                let claims = r.as_ref().map(engram::exec::claims_read).unwrap_or_default();
                let reply = match (r, g.graph) {
                    (Ok(r), None) => engram_result(&r),
                    (Ok(r), Some(compact)) => falkor_reply(db, &g.workspace, &r, compact, millis),
                    (Err(e), _) => error_reply(&s, &e),
                };
                (reply, claims)
            })
            .collect::<Vec<(Reply, Vec<u64>)>>()
    })
    .await;
    let answered = answered.unwrap_or_else(|r| vec![(r, Vec::new()); n]);
    // One record per command; the last one's sync makes them all durable before any reply.
    let principal = conn.principal.clone();
    let records: Vec<_> = sent
        .iter()
        .zip(&answered)
        .map(|(args, (reply, claims))| {
            let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
            let command = crate::audit::Command { name: &name, args, at, started, interface: conn.interface };
            command.record(principal.as_deref(), reply, claims.clone())
        })
        .collect();
    super::record_all(shared, records).await;
    let replies: Vec<Reply> = answered.into_iter().map(|(r, _)| r).collect();
    shared.stats.commands.fetch_add(n as u64, Ordering::Relaxed);
    shared.stats.group_commits.fetch_add(1, Ordering::Relaxed);
    let errors = replies.iter().filter(|r| r.is_error()).count();
    shared.stats.errors.fetch_add(errors as u64, Ordering::Relaxed);
    replies
}
