//! Commands: the dispatch by name, the per-connection state, and the engine call that every
//! family shares (the blocking pool behind the `max-pending-queries` queue; the write lane for
//! write queries).

mod connection;
mod engram_cmds;
mod entities;
mod graph;
mod info;
mod lane;
mod pipeline;
mod tally;
mod values;

pub use lane::Lane;
pub use pipeline::dispatch_all;

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use engram::{Database, ErrorClass};

use crate::audit;
use crate::resp::Reply;
use crate::state::Shared;

/// What a connection remembers between commands.
#[derive(Debug)]
pub struct Conn {
    /// The client id (`CLIENT ID`).
    pub id: u64,
    /// The protocol: 2 or 3 (`HELLO`).
    pub proto: u8,
    /// Who the client is; `None` until it authenticates (`NOAUTH` for every other command).
    pub principal: Option<Arc<engram::Principal>>,
    /// `CLIENT SETNAME`.
    pub name: Option<String>,
    /// Commands queued since `MULTI`.
    pub multi: Option<Vec<Vec<Vec<u8>>>>,
    /// Why the open `MULTI` can only be discarded (its EXEC answers `EXECABORT` with this).
    pub multi_aborted: Option<String>,
    /// Where the command came from, for the metrics: `resp`, `http` or `mcp`.
    pub interface: &'static str,
    /// The write lane its write queries go to (RESP connections); without one they run on the pool.
    pub lane: Option<Arc<Lane>>,
    /// Its request counts not yet in the shared ones (folded in after each batch).
    tally: tally::Tally,
}

impl Conn {
    /// A new connection as `principal` (see `users::initial_principal`): RESP2 until `HELLO 3`.
    pub fn new(id: u64, principal: Option<Arc<engram::Principal>>) -> Conn {
        Conn {
            id,
            proto: 2,
            principal,
            name: None,
            multi: None,
            multi_aborted: None,
            interface: "resp",
            lane: None,
            tally: tally::Tally::default(),
        }
    }

    /// Adds the request counts of the commands run since the last call to the shared ones
    /// (`INFO`, `CLIENT LIST`, the metrics).
    pub(crate) fn fold_counts(&mut self, shared: &Shared) {
        self.tally.fold(shared, self.id, self.interface);
    }

    /// Whether the client has authenticated (or needed not to).
    pub fn authenticated(&self) -> bool {
        self.principal.is_some()
    }

    /// The principal, for commands that run only once authenticated.
    pub(crate) fn who(&self) -> Arc<engram::Principal> {
        self.principal.clone().unwrap_or_else(|| Arc::new(engram::Principal::named("nobody")))
    }
}

/// What the connection does after a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on reading.
    Continue,
    /// Send the replies so far, then close (`QUIT`, `SHUTDOWN`).
    Close,
}

