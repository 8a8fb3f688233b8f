//! `engram serve` (the database over the network, the `engram-server` crate) and `engram user`
//! (the server's users and grants, stored in the database).

use std::io::BufRead as _;
use std::path::Path;

use crate::args::{PolicyCommand, RoleCommand, UserCommand};
use crate::fail::{fail, Failure};
use crate::out;
use engram_server::governance::Outcome;
use engram_server::users;

/// Reads one line (a password) from stdin, without its line end; empty is refused.
fn password_from_stdin() -> Result<String, Failure> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| Failure::operator(format!("reading the password from stdin: {e}")))?;
    let pw = line.trim_end_matches(['\r', '\n']).to_owned();
    if pw.is_empty() {
        return Err(Failure::from("the password read from stdin is empty"));
    }
    Ok(pw)
}

/// Opens (or creates) DIR and serves it until SHUTDOWN, SIGTERM or SIGINT.
pub fn run(args: &crate::args::ServeArgs) -> Result<(), Failure> {
    let password = args.requirepass_stdin.then(password_from_stdin).transpose()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(engram_server::tls::load(cert, key).map_err(Failure::from)?),
        _ => None,
    };
    // Structured logs on stderr: connections, authentications (the user, never a password),
    // protocol errors, shutdown. stdout keeps only the `listening on` line.
    let _ = tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).with_target(false).try_init();
    let db = engram::Database::open(&args.dir).map_err(fail)?;
    crate::embed::attach(&db, args.embedding.embedder.as_deref(), args.embedding.model_dir.as_deref())?;
    if let Some(pw) = password {
        users::require_pass(&db, &pw).map_err(Failure::operator)?;
    }
    let config = engram_server::Config {
        bind: args.bind,
        port: args.port,
        http_port: args.http_port,
        tls,
        io_threads: args.io_threads.map(usize::from),
        ..engram_server::Config::default()
    };
    let scheme = if config.tls.is_some() { "https" } else { "http" };
    let mut printed = Ok(());
    engram_server::run(db, &config, |addr, http| {
        let lines = match http {
            Some(h) => format!("listening on {addr}\nlistening on {scheme}://{h}\n"),
            None => format!("listening on {addr}\n"),
        };
        printed = out::print(&lines);
    })
    .map_err(|e| Failure::operator(format!("engram serve: {e}")))?;
    printed
}

/// Logs of `engram mcp` on stderr, warnings and errors only: a desktop client shows the server's
/// stderr to its user, and stdout carries the protocol.
fn mcp_logs() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
        .try_init();
}

/// `engram mcp DIR`: MCP on stdio as `user` (or `default` while no user exists) in `workspace`.
/// stdout carries the protocol only; logs go to stderr.
pub fn mcp(dir: &Path, workspace: &str, user: Option<&str>, embedder: Option<&str>, model_dir: Option<&Path>) -> Result<(), Failure> {
    mcp_logs();
    let db = engram::Database::open(dir).map_err(|e| {
        if matches!(e.as_storage(), Some(engram::StorageError::Locked(_))) {
            Failure::operator(format!(
                "{}: locked by a running server; use --connect redis://HOST:PORT, or point the agent at its /mcp",
                dir.display()
            ))
        } else {
            fail(e)
        }
    })?;
    crate::embed::attach(&db, embedder, model_dir)?;
    let principal = match user {
        Some(name) => users::principal_of(&db, name).ok_or_else(|| Failure::from(format!("no user `{name}`")))?,
        None => users::initial_principal(&db).ok_or_else(|| Failure::from("users exist and `default` has no access: pass --user NAME"))?,
    };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| Failure::operator(format!("engram mcp: {e}")))?;
    let workspace = workspace.to_owned();
    runtime
        .block_on(async move {
            let shared =
                std::sync::Arc::new(engram_server::state::Shared::new(db, engram_server::Limits::default(), ([127, 0, 0, 1], 0).into()));
            engram_server::mcp::serve_stdio(shared, engram_server::mcp::McpScope { principal, workspace }).await
        })
        .map_err(|e| Failure::operator(format!("engram mcp: {e}")))
}

