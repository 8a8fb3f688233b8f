//! engram's own commands (`ENGRAM.*`), each one embedded call; records come back as maps.

use std::sync::Arc;

use super::values::engram_result;
use super::{arg, arity, deadline, engine, error_reply, require, Conn, QueryCall};
use crate::resp::Reply;
use crate::state::Shared;
use crate::users;

/// Runs an `ENGRAM.*` command.
pub(super) async fn run(shared: &Arc<Shared>, conn: &Conn, name: &str, args: &[Vec<u8>]) -> Reply {
    let who = conn.who();
    match name {
        "ENGRAM.QUERY" | "ENGRAM.RO_QUERY" | "ENGRAM.EXPLAIN" | "ENGRAM.PROFILE" => query(shared, who, name, args).await,
        "ENGRAM.USER" => match require(&who, "*", engram::Access::Admin) {
            Ok(()) => user(shared, args).await,
            Err(r) => r,
        },
        "ENGRAM.WORKSPACES" => engine(shared, move |db| {
            let scope = db.scope(who.clone());
            Reply::Array(
                db.workspaces()
                    .iter()
                    .filter(|w| who.may(&w.name, engram::Access::Read))
                    .filter_map(|w| {
                        let c = scope.workspace(&w.name).ok()?.catalog();
                        Some(Reply::Map(vec![
                            ("name".to_owned(), Reply::text(w.name.to_string())),
                            ("entities".to_owned(), Reply::Int(i64::try_from(c.entities).unwrap_or(i64::MAX))),
                            ("claims".to_owned(), Reply::Int(i64::try_from(c.claims).unwrap_or(i64::MAX))),
                        ]))
                    })
                    .collect(),
            )
        })
        .await
        .unwrap_or_else(|r| r),
        "ENGRAM.CHECKPOINT" => {
            if let Err(r) = require(&who, "*", engram::Access::Admin) {
                return r;
            }
            let s = shared.clone();
            engine(shared, move |db| match db.checkpoint() {
                Ok(Some(path)) => Reply::text(path.display().to_string()),
                Ok(None) => Reply::ok(),
                Err(e) => error_reply(&s, &e),
            })
            .await
            .unwrap_or_else(|r| r)
        }
        _ => Reply::err(format!("unknown command '{name}'")),
    }
}

/// `ENGRAM.QUERY ws query [PARAMS json] [TIMEOUT ms]` and its read-only, explain and profile forms.
async fn query(shared: &Arc<Shared>, principal: Arc<engram::Principal>, name: &str, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(text)) = (arg(args, 1), arg(args, 2)) else {
        return if args.len() < 3 { arity(name) } else { Reply::err("the workspace and the query must be UTF-8") };
    };
    let mut params = engram::Params::new();
    let mut timeout = None;
    let mut i = 3;
    while i < args.len() {
        let value = arg(args, i + 1);
        match (arg(args, i).map(str::to_ascii_uppercase).as_deref(), value) {
            (Some("PARAMS"), Some(json)) => {
                let parsed: Result<serde_json::Value, _> = serde_json::from_str(json);
                match parsed {
                    Ok(serde_json::Value::Object(map)) => {
                        for (k, v) in map {
                            params.insert(k, engram::QueryValue::from_json(&v));
                        }
                    }
                    Ok(_) => return Reply::err("PARAMS: expected a JSON object of parameters"),
                    Err(e) => return Reply::err(format!("PARAMS: not JSON at line {} column {}: {e}", e.line(), e.column())),
                }
            }
            (Some("TIMEOUT"), Some(ms)) => match ms.parse::<u64>() {
                Ok(ms) => timeout = Some(ms),
                Err(_) => return Reply::err(format!("TIMEOUT: `{ms}` is not a number of milliseconds")),
            },
            _ => return Reply::err(format!("syntax error at argument {i}: expected PARAMS json or TIMEOUT ms")),
        }
        i += 2;
    }
    let timeout = match deadline(shared, timeout) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let call = QueryCall {
        workspace: ws.to_owned(),
        text: text.to_owned(),
        params,
        read_only: name == "ENGRAM.RO_QUERY" || name == "ENGRAM.EXPLAIN",
        timeout,
        mode: match name {
            "ENGRAM.EXPLAIN" => Some("EXPLAIN"),
            "ENGRAM.PROFILE" => Some("PROFILE"),
            _ => None,
        },
        principal,
    };
    let s = shared.clone();
    let command = name.to_owned();
    engine(shared, move |db| match call.run(db, &command) {
        Ok(r) => engram_result(&r),
        Err(Ok(e)) => error_reply(&s, &e),
        Err(Err(r)) => r,
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `ENGRAM.USER ADD name [password] | GRANT name ws|* read|write|admin [SEE_SENSITIVE] |
/// REVOKE name ws|* | DEL name | LIST`: the same operations as `engram user`, while a server holds
/// the database (admin on `*` only).
async fn user(shared: &Arc<Shared>, args: &[Vec<u8>]) -> Reply {
    let words: Vec<String> = args.iter().skip(1).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    engine(shared, move |db| {
        let sub = words.first().map(|s| s.to_ascii_uppercase()).unwrap_or_default();
        let r: Result<Reply, String> = match (sub.as_str(), words.len()) {
            ("ADD", 2 | 3) => users::add(db, &words[1], words.get(2).map(String::as_str)).map(|()| Reply::ok()),
            ("GRANT", 4 | 5) => {
                let sensitive = match words.get(4).map(|w| w.to_ascii_uppercase()) {
                    None => Ok(false),
                    Some(w) if w == "SEE_SENSITIVE" => Ok(true),
                    Some(w) => Err(format!("ENGRAM.USER GRANT: unexpected `{w}` (SEE_SENSITIVE?)")),
                };
                sensitive.and_then(|s| users::parse_access(&words[3]).and_then(|a| users::grant(db, &words[1], &words[2], a, s))).map(|()| Reply::ok())
            }
            ("REVOKE", 3) => users::revoke(db, &words[1], &words[2]).map(|had| Reply::Int(i64::from(had))),
            ("DEL", 2) => db.remove_user(&words[1]).map(|had| Reply::Int(i64::from(had))).map_err(|e| e.to_string()),
            ("LIST", 1) => Ok(Reply::Array(users::list(db).into_iter().map(Reply::text).collect())),
            _ => Err("ENGRAM.USER: expected ADD name [password] | GRANT name ws|* read|write|admin [SEE_SENSITIVE] | REVOKE name ws|* | DEL name | LIST".to_owned()),
        };
        r.unwrap_or_else(Reply::err)
    })
    .await
    .unwrap_or_else(|r| r)
}
