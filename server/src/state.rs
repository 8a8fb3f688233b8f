//! What the server's connections share: the database, the limits, the counters, the client
//! table and the queue of engine calls.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use engram::Database;
use tokio::sync::{Notify, Semaphore};

use crate::limits::Limits;

/// Counters `INFO` reports.
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections refused at `maxclients`.
    pub rejected_connections: AtomicU64,
    /// Commands run.
    pub commands: AtomicU64,
    /// Commands answered with an error.
    pub errors: AtomicU64,
    /// Commands refused because the queue was full (`max-pending-queries`).
    pub rejected_queue: AtomicU64,
    /// Queries stopped by their deadline.
    pub timeouts: AtomicU64,
    /// Connections closed on a protocol error.
    pub protocol_errors: AtomicU64,
    /// Connections dropped at `client-query-buffer-limit` or `client-output-buffer-limit`.
    pub buffer_overflows: AtomicU64,
    /// Connections dropped at `timeout`.
    pub idle_closed: AtomicU64,
    /// Pipelined write groups committed together.
    pub group_commits: AtomicU64,
    /// Reads answered on the connection's thread (`inline-query-budget`).
    pub inline_queries: AtomicU64,
    /// Reads that passed the inline budget and were run again on the pool.
    pub inline_overruns: AtomicU64,
    /// Per command: calls and total microseconds.
    pub per_command: Mutex<BTreeMap<&'static str, (u64, u64)>>,
}

/// One `SLOWLOG` entry.
#[derive(Debug, Clone)]
pub struct SlowEntry {
    /// Its id (ascending).
    pub id: u64,
    /// When it ran (Unix seconds).
    pub at: u64,
    /// How long it took, in µs.
    pub micros: u64,
    /// Its arguments, shortened (and redacted for AUTH, HELLO and ENGRAM.USER).
    pub args: Vec<String>,
    /// The client's address.
    pub addr: String,
    /// The client's name.
    pub name: String,
    /// For a query command: its workspace and its text without the parameter header, kept
    /// whole up to `SLOW_QUERY_TEXT_MAX` bytes (what `GRAPH.SLOWLOG` shows).
    pub query: Option<(String, String)>,
}

/// Bytes of a query's text a slow-log entry keeps for `GRAPH.SLOWLOG` (`args` keep 128).
pub const SLOW_QUERY_TEXT_MAX: usize = 16 * 1024;

/// A query accepted and not yet answered (what `GRAPH.INFO` lists).
#[derive(Debug)]
pub struct InFlight {
    /// When it was received (Unix milliseconds).
    pub received_ms: u64,
    /// When it was received.
    pub received: Instant,
    /// Its workspace (graph key).
    pub workspace: String,
    /// Its text without the parameter header, up to `SLOW_QUERY_TEXT_MAX` bytes.
    pub query: String,
    /// Microseconds after `received` when it started to run; 0 while it waits for the pool.
    started_after_micros: AtomicU64,
}

impl InFlight {
    /// Marks it running.
    pub fn start(&self) {
        let after = u64::try_from(self.received.elapsed().as_micros()).unwrap_or(u64::MAX).max(1);
        self.started_after_micros.store(after, Ordering::Relaxed);
    }

    /// When it started to run, if it has.
    pub fn started(&self) -> Option<Instant> {
        match self.started_after_micros.load(Ordering::Relaxed) {
            0 => None,
            after => Some(self.received + std::time::Duration::from_micros(after)),
        }
    }
}

/// A query's place in the in-flight list: removed when dropped.
pub struct InFlightGuard<'a> {
    shared: &'a Shared,
    id: u64,
    /// The entry.
    pub entry: Arc<InFlight>,
}

impl Drop for InFlightGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut all) = self.shared.in_flight.lock() {
            all.remove(&self.id);
        }
    }
}

/// A query's text as logs and lists keep it: without its parameter header (values are not kept;
/// the access history keeps only their digest), cut at `SLOW_QUERY_TEXT_MAX` bytes.
pub fn shown_query(text: &str) -> String {
    let body = engram::query::header::body(text).unwrap_or(text);
    let cut = (0..=body.len().min(SLOW_QUERY_TEXT_MAX)).rev().find(|&i| body.is_char_boundary(i)).unwrap_or(0);
    body[..cut].to_owned()
}

/// The commands whose slow-log entries `GRAPH.SLOWLOG` lists: those running a query on a key.
pub const SLOW_QUERY_COMMANDS: [&str; 6] =
    ["GRAPH.QUERY", "GRAPH.RO_QUERY", "GRAPH.PROFILE", "ENGRAM.QUERY", "ENGRAM.RO_QUERY", "ENGRAM.PROFILE"];

