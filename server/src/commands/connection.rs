//! Connection commands, answered as Redis answers them: HELLO, AUTH, PING, ECHO, QUIT, RESET,
//! SELECT, CLIENT …, DBSIZE, SHUTDOWN (MULTI/EXEC live in the dispatch).

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{arg, arity, engine, require, Conn, Flow};
use crate::resp::Reply;
use crate::state::Shared;
use crate::users::{self, AuthError};

/// Runs a connection command (or answers an unknown one).
pub(super) fn run(shared: &Arc<Shared>, conn: &mut Conn, name: &str, args: &[Vec<u8>]) -> (Reply, Flow) {
    let reply = match name {
        "PING" => match args.len() {
            1 => Reply::Simple("PONG"),
            2 => Reply::Bulk(args[1].clone()),
            _ => arity(name),
        },
        "ECHO" if args.len() == 2 => Reply::Bulk(args[1].clone()),
        "QUIT" => return (Reply::ok(), Flow::Close),
        "RESET" => {
            conn.proto = 2;
            conn.name = None;
            set_name(shared, conn.id, "");
            Reply::Simple("RESET")
        }
        "SELECT" if args.len() == 2 => match arg(args, 1) {
            Some("0") => Reply::ok(),
            _ => Reply::err("DB index is out of range"),
        },
        "CLIENT" => client(shared, conn, args),
        "DBSIZE" => {
            let who = conn.who();
            Reply::Int(
                i64::try_from(shared.db.workspaces().iter().filter(|w| who.may(&w.name, engram::Access::Read)).count()).unwrap_or(i64::MAX),
            )
        }
        "SHUTDOWN" => {
            if let Err(r) = require(&conn.who(), "*", engram::Access::Admin) {
                return (r, Flow::Continue);
            }
            shared.shutdown();
            return (Reply::ok(), Flow::Close);
        }
        "ECHO" | "SELECT" => arity(name),
        _ => unknown(args),
    };
    (reply, Flow::Continue)
}

/// Redis's text for an unknown command: its name and the first arguments.
fn unknown(args: &[Vec<u8>]) -> Reply {
    let name = String::from_utf8_lossy(&args[0]);
    let mut rest = String::new();
    for a in args.iter().skip(1).take(8) {
        let _ = write!(rest, "'{}' ", String::from_utf8_lossy(&a[..a.len().min(128)]));
    }
    Reply::err(format!("unknown command '{name}', with args beginning with: {rest}"))
}

/// `HELLO [protover [AUTH user pass] [SETNAME name]]`.
pub(super) async fn hello(shared: &Arc<Shared>, conn: &mut Conn, args: &[Vec<u8>]) -> Reply {
    let mut proto = conn.proto;
    let mut i = 1;
    if args.len() > 1 {
        let Some(v) = arg(args, 1).and_then(|v| v.parse::<i64>().ok()) else {
            return Reply::err("Protocol version is not an integer or out of range");
        };
        if v != 2 && v != 3 {
            return Reply::Error("NOPROTO unsupported protocol version".to_owned());
        }
        proto = u8::try_from(v).unwrap_or(2);
        i = 2;
    }
    let mut name = None;
    while i < args.len() {
        match arg(args, i).map(str::to_ascii_uppercase).as_deref() {
            Some("AUTH") if i + 2 < args.len() => {
                let r = auth(shared, conn, &[b"AUTH".to_vec(), args[i + 1].clone(), args[i + 2].clone()]).await;
                if r.is_error() {
                    return r;
                }
                i += 3;
            }
            Some("SETNAME") if i + 1 < args.len() => {
                name = arg(args, i + 1).map(ToOwned::to_owned);
                i += 2;
            }
            _ => return Reply::err(format!("Syntax error in HELLO option '{}'", String::from_utf8_lossy(&args[i]))),
        }
    }
    conn.proto = proto;
    if let Some(n) = name {
        set_name(shared, conn.id, &n);
        conn.name = Some(n);
    }
    Reply::Map(vec![
        ("server".to_owned(), Reply::text("engram")),
        ("version".to_owned(), Reply::text(env!("CARGO_PKG_VERSION"))),
        ("proto".to_owned(), Reply::Int(i64::from(proto))),
        ("id".to_owned(), Reply::Int(i64::try_from(conn.id).unwrap_or(i64::MAX))),
        ("mode".to_owned(), Reply::text("standalone")),
        ("role".to_owned(), Reply::text("master")),
        ("modules".to_owned(), Reply::Array(Vec::new())),
    ])
}