/// Every command the server knows: name, Redis arity (negative: at least), one-line summary.
pub(crate) const COMMANDS: &[(&str, i64, &str)] = &[
    ("PING", -1, "Returns PONG, or the argument."),
    ("ECHO", 2, "Returns the argument."),
    ("QUIT", 1, "Closes the connection."),
    ("RESET", 1, "Resets the connection (protocol 2, no name)."),
    ("SELECT", 2, "Selects database 0 (the only one)."),
    ("HELLO", -1, "Picks the protocol (2 or 3), optionally authenticates and names the client."),
    ("AUTH", -2, "Authenticates the connection."),
    ("CLIENT", -2, "SETINFO, SETNAME, GETNAME, ID, INFO, LIST, KILL, MAINT_NOTIFICATIONS."),
    ("INFO", -1, "Server information by section: server, clients, memory, stats, persistence, keyspace, commandstats."),
    ("COMMAND", -1, "The commands: COUNT, DOCS, or all with their arity."),
    ("CONFIG", -2, "GET pattern / SET name value for the server's limits; RESETSTAT."),
    ("DBSIZE", 1, "The number of workspaces (graphs)."),
    ("SLOWLOG", -2, "GET [n] | LEN | RESET: commands slower than slowlog-log-slower-than (admin on *)."),
    ("MULTI", 1, "Queues the following commands until EXEC; at most one of them may write."),
    ("EXEC", 1, "Runs the queued commands in order."),
    ("DISCARD", 1, "Drops the queued commands."),
    ("SHUTDOWN", -1, "Stops the server after in-flight commands."),
    ("GRAPH.QUERY", -3, "Runs a query on a graph (a workspace), creating it."),
    ("GRAPH.RO_QUERY", -3, "Runs a read-only query; writes are refused."),
    ("GRAPH.EXPLAIN", 3, "The plan of a query, one line per operator."),
    ("GRAPH.PROFILE", -3, "Runs a query and returns its plan with rows and time per operator."),
    ("GRAPH.DELETE", 2, "Deletes a graph (a workspace) and everything in it."),
    ("GRAPH.LIST", 1, "The graphs (workspaces)."),
    ("GRAPH.CONFIG", -3, "GET / SET of the graph settings (TIMEOUT, TIMEOUT_DEFAULT, TIMEOUT_MAX)."),
    ("GRAPH.CONSTRAINT", -8, "CREATE|DROP key UNIQUE|MANDATORY NODE|RELATIONSHIP label PROPERTIES n prop...: a constraint on the graph."),
    ("GRAPH.COPY", 3, "src dst: copies a graph (a workspace) into a new one, with its settings and policies."),
    ("GRAPH.SLOWLOG", -2, "key [RESET]: the slowest query commands on the graph in the slow log (admin on the key)."),
    ("GRAPH.MEMORY", -3, "USAGE key [SAMPLES n]: the graph's share of the heap in MB, by part (admin on the key)."),
    ("GRAPH.INFO", -1, "[RunningQueries] [WaitingQueries]: the queries running and waiting now, on graphs the caller administers."),
    (
        "ENGRAM.QUERY",
        -3,
        "ws query [PARAMS json] [TIMEOUT ms] [IDEMPOTENCY key]: runs a query; the reply is a map of columns, rows, stats.",
    ),
    ("ENGRAM.EMBED", -2, "Each text's vector by the database's embedder."),
    ("ENGRAM.TRANSACTION", 3, "Runs a JSON array of queries on a workspace as one atomic transaction."),
    ("ENGRAM.RO_QUERY", -3, "As ENGRAM.QUERY, read only."),
    ("ENGRAM.EXPLAIN", -3, "ws query: the plan."),
    ("ENGRAM.PROFILE", -3, "ws query [PARAMS json] [TIMEOUT ms]: runs the query; the reply adds the plan with rows and time per operator."),
    ("ENGRAM.WHOAMI", 1, "The connection's user and its grants by workspace."),
    ("ENGRAM.WORKSPACES", 1, "The workspaces with their entity and claim counts."),
    ("ENGRAM.CHECKPOINT", 1, "Writes a snapshot and truncates the WAL."),
    ("ENGRAM.INGEST", 3, "ws json: ingests one document or an array of them (idempotent by message ids); a report per document."),
    ("ENGRAM.RECALL", -3, "ws text [BUDGET n] [SEED e]... [HOPS n] [AS_OF t] [PROPERTY k=v]... [VECTOR json]: hybrid recall under a token budget."),
    ("ENGRAM.CONTEXT", -3, "ws entity [TEXT q] [DEPTH n] [BUDGET n] [LIMIT n] [PREDICATE p]... [TYPE t]... [AS_OF t] [VECTOR json]: an entity's context, or with TEXT its neighbourhood ranked by similarity, under a token budget."),
    ("ENGRAM.NEIGHBORS", -3, "ws entity [LIMIT n] [DIRECTION out|in|both]: the entity's edges."),
    ("ENGRAM.DELETE", 4, "ws ENTITY id | CLAIM id: soft delete (restorable)."),
    ("ENGRAM.RESTORE", 4, "ws ENTITY id | CLAIM id: undoes a soft delete."),
    ("ENGRAM.FORGET", 4, "ws ENTITY id | CONVERSATION id: irreversible erasure."),
    ("ENGRAM.ENTITY", -3, "ws id [LIMIT n] [AS_OF t]: the entity with its claims (every state) and their evidence."),
    ("ENGRAM.SEARCH", -3, "ws text [OFFSET n] [LIMIT n]: entities whose name or alias equals, starts with or contains the text."),
    ("ENGRAM.CLAIM", 3, "ws id: one claim (dense or external id) with its evidence."),
    (
        "ENGRAM.CLAIMS",
        -2,
        "ws [PREDICATE p] [STATE proposed|accepted|deprecated|current|all] [PROPERTY k=v]... [OFFSET n] [LIMIT n]: claims, newest first.",
    ),
    ("ENGRAM.STATS", 2, "ws: entity and claim counts by type and predicate."),
    ("ENGRAM.BACKUP", 2, "path: a consistent copy of the database into a new folder (admin on *)."),
    ("ENGRAM.TAG", -4, "ws SET|DEL|GET CLAIM|ENTITY id [key=value|key]... | ws SET|DEL|GET MESSAGE conversation message|* ...: tags (write to set)."),
    ("ENGRAM.AUDIT", -1, "[SINCE t] [USER u] [OP o] [LIMIT n]: the access history, oldest first (admin on *)."),
    ("ENGRAM.ROLE", -2, "ADD name | DEL name | GRANT name ws|* read|write|admin [SEE_SENSITIVE] | REVOKE name ws|* | ASSIGN user role | UNASSIGN user role | LIST (admin on *)."),
    (
        "ENGRAM.POLICY",
        -2,
        "SET ws name claims|entities role[,role...] predicate | DEL ws name | LIST [ws] | EXPLAIN user ws: row policies (admin on the workspace).",
    ),
    (
        "ENGRAM.USER",
        -2,
        "ADD name [password] | GRANT name ws|* read|write|admin [SEE_SENSITIVE] | REVOKE name ws|* | DEL name | LIST | TOKEN name | TOKENS | REVOKETOKEN id (admin on *).",
    ),
];