/// Replies of writes sent with an idempotency key, so a client's retry is answered with the first
/// reply instead of writing again; at most `IDEMPOTENCY_KEYS_MAX`, the oldest forgotten first.
#[derive(Debug, Default)]
pub struct Idempotency {
    /// By (user, workspace, key): the reply, set once the first call finishes.
    pub replies: std::collections::HashMap<(String, String, String), Arc<tokio::sync::OnceCell<crate::resp::Reply>>>,
    /// Keys in arrival order.
    pub order: std::collections::VecDeque<(String, String, String)>,
}

/// Keys the idempotency window holds (`idempotency-keys-max`).
pub const IDEMPOTENCY_KEYS_MAX: usize = 100_000;

/// A connected client, as `CLIENT LIST` shows it.
#[derive(Debug, Clone)]
pub struct ClientInfo {
    /// The peer's address.
    pub addr: SocketAddr,
    /// `CLIENT SETNAME`.
    pub name: String,
    /// When it connected.
    pub since: Instant,
    /// Its last command.
    pub last_command: String,
    /// Set by `CLIENT KILL`: the connection closes before its next command.
    pub killed: Arc<AtomicBool>,
    /// Woken by `CLIENT KILL`: a connection waiting for its next command closes at once (a
    /// permit is kept when it is busy, so the kill is never missed).
    pub kick: Arc<Notify>,
}

/// What every connection shares.
pub struct Shared {
    /// The database.
    pub db: Database,
    /// The limits (`CONFIG SET` changes them through `set_limits`).
    limits: RwLock<Limits>,
    /// Bumped by every change of `limits`: a connection keeps its own copy and reads this one
    /// atomic per batch, not the lock all connections share.
    limits_version: AtomicU64,
    /// The counters.
    pub stats: Stats,
    /// The clients connected now, by id.
    pub clients: Mutex<BTreeMap<u64, ClientInfo>>,
    /// Engine calls queued or running (`max-pending-queries`).
    pub pending: Arc<Semaphore>,
    /// Set when `SHUTDOWN` or a signal asks the server to stop.
    pub stopping: AtomicBool,
    /// Wakes the accept loop to stop.
    pub stop: Notify,
    /// When the server started.
    pub started: Instant,
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The slow log, newest last.
    pub slowlog: Mutex<std::collections::VecDeque<SlowEntry>>,
    /// Per graph key, the first slow-log id `GRAPH.SLOWLOG key` lists (set by its `RESET`, which
    /// leaves `SLOWLOG` itself whole).
    pub graph_slowlog_from: Mutex<std::collections::HashMap<String, u64>>,
    /// The idempotency window.
    pub idempotency: Mutex<Idempotency>,
    /// The Prometheus metrics.
    pub metrics: crate::metrics::Metrics,
    /// Becomes `true` on shutdown (the HTTP server and MCP sessions wait on it).
    pub stopped: tokio::sync::watch::Sender<bool>,
    /// Query texts that once passed `inline-query-budget`: they go straight to the pool.
    pub pool_only: SlowTexts,
    /// The queries accepted and not yet answered, by a running id.
    pub in_flight: Mutex<BTreeMap<u64, Arc<InFlight>>>,
    next_in_flight: AtomicU64,
    next_id: AtomicU64,
    next_slow_id: AtomicU64,
}

/// Query texts remembered as too slow to run inline (the set is emptied when full).
#[derive(Debug, Default)]
pub struct SlowTexts {
    texts: Mutex<std::collections::HashSet<String>>,
    /// Whether any is remembered: the usual answer, no, costs no lock and no hash of the text.
    any: AtomicBool,
}

impl SlowTexts {
    /// Texts kept at most.
    pub const MAX: usize = 4096;

    /// Whether `text` is remembered as slow.
    pub fn contains(&self, text: &str) -> bool {
        // A stale `false` runs a slow text inline once more; the budget stops it.
        self.any.load(Ordering::Relaxed) && self.texts.lock().is_ok_and(|t| t.contains(text))
    }

    /// Remembers `text` as slow, or forgets it when it ran quickly.
    pub fn note(&self, text: String, slow: bool) {
        if let Ok(mut t) = self.texts.lock() {
            if slow {
                if t.len() >= Self::MAX {
                    t.clear();
                }
                t.insert(text);
            } else {
                t.remove(&text);
            }
            self.any.store(!t.is_empty(), Ordering::Relaxed);
        }
    }
}

impl Shared {
    /// The state of a server starting on `addr`.
    pub fn new(db: Database, limits: Limits, addr: SocketAddr) -> Shared {
        Shared {
            db,
            pending: Arc::new(Semaphore::new(limits.max_pending_queries)),
            limits: RwLock::new(limits),
            limits_version: AtomicU64::new(0),
            stats: Stats::default(),
            clients: Mutex::new(BTreeMap::new()),
            stopping: AtomicBool::new(false),
            stop: Notify::new(),
            started: Instant::now(),
            addr,
            slowlog: Mutex::new(std::collections::VecDeque::new()),
            graph_slowlog_from: Mutex::new(std::collections::HashMap::new()),
            idempotency: Mutex::new(Idempotency::default()),
            metrics: crate::metrics::Metrics::new(),
            stopped: tokio::sync::watch::Sender::new(false),
            pool_only: SlowTexts::default(),
            in_flight: Mutex::new(BTreeMap::new()),
            next_in_flight: AtomicU64::new(0),
            next_id: AtomicU64::new(1),
            next_slow_id: AtomicU64::new(0),
        }
    }

