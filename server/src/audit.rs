//! The server's side of the access history: one record per command (RESP, HTTP and MCP all run
//! commands through `commands::execute`), written by the server rather than by the engine's
//! scopes (which the server opens `audited_by_caller`), so each request appears once with its
//! command name, the connection's user and what the reply held.
//!
//! What a record keeps of the command: for a query, its text without the `CYPHER k=v` header,
//! the parameters (header and `PARAMS`) only as a SHA-256; for `AUTH`, `HELLO … AUTH` and
//! `ENGRAM.USER ADD`, no password; for `ENGRAM.INGEST`, the document's size, not its content.
//! Connection housekeeping (`PING`, `CLIENT`, `INFO`, …) is not recorded.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use crate::resp::Reply;
use engram::db::audit::{sha256_hex, AccessRecord, AUDIT_CLAIMS_MAX};

tokio::task_local! {
    /// The claims the command being executed read, filled by the engine calls it makes.
    pub(crate) static CLAIMS: Arc<Mutex<Vec<u64>>>;
}

thread_local! {
    /// `CLAIMS` of the command whose engine call runs on this blocking thread.
    static ON_THREAD: RefCell<Option<Arc<Mutex<Vec<u64>>>>> = const { RefCell::new(None) };
}

/// Runs `f` (an engine call on a blocking thread) with the command's claim list at hand.
pub(crate) fn with_claims<T>(claims: Option<Arc<Mutex<Vec<u64>>>>, f: impl FnOnce() -> T) -> T {
    ON_THREAD.with(|t| *t.borrow_mut() = claims);
    let out = f();
    ON_THREAD.with(|t| *t.borrow_mut() = None);
    out
}

/// Notes the claims a query result holds for the command's record.
pub(crate) fn note_result(r: &engram::QueryResult) {
    ON_THREAD.with(|t| {
        if let Some(list) = t.borrow().as_ref() {
            if let Ok(mut list) = list.lock() {
                let room = AUDIT_CLAIMS_MAX.saturating_sub(list.len());
                list.extend(engram::exec::claims_read(r).into_iter().take(room));
            }
        }
    });
}

/// Commands that are not recorded: the connection's own housekeeping.
pub(crate) fn recorded(name: &str) -> bool {
    !matches!(
        name,
        "PING" | "ECHO" | "QUIT" | "RESET" | "SELECT" | "CLIENT" | "COMMAND" | "INFO" | "MULTI" | "EXEC" | "DISCARD" | "DBSIZE" | "SLOWLOG"
    )
}

fn text(args: &[Vec<u8>], i: usize) -> String {
    args.get(i).map(|a| String::from_utf8_lossy(a).into_owned()).unwrap_or_default()
}

fn is_query(name: &str) -> bool {
    matches!(
        name,
        "GRAPH.QUERY"
            | "GRAPH.RO_QUERY"
            | "GRAPH.EXPLAIN"
            | "GRAPH.PROFILE"
            | "ENGRAM.QUERY"
            | "ENGRAM.RO_QUERY"
            | "ENGRAM.EXPLAIN"
            | "ENGRAM.PROFILE"
    )
}

/// The workspace the command names, if any.
fn workspace(name: &str, args: &[Vec<u8>]) -> Option<String> {
    let at = match name {
        "GRAPH.LIST" | "GRAPH.CONFIG" => return None,
        "GRAPH.CONSTRAINT" => 2,
        n if n.starts_with("GRAPH.") => 1,
        "ENGRAM.POLICY" => match text(args, 1).to_ascii_uppercase().as_str() {
            "SET" | "DEL" | "LIST" => 2,
            "EXPLAIN" => 3,
            _ => return None,
        },
        "ENGRAM.QUERY" | "ENGRAM.RO_QUERY" | "ENGRAM.EXPLAIN" | "ENGRAM.PROFILE" | "ENGRAM.RECALL" | "ENGRAM.CONTEXT"
        | "ENGRAM.TRANSACTION" | "ENGRAM.NEIGHBORS" | "ENGRAM.STATS" | "ENGRAM.ENTITY" | "ENGRAM.SEARCH" | "ENGRAM.CLAIM"
        | "ENGRAM.CLAIMS" | "ENGRAM.INGEST" | "ENGRAM.DELETE" | "ENGRAM.RESTORE" | "ENGRAM.FORGET" | "ENGRAM.TAG" => 1,
        _ => return None,
    };
    args.get(at).map(|a| String::from_utf8_lossy(a).into_owned())
}

/// The command as recorded: its words, passwords and documents left out, and the digest of its
/// parameters.
fn words(name: &str, args: &[Vec<u8>]) -> (String, Option<String>) {
    if is_query(name) {
        let query = text(args, 2);
        let (header, body) = match engram::query::header::body(&query) {
            Ok(body) => (query[..query.len() - body.len()].trim().to_owned(), body.to_owned()),
            Err(_) => (String::new(), query.clone()),
        };
        let params = args.iter().position(|a| a.eq_ignore_ascii_case(b"PARAMS")).map(|i| text(args, i + 1)).unwrap_or_default();
        let digest = (!header.is_empty() || !params.is_empty()).then(|| sha256_hex(&format!("{header}\n{params}")));
        return (body, digest);
    }
    let mut out: Vec<String> = args.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    match name {
        "AUTH" => out.truncate(if out.len() >= 3 { 2 } else { 1 }),
        "HELLO" => {
            if let Some(i) = out.iter().position(|w| w.eq_ignore_ascii_case("AUTH")) {
                if let Some(p) = out.get_mut(i + 2) {
                    "[password]".clone_into(p);
                }
            }
        }
        "ENGRAM.USER" if out.get(1).is_some_and(|w| w.eq_ignore_ascii_case("ADD")) && out.len() > 3 => "[password]".clone_into(&mut out[3]),
        "ENGRAM.INGEST" => {
            if let Some(doc) = out.get_mut(2) {
                *doc = format!("[a document of {} bytes]", doc.len());
            }
        }
        "CONFIG" if out.iter().any(|w| w.eq_ignore_ascii_case("requirepass")) => out.truncate(3),
        _ => {}
    }
    (out.join(" "), None)
}

