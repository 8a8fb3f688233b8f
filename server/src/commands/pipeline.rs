//! Write queries go to the write lane (`lane`): a connection's consecutive write queries that
//! arrived together travel as one unit, and the lane commits the units of every connection queued
//! at once as one group (one WAL write, one fsync), each query still its own atomic transaction,
//! applied in order, and each reply sent only once the group is durable. So neither a `redis-cli
//! --pipe` load nor many single writers pay one fsync per command.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use engram::ErrorClass;

use super::lane::{LaneQuery, Unit};
use super::{account, arg, command_name, dispatch_counted, Conn, Flow};
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
    let first = args.first()?;
    // Most commands are told apart by their name alone, before anything is allocated.
    if !first.eq_ignore_ascii_case(b"ENGRAM.QUERY") && !first.eq_ignore_ascii_case(b"GRAPH.QUERY") {
        return None;
    }
    let name = String::from_utf8_lossy(first).to_ascii_uppercase();
    let (workspace, text) = (arg(args, 1)?, arg(args, 2)?);
    let mut params = engram::Params::new();
    let graph = match (name.as_str(), args.len()) {
        ("ENGRAM.QUERY", 3) => None,
        ("ENGRAM.QUERY", 5) if arg(args, 3)?.eq_ignore_ascii_case("PARAMS") => {
            let serde_json::Value::Object(map) = serde_json::from_str(arg(args, 4)?).ok()? else { return None };
            // A parameter that does not read is answered by the command's own path.
            params = engram::exec::params_from_json(&map).ok()?;
            None
        }
        ("GRAPH.QUERY", 3) => Some(false),
        ("GRAPH.QUERY", 4) if arg(args, 3)?.eq_ignore_ascii_case("--compact") => Some(true),
        _ => return None,
    };
    // A read (most commands) is told apart by its cached plan before anything else is looked at.
    // An index statement, and a query of several transactions (`IN TRANSACTIONS`), run alone.
    if !engram::exec::writes(text).ok()? || engram::exec::is_index_statement(text) || engram::exec::in_transactions(text) {
        return None;
    }
    let who = conn.principal.as_ref()?;
    if !who.may(workspace, engram::Access::Write) || !shared.db.workspace_exists(workspace) {
        return None;
    }
    Some(Grouped { args: args.to_vec(), graph, workspace: workspace.to_owned(), text: text.to_owned(), params })
}

/// Runs the commands that arrived together (taking them out of `commands`), in order, with
/// their replies in order in `replies`.
pub async fn dispatch_all(shared: &Arc<Shared>, conn: &mut Conn, commands: &mut Vec<Vec<Vec<u8>>>, replies: &mut Vec<(Reply, Flow)>) {
    let mut i = 0;
    while i < commands.len() {
        let mut group = Vec::new();
        if conn.multi.is_none() && conn.authenticated() && conn.lane.is_some() {
            while let Some(g) = commands.get(i + group.len()).and_then(|c| groupable(shared, conn, c)) {
                group.push(g);
            }
        }
        if group.is_empty() {
            let args = std::mem::take(&mut commands[i]);
            replies.push(dispatch_counted(shared, conn, args).await);
            i += 1;
            continue;
        }
        i += group.len();
        replies.extend(run_group(shared, conn, group).await.into_iter().map(|r| (r, Flow::Continue)));
    }
    commands.clear();
    conn.fold_counts(shared);
}

/// Queues a connection's writes that arrived together on the write lane and waits for their
/// replies (each sent once its group is durable).
async fn run_group(shared: &Arc<Shared>, conn: &mut Conn, group: Vec<Grouped>) -> Vec<Reply> {
    let n = group.len();
    let started = Instant::now();
    let Ok(permit) = shared.pending.clone().try_acquire_owned() else {
        shared.stats.rejected_queue.fetch_add(1, Ordering::Relaxed);
        let max = shared.limits().max_pending_queries;
        let refused = Reply::failed(ErrorClass::Limit, format!("ERR too many pending queries (max-pending-queries is {max}); retry later"));
        return vec![refused; n];
    };
    // The group began when the batch's command before it ended (or now).
    let begun = conn.tally.began(&command_name(&group[n - 1].args[0]));
    let sent: Vec<Vec<Vec<u8>>> = group.iter().map(|g| g.args.clone()).collect();
    let (done, answer) = tokio::sync::oneshot::channel();
    let unit = Unit {
        who: conn.who(),
        interface: conn.interface,
        queries: group
            .into_iter()
            .map(|g| LaneQuery { args: g.args, graph: g.graph, workspace: g.workspace, text: g.text, params: g.params })
            .collect(),
        at: engram::Clock::now(&engram::SystemClock),
        started,
        done,
        permit,
    };
    let replies = match conn.lane.as_ref().map(|lane| lane.send(unit)) {
        Some(Ok(())) => answer.await.ok(),
        _ => None,
    };
    let replies =
        replies.unwrap_or_else(|| vec![Reply::err("internal error: the write lane failed on this write (see the server log)"); n]);
    for (args, reply) in sent.iter().zip(&replies) {
        account(shared, conn, &command_name(&args[0]), args, begun, reply);
    }
    if n > 1 {
        shared.stats.group_commits.fetch_add(1, Ordering::Relaxed);
    }
    replies
}