/// Runs one command, or queues it inside `MULTI`.
pub async fn dispatch(shared: &Arc<Shared>, conn: &mut Conn, args: Vec<Vec<u8>>) -> (Reply, Flow) {
    let out = dispatch_counted(shared, conn, args).await;
    conn.fold_counts(shared);
    out
}

/// `dispatch`, its request counts left on the connection (`Conn::fold_counts` adds them).
async fn dispatch_counted(shared: &Arc<Shared>, conn: &mut Conn, args: Vec<Vec<u8>>) -> (Reply, Flow) {
    let Some(first) = args.first() else { return (Reply::err("empty command"), Flow::Continue) };
    let name = command_name(first);
    if !conn.authenticated() {
        match &*name {
            "HELLO" if !args.iter().any(|a| a.eq_ignore_ascii_case(b"AUTH")) => {
                return (Reply::Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time".to_owned()), Flow::Continue);
            }
            "AUTH" | "HELLO" | "QUIT" | "RESET" => {}
            _ => return (Reply::Error("NOAUTH Authentication required.".to_owned()), Flow::Continue),
        }
        if name == "AUTH" {
            // A login attempt is recorded whether it succeeds or not.
            let command = audit::Command { name: &name, args: &args, at: now(), started: Instant::now(), interface: conn.interface };
            let reply = connection::auth(shared, conn, &args).await;
            let who = if reply.is_error() { None } else { conn.principal.clone() };
            record(shared, command.record(who.as_deref(), &reply, Vec::new()), false).await;
            return (reply, Flow::Continue);
        }
    }
    match (&*name, conn.multi.is_some()) {
        ("MULTI", false) => {
            conn.multi = Some(Vec::new());
            return (Reply::ok(), Flow::Continue);
        }
        ("MULTI", true) => return (Reply::err("MULTI calls can not be nested"), Flow::Continue),
        ("EXEC", false) => return (Reply::err("EXEC without MULTI"), Flow::Continue),
        ("DISCARD", false) => return (Reply::err("DISCARD without MULTI"), Flow::Continue),
        ("DISCARD", true) => {
            conn.multi = None;
            conn.multi_aborted = None;
            return (Reply::ok(), Flow::Continue);
        }
        ("EXEC", true) => return (exec(shared, conn).await, Flow::Continue),
        ("QUIT" | "RESET", true) => {
            conn.multi = None;
            conn.multi_aborted = None;
        }
        (_, true) => {
            let max = shared.limits().multi_queued_max;
            if let Some(queue) = conn.multi.as_mut() {
                if queue.len() >= max {
                    // As Redis does with a command it cannot queue: the EXEC will be refused.
                    queue.clear();
                    let why = format!("more than multi-queued-max ({max}) commands queued");
                    conn.multi_aborted = Some(why.clone());
                    return (Reply::err(why), Flow::Continue);
                }
                if conn.multi_aborted.is_none() {
                    queue.push(args);
                }
            }
            return (Reply::Simple("QUEUED"), Flow::Continue);
        }
        _ => {}
    }
    execute(shared, conn, name, args).await
}

/// Whether a command changes data (a write query, `GRAPH.DELETE`).
fn writes(args: &[Vec<u8>]) -> bool {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    match name.as_str() {
        "GRAPH.QUERY" | "GRAPH.PROFILE" | "ENGRAM.QUERY" | "ENGRAM.PROFILE" => {
            arg(args, 2).is_none_or(|t| engram::exec::writes(t).unwrap_or(false))
        }
        "GRAPH.DELETE" | "GRAPH.CONSTRAINT" | "GRAPH.COPY" | "ENGRAM.INGEST" | "ENGRAM.TRANSACTION" | "ENGRAM.DELETE"
        | "ENGRAM.RESTORE" | "ENGRAM.FORGET" => true,
        "ENGRAM.TAG" => arg(args, 2).is_some_and(|w| !w.eq_ignore_ascii_case("GET")),
        _ => false,
    }
}

/// `EXEC`: the queued commands in order, when at most one of them writes (a write query is one
/// atomic transaction, so the whole is all-or-nothing); more than one write is refused whole,
/// nothing run, because two engine transactions could not be made one.
async fn exec(shared: &Arc<Shared>, conn: &mut Conn) -> Reply {
    let queue = conn.multi.take().unwrap_or_default();
    if let Some(why) = conn.multi_aborted.take() {
        return Reply::Error(format!("EXECABORT Transaction discarded because of previous errors: {why}"));
    }
    let writers = queue.iter().filter(|a| writes(a)).count();
    if writers > 1 {
        return Reply::Error(format!(
            "EXECABORT Transaction discarded: {writers} of its commands write, and engram runs one write per transaction; put the writes in one query"
        ));
    }
    let mut replies = Vec::with_capacity(queue.len());
    for args in queue {
        let name = command_name(&args[0]);
        replies.push(execute(shared, conn, name, args).await.0);
    }
    Reply::Array(replies)
}

/// The time now, for records.
fn now() -> engram::Timestamp {
    engram::Clock::now(&engram::SystemClock)
}

/// Appends `record` to the access history; a write's (`durable`) is on disk before this returns
/// (on the blocking pool: an fsync). A failure to record is logged, and counted as an error.
async fn record(shared: &Arc<Shared>, record: engram::db::audit::AccessRecord, durable: bool) {
    if !shared.db.access_history_on() {
        return;
    }
    let db = shared.db.clone();
    let done = if durable {
        tokio::task::spawn_blocking(move || db.record_access(record, true))
            .await
            .unwrap_or_else(|e| Err(engram::Error::Internal(e.to_string())))
    } else {
        db.record_access(record, false)
    };
    if let Err(e) = done {
        shared.stats.errors.fetch_add(1, Ordering::Relaxed);
        tracing::error!(error = %e, "could not record a request in the access history");
    }
}

/// Appends the records of a commit group's commands, all durable (one fsync, the last), on
/// this thread (a write lane's).
fn record_all_now(shared: &Shared, records: Vec<engram::db::audit::AccessRecord>) {
    if !shared.db.access_history_on() {
        return;
    }
    let n = records.len();
    if let Err(e) = records.into_iter().enumerate().try_for_each(|(i, r)| shared.db.record_access(r, i + 1 == n)) {
        shared.stats.errors.fetch_add(1, Ordering::Relaxed);
        tracing::error!(error = %e, "could not record a request in the access history");
    }
}

/// Whether a command's record must be durable before its reply: it changed data, users, roles
/// or policies.
fn durable(name: &str, args: &[Vec<u8>]) -> bool {
    writes(args) || matches!(name, "ENGRAM.USER" | "ENGRAM.ROLE" | "ENGRAM.POLICY" | "ENGRAM.TAG")
}

/// Runs one command now, and records it in the access history.
async fn execute(shared: &Arc<Shared>, conn: &mut Conn, name: Cow<'static, str>, args: Vec<Vec<u8>>) -> (Reply, Flow) {
    if !audit::recorded(&name) {
        return execute_unrecorded(shared, conn, name, &args).await;
    }
    let (at, started) = (now(), Instant::now());
    let claims = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (reply, flow) = audit::CLAIMS.scope(claims.clone(), execute_unrecorded(shared, conn, name.clone(), &args)).await;
    let command = audit::Command { name: &name, args: &args, at, started, interface: conn.interface };
    let who = match &*name {
        "AUTH" | "HELLO" if reply.is_error() => None,
        _ => conn.principal.clone(),
    };
    let read = claims.lock().map(|c| c.clone()).unwrap_or_default();
    record(shared, command.record(who.as_deref(), &reply, read), durable(&name, &args)).await;
    (reply, flow)
}

async fn execute_unrecorded(shared: &Arc<Shared>, conn: &mut Conn, name: Cow<'static, str>, args: &[Vec<u8>]) -> (Reply, Flow) {
    let started = conn.tally.began(&name);
    if matches!(&*name, "INFO" | "CLIENT" | "SLOWLOG" | "CONFIG") {
        // What they show includes the commands before them in the same pipeline, and this one
        // (and a `CONFIG SET` of the slow log's threshold holds from the next command on).
        conn.fold_counts(shared);
    }
    let (reply, flow) = match &*name {
        "AUTH" => (connection::auth(shared, conn, args).await, Flow::Continue),
        "HELLO" => (connection::hello(shared, conn, args).await, Flow::Continue),
        n if n.starts_with("GRAPH.") => (graph::run(shared, conn, &name, args).await, Flow::Continue),
        n if n.starts_with("ENGRAM.") => (engram_cmds::run(shared, conn, &name, args).await, Flow::Continue),
        "INFO" => (info::info(shared, conn, args), Flow::Continue),
        "SLOWLOG" => (info::slowlog(shared, conn, args), Flow::Continue),
        "COMMAND" => (info::command(args), Flow::Continue),
        "CONFIG" => (info::config(shared, conn, args), Flow::Continue),
        _ => connection::run(shared, conn, &name, args),
    };
    account(shared, conn, &name, args, started, &reply);
    (reply, flow)
}

/// Counts a command that ran since `started` with `reply`: the counters, the slow log, the
/// metrics and `INFO commandstats`.
#[allow(clippy::ptr_arg, reason = "the `Cow`'s variant says whether the name is a known command's")]
fn account(shared: &Arc<Shared>, conn: &mut Conn, name: &Cow<'static, str>, args: &[Vec<u8>], started: quanta::Instant, reply: &Reply) {
    let ended = quanta::Instant::now();
    let micros = u64::try_from(ended.saturating_duration_since(started).as_micros()).unwrap_or(u64::MAX);
    if micros >= conn.tally.slow_micros(shared) {
        let (addr, client_name) =
            shared.clients.lock().ok().and_then(|c| c.get(&conn.id).map(|i| (i.addr.to_string(), i.name.clone()))).unwrap_or_default();
        shared.note_slow(micros, args, addr, client_name);
    }
    if let Some(class) = reply.error_class() {
        shared.metrics.error(conn.interface, class);
    }
    // `command_name` borrows only the names `COMMANDS` knows.
    let known = match name {
        Cow::Borrowed(known) => known,
        Cow::Owned(_) => "unknown",
    };
    conn.tally.add(known, micros, reply.is_error(), ended);
}

/// The system clock, shared: a deadline per request then costs no allocation.
pub(crate) fn system_clock() -> Arc<dyn engram::Clock> {
    static CLOCK: std::sync::OnceLock<Arc<dyn engram::Clock>> = std::sync::OnceLock::new();
    CLOCK.get_or_init(|| Arc::new(engram::SystemClock)).clone()
}

/// A command's name in upper case: a known command's as `COMMANDS` writes it (nothing
/// allocated for the commands that come by the million), any other's as sent.
fn command_name(first: &[u8]) -> Cow<'static, str> {
    let mut upper = [0u8; 32];
    if let Some(buf) = upper.get_mut(..first.len()) {
        for (u, b) in buf.iter_mut().zip(first) {
            *u = b.to_ascii_uppercase();
        }
        if let Some(known) = std::str::from_utf8(buf).ok().and_then(known_command) {
            return Cow::Borrowed(known);
        }
    }
    Cow::Owned(String::from_utf8_lossy(first).to_ascii_uppercase())
}