/// How many rows a reply holds: a query's rows (engram's map or FalkorDB's `[header, rows,
/// stats]`), an array's elements, else one for a value and none for an error.
fn rows(reply: &Reply) -> u64 {
    match reply {
        Reply::Map(m) => m.iter().find(|(k, _)| k == "rows").map_or(1, |(_, v)| if let Reply::Array(r) = v { r.len() as u64 } else { 1 }),
        Reply::Array(a) if a.len() == 3 && matches!(a[0], Reply::Array(_)) => match &a[1] {
            Reply::Array(r) => r.len() as u64,
            _ => 0,
        },
        Reply::Array(a) => a.len() as u64,
        Reply::Error(_) | Reply::Failed(..) | Reply::Nil => 0,
        _ => 1,
    }
}

/// The record of one command.
pub(crate) struct Command<'a> {
    pub name: &'a str,
    pub args: &'a [Vec<u8>],
    pub at: engram::Timestamp,
    pub started: std::time::Instant,
    pub interface: &'a str,
}

impl Command<'_> {
    /// The record of this command run by `who` (for a failed `AUTH`, the user it named) with
    /// `reply`, having read `claims`.
    pub fn record(&self, who: Option<&engram::Principal>, reply: &Reply, claims: Vec<u64>) -> AccessRecord {
        let error = match reply {
            Reply::Error(e) | Reply::Failed(_, e) => Some(e.as_str()),
            _ => None,
        };
        self.record_parts(who, (rows(reply), error), claims)
    }

    /// `record`, from what the reply would say: its rows and its error text, if any.
    pub fn record_parts(&self, who: Option<&engram::Principal>, (rows, error): (u64, Option<&str>), claims: Vec<u64>) -> AccessRecord {
        let (text, params_sha256) = words(self.name, self.args);
        let user = match who {
            Some(p) => p.name().to_owned(),
            None => match self.name {
                "AUTH" if self.args.len() >= 3 => text_of(self.args, 1),
                "HELLO" => self
                    .args
                    .iter()
                    .position(|a| a.eq_ignore_ascii_case(b"AUTH"))
                    .map_or_else(|| "default".to_owned(), |i| text_of(self.args, i + 1)),
                _ => "default".to_owned(),
            },
        };
        let outcome = match error {
            Some(e) => format!("error: {}", e.chars().take(300).collect::<String>()),
            None => "ok".to_owned(),
        };
        AccessRecord {
            at: self.at,
            user,
            roles: who.map(|p| p.roles().map(str::to_owned).collect()).unwrap_or_default(),
            interface: self.interface.to_owned(),
            workspace: workspace(self.name, self.args),
            op: self.name.to_owned(),
            text,
            params_sha256,
            rows,
            claims,
            duration_us: u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX),
            outcome,
        }
    }
}

fn text_of(args: &[Vec<u8>], i: usize) -> String {
    text(args, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn secrets_and_parameters_are_never_recorded() {
        let (t, p) = words("AUTH", &args(&["AUTH", "ann", "hunter2"]));
        assert_eq!((t.as_str(), p), ("AUTH ann", None));
        let (t, _) = words("HELLO", &args(&["HELLO", "3", "AUTH", "ann", "hunter2"]));
        assert!(!t.contains("hunter2") && t.contains("ann"), "{t}");
        let (t, _) = words("ENGRAM.USER", &args(&["ENGRAM.USER", "ADD", "bob", "hunter2"]));
        assert!(!t.contains("hunter2"), "{t}");
        let (t, p) = words("GRAPH.QUERY", &args(&["GRAPH.QUERY", "g", "CYPHER secret='hunter2' MATCH (n) WHERE n.x = $secret RETURN n"]));
        assert!(!t.contains("hunter2") && t.starts_with("MATCH"), "{t}");
        assert_eq!(p.map(|p| p.len()), Some(64));
        let (t, _) = words("ENGRAM.INGEST", &args(&["ENGRAM.INGEST", "w", "{\"text\": \"my card is 4111\"}"]));
        assert!(!t.contains("4111"), "{t}");
    }

    #[test]
    fn rows_of_each_reply_shape() {
        let falkor = Reply::Array(vec![Reply::Array(vec![]), Reply::Array(vec![Reply::Nil, Reply::Nil]), Reply::Array(vec![])]);
        assert_eq!(rows(&falkor), 2);
        let map = Reply::Map(vec![("rows".to_owned(), Reply::Array(vec![Reply::Nil; 3]))]);
        assert_eq!(rows(&map), 3);
        assert_eq!(rows(&Reply::err("x")), 0);
    }
}
