//! The accept loop and the connections. Each connection is one task: it reads, decodes every
//! complete command in what arrived, runs them in order (engine work on the blocking pool, so a
//! slow query never stalls the accept loop or another client) and writes their replies in order.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engram::Database;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::commands::{self, Conn, Flow};
use crate::limits::Limits;
use crate::resp::{Decoder, Reply};
use crate::state::{ClientInfo, Shared};

/// How a server is started.
#[derive(Debug, Clone)]
pub struct Config {
    /// The address to listen on.
    pub bind: IpAddr,
    /// The port (0: any free port).
    pub port: u16,
    /// The HTTP API's port on the same address (`None`: no HTTP; 0: any free port).
    pub http_port: Option<u16>,
    /// The limits.
    pub limits: Limits,
    /// TLS on the RESP port and the HTTP port (`tls::load`); `None`: plain TCP and HTTP.
    pub tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
    /// The runtime's worker threads (connections, replies, quick reads); `None`: one per core.
    pub io_threads: Option<usize>,
}

impl Default for Config {
    fn default() -> Config {
        Config { bind: IpAddr::from([127, 0, 0, 1]), port: 6379, http_port: None, limits: Limits::default(), tls: None, io_threads: None }
    }
}

/// Runs the server until `SHUTDOWN`, SIGTERM or SIGINT: listens, calls `ready` with the RESP
/// address and the HTTP one (when asked for) once it does, serves, then stops accepting, lets in-flight commands finish (for up to 10 s)
/// and checkpoints nothing extra (every answered write is already in the WAL).
pub fn run(db: Database, config: &Config, ready: impl FnOnce(SocketAddr, Option<SocketAddr>)) -> std::io::Result<()> {
    if !config.bind.is_loopback() && crate::users::open_without_password(&db) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "refusing to listen on {} while anyone may connect without a password (protected mode): bind a loopback address, or add users (`engram user add`) or set default's password (--requirepass-stdin)",
                config.bind
            ),
        ));
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = config.io_threads {
        builder.worker_threads(n.max(1));
    }
    let runtime = builder.enable_all().build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind((config.bind, config.port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(db, config.limits.clone(), addr));
        let http = match config.http_port {
            Some(port) => {
                let http_listener = TcpListener::bind((config.bind, port)).await?;
                let http_addr = http_listener.local_addr()?;
                let state = crate::http::AppState { shared: shared.clone(), verified: Arc::default() };
                let app = crate::http::router(state);
                let task = match &config.tls {
                    None => tokio::spawn(crate::http::serve(http_listener, app, shared.clone())),
                    Some(tls) => {
                        let listener = crate::tls::TlsListener::new(http_listener, tls.clone())?;
                        tokio::spawn(crate::http::serve(listener, app, shared.clone()))
                    }
                };
                Some((http_addr, task))
            }
            None => None,
        };
        // The handlers are installed before `ready` announces the address: a SIGTERM sent as soon
        // as "listening" is read must shut down cleanly, not kill the process.
        let signal = shutdown_signal();
        ready(addr, http.as_ref().map(|(a, _)| *a));
        tracing::info!(%addr, http = ?http.as_ref().map(|(a, _)| *a), "listening");
        let lane = Arc::new(commands::Lane::start(&Arc::downgrade(&shared)));
        let tls = config.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        let signals = {
            let shared = shared.clone();
            tokio::spawn(async move {
                signal.await;
                tracing::info!("signal: shutting down");
                shared.shutdown();
            })
        };
        loop {
            tokio::select! {
                () = shared.stop.notified() => break,
                accepted = listener.accept() => {
                    let Ok((stream, peer)) = accepted else { continue };
                    if shared.stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    let (shared, lane, tls) = (shared.clone(), lane.clone(), tls.clone());
                    tokio::spawn(async move {
                        let _ = stream.set_nodelay(true);
                        match tls {
                            None => serve_connection(shared, lane, stream, peer).await,
                            Some(acceptor) => {
                                if let Some(stream) = crate::tls::handshake(&acceptor, stream, peer).await {
                                    serve_connection(shared, lane, stream, peer).await;
                                }
                            }
                        }
                    });
                }
            }
        }
        signals.abort();
        drop(listener);
        shared.shutdown();
        if let Some((_, task)) = http {
            let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
        }
        // In-flight commands hold a queue permit: wait for them (bounded), then return.
        let max = shared.limits().max_pending_queries;
        let all = u32::try_from(max).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(Duration::from_secs(10), shared.pending.acquire_many(all)).await;
        tracing::info!("stopped");
        Ok(())
    })
}

