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
    /// Per command: calls and total microseconds.
    pub per_command: Mutex<BTreeMap<String, (u64, u64)>>,
}

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
}

/// What every connection shares.
pub struct Shared {
    /// The database.
    pub db: Database,
    /// The limits (`CONFIG SET` changes them).
    pub limits: RwLock<Limits>,
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
    next_id: AtomicU64,
}

impl Shared {
    /// The state of a server starting on `addr`.
    pub fn new(db: Database, limits: Limits, addr: SocketAddr) -> Shared {
        Shared {
            db,
            pending: Arc::new(Semaphore::new(limits.max_pending_queries)),
            limits: RwLock::new(limits),
            stats: Stats::default(),
            clients: Mutex::new(BTreeMap::new()),
            stopping: AtomicBool::new(false),
            stop: Notify::new(),
            started: Instant::now(),
            addr,
            next_id: AtomicU64::new(1),
        }
    }

    /// A new client id.
    pub fn next_client_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// The current limits.
    pub fn limits(&self) -> Limits {
        self.limits.read().map(|l| l.clone()).unwrap_or_default()
    }

    /// Asks the server to stop accepting and close.
    pub fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stop.notify_waiters();
        self.stop.notify_one();
    }
}
