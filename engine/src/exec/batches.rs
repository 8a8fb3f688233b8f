//! `CALL { … } IN TRANSACTIONS [OF n ROWS] [ON ERROR FAIL | CONTINUE | BREAK]` at the top of a
//! query: the clauses before it read (in a job that writes nothing), the subquery runs over their
//! rows n at a time (1,000 by default), each batch its own transaction, committed (durable per the
//! fsync policy) before the next starts, and the clauses after it read the rows the batches gave.
//! A failing batch writes nothing: `FAIL` ends the query with its error (the batches before stay
//! committed, and the error says how many), `CONTINUE` goes on with the next batch and `BREAK`
//! stops; with either, the failed batch's rows go on with the subquery's columns null.
//! `REPORT STATUS AS s` gives each row its batch's status (`ops::batch_status`).

use std::sync::Arc;

use engram_query::ast::OnError;
use engram_query::plan::{CExpr, Op, Part, Plan};
use engram_query::QueryError;

use super::ops::{batch_size, batch_status};
use super::value::{Bound, Val};
use super::{files_reader, finish_rows, graph, write, Compiled, Host, QueryResult, QueryStats, Writer};
use crate::db::commit::{Applied, JobContext};
use crate::read::visibility::Visibility;
use crate::state::State;

type Row = Vec<Val>;

/// Whether `ops` write (or hold a write anywhere inside).
fn ops_write(ops: &[Op]) -> bool {
    ops.iter().any(|op| match op {
        Op::Create(_) | Op::Merge(_) | Op::Set(_) | Op::Delete { .. } | Op::Foreach { .. } => true,
        Op::Call(c) => engram_query::functions::procedure(c.name).is_some_and(|p| p.writes),
        Op::Optional { ops, .. } => ops_write(ops),
        Op::Subquery { branches, .. } => branches.iter().any(|b| ops_write(b)),
        Op::InTransactions { sub, .. } => ops_write(std::slice::from_ref(sub)),
        _ => false,
    })
}

/// Whether `ops` hold an `IN TRANSACTIONS` anywhere.
fn has_batches(ops: &[Op]) -> bool {
    ops.iter().any(|op| match op {
        Op::InTransactions { .. } => true,
        Op::Optional { ops, .. } | Op::Foreach { ops, .. } => has_batches(ops),
        Op::Subquery { branches, .. } => branches.iter().any(|b| has_batches(b)),
        _ => false,
    })
}

/// Where the top-level `IN TRANSACTIONS` of `plan` is (its operator's index); `None` without one;
/// an error for one anywhere else, or after a write.
pub(super) fn batched_at(plan: &Plan) -> Result<Option<usize>, QueryError> {
    if !plan.parts.iter().any(|p| has_batches(&p.ops)) {
        return Ok(None);
    }
    let [part] = plan.parts.as_slice() else { return Err(write::misplaced()) };
    let Some(at) = part.ops.iter().position(|op| matches!(op, Op::InTransactions { .. })) else { return Err(write::misplaced()) };
    let (before, after) = (&part.ops[..at], &part.ops[at + 1..]);
    let inner_batches = match &part.ops[at] {
        Op::InTransactions { sub, .. } => has_batches(std::slice::from_ref(sub)),
        _ => false,
    };
    if ops_write(before) || ops_write(after) || has_batches(before) || has_batches(after) || inner_batches {
        return Err(write::misplaced());
    }
    Ok(Some(at))
}

/// The batch size: a positive integer.
fn batch_rows(rows: Option<&CExpr>, tx: &write::Tx<'_>, width: usize) -> Result<usize, QueryError> {
    let n = rows.map(|e| tx.eval(width, e, &vec![Val::Null; width])).transpose()?;
    batch_size(n.as_ref())
}

/// What one job of a batched query does: the clauses before (and the batch size), one batch, or
/// the clauses after (and the result).
#[derive(Clone)]
enum Stage {
    Before(Option<CExpr>),
    Batch,
    After,
}

/// What one job hands back.
struct Step {
    rows: Vec<Row>,
    stats: QueryStats,
    size: usize,
    result: Option<QueryResult>,
}

/// Whether a failed batch's error is the batch's own (its data, a constraint, a limit), which
/// `ON ERROR CONTINUE | BREAK` may pass over; anything else (the disk, the database closed) ends
/// the query.
fn batchs_own(e: &crate::error::Error) -> bool {
    matches!(e, crate::error::Error::Query(_) | crate::error::Error::Write(_))
}

/// The error of the batch after `committed` committed ones, saying so.
fn in_batch(e: crate::error::Error, committed: usize) -> crate::error::Error {
    match e {
        crate::error::Error::Query(mut q) => {
            let before = match committed {
                0 => "no batch before this one was committed".to_owned(),
                1 => "the batch before this one is committed".to_owned(),
                n => format!("the {n} batches before this one are committed"),
            };
            q.message = format!("{} (CALL {{ … }} IN TRANSACTIONS: {before})", q.message);
            crate::error::Error::Query(q)
        }
        other => other,
    }
}

