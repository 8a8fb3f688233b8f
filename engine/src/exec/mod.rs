//! The query executor: runs the language (`engram_query`) on one snapshot through a view.
//!
//! `compile` turns text into a physical plan (cached by text: plans hold names, not ids, so one
//! plan serves every snapshot and database); `ops` runs it over batches of rows; `eval` and
//! `functions` compute expressions; `procedures` answers `CALL`; `output` materializes results.
//! A query that writes runs as one transaction on the writer's copy of the state (`write`).

mod algo_procs;
mod analytics_procs;
mod batches;
mod ddl;
mod eval;
mod fulltext;
mod functions;
mod graph;
mod lightest;
mod ops;
mod output;
mod path_procs;
mod physical;
mod procedures;
mod schema_procs;
mod value;
mod vector_procs;
mod write;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use engram_query::ast::Mode;
use engram_query::plan::{render, Op};
use engram_query::{compile, Compiled, When};
use engram_query::{Detail, ErrorType, QueryError};

use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use crate::time::Timestamp;

pub use output::{params_from_json, point_json, tagged_point, tagged_temporal, Node, Path, QueryValue, Relationship};
use procedures::Host;
pub use procedures::{AuditFn, Embed, FilesFn, ImportFile};

/// Query parameters by name.
pub type Params = BTreeMap<String, QueryValue>;

/// The counters of what a query wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Nodes created.
    pub nodes_created: u64,
    /// Nodes deleted.
    pub nodes_deleted: u64,
    /// Relationships created.
    pub relationships_created: u64,
    /// Relationships deleted.
    pub relationships_deleted: u64,
    /// Properties set.
    pub properties_set: u64,
    /// Properties removed.
    pub properties_removed: u64,
    /// Labels added.
    pub labels_added: u64,
    /// Labels removed.
    pub labels_removed: u64,
    /// Index declarations added (`CREATE INDEX`: one per property).
    pub indexes_added: u64,
    /// Index declarations removed (`DROP INDEX`: one per property).
    pub indexes_removed: u64,
    /// Constraints declared (`CREATE CONSTRAINT`).
    pub constraints_added: u64,
    /// Constraints dropped (`DROP CONSTRAINT`).
    pub constraints_removed: u64,
}

impl QueryStats {
    /// Adds `other`'s counts to these (the batches of `IN TRANSACTIONS`).
    pub(crate) fn add(&mut self, other: &QueryStats) {
        self.nodes_created += other.nodes_created;
        self.nodes_deleted += other.nodes_deleted;
        self.relationships_created += other.relationships_created;
        self.relationships_deleted += other.relationships_deleted;
        self.properties_set += other.properties_set;
        self.properties_removed += other.properties_removed;
        self.labels_added += other.labels_added;
        self.labels_removed += other.labels_removed;
        self.indexes_added += other.indexes_added;
        self.indexes_removed += other.indexes_removed;
        self.constraints_added += other.constraints_added;
        self.constraints_removed += other.constraints_removed;
    }

    /// The counters by name, in the documented order.
    pub fn counters(&self) -> [(&'static str, u64); 12] {
        [
            ("nodes_created", self.nodes_created),
            ("nodes_deleted", self.nodes_deleted),
            ("relationships_created", self.relationships_created),
            ("relationships_deleted", self.relationships_deleted),
            ("properties_set", self.properties_set),
            ("properties_removed", self.properties_removed),
            ("labels_added", self.labels_added),
            ("labels_removed", self.labels_removed),
            ("indexes_added", self.indexes_added),
            ("indexes_removed", self.indexes_removed),
            ("constraints_added", self.constraints_added),
            ("constraints_removed", self.constraints_removed),
        ]
    }
}

/// A query's answer. Two are equal when they answer the same (columns, rows, stats, plan),
/// however each ran (`cached`).
#[derive(Clone, Debug)]
pub struct QueryResult {
    /// Column names, in order (shared with the cached plan: a result does not copy them).
    pub columns: Arc<[String]>,
    /// Rows, each with one value per column.
    pub rows: Vec<Vec<QueryValue>>,
    /// What the query wrote.
    pub stats: QueryStats,
    /// The plan, for `EXPLAIN` (no rows) and `PROFILE` (with rows and time per operator).
    pub plan: Option<String>,
    /// Whether an earlier run had used the same compiled plan (FalkorDB's `Cached execution`):
    /// false on a text's first run, and after its plan left the cache.
    pub cached: bool,
}

impl PartialEq for QueryResult {
    fn eq(&self, other: &QueryResult) -> bool {
        (&self.columns, &self.rows, &self.stats, &self.plan) == (&other.columns, &other.rows, &other.stats, &other.plan)
    }
}

/// `plan_cache_entries`: how many compiled plans the process keeps (cleared when full).
pub const PLAN_CACHE_ENTRIES: usize = 1024;

type Cache = Mutex<HashMap<String, Arc<Compiled>, foldhash::fast::RandomState>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::with_hasher(foldhash::fast::RandomState::default())))
}

/// How many plans each thread keeps in front of the shared cache.
const RECENT_PLANS: usize = 4;

thread_local! {
    /// The plans this thread ran last, most recent first: a connection or an agent loop repeats
    /// a few texts, and a hit here takes neither the shared cache's lock nor a hash of the text.
    /// Plans depend on their text alone, so an entry never goes stale.
    static RECENT: std::cell::RefCell<Vec<(Box<str>, Arc<Compiled>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The cached plan of `text`, if any (this thread's recent plans, then the shared cache).
fn cached(text: &str) -> Option<Arc<Compiled>> {
    let recent = RECENT.with(|r| {
        let mut r = r.try_borrow_mut().ok()?;
        let i = r.iter().position(|(t, _)| **t == *text)?;
        let hit = r[i].1.clone();
        if i > 0 {
            let entry = r.remove(i);
            r.insert(0, entry);
        }
        Some(hit)
    });
    if recent.is_some() {
        return recent;
    }
    let hit = cache().lock().ok().and_then(|c| c.get(text).cloned())?;
    remember(text, &hit);
    Some(hit)
}

fn remember(text: &str, plan: &Arc<Compiled>) {
    RECENT.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.truncate(RECENT_PLANS - 1);
            r.insert(0, (Box::from(text), plan.clone()));
        }
    });
}

/// The compiled plan of `text`, from the cache or compiled now.
fn plan_for(text: &str) -> Result<Arc<Compiled>, QueryError> {
    if let Some(hit) = cached(text) {
        return Ok(hit);
    }
    let compiled = Arc::new(compile(text)?);
    if engram_query::ddl::parse(text).is_some() {
        // Never cached: a cache hit is how `bind` knows a text is no index statement.
        return Ok(compiled);
    }
    if let Ok(mut c) = cache().lock() {
        if c.len() >= PLAN_CACHE_ENTRIES {
            c.clear();
        }
        c.insert(text.to_owned(), compiled.clone());
    }
    remember(text, &compiled);
    Ok(compiled)
}