/// `AUTH [user] pass` (`AUTH pass` is user `default`). The password is checked on the blocking
/// pool (argon2 is slow on purpose); a failure leaves the connection as it was.
pub(super) async fn auth(shared: &Arc<Shared>, conn: &mut Conn, args: &[Vec<u8>]) -> Reply {
    let (user, pass) = match args.len() {
        2 => (users::DEFAULT_USER.to_owned(), String::from_utf8_lossy(&args[1]).into_owned()),
        3 => (String::from_utf8_lossy(&args[1]).into_owned(), String::from_utf8_lossy(&args[2]).into_owned()),
        _ => return arity("auth"),
    };
    let single = args.len() == 2;
    let result = engine(shared, move |db| {
        if single && db.users().is_empty() {
            return Err(AuthError::NoPasswordConfigured);
        }
        users::authenticate(db, &user, &pass)
    })
    .await;
    match result {
        Ok(Ok(principal)) => {
            tracing::info!(client = conn.id, user = principal.name(), "authenticated");
            conn.principal = Some(principal);
            Reply::ok()
        }
        Ok(Err(AuthError::NoPasswordConfigured)) => Reply::err(
            "AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
        ),
        Ok(Err(AuthError::WrongPass)) => Reply::Error("WRONGPASS invalid username-password pair or user is disabled.".to_owned()),
        Err(r) => r,
    }
}

fn set_name(shared: &Shared, id: u64, name: &str) {
    if let Ok(mut clients) = shared.clients.lock() {
        if let Some(c) = clients.get_mut(&id) {
            name.clone_into(&mut c.name);
        }
    }
}

/// One `CLIENT LIST` line.
fn client_line(id: u64, c: &crate::state::ClientInfo) -> String {
    format!("id={id} addr={} name={} age={} cmd={}\n", c.addr, c.name, c.since.elapsed().as_secs(), c.last_command.to_ascii_lowercase())
}

fn client(shared: &Shared, conn: &mut Conn, args: &[Vec<u8>]) -> Reply {
    let sub = arg(args, 1).map(str::to_ascii_uppercase).unwrap_or_default();
    match sub.as_str() {
        "SETINFO" if args.len() == 4 => Reply::ok(),
        "MAINT_NOTIFICATIONS" => Reply::ok(),
        "SETNAME" if args.len() == 3 => {
            let name = String::from_utf8_lossy(&args[2]).into_owned();
            if name.contains(' ') {
                return Reply::err("Client names cannot contain spaces, newlines or special characters.");
            }
            set_name(shared, conn.id, &name);
            conn.name = Some(name);
            Reply::ok()
        }
        "GETNAME" => conn.name.as_ref().map_or(Reply::Nil, |n| Reply::text(n.clone())),
        "ID" => Reply::Int(i64::try_from(conn.id).unwrap_or(i64::MAX)),
        "LIST" | "KILL" if require(&conn.who(), "*", engram::Access::Admin).is_err() => {
            require(&conn.who(), "*", engram::Access::Admin).err().unwrap_or_else(Reply::ok)
        }
        "LIST" | "INFO" => {
            let Ok(clients) = shared.clients.lock() else { return Reply::err("client table unavailable") };
            let text: String = if sub == "INFO" {
                clients.get(&conn.id).map(|c| client_line(conn.id, c)).unwrap_or_default()
            } else {
                clients.iter().map(|(id, c)| client_line(*id, c)).collect()
            };
            Reply::text(text)
        }
        "KILL" => {
            // `CLIENT KILL ID n` or `CLIENT KILL addr:port`.
            let Ok(clients) = shared.clients.lock() else { return Reply::err("client table unavailable") };
            let target: Vec<u64> = match (arg(args, 2).map(str::to_ascii_uppercase).as_deref(), arg(args, 3)) {
                (Some("ID"), Some(id)) => id.parse::<u64>().ok().filter(|id| clients.contains_key(id)).into_iter().collect(),
                (Some(_), None) => {
                    let addr = arg(args, 2).unwrap_or_default();
                    clients.iter().filter(|(_, c)| c.addr.to_string() == addr).map(|(id, _)| *id).collect()
                }
                _ => return Reply::err("syntax error"),
            };
            for id in &target {
                if let Some(c) = clients.get(id) {
                    c.killed.store(true, Ordering::SeqCst);
                    c.kick.notify_one();
                }
            }
            if args.len() == 3 {
                if target.is_empty() {
                    return Reply::err("No such client");
                }
                return Reply::ok();
            }
            Reply::Int(i64::try_from(target.len()).unwrap_or(0))
        }
        _ => Reply::err(format!("unknown subcommand '{}'. Try CLIENT HELP.", String::from_utf8_lossy(args.get(1).map_or(&b""[..], |a| a)))),
    }
}