impl crate::db::Database {
    /// Runs a query whose top-level operator `at` is `IN TRANSACTIONS` (see the module).
    pub(super) fn run_batched(
        &self,
        workspace: &str,
        cx: &crate::read::scope::ReadContext,
        (see_sensitive, rules, may_load): (bool, &crate::read::policy::Rules, bool),
        (compiled, vals): (&Arc<Compiled>, &Bound),
        at: usize,
    ) -> Result<(QueryResult, bool), crate::error::Error> {
        let part = &compiled.plan.parts[0];
        let Op::InTransactions { sub, rows: size, on_error, status } = &part.ops[at] else { return Err(write::misplaced().into()) };
        let run = |ops: Vec<Op>, input: Option<Vec<Row>>, stage: Stage| -> Result<Step, crate::error::Error> {
            let (db, workspace, cx, rules, compiled, vals) =
                (self.clone(), workspace.to_owned(), cx.fork(), rules.clone(), Arc::clone(compiled), vals.owned());
            let job = move |st: &mut State, jcx: &JobContext<'_>| {
                let embed = |t: &str| db.embed_query(t).map_err(|e| e.to_string());
                let files = files_reader(&db, may_load);
                let who = Writer { cx: &cx, see_sensitive, rules: &rules };
                let host = Host { embed: Some(&embed), files: Some(&files) };
                step(st, jcx, (&workspace, &who), (&compiled, &vals), host, (&ops, input.clone(), &stage))
            };
            let done = self.commit_queued(job)?;
            done.out
                .downcast::<Step>()
                .map(|b| *b)
                .map_err(|_| crate::error::Error::Internal("a batch's result of another type".to_owned()))
        };
        let before = run(part.ops[..at].to_vec(), None, Stage::Before(size.clone()))?;
        let (mut stats, mut out, mut committed) = (QueryStats::default(), Vec::with_capacity(before.rows.len()), 0);
        // `REPORT STATUS AS s`: each row gets its batch's status.
        let report = |rows: &mut [Row], s: &Val| {
            if let Some(slot) = status {
                for r in rows {
                    r[*slot] = s.clone();
                }
            }
        };
        let mut chunks = before.rows.chunks(before.size);
        for (n, chunk) in chunks.by_ref().enumerate() {
            match run(vec![(**sub).clone()], Some(chunk.to_vec()), Stage::Batch) {
                Ok(mut step) => {
                    stats.add(&step.stats);
                    report(&mut step.rows, &batch_status(Some(n + 1), None));
                    out.extend(step.rows);
                    committed += 1;
                }
                Err(e) if *on_error == OnError::Fail || !batchs_own(&e) => return Err(in_batch(e, committed)),
                // The failed batch's rows go on as they came: the subquery's columns are null in them.
                Err(e) => {
                    let mut rows = chunk.to_vec();
                    report(&mut rows, &batch_status(Some(n + 1), Some(&e.to_string())));
                    out.extend(rows);
                    if *on_error == OnError::Break {
                        break;
                    }
                }
            }
        }
        // After a BREAK, the batches not run pass their rows on as a failed one does.
        let mut rest: Vec<Row> = chunks.flatten().cloned().collect();
        report(&mut rest, &batch_status(None, None));
        out.extend(rest);
        let after = run(part.ops[at + 1..].to_vec(), Some(out), Stage::After)?;
        let mut result = after.result.ok_or_else(|| crate::error::Error::Internal("a batched query without its result".to_owned()))?;
        result.stats = stats;
        // PROFILE: the plan as it ran, without per-operator figures (they span transactions).
        if compiled.mode == engram_query::ast::Mode::Profile {
            result.plan = Some(engram_query::plan::render(&compiled.plan, &compiled.slot_names, None));
        }
        Ok((result, false))
    }
}

/// One job: `ops` over `input` (or from one empty row) on the writer's copy of the state, what
/// it wrote checked (deletes, constraints) and applied as one transaction.
fn step(
    st: &mut State,
    jcx: &JobContext<'_>,
    (workspace, who): (&str, &Writer<'_>),
    (compiled, vals): (&Compiled, &Bound),
    host: Host<'_>,
    (ops, input, stage): (&[Op], Option<Vec<Row>>, &Stage),
) -> Result<Applied, crate::error::Error> {
    let part: &Part = &compiled.plan.parts[0];
    let mut tx = write::Tx::new(st, workspace, jcx.now, jcx.limits, who.cx, (who.see_sensitive, who.rules), vals, host)?;
    let size = match stage {
        Stage::Before(size) => batch_rows(size.as_ref(), &tx, part.width)?,
        _ => 0,
    };
    let input = input.unwrap_or_else(|| vec![super::value::nulls(part.width)]);
    let rows = tx.run_ops(part, ops, input)?;
    tx.check_deletes()?;
    tx.check_constraints()?;
    let result = match stage {
        Stage::After => {
            let view = tx.view();
            let graph = graph::Graph { view: &view, vis: Visibility::current(), now: graph::clock_at(jcx.now) };
            // A query ending in the subquery (no RETURN) returns no rows, as one ending in a write.
            let shown = if part.columns.is_empty() { &[][..] } else { &rows[..] };
            let all: Vec<Vec<Val>> =
                shown.iter().map(|r| part.columns.iter().map(|(_, s)| r.get(*s).cloned().unwrap_or(Val::Null)).collect()).collect();
            Some(QueryResult {
                columns: compiled.plan.columns.clone(),
                rows: finish_rows(compiled, all, &graph),
                stats: QueryStats::default(),
                plan: None,
                cached: compiled.ran.mark(),
            })
        }
        _ => None,
    };
    let step = Step { rows: if result.is_some() { Vec::new() } else { rows }, stats: tx.stats, size, result };
    let applied = std::mem::take(&mut tx.applied);
    drop(tx);
    Ok(super::applied(workspace, applied, jcx, step))
}