    /// The id the next slow-log entry will have.
    pub fn next_slow_id(&self) -> u64 {
        self.next_slow_id.load(Ordering::SeqCst)
    }

    /// Lists a query as in flight until the guard is dropped.
    pub fn in_flight(&self, workspace: &str, text: &str) -> InFlightGuard<'_> {
        let id = self.next_in_flight.fetch_add(1, Ordering::Relaxed);
        let received_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let entry = Arc::new(InFlight {
            received_ms,
            received: Instant::now(),
            workspace: workspace.to_owned(),
            query: shown_query(text),
            started_after_micros: AtomicU64::new(0),
        });
        if let Ok(mut all) = self.in_flight.lock() {
            all.insert(id, entry.clone());
        }
        InFlightGuard { shared: self, id, entry }
    }

    /// A new client id.
    pub fn next_client_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// Records a command that took `micros` when it is over `slowlog-log-slower-than`.
    pub fn note_slow(&self, micros: u64, args: &[Vec<u8>], addr: String, name: String) {
        let limits = self.limits();
        if micros < limits.slowlog_slower_than_micros || limits.slowlog_max_len == 0 {
            return;
        }
        let command = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
        // Never a password: what follows these commands is not logged.
        let secret = matches!(command.as_str(), "AUTH" | "HELLO" | "ENGRAM.USER");
        let mut shown: Vec<String> = Vec::new();
        for (i, a) in args.iter().enumerate().take(32) {
            if secret && i > 0 {
                shown.push("(redacted)".to_owned());
                break;
            }
            let text = String::from_utf8_lossy(&a[..a.len().min(128)]).into_owned();
            shown.push(if a.len() > 128 { format!("{text}... ({} more bytes)", a.len() - 128) } else { text });
        }
        if args.len() > 32 && !secret {
            shown.push(format!("... ({} more arguments)", args.len() - 32));
        }
        let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let query = match (SLOW_QUERY_COMMANDS.contains(&command.as_str()), args.get(1), args.get(2)) {
            (true, Some(key), Some(text)) => Some((String::from_utf8_lossy(key).into_owned(), shown_query(&String::from_utf8_lossy(text)))),
            _ => None,
        };
        let entry = SlowEntry { id: self.next_slow_id.fetch_add(1, Ordering::SeqCst), at, micros, args: shown, addr, name, query };
        if let Ok(mut log) = self.slowlog.lock() {
            log.push_back(entry);
            while log.len() > limits.slowlog_max_len {
                log.pop_front();
            }
        }
    }

    /// The cell holding the reply of the write sent with `key` by `user` on `workspace`: new (the
    /// caller runs the write and sets it) or the first call's (the caller waits for its reply).
    pub fn idempotent(&self, user: &str, workspace: &str, key: &str) -> Arc<tokio::sync::OnceCell<crate::resp::Reply>> {
        let k = (user.to_owned(), workspace.to_owned(), key.to_owned());
        let Ok(mut window) = self.idempotency.lock() else { return Arc::new(tokio::sync::OnceCell::new()) };
        if let Some(cell) = window.replies.get(&k) {
            return cell.clone();
        }
        let cell = Arc::new(tokio::sync::OnceCell::new());
        window.replies.insert(k.clone(), cell.clone());
        window.order.push_back(k);
        while window.order.len() > IDEMPOTENCY_KEYS_MAX {
            if let Some(old) = window.order.pop_front() {
                window.replies.remove(&old);
            }
        }
        cell
    }

    /// The current limits.
    pub fn limits(&self) -> Limits {
        self.limits.read().map(|l| l.clone()).unwrap_or_default()
    }

    /// Which change of the limits is the current one (see `limits_version`).
    pub fn limits_version(&self) -> u64 {
        self.limits_version.load(Ordering::Acquire)
    }

    /// Changes the limits with `f`, all or nothing: on an error they stay as they were.
    pub fn set_limits(&self, f: impl FnOnce(&mut Limits) -> Result<(), String>) -> Result<(), String> {
        let mut limits = self.limits.write().map_err(|_| "limits unavailable".to_owned())?;
        let mut next = limits.clone();
        f(&mut next)?;
        *limits = next;
        self.limits_version.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Asks the server to stop accepting and close.
    pub fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stop.notify_waiters();
        self.stop.notify_one();
        self.stopped.send_replace(true);
    }
}