/// `engram mcp DIR --connect URL`: MCP on stdio in front of a running server, as the URL's user.
pub fn mcp_connect(url: &str, workspace: &str) -> Result<(), Failure> {
    mcp_logs();
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| Failure::operator(format!("engram mcp: {e}")))?;
    runtime
        .block_on(engram_server::mcp::serve_stdio_remote(url, workspace.to_owned()))
        .map_err(|e| Failure::operator(format!("engram mcp --connect {url}: {e}")))
}

/// Opens DIR for a user change: a server holding it is named, with what to use instead.
fn open(dir: &Path, command: &str) -> Result<engram::Database, Failure> {
    if !dir.exists() {
        return Err(crate::admin::missing(dir));
    }
    if !dir.is_dir() {
        return Err(Failure::operator(format!("{} is not an engram database", dir.display())));
    }
    crate::audit::open(dir).map_err(|e| {
        if matches!(e.as_storage(), Some(engram::StorageError::Locked(_))) {
            Failure::operator(format!("{}: locked by a running server; use {command}", dir.display()))
        } else {
            fail(e)
        }
    })
}

/// Prints a governance command's outcome; "nothing to change" is an error naming what.
fn governance(
    db: &engram::Database,
    words: &[String],
    f: fn(&engram::Database, &[String]) -> Result<Outcome, String>,
) -> Result<(), Failure> {
    print_outcome(f(db, words).map_err(Failure::from)?, words)
}

/// Prints what a governance command answered.
fn print_outcome(outcome: Outcome, words: &[String]) -> Result<(), Failure> {
    match outcome {
        Outcome::Ok | Outcome::Changed(true) => Ok(()),
        Outcome::Changed(false) => Err(Failure::from(format!("nothing to change: {}", words.join(" ")))),
        Outcome::Lines(lines) => out::print(&lines.into_iter().map(|l| l + "\n").collect::<String>()),
        Outcome::Tags(tags) => out::print(&tags.iter().flat_map(|(k, v)| [k.as_str(), "=", v.as_str(), "\n"]).collect::<String>()),
    }
}

/// `engram role …`: the words of `ENGRAM.ROLE`.
pub fn role(cmd: &RoleCommand) -> Result<(), Failure> {
    let w = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>();
    let (dir, words) = match cmd {
        RoleCommand::Add { dir, name } => (dir, w(&["ADD", name])),
        RoleCommand::Del { dir, name } => (dir, w(&["DEL", name])),
        RoleCommand::Grant { dir, name, workspace, access, see_sensitive } => {
            let mut v = w(&["GRANT", name, workspace, access]);
            if *see_sensitive {
                v.push("SEE_SENSITIVE".to_owned());
            }
            (dir, v)
        }
        RoleCommand::Revoke { dir, name, workspace } => (dir, w(&["REVOKE", name, workspace])),
        RoleCommand::Assign { dir, user, role } => (dir, w(&["ASSIGN", user, role])),
        RoleCommand::Unassign { dir, user, role } => (dir, w(&["UNASSIGN", user, role])),
        RoleCommand::List { dir } => (dir, w(&["LIST"])),
    };
    governance(&open(dir, "ENGRAM.ROLE")?, &words, engram_server::governance::role)
}

/// `engram tag DIR WORDS…`: the words of `ENGRAM.TAG` after its workspace, with full access.
pub fn tag(dir: &Path, workspace: &str, words: &[String]) -> Result<(), Failure> {
    let words: Vec<String> = words.iter().enumerate().map(|(i, w)| if i < 2 { w.to_ascii_uppercase() } else { w.clone() }).collect();
    let db = if words[0] == "GET" { crate::admin::open_for_reading(dir)? } else { open(dir, "ENGRAM.TAG")? };
    let scope = db.scope(std::sync::Arc::new(engram::Principal::root()));
    print_outcome(engram_server::governance::tag(&scope, workspace, &words).map_err(Failure::from)?, &words)
}