/// `name`'s entry in `COMMANDS` (the name as it is written there), if it is one.
fn known_command(name: &str) -> Option<&'static str> {
    static BY_NAME: std::sync::OnceLock<std::collections::HashSet<&'static str, foldhash::fast::FixedState>> = std::sync::OnceLock::new();
    BY_NAME.get_or_init(|| COMMANDS.iter().map(|(n, _, _)| *n).collect()).get(name).copied()
}

/// Runs `f` on the database on the blocking pool, holding one place of the queue; a full queue
/// is an error naming `max-pending-queries`, and nothing runs.
pub(crate) async fn engine<T: Send + 'static>(shared: &Arc<Shared>, f: impl FnOnce(&Database) -> T + Send + 'static) -> Result<T, Reply> {
    let Ok(permit) = shared.pending.clone().try_acquire_owned() else {
        shared.stats.rejected_queue.fetch_add(1, Ordering::Relaxed);
        let max = shared.limits().max_pending_queries;
        return Err(Reply::failed(ErrorClass::Limit, format!("ERR too many pending queries (max-pending-queries is {max}); retry later")));
    };
    let db = shared.db.clone();
    let claims = audit::CLAIMS.try_with(Arc::clone).ok();
    tokio::task::spawn_blocking(move || {
        let out = audit::with_claims(claims, || f(&db));
        drop(permit);
        out
    })
    .await
    .map_err(|e| Reply::err(format!("internal error: {e}")))
}