/// Parses, checks and plans `text` without running it and without the cache (what a plan-cache
/// miss costs).
pub fn prepare(text: &str) -> Result<(), QueryError> {
    compile(text).map(|_| ())
}

/// Whether `text` (a `CYPHER k=v` header allowed) is a query that writes; a text that does not
/// compile is its error. Servers use it to refuse a write on a read-only command by the
/// command's own rule before anything runs.
pub fn writes(text: &str) -> Result<bool, QueryError> {
    let body = engram_query::header::body(text)?;
    if let Some(hit) = cached(body) {
        return Ok(hit.writes);
    }
    if let Some(ddl) = engram_query::ddl::parse(body) {
        return ddl.map(|_| true);
    }
    Ok(plan_for(body)?.writes)
}

/// Whether `text` runs `CALL { … } IN TRANSACTIONS`: several transactions, so never in a commit
/// group or a transaction of several statements (a server sends it alone).
pub fn in_transactions(text: &str) -> bool {
    let Ok(body) = engram_query::header::body(text) else { return false };
    let plan = match cached(body) {
        Some(hit) => hit,
        None => match plan_for(body) {
            Ok(c) => c,
            Err(_) => return false,
        },
    };
    plan.plan.parts.iter().any(|p| p.ops.iter().any(|op| matches!(op, Op::InTransactions { .. })))
}

/// Whether `text` compiles to a plan that reads a file of the import folder (`LOAD CSV`).
fn loads_files(text: &str) -> bool {
    let Ok(body) = engram_query::header::body(text) else { return false };
    match cached(body) {
        Some(hit) => hit.plan.loads_files(),
        None => plan_for(body).is_ok_and(|c| c.plan.loads_files()),
    }
}

/// Whether `text` is a read whose work the deadline bounds: it compiles, writes nothing and
/// calls no procedure. A server may run such a query on its I/O thread under a short deadline
/// (and on its worker pool if that passes) instead of paying a thread hop for a quick read.
pub fn bounded_read(text: &str) -> bool {
    let Ok(body) = engram_query::header::body(text) else { return false };
    let plan = match cached(body) {
        Some(hit) => hit,
        None if engram_query::ddl::parse(body).is_some() => return false,
        None => match plan_for(body) {
            Ok(c) => c,
            Err(_) => return false,
        },
    };
    !plan.writes && !plan.plan.calls_procedure() && !plan.plan.loads_files()
}

/// Looks `text` up in the plan cache, planning it on a miss (what a query pays before running).
pub fn cached_plan(text: &str) -> Result<(), QueryError> {
    plan_for(text).map(|_| ())
}

fn time_value(v: &value::Val) -> Result<Timestamp, QueryError> {
    match v {
        value::Val::Int(secs) => Ok(Timestamp::from_epoch_seconds(*secs)),
        value::Val::Str(s) => Timestamp::parse(s)
            .map_err(|e| QueryError::runtime(ErrorType::ArgumentError, Detail::InvalidArgumentValue, format!("AS OF: {e}"))),
        // A date-time (or a date, at its midnight in UTC): its instant, to the microsecond.
        value::Val::Temporal(t) if t.kind() == crate::temporal::Kind::DateTime || t.kind() == crate::temporal::Kind::Date => {
            let instant = match **t {
                crate::temporal::Temporal::DateTime { secs, nanos, .. } | crate::temporal::Temporal::ZonedDateTime { secs, nanos, .. } => {
                    (secs, nanos)
                }
                _ => (t.falkordb_seconds(), 0),
            };
            Ok(Timestamp(instant.0.saturating_mul(1_000_000).saturating_add(i64::from(instant.1 / 1000))))
        }
        other => Err(QueryError::runtime(
            ErrorType::ArgumentError,
            Detail::InvalidArgumentType,
            format!("AS OF takes an RFC 3339 string, epoch seconds, a date-time or a date, got {}", other.kind()),
        )),
    }
}

/// Whether `text` is an index statement (`CREATE INDEX …`, `DROP INDEX …`, the full-text index
/// procedures): it runs alone, as a settings write, never in a group or a transaction.
pub fn is_index_statement(text: &str) -> bool {
    index_statement(text).is_some()
}

/// The index statement `text` holds (after its parameter header), if it is one.
fn index_statement(text: &str) -> Option<Result<engram_query::ddl::Ddl, QueryError>> {
    match engram_query::header::body(text) {
        // A text in the plan cache compiled: it is no index statement.
        Ok(body) if cached(body).is_none() => engram_query::ddl::parse(body),
        _ => None,
    }
}

use value::Bound;

/// Makes a write query's `JobRecorder`, called only once the query turns out to write.
type MakeRecorder<'a> = &'a dyn Fn() -> crate::db::commit::JobRecorder;

/// Builds the access records of a group of write queries from their results, in query order
/// (`Scope::query_group_recorded`).
pub type QueryRecorder<'a> = dyn FnMut(&[Result<&QueryResult, &crate::error::Error>]) -> Vec<crate::db::audit::AccessRecord> + 'a;

/// Where a query's parameter values come from: a caller's `Params`, or `Bindings` it built.
#[derive(Clone, Copy)]
enum Args<'a> {
    Params(&'a Params),
    Bound(&'a Bindings),
}

impl Args<'_> {
    /// The digest the access history keeps of them: the same for the same values either way.
    fn digest(self) -> Option<String> {
        match self {
            Args::Params(p) => params_digest(p),
            Args::Bound(b) => params_digest(&b.to_params()),
        }
    }
}

/// Query parameters already in the executor's values: what a caller converting another
/// language's values builds directly (the Python extension), instead of a `Params` map that
/// each query converts again. A string costs one allocation; nothing is sorted or copied twice.
#[derive(Clone, Debug, Default)]
pub struct Bindings(Bound<'static>);

impl Bindings {
    /// No parameters.
    pub fn new() -> Bindings {
        Bindings::default()
    }

    /// Binds `$name` to the string `value`, replacing an earlier value.
    pub fn set_str(&mut self, name: &str, value: &str) {
        self.0.insert(name.to_owned(), value::Val::str(value));
    }

    /// Binds `$name` to `value`, replacing an earlier value. Nodes, relationships and paths
    /// cannot be parameters (the error says so).
    pub fn set(&mut self, name: &str, value: &QueryValue) -> Result<(), String> {
        self.0.insert(name.to_owned(), output::parameter(value).map_err(|e| format!("parameter ${name}: {e}"))?);
        Ok(())
    }

    /// How many parameters are bound.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }

    /// The same values as `Params`.
    pub fn to_params(&self) -> Params {
        self.0.iter().map(|(k, v)| (k.to_string(), output::plain(v))).collect()
    }
}

/// A text compiled and bound, or an index statement (which is not compiled).
enum Ready<'a> {
    Query(Arc<Compiled>, std::borrow::Cow<'a, Bound<'a>>),
    Index(Result<engram_query::ddl::Ddl, QueryError>),
}

