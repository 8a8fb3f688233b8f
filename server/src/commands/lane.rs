//! The write lane: the write queries of every connection, committed together. A connection's
//! write (or its pipelined run of writes) is queued here instead of taking a thread of the pool
//! that would sleep until its commit is durable; a lane thread takes everything queued, runs it
//! as commit groups (each query its own atomic transaction, one WAL write and one fsync per group,
//! the commands' access records riding in that write) and hands each connection its replies. So a
//! durable write costs the connection's task no thread hop of its own, and many connections share
//! each fsync, as in Redis's `appendfsync always`. One lane thread, which runs each group's fsync
//! itself while the next writes queue: a second one, overlapping a group's fsync with the next
//! group's apply, cost more in thread wake-ups than it saved (`bench/README.md`).

use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, OwnedSemaphorePermit};

use super::graph::falkor_reply;
use super::values::engram_result;
use super::{error_reply, error_text, record_all_now};
use crate::resp::Reply;
use crate::state::Shared;

/// Lane threads (see the module's comment).
const THREADS: usize = 1;

/// Write queries one lane thread takes at most in one round (the units past it wait for the
/// next round): a round shares one deadline (`query-timeout-default` from its start), so it is kept
/// to what runs well within it.
const QUERIES_PER_ROUND: usize = 4096;

/// One write query of a unit.
pub(crate) struct LaneQuery {
    /// The command as sent (for its record in the access history).
    pub args: Vec<Vec<u8>>,
    /// `None`: `ENGRAM.QUERY`'s reply; `Some(compact)`: FalkorDB's.
    pub graph: Option<bool>,
    pub workspace: String,
    pub text: String,
    pub params: engram::Params,
}

/// One connection's writes that arrived together, in order.
pub(crate) struct Unit {
    pub who: Arc<engram::Principal>,
    pub interface: &'static str,
    pub queries: Vec<LaneQuery>,
    /// When the connection queued it (the records' time).
    pub at: engram::Timestamp,
    pub started: Instant,
    /// Its replies, in order.
    pub done: oneshot::Sender<Vec<Reply>>,
    /// Its place in the `max-pending-queries` queue, held until it is answered.
    pub permit: OwnedSemaphorePermit,
}

/// The queue into the lane threads.
#[derive(Debug)]
pub struct Lane {
    tx: Sender<Unit>,
}

impl Lane {
    /// Starts the lane threads of `shared` (they hold it weakly, and end with the lane).
    pub fn start(shared: &Weak<Shared>) -> Lane {
        let (tx, rx) = std::sync::mpsc::channel();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..THREADS {
            let (rx, shared) = (rx.clone(), shared.clone());
            let spawned = std::thread::Builder::new().name(format!("engram-lane-{i}")).spawn(move || lane_loop(&rx, &shared));
            if let Err(e) = spawned {
                tracing::error!(error = %e, "could not start a write lane thread");
            }
        }
        Lane { tx }
    }

    /// Queues `unit`; gives it back when no lane thread is left to take it.
    pub(crate) fn send(&self, unit: Unit) -> Result<(), Unit> {
        self.tx.send(unit).map_err(|e| e.0)
    }
}

fn lane_loop(rx: &Mutex<Receiver<Unit>>, shared: &Weak<Shared>) {
    loop {
        let units = {
            let Ok(rx) = rx.lock() else { return };
            let Ok(first) = rx.recv() else { return };
            let mut queries = first.queries.len();
            let mut units = vec![first];
            while queries < QUERIES_PER_ROUND {
                match rx.try_recv() {
                    Ok(u) => {
                        queries += u.queries.len();
                        units.push(u);
                    }
                    Err(_) => break,
                }
            }
            units
        };
        let Some(shared) = shared.upgrade() else { return };
        let mut units = units.into_iter().peekable();
        while let Some(first) = units.next() {
            // Consecutive units of the same principal share one commit group.
            let mut run = vec![first];
            while let Some(next) = units.next_if(|u| Arc::ptr_eq(&u.who, &run[0].who) || *u.who == *run[0].who) {
                run.push(next);
            }
            // A bug that panics fails this run's writes (their connections get an internal
            // error), not the lane: the thread goes on with the next run.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commit(&shared, run))).is_err() {
                tracing::error!("a write lane run panicked; its writes were answered with an error");
            }
        }
    }
}

/// Commits a run of units of one principal as one group, records them, and answers each.
fn commit(shared: &Arc<Shared>, run: Vec<Unit>) {
    let db = &shared.db;
    let timeout = Duration::from_millis(shared.limits().query_timeout_default_ms);
    let clock = super::system_clock();
    let deadline = engram::Timestamp(clock.now().0.saturating_add(i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX)));
    let scope = db.scope(run[0].who.clone()).audited_by_caller().with_deadline(deadline, clock);
    let queries: Vec<(&str, &str, &engram::Params)> =
        run.iter().flat_map(|u| u.queries.iter().map(|q| (q.workspace.as_str(), q.text.as_str(), &q.params))).collect();
    // The records are made once the group is applied, before it is logged: they ride in its WAL
    // write, durable with the writes by one fsync.
    let mut record = |results: &[Result<&engram::QueryResult, &engram::Error>]| records_of(&run, results);
    let (results, carried) = scope.query_group_recorded(&queries, &mut record);
    let results: Vec<Result<&engram::QueryResult, &engram::Error>> = results.iter().map(Result::as_ref).collect();
    if !carried && db.access_history_on() {
        // One record per command; the last one's sync makes them all durable before any reply.
        record_all_now(shared, records_of(&run, &results));
    }
    let mut results = results.into_iter();
    for unit in run {
        let millis = unit.started.elapsed().as_secs_f64() * 1000.0;
        let replies = unit
            .queries
            .iter()
            .map(|q| match (results.next(), q.graph) {
                (Some(Ok(r)), None) => engram_result(r),
                (Some(Ok(r)), Some(compact)) => falkor_reply(db, &q.workspace, r, compact, millis),
                (Some(Err(e)), _) => error_reply(shared, e),
                (None, _) => error_reply(shared, &engram::Error::Internal("no result".to_owned())),
            })
            .collect();
        // A connection that went away meanwhile does not wait for its replies.
        let _ = unit.done.send(replies);
        drop(unit.permit);
    }
}

/// The access records of a run's commands, given their results in order: what their replies
/// say (rows, error text) without building them.
fn records_of(run: &[Unit], results: &[Result<&engram::QueryResult, &engram::Error>]) -> Vec<engram::db::audit::AccessRecord> {
    let mut results = results.iter();
    let mut records = Vec::with_capacity(results.len());
    for unit in run {
        for q in &unit.queries {
            let r = results.next().copied();
            let (rows, error) = match r {
                // FalkorDB's reply to a query without columns is its statistics alone (one row).
                Some(Ok(r)) if q.graph.is_some() && r.columns.is_empty() => (1, None),
                Some(Ok(r)) => (r.rows.len() as u64, None),
                Some(Err(e)) => (0, Some(error_text(e))),
                None => (0, Some("ERR no result".to_owned())),
            };
            let claims = r.and_then(Result::ok).map(engram::exec::claims_read).unwrap_or_default();
            let name = String::from_utf8_lossy(&q.args[0]).to_ascii_uppercase();
            let command =
                crate::audit::Command { name: &name, args: &q.args, at: unit.at, started: unit.started, interface: unit.interface };
            records.push(command.record_parts(Some(&unit.who), (rows, error.as_deref()), claims));
        }
    }
    records
}