/// An engine error as a reply: the error prefix picks the client's exception (`OOM` for a
/// memory limit, `ERR` otherwise); the text names the class, the query position when there is
/// one, and the message.
pub(crate) fn error_reply(shared: &Shared, e: &engram::Error) -> Reply {
    let class = e.class();
    if class == ErrorClass::Limit && e.to_string().contains("deadline") {
        shared.stats.timeouts.fetch_add(1, Ordering::Relaxed);
    }
    match e {
        engram::Error::Denied { .. } => Reply::Error(error_text(e)),
        _ => Reply::failed(class, error_text(e)),
    }
}

/// The text of `error_reply`.
pub(crate) fn error_text(e: &engram::Error) -> String {
    if let engram::Error::Denied { principal, workspace, needed } = e {
        return format!("NOPERM User {principal} has no {} access to workspace '{workspace}'", needed.as_str());
    }
    if let engram::Error::Query(q) = e {
        let at = match (q.line(), q.column()) {
            (Some(l), Some(c)) => format!(" at {l}:{c}"),
            _ => String::new(),
        };
        return format!("ERR {}{at}: {} ({}: {})", q.kind.as_str(), q.message, q.phase.short(), q.detail.as_str());
    }
    let prefix = match e.class() {
        ErrorClass::Limit if e.to_string().contains("memory") => "OOM",
        _ => "ERR",
    };
    format!("{prefix} {e}")
}