/// Splits off the parameter header, compiles (through the plan cache) and binds the parameters.
fn bind<'p>(text: &str, params: &'p Params) -> Result<(Arc<Compiled>, Bound<'p>), QueryError> {
    match ready(text, Args::Params(params))? {
        Ready::Query(compiled, vals) => Ok((compiled, vals.into_owned())),
        Ready::Index(_) => Err(index_alone()),
    }
}

/// The error of an index statement where only a query may run.
fn index_alone() -> QueryError {
    QueryError::runtime(
        ErrorType::SemanticError,
        Detail::Unsupported,
        "an index statement runs alone (not in a read-only call, a transaction or a pipeline group)",
    )
}

/// The error of a writing query on a view (one snapshot, read only).
fn view_writes() -> QueryError {
    QueryError {
        kind: ErrorType::SemanticError,
        detail: Detail::Unsupported,
        phase: engram_query::Phase::Compile,
        message: "this query writes; a view reads one snapshot (run it through Database::query or Scope::query)".to_owned(),
        at: None,
    }
}

/// `bind`, or the index statement `text` is: one header split and one plan-cache lookup.
fn ready<'a>(text: &str, args: Args<'a>) -> Result<Ready<'a>, QueryError> {
    let (header, body) = engram_query::header::split(text)?;
    // A cached text compiled, so it is no index statement (those do not compile).
    let hit = cached(body);
    if hit.is_none() {
        if let Some(ddl) = engram_query::ddl::parse(body) {
            return Ok(Ready::Index(ddl));
        }
    }
    // Positions in errors count from the start of the whole text, header included.
    let header_len = text.len() - body.len();
    let compiled = match hit {
        Some(c) => c,
        None => plan_for(body).map_err(|mut e| {
            if let Some(at) = e.at {
                e.at = Some(engram_query::Position::of(text, header_len + at.offset));
            }
            e
        })?,
    };
    let mut own = Bound::default();
    let vals = match bound(&compiled, header, args, &mut own)? {
        Some(given) => std::borrow::Cow::Borrowed(given),
        None => std::borrow::Cow::Owned(own),
    };
    Ok(Ready::Query(compiled, vals))
}

/// The parameters of a run of `compiled`: the header's, then the caller's (which win over them),
/// bound into `own`; or, given bindings and no header, the caller's as they are (returned). An
/// error names a parameter the plan uses that neither gives. Filled in place, not returned by
/// value: the bindings are ~170 bytes every query would copy.
fn bound<'a>(
    compiled: &Compiled,
    header: engram_query::header::HeaderParams,
    args: Args<'a>,
    own: &mut Bound<'a>,
) -> Result<Option<&'a Bound<'a>>, QueryError> {
    let runtime =
        |k: &str, e: String| QueryError::runtime(ErrorType::TypeError, Detail::InvalidArgumentType, format!("parameter ${k}: {e}"));
    let no_header = header.is_empty();
    for (k, v) in header {
        let v = output::parameter(&output::from_header(v)).map_err(|e| runtime(&k, e))?;
        own.insert(k, v);
    }
    let given = match args {
        Args::Bound(b) if no_header => Some(&b.0),
        Args::Bound(b) => {
            for (k, v) in b.0.iter() {
                own.insert(k.to_owned(), v.clone());
            }
            None
        }
        Args::Params(params) => {
            for (k, v) in params {
                match v {
                    // Borrowed, key and text: a seek by external id reads it as it is.
                    QueryValue::String(s) => own.insert_text(k, s),
                    _ => own.insert(k.as_str(), output::parameter(v).map_err(|e| runtime(k, e))?),
                }
            }
            None
        }
    };
    let vals = given.unwrap_or(own);
    for p in &compiled.plan.params {
        if !vals.contains_key(p) {
            return Err(QueryError::runtime(
                ErrorType::ParameterMissing,
                Detail::MissingParameter,
                format!("parameter ${p} was not given"),
            ));
        }
    }
    Ok(given)
}

/// Runs `run` on the plan of `text` with its parameters bound when that plan is the one this
/// thread ran last, borrowed from the thread's recent plans: a query repeated in a loop takes no
/// reference count (two atomic operations of a short query's fixed cost). `None` otherwise, or
/// when the recent plans are in use (a query run inside another).
fn on_latest<R>(text: &str, args: Args<'_>, run: impl FnOnce(&Compiled, &Bound<'_>) -> R) -> Option<Result<R, QueryError>> {
    // A header in error is reported by the full path.
    let (header, body) = engram_query::header::split(text).ok()?;
    RECENT.with(|r| {
        let r = r.try_borrow().ok()?;
        let (latest, compiled) = r.first()?;
        if **latest != *body {
            return None;
        }
        let mut own = Bound::default();
        Some(bound(compiled, header, args, &mut own).map(|given| run(compiled, given.unwrap_or(&own))))
    })
}

/// Who runs a write query: the read context and whether sensitive content exists for them.
struct Writer<'a> {
    cx: &'a crate::read::scope::ReadContext,
    see_sensitive: bool,
    /// The row policies that apply to them here: what they hide, the query's reads do not see.
    rules: &'a crate::read::policy::Rules,
}

/// `LOAD CSV`'s reader: the database's import folder when the principal `may` read it (admins of
/// `*`: every workspace shares the folder).
fn files_reader(db: &crate::db::Database, may: bool) -> impl Fn(&str) -> Result<ImportFile, String> + Sync + '_ {
    move |url| {
        if may {
            db.import_file(url)
        } else {
            Err("LOAD CSV reads the import folder, which every workspace shares: it needs admin on *".to_owned())
        }
    }
}

impl crate::db::Database {
    /// Runs a writing query on `workspace` as one transaction: everything it wrote is committed
    /// together (durably, per the fsync policy), or, when it fails, nothing is.
    /// It is queued for the combiner like any small write, so write queries of concurrent callers
    /// share one state copy, one WAL write and one fsync (each still atomic alone).
    fn run_write(
        &self,
        workspace: &str,
        cx: crate::read::scope::ReadContext,
        (see_sensitive, rules, may_load): (bool, crate::read::policy::Rules, bool),
        compiled: Arc<Compiled>,
        vals: Bound<'static>,
        record: Option<MakeRecorder<'_>>,
    ) -> Result<(QueryResult, bool), crate::error::Error> {
        if !matches!(compiled.when, When::Now) {
            return Err(QueryError {
                kind: ErrorType::SemanticError,
                detail: Detail::Unsupported,
                phase: engram_query::Phase::Compile,
                message: "a query that writes reads the present: AS OF, KNOWN AS OF and ALL VERSIONS are for reads".to_owned(),
                at: None,
            }
            .into());
        }
        if compiled.mode == Mode::Explain {
            let snap = self.snapshot();
            return Ok((explained(&compiled, snap.workspace(workspace).ok().as_ref()), false));
        }
        if let Some(at) = batches::batched_at(&compiled.plan)? {
            // Several transactions: its access record is noted once it ends, not carried.
            return self.run_batched(workspace, &cx, (see_sensitive, &rules, may_load), (&compiled, &vals), at);
        }
        let workspace = workspace.to_owned();
        let db = self.clone();
        let job = move |st: &mut crate::state::State, jcx: &crate::db::commit::JobContext<'_>| {
            let embed = |t: &str| db.embed_query(t).map_err(|e| e.to_string());
            let files = files_reader(&db, may_load);
            let who = Writer { cx: &cx, see_sensitive, rules: &rules };
            let mut run = write_job(&workspace, &who, &compiled, &vals, Host { embed: Some(&embed), files: Some(&files) });
            let result = run(st, jcx);
            drop(run);
            result
        };
        // Its access record rides in its group's WAL write when it writes (`JobRecorder`).
        let done = self.commit_queued_recorded(job, record.map(|f| f()))?;
        let carried = done.carried;
        let result = done
            .out
            .downcast::<QueryResult>()
            .map(|b| *b)
            .map_err(|_| crate::error::Error::Internal("a query result of another type".to_owned()))?;
        Ok((result, carried))
    }
}