/// `engram policy …`: the words of `ENGRAM.POLICY`; `explain` also runs the query as the user.
pub fn policy(cmd: &PolicyCommand) -> Result<(), Failure> {
    let w = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>();
    let (dir, words) = match cmd {
        PolicyCommand::Set { dir, workspace, name, predicate, on, roles } => {
            (dir, w(&["SET", workspace, name, on, &roles.join(","), predicate]))
        }
        PolicyCommand::Del { dir, workspace, name } => (dir, w(&["DEL", workspace, name])),
        PolicyCommand::Mask { dir, workspace, name, on, mode, roles } => (dir, w(&["MASK", workspace, name, on, mode, &roles.join(",")])),
        PolicyCommand::Unmask { dir, workspace, name } => (dir, w(&["UNMASK", workspace, name])),
        PolicyCommand::List { dir, workspace } => (dir, w(&["LIST"]).into_iter().chain(workspace.clone()).collect()),
        PolicyCommand::Explain { dir, user, query, workspace } => {
            let db = open(dir, "ENGRAM.POLICY")?;
            governance(&db, &w(&["EXPLAIN", user, workspace]), engram_server::governance::policy)?;
            let who = db.user_principal(user).ok_or_else(|| Failure::from(format!("no user `{user}`")))?;
            let r = db.scope(std::sync::Arc::new(who)).query_read(workspace, query, &engram::Params::new()).map_err(fail)?;
            return out::print(&format!("as {user}:\n{}", crate::query::table(&r, false)));
        }
    };
    governance(&open(dir, "ENGRAM.POLICY")?, &words, engram_server::governance::policy)
}

/// `engram user …`.
pub fn user(cmd: &UserCommand) -> Result<(), Failure> {
    match cmd {
        UserCommand::Add { dir, name, password_stdin } => {
            let pw = password_stdin.then(password_from_stdin).transpose()?;
            let db = open(dir, "ENGRAM.USER")?;
            users::add(&db, name, pw.as_deref()).map_err(Failure::from)
        }
        UserCommand::Grant { dir, name, workspace, access, see_sensitive } => {
            let access = users::parse_access(access).map_err(Failure::from)?;
            users::grant(&open(dir, "ENGRAM.USER")?, name, workspace, access, *see_sensitive).map_err(Failure::from)
        }
        UserCommand::Revoke { dir, name, workspace } => {
            if !users::revoke(&open(dir, "ENGRAM.USER")?, name, workspace).map_err(Failure::from)? {
                return Err(Failure::from(format!("user `{name}` has no grant on `{workspace}`")));
            }
            Ok(())
        }
        UserCommand::Del { dir, name } => {
            if !open(dir, "ENGRAM.USER")?.remove_user(name).map_err(fail)? {
                return Err(Failure::from(format!("no user `{name}`")));
            }
            Ok(())
        }
        UserCommand::List { dir } => {
            let db = open(dir, "ENGRAM.USER")?;
            let text: String = users::list(&db).into_iter().map(|l| l + "\n").collect();
            out::print(&text)
        }
        UserCommand::Token { dir, name } => {
            let (_, token) = users::new_token(&open(dir, "ENGRAM.USER")?, name).map_err(Failure::from)?;
            out::print(&format!("{token}\n"))
        }
        UserCommand::Tokens { dir } => {
            let text: String = users::list_tokens(&open(dir, "ENGRAM.USER")?).into_iter().map(|l| l + "\n").collect();
            out::print(&text)
        }
        UserCommand::RevokeToken { dir, id } => {
            if !open(dir, "ENGRAM.USER")?.remove_token(id).map_err(fail)? {
                return Err(Failure::from(format!("no token `{id}`")));
            }
            Ok(())
        }
    }
}