/// The text of argument `i`, if it is UTF-8.
pub(crate) fn arg(args: &[Vec<u8>], i: usize) -> Option<&str> {
    args.get(i).and_then(|a| std::str::from_utf8(a).ok())
}

/// Redis's text for a wrong argument count.
pub(crate) fn arity(name: &str) -> Reply {
    Reply::err(format!("wrong number of arguments for '{}' command", name.to_ascii_lowercase()))
}

/// A deadline `ms` from now, bounded by the server's maximum; `None` for the default.
pub(crate) fn deadline(shared: &Shared, ms: Option<u64>) -> Result<Duration, Reply> {
    let limits = shared.limits();
    let ms = ms.unwrap_or(limits.query_timeout_default_ms);
    if ms > limits.query_timeout_max_ms {
        return Err(Reply::failed(
            ErrorClass::Limit,
            format!("ERR timeout {ms} ms is over query-timeout-max ({} ms)", limits.query_timeout_max_ms),
        ));
    }
    Ok(Duration::from_millis(ms))
}

/// One query as a command asks it.
pub(crate) struct QueryCall {
    /// The workspace (a FalkorDB graph key).
    pub workspace: String,
    /// The text, a `CYPHER k=v` header allowed.
    pub text: String,
    /// Parameters besides the header's.
    pub params: engram::Params,
    /// Refuse a query that writes (nothing runs), and never create the workspace.
    pub read_only: bool,
    /// The deadline from the start of the call.
    pub timeout: Duration,
    /// `EXPLAIN` or `PROFILE` put before the text (after its header).
    pub mode: Option<&'static str>,
    /// Who asks.
    pub principal: Arc<engram::Principal>,
}

