//! engram's own commands (`ENGRAM.*`), each one embedded call; records come back as maps.

use std::sync::Arc;

use super::values::engram_result;
use super::{arg, arity, deadline, engine, error_reply, Conn, QueryCall};
use crate::resp::Reply;
use crate::state::Shared;

/// Runs an `ENGRAM.*` command.
pub(super) async fn run(shared: &Arc<Shared>, _conn: &Conn, name: &str, args: &[Vec<u8>]) -> Reply {
    match name {
        "ENGRAM.QUERY" | "ENGRAM.RO_QUERY" | "ENGRAM.EXPLAIN" | "ENGRAM.PROFILE" => query(shared, name, args).await,
        "ENGRAM.WORKSPACES" => {
            let s = shared.clone();
            engine(shared, move |db| {
                let snap = db.snapshot();
                let _ = &s;
                Reply::Array(
                    db.workspaces()
                        .iter()
                        .filter_map(|w| {
                            let c = snap.workspace(&w.name).ok()?.catalog();
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
            .unwrap_or_else(|r| r)
        }
        "ENGRAM.CHECKPOINT" => {
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
async fn query(shared: &Arc<Shared>, name: &str, args: &[Vec<u8>]) -> Reply {
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