/// Installs the SIGTERM and SIGINT handlers now and returns a future that ends at the first signal.
fn shutdown_signal() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            return Box::pin(async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            });
        }
    }
    Box::pin(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// Serves one connection until it closes, errs or is killed.
async fn serve_connection<S: AsyncRead + AsyncWrite + Unpin>(
    shared: Arc<Shared>,
    lane: Arc<commands::Lane>,
    mut stream: S,
    peer: SocketAddr,
) {
    let limits = shared.limits();
    let id = shared.next_client_id();
    let admitted = {
        let Ok(mut clients) = shared.clients.lock() else { return };
        let room = clients.len() < limits.maxclients;
        if room {
            let info = ClientInfo {
                addr: peer,
                name: String::new(),
                since: Instant::now(),
                last_command: String::new(),
                killed: Arc::new(AtomicBool::new(false)),
                kick: Arc::new(tokio::sync::Notify::new()),
            };
            clients.insert(id, info);
        }
        room
    };
    if !admitted {
        shared.stats.rejected_connections.fetch_add(1, Ordering::Relaxed);
        let _ = stream.write_all(b"-ERR max number of clients reached\r\n").await;
        return;
    }
    shared.stats.connections.fetch_add(1, Ordering::Relaxed);
    tracing::info!(client = id, %peer, "connected");
    let (killed, kick) =
        shared.clients.lock().ok().and_then(|c| c.get(&id).map(|i| (i.killed.clone(), i.kick.clone()))).unwrap_or_default();
    let mut conn = Conn::new(id, crate::users::initial_principal(&shared.db));
    conn.lane = Some(lane);
    let ended = connection_loop(&shared, &mut stream, &mut conn, (&killed, &kick)).await;
    let user = conn.principal.as_ref().map(|p| p.name().to_owned()).unwrap_or_default();
    match ended {
        Ok(()) => tracing::info!(client = id, user, "disconnected"),
        Err(e) => tracing::info!(client = id, user, error = %e, "disconnected"),
    }
    if let Ok(mut clients) = shared.clients.lock() {
        clients.remove(&id);
    }
}

async fn connection_loop<S: AsyncRead + AsyncWrite + Unpin>(
    shared: &Arc<Shared>,
    stream: &mut S,
    conn: &mut Conn,
    (killed, kick): (&AtomicBool, &tokio::sync::Notify),
) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut decoder = Decoder::default();
    // The connection's own copy of the limits, taken again only when `CONFIG SET` changed them.
    let mut seen = shared.limits_version();
    let mut limits = shared.limits();
    let (mut commands, mut replies, mut out) = (Vec::new(), Vec::new(), Vec::new());
    // `CLIENT KILL` wakes this; it stays registered across reads rather than set up for each.
    let kicked = kick.notified();
    tokio::pin!(kicked);
    loop {
        if shared.limits_version() != seen {
            seen = shared.limits_version();
            limits = shared.limits();
        }
        // Every complete command buffered, run together (pipelined writes share a commit group),
        // replies in order. Before authentication one command at a time: AUTH changes the limits.
        let mut failed = None;
        loop {
            match decoder.next(&mut buf, &limits, conn.authenticated()) {
                Ok(Some(args)) => {
                    commands.push(args);
                    if !conn.authenticated() {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if commands.is_empty() && failed.is_none() {
            let read = tokio::select! {
                r = read_idle(stream, &mut chunk, limits.idle_timeout_secs) => match r? {
                    Some(read) => read,
                    None => {
                        shared.stats.idle_closed.fetch_add(1, Ordering::Relaxed);
                        return Ok(());
                    }
                },
                // `CLIENT KILL`: closed at once, not at its next command.
                () = &mut kicked => return Ok(()),
            };
            if read == 0 || killed.load(Ordering::SeqCst) {
                return Ok(());
            }
            if buf.len() + read > limits.query_buffer_max {
                shared.stats.buffer_overflows.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(client = conn.id, "client-query-buffer-limit reached: closing");
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..read]);
            continue;
        }
        out.clear();
        commands::dispatch_all(shared, conn, &mut commands, &mut replies).await;
        for (reply, flow) in replies.drain(..) {
            reply.encode(conn.proto, &mut out);
            if out.len() > limits.output_buffer_max {
                shared.stats.buffer_overflows.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            if flow == Flow::Close {
                write_out(stream, &out, &limits).await?;
                return Ok(());
            }
        }
        if let Some(e) = failed {
            shared.stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(client = conn.id, error = %e.0, "protocol error: closing");
            Reply::err(&e.0).encode(conn.proto, &mut out);
            write_out(stream, &out, &limits).await?;
            return Ok(());
        }
        if !out.is_empty() {
            if let Err(e) = write_out(stream, &out, &limits).await {
                if e.kind() == std::io::ErrorKind::TimedOut {
                    shared.stats.buffer_overflows.fetch_add(1, Ordering::Relaxed);
                }
                return Err(e);
            }
        }
        if killed.load(Ordering::SeqCst) {
            return Ok(());
        }
    }
}

/// Reads what the client sent; `None` when it stayed idle `timeout` seconds (0: no limit, and
/// then no timer is set up for the read at all).
async fn read_idle<S: AsyncRead + Unpin>(stream: &mut S, chunk: &mut [u8], timeout: u64) -> std::io::Result<Option<usize>> {
    if timeout == 0 {
        return stream.read(chunk).await.map(Some);
    }
    match tokio::time::timeout(Duration::from_secs(timeout), stream.read(chunk)).await {
        Ok(r) => r.map(Some),
        Err(_) => Ok(None),
    }
}

/// Writes replies; a client that does not read them within `client-stall-timeout` seconds is
/// dropped rather than buffered for.
async fn write_out<S: AsyncWrite + Unpin>(stream: &mut S, out: &[u8], limits: &Limits) -> std::io::Result<()> {
    // Most replies fit the socket's buffer and go in one write, with no timer set up.
    let first = std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut *stream).poll_write(cx, out) {
            std::task::Poll::Ready(r) => Some(r),
            std::task::Poll::Pending => None,
        })
    })
    .await;
    let rest = match first {
        Some(Ok(n)) if n == out.len() => return Ok(()),
        Some(Ok(n)) => &out[n..],
        Some(Err(e)) => return Err(e),
        None => out,
    };
    match tokio::time::timeout(Duration::from_secs(limits.stall_timeout_secs), stream.write_all(rest)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "client does not read its replies")),
    }
}