/// Runs a query call and turns its outcome into `T` with `finish`. A read that calls no
/// procedure (`engram::exec::bounded_read`) on an existing workspace runs first on this task's
/// own thread under `inline-query-budget`: most reads take microseconds, and the hop to the pool
/// and back costs more than they do. One that passes the budget is stopped by it (the executor
/// checks its deadline as it goes) and run again on the pool under its own deadline; when it takes
/// longer than the budget there too, its text goes to the pool from then on (until a run there is
/// quick again), so a slow read holds this thread for the budget at most, once.
pub(crate) async fn run_query<T: Send + 'static>(
    shared: &Arc<Shared>,
    call: QueryCall,
    command: String,
    finish: impl FnOnce(&Database, &QueryCall, QueryOutcome, Instant) -> T + Send + 'static,
) -> Result<T, Reply> {
    let budget = Duration::from_micros(shared.limits().inline_query_budget_micros);
    let eligible = !budget.is_zero()
        && budget < call.timeout
        && engram::exec::bounded_read(&call.text)
        && (call.read_only || shared.db.workspace_exists(&call.workspace));
    let pool_only = eligible && shared.pool_only.contains(&call.text);
    let listed = shared.in_flight(&call.workspace, &call.text);
    if eligible && !pool_only {
        listed.entry.start();
        let started = Instant::now();
        let claims = audit::CLAIMS.try_with(Arc::clone).ok();
        let outcome = audit::with_claims(claims, || call.run_within(&shared.db, &command, budget));
        if outcome.is_ok() || started.elapsed() < budget {
            shared.stats.inline_queries.fetch_add(1, Ordering::Relaxed);
            return Ok(finish(&shared.db, &call, outcome, started));
        }
        shared.stats.inline_overruns.fetch_add(1, Ordering::Relaxed);
    }
    let text = eligible.then(|| call.text.clone());
    let entry = listed.entry.clone();
    let (out, took) = engine(shared, move |db| {
        entry.start();
        let started = Instant::now();
        let outcome = call.run(db, &command);
        let took = started.elapsed();
        (finish(db, &call, outcome, started), took)
    })
    .await?;
    if let Some(text) = text {
        if took >= budget {
            shared.pool_only.note(text, true);
        } else if pool_only {
            shared.pool_only.note(text, false);
        }
    }
    Ok(out)
}

/// What running a query call gives: its result, an engine error, or a reply (a refusal).
pub(crate) type QueryOutcome = Result<engram::QueryResult, Result<engram::Error, Reply>>;