/// The commit job of a write query: runs its plan on the writer's copy of the state, each write
/// through `apply_batch`; the applied operations are its WAL record.
fn write_job<'a>(
    workspace: &'a str,
    who: &'a Writer<'a>,
    compiled: &'a Compiled,
    vals: &'a Bound<'a>,
    host: Host<'a>,
) -> impl FnMut(&mut crate::state::State, &crate::db::commit::JobContext<'_>) -> Result<crate::db::commit::Applied, crate::error::Error> + 'a
{
    move |st: &mut crate::state::State, jcx: &crate::db::commit::JobContext<'_>| {
        let (ops, result) = run_on_state(st, jcx, workspace, who, (compiled, vals), host, None)?;
        Ok(applied(workspace, ops, jcx, result))
    }
}

/// What a job that ran `ops` on `workspace` hands the committer: nothing to log when it wrote
/// nothing, else the operations as one batch.
fn applied(
    workspace: &str,
    ops: Vec<crate::write::batch::Op>,
    jcx: &crate::db::commit::JobContext<'_>,
    out: impl std::any::Any + Send,
) -> crate::db::commit::Applied {
    if ops.is_empty() {
        return crate::db::commit::Applied::nothing(out);
    }
    let batch = crate::write::batch::WriteBatch { workspace: workspace.to_owned(), ops };
    let record = if jcx.log { crate::write::mutation::encode_batch(&batch) } else { Vec::new() };
    crate::db::commit::Applied::wrote(record, out)
}

/// Runs one query's plan on the writer's copy of the state: the operations it applied (in
/// order) and its result.
/// `deferred`: a statement of a longer transaction, which checks the constraints once when it
/// ends (what the statement wrote is added there); `None`: the query is the transaction.
fn run_on_state(
    st: &mut crate::state::State,
    jcx: &crate::db::commit::JobContext<'_>,
    workspace: &str,
    who: &Writer<'_>,
    (compiled, vals): (&Compiled, &Bound),
    host: Host<'_>,
    deferred: Option<&mut crate::write::constraints::Touched>,
) -> Result<(Vec<crate::write::batch::Op>, QueryResult), crate::error::Error> {
    let profile = compiled.mode == Mode::Profile;
    let mut tx = write::Tx::new(st, workspace, jcx.now, jcx.limits, who.cx, (who.see_sensitive, who.rules), vals, host)?;
    let mut all_rows = Vec::new();
    let mut chosen = Vec::new();
    let mut profiles = Vec::new();
    for part in &compiled.plan.parts {
        let ops = physical::choose(&part.ops, &tx.view()).into_owned();
        let mut p = Vec::new();
        let rows = tx.run_part(part, &ops, profile.then_some(&mut p))?;
        chosen.push(ops);
        profiles.push(p);
        if part.columns.is_empty() {
            // A query ending in a write returns no rows, however many it wrote.
            continue;
        }
        for r in rows {
            all_rows.push(part.columns.iter().map(|(_, s)| r.get(*s).cloned().unwrap_or(value::Val::Null)).collect());
        }
    }
    tx.check_deletes()?;
    match deferred {
        Some(all) => tx.hand_touched(all),
        None => tx.check_constraints()?,
    }
    let view = tx.view();
    let graph = graph::Graph { view: &view, vis: Visibility::current(), now: graph::clock_at(jcx.now) };
    let rows = finish_rows(compiled, all_rows, &graph);
    let result = QueryResult {
        columns: compiled.plan.columns.clone(),
        rows,
        stats: tx.stats,
        plan: profile.then(|| render(&with_ops(compiled, chosen), &compiled.slot_names, Some(&profiles))),
        cached: compiled.ran.mark(),
    };
    Ok((std::mem::take(&mut tx.applied), result))
}

/// What EXPLAIN returns: the plan as it would run on `view` (the logical plan without one), no
/// rows, nothing run.
fn explained(compiled: &Compiled, view: Option<&WorkspaceView<'_>>) -> QueryResult {
    let plan = match view {
        Some(v) => render(
            &with_ops(compiled, compiled.plan.parts.iter().map(|p| physical::choose(&p.ops, v).into_owned()).collect()),
            &compiled.slot_names,
            None,
        ),
        None => render(&compiled.plan, &compiled.slot_names, None),
    };
    QueryResult { columns: compiled.plan.columns.clone(), rows: Vec::new(), stats: QueryStats::default(), plan: Some(plan), cached: false }
}

/// The compiled plan with each part's operators replaced by those that ran (EXPLAIN, PROFILE).
fn with_ops(compiled: &Compiled, ops: Vec<Vec<Op>>) -> engram_query::plan::Plan {
    let mut plan = compiled.plan.clone();
    for (part, ops) in plan.parts.iter_mut().zip(ops) {
        part.ops = ops;
    }
    plan
}

/// The result rows: UNION's duplicates removed, values materialized through `graph`.
fn finish_rows(compiled: &Compiled, mut all_rows: Vec<Vec<value::Val>>, graph: &graph::Graph<'_, '_>) -> Vec<Vec<QueryValue>> {
    if compiled.plan.distinct {
        let mut seen = std::collections::HashSet::new();
        all_rows.retain(|r| seen.insert(value::Key(r.clone())));
    }
    all_rows.iter().map(|r| r.iter().map(|v| output::materialize(graph, v)).collect()).collect()
}