/// `NOPERM` unless `principal` holds `access` on `workspace` (`*`: every workspace).
pub(crate) fn require(principal: &engram::Principal, workspace: &str, access: engram::Access) -> Result<(), Reply> {
    if principal.may(workspace, access) {
        Ok(())
    } else {
        Err(Reply::Error(format!("NOPERM User {} has no {} access to workspace '{workspace}'", principal.name(), access.as_str())))
    }
}

/// `EXPLAIN` or `PROFILE` for the command of that suffix (`GRAPH.EXPLAIN`, `ENGRAM.PROFILE`).
pub(crate) fn mode_of(command: &str) -> Option<&'static str> {
    if command.ends_with(".EXPLAIN") {
        Some("EXPLAIN")
    } else if command.ends_with(".PROFILE") {
        Some("PROFILE")
    } else {
        None
    }
}

/// What a read-only command says of a query that writes.
pub(crate) const READ_ONLY_WRITE: &str = "is to be executed only on read-only queries";

impl QueryCall {
    /// Runs the call on `db` (on the blocking pool): creates the workspace for a command that may
    /// write, refuses a write on a read-only one before anything runs, and runs the query as the
    /// full-access principal under the call's deadline.
    pub(crate) fn run(&self, db: &Database, command: &str) -> Result<engram::QueryResult, Result<engram::Error, Reply>> {
        self.run_within(db, command, self.timeout)
    }

    /// `run` with a deadline `timeout` from now instead of the call's own.
    fn run_within(&self, db: &Database, command: &str, timeout: Duration) -> Result<engram::QueryResult, Result<engram::Error, Reply>> {
        if self.text.trim().is_empty() {
            return Err(Ok(engram::Error::Query(engram::query::QueryError {
                kind: engram::query::ErrorType::SyntaxError,
                detail: engram::query::Detail::UnexpectedSyntax,
                phase: engram::query::Phase::Compile,
                message: "empty query".to_owned(),
                at: None,
            })));
        }
        // A workspace the principal may not read does not exist for it: the same answers whether
        // it exists or not, so a caller cannot probe for names.
        let visible = self.principal.may(&self.workspace, engram::Access::Read) && db.workspace_exists(&self.workspace);
        if self.read_only {
            if engram::exec::writes(&self.text).map_err(|e| Ok(engram::Error::Query(e)))? {
                return Err(Err(Reply::err(format!("{command} {READ_ONLY_WRITE}"))));
            }
            if !visible {
                return Err(Err(Reply::err(format!("Invalid graph operation on empty key: no workspace '{}'", self.workspace))));
            }
        } else if !visible {
            require(&self.principal, &self.workspace, engram::Access::Write).map_err(Err)?;
            // A concurrent call creating it meanwhile is fine: this one waits until it is visible.
            db.ensure_workspace(&self.workspace).map_err(Ok)?;
        }
        let (text, inserted) = match self.mode {
            Some(mode) => {
                let body = engram::query::header::body(&self.text).map_err(|e| Ok(engram::Error::Query(e)))?;
                let at = self.text.len() - body.len();
                (Cow::Owned(format!("{}{mode} {body}", &self.text[..at])), Some((at, mode.len() + 1)))
            }
            None => (Cow::Borrowed(self.text.as_str()), None),
        };
        let clock = system_clock();
        let micros = i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX);
        let at = engram::Timestamp(clock.now().0.saturating_add(micros));
        let scope = db.scope(self.principal.clone()).audited_by_caller().with_deadline(at, clock);
        let result = if self.read_only {
            scope.query_read(&self.workspace, &text, &self.params)
        } else {
            scope.query(&self.workspace, &text, &self.params)
        };
        if let Ok(r) = &result {
            audit::note_result(r);
        }
        result.map_err(|mut e| {
            // Positions count in the text the client sent, not the one with EXPLAIN put in.
            if let (engram::Error::Query(q), Some((at, len))) = (&mut e, inserted) {
                if let Some(pos) = q.at {
                    let offset = if pos.offset >= at + len { pos.offset - len } else { pos.offset.min(at) };
                    q.at = Some(engram::query::Position::of(&self.text, offset));
                }
            }
            Ok(e)
        })
    }
}