impl WorkspaceView<'_> {
    /// Runs a read query on this view (its snapshot, its scope's limits and deadline). A query
    /// that writes is refused with nothing done.
    ///
    /// A leading `FalkorDB` parameter header (``CYPHER name="x" ids=[1,2] …``) binds parameters;
    /// those in `params` win over the header's.
    pub fn query(&self, text: &str, params: &Params) -> Result<QueryResult, QueryError> {
        self.query_embedding(text, params, None)
    }

    /// `query`, with the database's embedder for `engram.search.vector` and the semantic path of
    /// `engram.recall` (`Database::query` and `Scope::query` pass it).
    pub fn query_embedding(&self, text: &str, params: &Params, embed: Option<&Embed<'_>>) -> Result<QueryResult, QueryError> {
        self.read_args(text, Args::Params(params), Host { embed, files: None })
    }

    /// A read of `text` through the thread's latest plan when it is that one, else through the
    /// plan cache (writes and index statements refused).
    fn read_args(&self, text: &str, args: Args<'_>, host: Host<'_>) -> Result<QueryResult, QueryError> {
        let run = |compiled: &Compiled, vals: &Bound<'_>| {
            if compiled.writes {
                Err(view_writes())
            } else {
                self.run_read(compiled, vals, host, None)
            }
        };
        if let Some(done) = on_latest(text, args, run) {
            return done?;
        }
        match ready(text, args)? {
            Ready::Query(compiled, vals) => run(&compiled, &vals),
            Ready::Index(_) => Err(index_alone()),
        }
    }

    /// `query` with parameters bound ahead (`Bindings`): nothing is converted per call.
    pub fn query_bound(&self, text: &str, params: &Bindings) -> Result<QueryResult, QueryError> {
        self.read_args(text, Args::Bound(params), Host::default())
    }

    /// `query_embedding`, with the import folder's reader for `LOAD CSV` and the access
    /// history's for `engram.audit.history`.
    fn query_services(&self, text: &str, params: &Params, host: Host<'_>, audit: &AuditFn<'_>) -> Result<QueryResult, QueryError> {
        let (compiled, vals) = bind(text, params)?;
        if compiled.writes {
            return self.query_embedding(text, params, host.embed);
        }
        self.run_read(&compiled, &vals, host, Some(audit))
    }

    fn run_read(&self, compiled: &Compiled, vals: &Bound, host: Host<'_>, audit: Option<&AuditFn<'_>>) -> Result<QueryResult, QueryError> {
        // The statement's clock is the graph's that reads the temporal prefix, handed on.
        let empty = graph::Graph { view: self, vis: Visibility::current(), now: graph::clock_at(self.now) };
        let vis = {
            let no_match = NoMatch;
            let env = eval::Env { graph: &empty, params: vals, matcher: &no_match };
            match &compiled.when {
                When::Now => Visibility::current(),
                When::AllVersions => Visibility::all_versions(),
                When::AsOf(e) => Visibility::as_of(time_value(&env.eval(e, &[], &mut Vec::new()).map_err(|e| *e)?)?),
                When::KnownAsOf(e) => Visibility {
                    known_as_of: Some(time_value(&env.eval(e, &[], &mut Vec::new()).map_err(|e| *e)?)?),
                    ..Visibility::current()
                },
            }
        };
        let graph = graph::Graph { view: self, vis, now: empty.now };
        let profile = compiled.mode == Mode::Profile;
        if compiled.mode == Mode::Explain {
            return Ok(explained(compiled, Some(self)));
        }
        let mut all_rows: Vec<Vec<value::Val>> = Vec::new();
        // Without UNION's duplicate removal a row is materialized as it comes.
        let mut done: Vec<Vec<QueryValue>> = Vec::with_capacity(1);
        let mut profiles = Vec::new();
        let mut chosen = Vec::new();
        for part in &compiled.plan.parts {
            let runner = ops::Runner {
                graph: &graph,
                params: vals,
                cx: self.context(),
                width: part.width,
                embed: host.embed,
                audit,
                files: host.files,
                profile: profile.then(|| Mutex::new(ops::Profile::default())),
            };
            let ops = physical::choose(&part.ops, self);
            let rows = runner.run_ops(&ops, vec![value::nulls(part.width)], true).map_err(|e| *e)?;
            for r in rows {
                if compiled.plan.distinct {
                    all_rows.push(part.columns.iter().map(|(_, s)| r.get(*s).cloned().unwrap_or(value::Val::Null)).collect());
                } else {
                    done.push(
                        part.columns.iter().map(|(_, s)| r.get(*s).map_or(QueryValue::Null, |v| output::materialize(&graph, v))).collect(),
                    );
                }
            }
            if let Some(p) = runner.profile {
                profiles.push(p.into_inner().unwrap_or_default().ops);
                chosen.push(ops.into_owned());
            }
        }
        if compiled.plan.distinct {
            done = finish_rows(compiled, all_rows, &graph);
        }
        Ok(QueryResult {
            columns: compiled.plan.columns.clone(),
            rows: done,
            stats: QueryStats::default(),
            plan: profile.then(|| render(&with_ops(compiled, chosen), &compiled.slot_names, Some(&profiles))),
            cached: compiled.ran.mark(),
        })
    }
}

impl crate::db::Database {
    /// Runs a query on `workspace` with full access (the embedded shorthand): a read on the
    /// current snapshot, a write as one transaction. A query error or an unknown workspace is an
    /// `Error`.
    pub fn query(&self, workspace: &str, text: &str, params: &Params) -> Result<QueryResult, crate::error::Error> {
        self.query_args(workspace, text, Args::Params(params))
    }

    /// `query` with parameters bound ahead (`Bindings`).
    pub fn query_bound(&self, workspace: &str, text: &str, params: &Bindings) -> Result<QueryResult, crate::error::Error> {
        self.query_args(workspace, text, Args::Bound(params))
    }

    fn query_args(&self, workspace: &str, text: &str, args: Args<'_>) -> Result<QueryResult, crate::error::Error> {
        // The clocks are read only for a record (two reads are a tenth of a quick query).
        let now = || (crate::time::Clock::now(&*self.config().clock), std::time::Instant::now());
        let timing = self.audit_root_on().then(now);
        let record = timing
            .filter(|_| self.access_history_on())
            .map(|t| move || write_recorder(workspace, text, args.digest(), t, ("root".to_owned(), Vec::new(), "embedded")));
        let result = self.query_unaudited(workspace, text, args, record.as_ref().map(|f| f as MakeRecorder<'_>));
        // A write whose record rode in its WAL write is recorded already.
        if self.audit_root_on() && !result.as_ref().is_ok_and(|r| r.1) {
            let timing = timing.unwrap_or_else(now);
            self.note_root_access(query_note(workspace, text, args.digest(), timing, result.as_ref().map(|r| &r.0)), writes_or_ddl(text))?;
        }
        result.map(|r| r.0)
    }

    fn query_unaudited(
        &self,
        workspace: &str,
        text: &str,
        args: Args<'_>,
        record: Option<MakeRecorder<'_>>,
    ) -> Result<(QueryResult, bool), crate::error::Error> {
        let (compiled, vals) = match ready(text, args)? {
            Ready::Index(ddl) => return ddl::run(self, workspace, &ddl?).map(|r| (r, false)),
            Ready::Query(compiled, vals) => (compiled, vals),
        };
        if compiled.writes {
            return self.run_write(
                workspace,
                crate::read::scope::ROOT_CONTEXT.fork(),
                (true, crate::read::policy::Rules::NONE, true),
                compiled,
                vals.owned(),
                record,
            );
        }
        let embed = |t: &str| self.embed_query(t).map_err(|e| e.to_string());
        let files = files_reader(self, true);
        let audit = |f: &crate::db::audit::AuditFilter| self.access_history(f).map_err(|e| e.to_string());
        let snap = self.snapshot();
        let ws = snap.workspace(workspace)?;
        Ok((ws.run_read(&compiled, &vals, Host { embed: Some(&embed), files: Some(&files) }, Some(&audit))?, false))
    }
}

impl crate::db::scope::Scope {
    /// Runs a query on `workspace` as this scope's principal: only what it may see exists, and
    /// its limits, deadline and cancel token hold. A query that writes needs write access and
    /// runs as one transaction on the database's current state.
    pub fn query(&self, workspace: &str, text: &str, params: &Params) -> Result<QueryResult, crate::error::Error> {
        self.query_args(workspace, text, Args::Params(params))
    }

    /// `query` with parameters bound ahead (`Bindings`).
    pub fn query_bound(&self, workspace: &str, text: &str, params: &Bindings) -> Result<QueryResult, crate::error::Error> {
        self.query_args(workspace, text, Args::Bound(params))
    }

    fn query_args(&self, workspace: &str, text: &str, args: Args<'_>) -> Result<QueryResult, crate::error::Error> {
        let timing = self.audited().then(|| (crate::time::Clock::now(&*self.database().config().clock), std::time::Instant::now()));
        let record = timing.zip(self.audit_interface()).filter(|_| self.database().access_history_on()).map(|(t, interface)| {
            move || {
                let who = (self.principal().name().to_owned(), self.principal().roles().map(str::to_owned).collect(), interface);
                write_recorder(workspace, text, args.digest(), t, who)
            }
        });
        let result = self.query_unaudited(workspace, text, args, record.as_ref().map(|f| f as MakeRecorder<'_>));
        // A write whose record rode in its WAL write is recorded already.
        if let Some(timing) = timing {
            if !result.as_ref().is_ok_and(|r| r.1) {
                self.note_access(query_note(workspace, text, args.digest(), timing, result.as_ref().map(|r| &r.0)), writes_or_ddl(text))?;
            }
        }
        result.map(|r| r.0)
    }

    fn query_unaudited(
        &self,
        workspace: &str,
        text: &str,
        args: Args<'_>,
        record: Option<MakeRecorder<'_>>,
    ) -> Result<(QueryResult, bool), crate::error::Error> {
        let (compiled, vals) = match ready(text, args)? {
            Ready::Index(ddl) => {
                let ddl = ddl?;
                // A constraint binds every writer of the workspace, and declaring one reads all
                // its rows (a violation names them): its admins' to make.
                let access = if ddl.is_constraint() { crate::model::Access::Admin } else { crate::model::Access::Write };
                self.require(workspace, access)?;
                return ddl::run(self.database(), workspace, &ddl).map(|r| (r, false));
            }
            Ready::Query(compiled, vals) => (compiled, vals),
        };
        let db = self.database();
        // The import folder is every workspace's: reading it is for admins of all (checked
        // again by the reader, for a LOAD CSV inside an expression).
        if compiled.plan.loads_files() {
            self.require(crate::read::scope::ALL_WORKSPACES, crate::model::Access::Admin)?;
        }
        let may_load = self.may_load();
        if compiled.writes {
            self.require(workspace, crate::model::Access::Write)?;
            let see_sensitive = self.principal().grant_on(workspace).is_some_and(|g| g.see_sensitive);
            let rules = self.policy_rules(workspace).clone();
            return db.run_write(workspace, self.context().fork(), (see_sensitive, rules, may_load), compiled, vals.owned(), record);
        }
        let embed = |t: &str| db.embed_query(t).map_err(|e| e.to_string());
        let files = files_reader(db, may_load);
        let audit = |f: &crate::db::audit::AuditFilter| self.access_history(f);
        let ws = self.workspace(workspace)?;
        Ok((ws.run_read(&compiled, &vals, Host { embed: Some(&embed), files: Some(&files) }, Some(&audit))?, false))
    }

    /// Whether this principal may read the import folder (`LOAD CSV`): admins of `*`, as every
    /// workspace shares the folder.
    fn may_load(&self) -> bool {
        self.principal().may(crate::read::scope::ALL_WORKSPACES, crate::model::Access::Admin)
    }

    /// The access history, for a principal with admin on `*` (others: an error naming it).
    fn access_history(&self, f: &crate::db::audit::AuditFilter) -> Result<Vec<crate::db::audit::AccessRecord>, String> {
        if !self.principal().may(crate::read::scope::ALL_WORKSPACES, crate::model::Access::Admin) {
            return Err(format!("engram.audit.history needs admin on *; {} has not", self.principal().name()));
        }
        self.database().access_history(f).map_err(|e| e.to_string())
    }

    /// Runs write queries as one commit group: each its own atomic transaction, applied in order
    /// (a later one sees the earlier ones' writes) on one copy of the state, with one WAL write
    /// and one fsync for all; a failing one writes nothing and the others go on. Each needs
    /// write access to its workspace. Results in order. (A server's pipelined writes.)
    pub fn query_group(&self, queries: &[(&str, &str, &Params)]) -> Vec<Result<QueryResult, crate::error::Error>> {
        let (at, started) = (crate::time::Clock::now(&*self.database().config().clock), std::time::Instant::now());
        if !self.audited() || !self.database().access_history_on() {
            return self.query_group_unaudited(queries, None).0;
        }
        // The records ride in the group's WAL write when it writes (one fsync for both).
        let mut record = |results: &[Result<&QueryResult, &crate::error::Error>]| {
            queries
                .iter()
                .zip(results)
                .filter_map(|((workspace, text, params), r)| {
                    self.access_record(query_note(workspace, text, Args::Params(params).digest(), (at, started), *r))
                })
                .collect()
        };
        let (mut results, carried) = self.query_group_unaudited(queries, Some(&mut record));
        if carried {
            return results;
        }
        // One sync for the group: every record but the last is written, the last one syncs all.
        let n = results.len();
        for (i, ((workspace, text, params), result)) in queries.iter().zip(results.iter_mut()).enumerate() {
            if let Err(e) =
                self.note_access(query_note(workspace, text, Args::Params(params).digest(), (at, started), result.as_ref()), i + 1 == n)
            {
                *result = Err(e);
            }
        }
        results
    }

    /// `query_group` for a caller that records the queries itself (a server, which records
    /// commands): `record` builds their access records from the results (in query order) before
    /// the group is logged, and they ride in its WAL write, made durable by its fsync; true when
    /// they did (a group that wrote nothing carries none: the caller records them then).
    pub fn query_group_recorded(
        &self,
        queries: &[(&str, &str, &Params)],
        record: &mut QueryRecorder<'_>,
    ) -> (Vec<Result<QueryResult, crate::error::Error>>, bool) {
        if !self.database().access_history_on() {
            return (self.query_group_unaudited(queries, None).0, false);
        }
        self.query_group_unaudited(queries, Some(record))
    }

    fn query_group_unaudited(
        &self,
        queries: &[(&str, &str, &Params)],
        record: Option<&mut QueryRecorder<'_>>,
    ) -> (Vec<Result<QueryResult, crate::error::Error>>, bool) {
        let db = self.database();
        let embed = |t: &str| db.embed_query(t).map_err(|e| e.to_string());
        let files = files_reader(db, self.may_load());
        let mut results: Vec<Option<Result<QueryResult, crate::error::Error>>> = Vec::with_capacity(queries.len());
        let mut prepared = Vec::new();
        for (i, (workspace, text, params)) in queries.iter().enumerate() {
            let ready = bind(text, params).map_err(crate::error::Error::from).and_then(|(compiled, vals)| {
                if !compiled.writes || compiled.mode == Mode::Explain || !matches!(compiled.when, When::Now) {
                    return Err(crate::error::Error::Internal("query_group takes queries that write, as they are".to_owned()));
                }
                if batches::batched_at(&compiled.plan)?.is_some() {
                    return Err(write::misplaced().into());
                }
                self.require(workspace, crate::model::Access::Write)?;
                if compiled.plan.loads_files() {
                    self.require(crate::read::scope::ALL_WORKSPACES, crate::model::Access::Admin)?;
                }
                let see_sensitive = self.principal().grant_on(workspace).is_some_and(|g| g.see_sensitive);
                Ok((i, *workspace, compiled, vals, see_sensitive))
            });
            match ready {
                Ok(p) => {
                    results.push(None);
                    prepared.push(p);
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        let writers: Vec<Writer<'_>> =
            prepared.iter().map(|p| Writer { cx: self.context(), see_sensitive: p.4, rules: self.policy_rules(p.1) }).collect();
        let host = Host { embed: Some(&embed), files: Some(&files) };
        let mut jobs: Vec<_> = prepared.iter().zip(&writers).map(|(p, w)| write_job(p.1, w, &p.2, &p.3, host)).collect();
        let mut refs: Vec<&mut crate::db::commit::JobFn<'_>> = jobs.iter_mut().map(|j| j as &mut crate::db::commit::JobFn<'_>).collect();
        let (done, carried) = match record {
            None => (db.commit_group(&mut refs), false),
            Some(record) => {
                let unbound = &results;
                // The results in query order: the group's, and the errors of those that did not bind.
                let mut by_query = |done: &[Result<crate::db::commit::Done, crate::error::Error>]| {
                    let other = crate::error::Error::Internal("a query result of another type".to_owned());
                    let mut view: Vec<Result<&QueryResult, &crate::error::Error>> =
                        unbound.iter().map(|r| if let Some(Err(e)) = r { Err(e) } else { Err(&other) }).collect();
                    for (p, d) in prepared.iter().zip(done) {
                        view[p.0] = match d {
                            Ok(d) => d.out.downcast_ref::<QueryResult>().ok_or(&other),
                            Err(e) => Err(e),
                        };
                    }
                    record(&view)
                };
                db.commit_group_recorded(&mut refs, Some(&mut by_query))
            }
        };
        drop(refs);
        drop(jobs);
        for (p, d) in prepared.iter().zip(done) {
            results[p.0] = Some(d.and_then(|d| {
                d.out
                    .downcast::<QueryResult>()
                    .map(|b| *b)
                    .map_err(|_| crate::error::Error::Internal("a query result of another type".to_owned()))
            }));
        }
        (results.into_iter().map(|r| r.unwrap_or_else(|| Err(crate::error::Error::Internal("no result".to_owned())))).collect(), carried)
    }

    /// Runs a read query on `workspace`; a query that writes is refused with nothing done.
    pub fn query_read(&self, workspace: &str, text: &str, params: &Params) -> Result<QueryResult, crate::error::Error> {
        let (at, started) = (crate::time::Clock::now(&*self.database().config().clock), std::time::Instant::now());
        let db = self.database();
        let embed = |t: &str| db.embed_query(t).map_err(|e| e.to_string());
        let may_load = self.may_load();
        let files = files_reader(db, may_load);
        let audit = |f: &crate::db::audit::AuditFilter| self.access_history(f);
        let host = Host { embed: Some(&embed), files: Some(&files) };
        // Refused before it runs, as the other entries refuse it (the reader refuses it too).
        let loading = if !may_load && loads_files(text) {
            self.require(crate::read::scope::ALL_WORKSPACES, crate::model::Access::Admin)
        } else {
            Ok(())
        };
        let result = loading
            .and_then(|()| self.workspace(workspace).map_err(crate::error::Error::from))
            .and_then(|ws| Ok(ws.query_services(text, params, host, &audit)?));
        if self.audited() {
            self.note_access(query_note(workspace, text, Args::Params(params).digest(), (at, started), result.as_ref()), false)?;
        }
        result
    }
}

/// The ids of the claims a result holds (relationships, in paths and collections too), the
/// first `AUDIT_CLAIMS_MAX`.
pub fn claims_read(r: &QueryResult) -> Vec<u64> {
    fn walk(v: &QueryValue, out: &mut Vec<u64>) {
        if out.len() >= crate::db::audit::AUDIT_CLAIMS_MAX {
            return;
        }
        match v {
            QueryValue::Relationship(r) => out.push(r.id),
            QueryValue::Path(p) => out.extend(p.relationships.iter().map(|r| r.id)),
            QueryValue::List(items) => items.iter().for_each(|i| walk(i, out)),
            QueryValue::Map(m) => m.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    r.rows.iter().flatten().for_each(|v| walk(v, &mut out));
    out.truncate(crate::db::audit::AUDIT_CLAIMS_MAX);
    out
}

/// Whether a query's record must be durable: it writes (data, or an index declaration).
fn writes_or_ddl(text: &str) -> bool {
    writes(text).unwrap_or(false) || is_index_statement(text)
}

/// What the access history records of one query.
fn query_note<'a>(
    workspace: &'a str,
    text: &'a str,
    params_sha256: Option<String>,
    (at, started): (Timestamp, std::time::Instant),
    result: Result<&QueryResult, &crate::error::Error>,
) -> crate::db::scope::AccessNote<'a> {
    crate::db::scope::AccessNote {
        at,
        started,
        op: "query",
        workspace: Some(workspace),
        text,
        params_sha256,
        rows: result.map_or(0, |r| r.rows.len() as u64),
        claims: result.map(claims_read).unwrap_or_default(),
        outcome: outcome(result.err()),
    }
}

/// The recorder of a write query's access record (`JobRecorder`): `who` (user, roles, interface)
/// ran `text` on `workspace` with parameters `digest`, started at `timing`.
fn write_recorder(
    workspace: &str,
    text: &str,
    digest: Option<String>,
    timing: (Timestamp, std::time::Instant),
    (user, roles, interface): (String, Vec<String>, &'static str),
) -> crate::db::commit::JobRecorder {
    let (workspace, text) = (workspace.to_owned(), text.to_owned());
    Box::new(move |done: &crate::db::commit::Done| {
        let other = crate::error::Error::Internal("a query result of another type".to_owned());
        let result = done.out.downcast_ref::<QueryResult>().ok_or(&other);
        query_note(&workspace, &text, digest, timing, result).record(&user, roles, interface)
    })
}

/// The digest the access history keeps of parameters (none when there are none).
fn params_digest(params: &Params) -> Option<String> {
    (!params.is_empty()).then(|| crate::db::audit::sha256_hex(&format!("{params:?}")))
}

/// `ok`, or `error: CLASS: message`.
fn outcome(error: Option<&crate::error::Error>) -> String {
    match error {
        None => "ok".to_owned(),
        Some(e) => format!("error: {}: {e}", e.class().name()),
    }
}

/// Statements of one transaction: each a query text and its parameters.
pub type Statements<'a> = [(&'a str, &'a Params)];

impl crate::db::Database {
    /// Runs `statements` on `workspace` as one transaction with full access (the embedded
    /// shorthand for [`crate::Scope::transaction`]).
    pub fn transaction(&self, workspace: &str, statements: &Statements<'_>) -> Result<Vec<QueryResult>, crate::error::Error> {
        run_transaction(
            self,
            workspace,
            crate::read::scope::ROOT_CONTEXT.fork(),
            (true, crate::read::policy::Rules::NONE, true),
            statements,
        )
    }
}

impl crate::db::scope::Scope {
    /// Runs `statements` on `workspace` as one transaction: in order, each seeing the writes of
    /// those before it, committed together as one WAL record, or, when any fails, none of them
    /// (the error names the failing statement). Needs write access; every statement reads the
    /// present (no temporal prefix, no EXPLAIN).
    pub fn transaction(&self, workspace: &str, statements: &Statements<'_>) -> Result<Vec<QueryResult>, crate::error::Error> {
        let (at, started) = (crate::time::Clock::now(&*self.database().config().clock), std::time::Instant::now());
        let result = self.require(workspace, crate::model::Access::Write).and_then(|()| {
            let see_sensitive = self.principal().grant_on(workspace).is_some_and(|g| g.see_sensitive);
            let rules = self.policy_rules(workspace).clone();
            if statements.iter().any(|(text, _)| loads_files(text)) {
                self.require(crate::read::scope::ALL_WORKSPACES, crate::model::Access::Admin)?;
            }
            run_transaction(self.database(), workspace, self.context().fork(), (see_sensitive, rules, self.may_load()), statements)
        });
        let text: Vec<&str> = statements.iter().map(|(t, _)| *t).collect();
        let params: Vec<&Params> = statements.iter().map(|(_, p)| *p).filter(|p| !p.is_empty()).collect();
        let note = crate::db::scope::AccessNote {
            at,
            started,
            op: "transaction",
            workspace: Some(workspace),
            text: &text.join(";\n"),
            params_sha256: (!params.is_empty()).then(|| crate::db::audit::sha256_hex(&format!("{params:?}"))),
            rows: result.as_ref().map_or(0, |rs| rs.iter().map(|r| r.rows.len() as u64).sum()),
            claims: result.as_ref().map(|rs| rs.iter().flat_map(claims_read).collect()).unwrap_or_default(),
            outcome: outcome(result.as_ref().err()),
        };
        self.note_access(note, true)?;
        result
    }
}

/// A query error of statement `i` (counted from 0) of a transaction, named in its message.
fn in_statement(i: usize, mut e: QueryError) -> crate::error::Error {
    e.message = format!("statement {i}: {}", e.message);
    e.into()
}

fn run_transaction(
    db: &crate::db::Database,
    workspace: &str,
    cx: crate::read::scope::ReadContext,
    (see_sensitive, rules, may_load): (bool, crate::read::policy::Rules, bool),
    statements: &Statements<'_>,
) -> Result<Vec<QueryResult>, crate::error::Error> {
    let mut bound = Vec::with_capacity(statements.len());
    for (i, (text, params)) in statements.iter().enumerate() {
        let (compiled, vals) = bind(text, params).map_err(|e| in_statement(i, e))?;
        if !matches!(compiled.when, When::Now) || compiled.mode == Mode::Explain {
            return Err(in_statement(
                i,
                QueryError {
                    kind: ErrorType::SemanticError,
                    detail: Detail::Unsupported,
                    phase: engram_query::Phase::Compile,
                    message: "a transaction reads the present: AS OF, KNOWN AS OF, ALL VERSIONS and EXPLAIN are for reads alone".to_owned(),
                    at: None,
                },
            ));
        }
        bound.push((compiled, vals.owned()));
    }
    let workspace = workspace.to_owned();
    let handle = db.clone();
    let job = move |st: &mut crate::state::State, jcx: &crate::db::commit::JobContext<'_>| {
        let embed = |t: &str| handle.embed_query(t).map_err(|e| e.to_string());
        let files = files_reader(&handle, may_load);
        let host = Host { embed: Some(&embed), files: Some(&files) };
        let who = Writer { cx: &cx, see_sensitive, rules: &rules };
        let mut ops = Vec::new();
        let mut results = Vec::with_capacity(bound.len());
        // Constraints hold when the transaction ends, not after each statement.
        let mut touched = crate::write::constraints::Touched::default();
        for (i, (compiled, vals)) in bound.iter().enumerate() {
            let (more, result) =
                run_on_state(st, jcx, &workspace, &who, (compiled, vals), host, Some(&mut touched)).map_err(|e| match e {
                    crate::error::Error::Query(q) => in_statement(i, q),
                    other => other,
                })?;
            ops.extend(more);
            // The transaction's record is one batch: its replay holds it to the same limit.
            if ops.len() > jcx.limits.batch_ops_max {
                return Err(in_statement(
                    i,
                    QueryError::runtime(
                        ErrorType::LimitError,
                        Detail::Limit,
                        format!("the transaction writes more than batch_ops_max = {} operations", jcx.limits.batch_ops_max),
                    ),
                ));
            }
            results.push(result);
        }
        crate::write::constraints::check(st, &workspace, &touched)
            .map_err(|why| QueryError::runtime(ErrorType::ConstraintValidationFailed, Detail::InvalidArgumentValue, why))?;
        Ok(applied(&workspace, ops, jcx, results))
    };
    let done = db.commit_queued(job)?;
    done.out
        .downcast::<Vec<QueryResult>>()
        .map(|b| *b)
        .map_err(|_| crate::error::Error::Internal("a transaction result of another type".to_owned()))
}

/// A matcher for expressions that cannot hold patterns (the temporal prefix).
struct NoMatch;

impl eval::Matcher for NoMatch {
    fn run(&self, _: &[Op], _: Vec<value::Val>) -> eval::Fallible<Vec<Vec<value::Val>>> {
        Ok(Vec::new())
    }
}
