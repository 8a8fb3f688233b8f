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
        "ENGRAM.RECALL" => recall(shared, who, args).await,
        "ENGRAM.CONTEXT" => context(shared, who, args).await,
        "ENGRAM.TRANSACTION" => transaction(shared, who, args).await,
        "ENGRAM.EMBED" => embed(shared, args).await,
        "ENGRAM.NEIGHBORS" => neighbors(shared, who, args).await,
        "ENGRAM.STATS" => stats(shared, who, args).await,
        "ENGRAM.ENTITY" => super::entities::entity(shared, who, args).await,
        "ENGRAM.SEARCH" => super::entities::search(shared, who, args).await,
        "ENGRAM.CLAIM" => super::entities::claim(shared, who, args).await,
        "ENGRAM.CLAIMS" => super::entities::claims(shared, who, args).await,
        "ENGRAM.INGEST" => ingest(shared, who, args).await,
        "ENGRAM.DELETE" | "ENGRAM.RESTORE" | "ENGRAM.FORGET" => lifecycle(shared, who, name, args).await,
        "ENGRAM.BACKUP" => {
            let Some(path) = arg(args, 1).map(ToOwned::to_owned) else { return arity(name) };
            if let Err(r) = require(&who, "*", engram::Access::Admin) {
                return r;
            }
            let s = shared.clone();
            engine(shared, move |db| match db.backup(&path) {
                Ok(p) => Reply::text(p.display().to_string()),
                Err(e) => error_reply(&s, &e),
            })
            .await
            .unwrap_or_else(|r| r)
        }
        "ENGRAM.USER" => match require(&who, "*", engram::Access::Admin) {
            Ok(()) => user(shared, args).await,
            Err(r) => r,
        },
        "ENGRAM.TAG" | "ENGRAM.AUDIT" | "ENGRAM.ROLE" | "ENGRAM.POLICY" => governance_command(shared, who, name, args).await,
        "ENGRAM.WHOAMI" => Reply::Map(vec![
            ("user".to_owned(), Reply::text(who.name().to_owned())),
            (
                "grants".to_owned(),
                Reply::Map(
                    who.grants()
                        .map(|(ws, g)| {
                            (
                                ws.to_owned(),
                                Reply::Map(vec![
                                    ("access".to_owned(), Reply::text(g.access.as_str())),
                                    ("see_sensitive".to_owned(), Reply::Bool(g.see_sensitive)),
                                ]),
                            )
                        })
                        .collect(),
                ),
            ),
        ]),
        "ENGRAM.WORKSPACES" => engine(shared, move |db| {
            let scope = db.scope(who.clone()).audited_by_caller();
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
    let mut key: Option<String> = None;
    let mut i = 3;
    while i < args.len() {
        let value = arg(args, i + 1);
        match (arg(args, i).map(str::to_ascii_uppercase).as_deref(), value) {
            (Some("PARAMS"), Some(json)) => {
                let parsed: Result<serde_json::Value, _> = serde_json::from_str(json);
                match parsed {
                    Ok(serde_json::Value::Object(map)) => match engram::exec::params_from_json(&map) {
                        Ok(p) => params = p,
                        Err(e) => return Reply::err(format!("PARAMS: {e}")),
                    },
                    Ok(_) => return Reply::err("PARAMS: expected a JSON object of parameters"),
                    Err(e) => return Reply::err(format!("PARAMS: not JSON at line {} column {}: {e}", e.line(), e.column())),
                }
            }
            (Some("TIMEOUT"), Some(ms)) => match ms.parse::<u64>() {
                Ok(ms) => timeout = Some(ms),
                Err(_) => return Reply::err(format!("TIMEOUT: `{ms}` is not a number of milliseconds")),
            },
            (Some("IDEMPOTENCY"), Some(k)) if name == "ENGRAM.QUERY" => key = Some(k.to_owned()),
            _ => return Reply::err(format!("syntax error at argument {i}: expected PARAMS json, TIMEOUT ms or IDEMPOTENCY key")),
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
        mode: super::mode_of(name),
        principal,
    };
    let s = shared.clone();
    let command = name.to_owned();
    let (user, workspace) = (call.principal.name().to_owned(), call.workspace.clone());
    let run = super::run_query(shared, call, command, move |_, _, outcome, _| match outcome {
        Ok(r) => engram_result(&r),
        Err(Ok(e)) => error_reply(&s, &e),
        Err(Err(r)) => r,
    });
    match key {
        // A retry with the same key waits for the first call and gets its reply; the query runs once.
        Some(key) => shared.idempotent(&user, &workspace, &key).get_or_init(|| async { run.await.unwrap_or_else(|r| r) }).await.clone(),
        None => run.await.unwrap_or_else(|r| r),
    }
}

/// `ENGRAM.EMBED text [text …]`: each text's vector by the database's embedder (for a client
/// that stores or compares vectors itself, such as a `LangGraph` store's index).
async fn embed(shared: &Arc<Shared>, args: &[Vec<u8>]) -> Reply {
    if args.len() < 2 {
        return arity("engram.embed");
    }
    let Some(texts) = args[1..].iter().map(|a| std::str::from_utf8(a).ok().map(str::to_owned)).collect::<Option<Vec<String>>>() else {
        return Reply::err("ENGRAM.EMBED: the texts must be UTF-8");
    };
    let s = shared.clone();
    engine(shared, move |db| {
        let Some(embedder) = db.embedder() else {
            return Reply::err("ENGRAM.EMBED: the database has no embedder (serve --embedder)");
        };
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        match embedder.embed(&refs) {
            Ok(vectors) => Reply::Array(
                vectors.iter().map(|v| Reply::Array(v.iter().map(|x| Reply::Double(engram::shortest_f64(*x))).collect())).collect(),
            ),
            Err(e) => error_reply(&s, &e.into()),
        }
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `ENGRAM.TRANSACTION ws json`: `json` is an array of statements, each a query text or
/// `{"query": text, "params": {..}}`; they run in order as one atomic transaction (each sees the
/// writes before it; one failing writes nothing). The reply: one result map per statement.
async fn transaction(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(json), 3) = (arg(args, 1), arg(args, 2), args.len()) else { return arity("engram.transaction") };
    let statements = match parse_statements(json) {
        Ok(s) => s,
        Err(e) => return Reply::err(format!("ENGRAM.TRANSACTION: {e}")),
    };
    if let Err(r) = require(&who, ws, engram::Access::Write) {
        return r;
    }
    let timeout = match deadline(shared, None) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let ws = ws.to_owned();
    let s = shared.clone();
    engine(shared, move |db| {
        if let Err(e) = db.ensure_workspace(&ws) {
            return error_reply(&s, &e);
        }
        let clock = super::system_clock();
        let at = engram::Timestamp(clock.now().0.saturating_add(i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX)));
        let refs: Vec<(&str, &engram::Params)> = statements.iter().map(|(t, p)| (t.as_str(), p)).collect();
        match db.scope(who).audited_by_caller().with_deadline(at, clock).transaction(&ws, &refs) {
            Ok(results) => Reply::Array(results.iter().map(engram_result).collect()),
            Err(e) => error_reply(&s, &e),
        }
    })
    .await
    .unwrap_or_else(|r| r)
}

/// The statements of `ENGRAM.TRANSACTION`; an error names the statement and the field.
fn parse_statements(json: &str) -> Result<Vec<(String, engram::Params)>, String> {
    let parsed: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("not JSON at line {} column {}: {e}", e.line(), e.column()))?;
    let serde_json::Value::Array(items) = parsed else { return Err("expected a JSON array of statements".to_owned()) };
    if items.is_empty() {
        return Err("the transaction holds no statement".to_owned());
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            serde_json::Value::String(text) => Ok((text, engram::Params::new())),
            serde_json::Value::Object(mut map) => {
                let Some(serde_json::Value::String(text)) = map.remove("query") else {
                    return Err(format!("statement {i}: `query` must be a string"));
                };
                let mut params = engram::Params::new();
                match map.remove("params") {
                    None | Some(serde_json::Value::Null) => {}
                    Some(serde_json::Value::Object(p)) => {
                        params = engram::exec::params_from_json(&p).map_err(|e| format!("statement {i}: {e}"))?;
                    }
                    Some(_) => return Err(format!("statement {i}: `params` must be an object")),
                }
                if let Some(k) = map.keys().next() {
                    return Err(format!("statement {i}: unknown field `{k}` (expected query, params)"));
                }
                Ok((text, params))
            }
            _ => Err(format!("statement {i}: expected a query text or {{\"query\": .., \"params\": ..}}")),
        })
        .collect()
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
            ("TOKEN", 2) => users::new_token(db, &words[1]).map(|(_, token)| Reply::text(token)),
            ("TOKENS", 1) => Ok(Reply::Array(users::list_tokens(db).into_iter().map(Reply::text).collect())),
            ("REVOKETOKEN", 2) => db.remove_token(&words[1]).map(|had| Reply::Int(i64::from(had))).map_err(|e| e.to_string()),
            _ => Err("ENGRAM.USER: expected ADD name [password] | GRANT name ws|* read|write|admin [SEE_SENSITIVE] | REVOKE name ws|* | DEL name | LIST | TOKEN name | TOKENS | REVOKETOKEN id".to_owned()),
        };
        r.unwrap_or_else(Reply::err)
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `ENGRAM.TAG`, `ENGRAM.AUDIT`, `ENGRAM.ROLE` and `ENGRAM.POLICY`, each with the grant it needs.
async fn governance_command(shared: &Arc<Shared>, who: Arc<engram::Principal>, name: &str, args: &[Vec<u8>]) -> Reply {
    match name {
        "ENGRAM.TAG" => {
            let Some(ws) = arg(args, 1).map(ToOwned::to_owned) else { return arity(name) };
            let words: Vec<String> = args.iter().skip(2).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            engine(shared, move |db| {
                let scope = db.scope(who).audited_by_caller();
                outcome_reply("ENGRAM.TAG", crate::governance::tag(&scope, &ws, &words))
            })
            .await
            .unwrap_or_else(|r| r)
        }
        "ENGRAM.AUDIT" => match require(&who, "*", engram::Access::Admin) {
            Ok(()) => audit_history(shared, args).await,
            Err(r) => r,
        },
        "ENGRAM.ROLE" => match require(&who, "*", engram::Access::Admin) {
            Ok(()) => governance(shared, args, crate::governance::role).await,
            Err(r) => r,
        },
        "ENGRAM.POLICY" => {
            // Policies are a workspace's: its admins manage them; a listing of all needs `*`.
            let ws = if args.len() > 2 {
                arg(args, if arg(args, 1).is_some_and(|s| s.eq_ignore_ascii_case("EXPLAIN")) { 3 } else { 2 })
            } else {
                None
            };
            match require(&who, ws.unwrap_or("*"), engram::Access::Admin) {
                Ok(()) => governance(shared, args, crate::governance::policy).await,
                Err(r) => r,
            }
        }
        _ => Reply::err(format!("unknown command '{name}'")),
    }
}

/// `ENGRAM.AUDIT [SINCE t] [USER u] [OP o] [LIMIT n]`: the access history, oldest first, one
/// map per record (the fields of `engram audit --jsonl`).
async fn audit_history(shared: &Arc<Shared>, args: &[Vec<u8>]) -> Reply {
    let opts = match options(args, 1, &["SINCE", "USER", "OP", "LIMIT"]) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let mut filter = engram::db::audit::AuditFilter::default();
    for (name, value) in opts {
        match name.as_str() {
            "SINCE" => match engram::Timestamp::parse(&value) {
                Ok(t) => filter.since = Some(t),
                Err(e) => return Reply::err(format!("SINCE: {e}")),
            },
            "USER" => filter.user = Some(value),
            "OP" => filter.op = Some(value),
            _ => match number::<usize>("LIMIT", &value) {
                Ok(n) => filter.limit = n,
                Err(r) => return r,
            },
        }
    }
    let s = shared.clone();
    engine(shared, move |db| match db.access_history(&filter) {
        Ok(records) => Reply::Array(records.iter().map(|r| super::values::json(&r.to_json())).collect()),
        Err(e) => error_reply(&s, &e),
    })
    .await
    .unwrap_or_else(|r| r)
}

/// Runs a governance command (`crate::governance`) on the words after the command's name.
async fn governance(
    shared: &Arc<Shared>,
    args: &[Vec<u8>],
    f: fn(&engram::Database, &[String]) -> Result<crate::governance::Outcome, String>,
) -> Reply {
    let words: Vec<String> = args.iter().skip(1).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    engine(shared, move |db| outcome_reply(&name, f(db, &words))).await.unwrap_or_else(|r| r)
}

/// A governance command's outcome as a reply; its error names the command.
fn outcome_reply(name: &str, outcome: Result<crate::governance::Outcome, String>) -> Reply {
    use crate::governance::Outcome;
    match outcome {
        Ok(Outcome::Ok) => Reply::ok(),
        Ok(Outcome::Changed(b)) => Reply::Int(i64::from(b)),
        Ok(Outcome::Lines(lines)) => Reply::Array(lines.into_iter().map(Reply::text).collect()),
        Ok(Outcome::Tags(tags)) => Reply::Map(tags.into_iter().map(|(k, v)| (k, Reply::text(v))).collect()),
        Err(e) => Reply::err(format!("{name}: {e}")),
    }
}

/// The options after the fixed arguments: `NAME value` pairs (a `SEED` may repeat); an unknown
/// name is an error naming it and what is expected.
pub(super) fn options(args: &[Vec<u8>], from: usize, known: &[&str]) -> Result<Vec<(String, String)>, Reply> {
    let mut out = Vec::new();
    let mut i = from;
    while i < args.len() {
        let name = arg(args, i).map(str::to_ascii_uppercase).unwrap_or_default();
        if !known.contains(&name.as_str()) {
            return Err(Reply::err(format!("syntax error at argument {i}: expected one of {}", known.join(", "))));
        }
        let Some(value) = arg(args, i + 1) else { return Err(Reply::err(format!("{name}: a value is missing"))) };
        out.push((name, value.to_owned()));
        i += 2;
    }
    Ok(out)
}

/// An entity of `ws` by external id, else by its one name.
pub(super) fn resolve(ws: &engram::WorkspaceView<'_>, text: &str) -> Result<engram::EntityId, Reply> {
    ws.entity_by_id_or_name(text).map_err(Reply::err)
}

pub(super) fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, Reply> {
    v.parse::<T>().map_err(|_| Reply::err(format!("{name}: `{v}` is not a number")))
}

/// A read on `ws` through `who`'s scope, under the default deadline.
pub(super) async fn read_with<T: Send + 'static>(
    shared: &Arc<Shared>,
    who: Arc<engram::Principal>,
    ws: String,
    f: impl FnOnce(&engram::WorkspaceView<'_>) -> Result<T, Reply> + Send + 'static,
) -> Result<T, Reply> {
    let timeout = deadline(shared, None)?;
    let s = shared.clone();
    engine(shared, move |db| {
        let clock = super::system_clock();
        let at = engram::Timestamp(clock.now().0.saturating_add(i64::try_from(timeout.as_micros()).unwrap_or(i64::MAX)));
        let scope = db.scope(who).audited_by_caller().with_deadline(at, clock);
        let view = scope.workspace(&ws).map_err(|e| error_reply(&s, &e.into()))?;
        f(&view)
    })
    .await?
}

/// `ENGRAM.RECALL ws text [BUDGET n] [SEED e]… [HOPS n] [AS_OF t] [PROPERTY k=v]… [VECTOR json]`:
/// the recall as a map (the context block, the facts with ids, scores and evidence, the paths run;
/// the question embedded by the database's embedder unless `VECTOR` gives its vector);
/// `PROPERTY` narrows to claims holding that string property (a sub-scope such as `user_id=ann`).
pub(super) async fn recall(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(text)) = (arg(args, 1), arg(args, 2)) else { return arity("engram.recall") };
    let opts = match options(args, 3, &["BUDGET", "SEED", "HOPS", "AS_OF", "PROPERTY", "VECTOR"]) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let text = text.to_owned();
    let s = shared.clone();
    let client_vector = match opts.iter().find(|(k, _)| k == "VECTOR") {
        Some((_, v)) => match serde_json::from_str::<Vec<f32>>(v) {
            Ok(v) => Some(v),
            Err(e) => return Reply::err(format!("VECTOR: {e} (expected a JSON array of numbers)")),
        },
        None => None,
    };
    let embedding = client_vector.is_none();
    let q = read_with(shared, who.clone(), ws.to_owned(), move |view| {
        let mut q = engram::RecallQuery::new(&text);
        q.vector = client_vector;
        for (k, v) in &opts {
            match k.as_str() {
                "BUDGET" => q.budget = number("BUDGET", v)?,
                "HOPS" => q.hops = number("HOPS", v)?,
                "SEED" => q.seeds.push(resolve(view, v)?),
                "PROPERTY" => {
                    let (key, value) = v.split_once('=').ok_or_else(|| Reply::err(format!("PROPERTY: `{v}` is not key=value")))?;
                    q.properties.push((key.to_owned(), engram::Value::Str(value.into())));
                }
                "VECTOR" => {}
                _ => q.visibility.as_of = Some(engram::Timestamp::parse(v).map_err(|e| Reply::err(format!("AS_OF: {e}")))?),
            }
        }
        let asked = if embedding { Some(view.question_to_embed(&q).map_err(|e| error_reply(&s, &e.into()))?) } else { None };
        Ok((q, asked))
    })
    .await;
    let (mut q, asked) = match q {
        Ok(x) => x,
        Err(r) => return r,
    };
    // Without the client's vector, the database's embedder embeds the question and what it asks
    // (`Database::embed_question`), outside the reads, so no snapshot is held while a model runs;
    // with no embedder, the other paths run.
    if let Some(asked) = asked {
        let (s2, question) = (shared.clone(), q.text.clone());
        match engine(shared, move |db| db.embed_question(&question, &asked).map_err(|e| error_reply(&s2, &e))).await {
            Ok(Ok(v)) => q.vector = v,
            Ok(Err(r)) | Err(r) => return r,
        }
    }
    let s = shared.clone();
    read_with(shared, who, ws.to_owned(), move |view| {
        let r = view.recall(&q).map_err(|e| error_reply(&s, &e.into()))?;
        serde_json::to_value(&r).map(|v| super::values::json(&v)).map_err(|e| Reply::err(format!("internal error: {e}")))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `ENGRAM.CONTEXT ws entity [TEXT q] [DEPTH n] [BUDGET n] [LIMIT n] [PREDICATE p]… [TYPE t]…
/// [AS_OF t] [VECTOR json]`: recall's graph-first forms, as `ENGRAM.RECALL`'s map. Without `TEXT`,
/// the entity's context (the claims within `DEPTH` hops, nearest first, then by confidence, decay
/// and recent activity); with it, its neighbourhood ranked by similarity to the text (the cosine
/// with `VECTOR` or the database embedder's vector of it, else BM25). `LIMIT`: most facts.
pub(super) async fn context(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(entity)) = (arg(args, 1), arg(args, 2)) else { return arity("engram.context") };
    let known = ["TEXT", "DEPTH", "BUDGET", "LIMIT", "PREDICATE", "TYPE", "AS_OF", "VECTOR"];
    let opts = match options(args, 3, &known) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let (ws, entity) = (ws.to_owned(), entity.to_owned());
    let text = opts.iter().find(|(k, _)| k == "TEXT").map(|(_, v)| v.clone());
    let vector = match (opts.iter().find(|(k, _)| k == "VECTOR"), &text) {
        (Some((_, v)), _) => match serde_json::from_str::<Vec<f32>>(v) {
            Ok(v) => Some(v),
            Err(e) => return Reply::err(format!("VECTOR: {e} (expected a JSON array of numbers)")),
        },
        // The text's vector by the database's embedder, outside the read (as `ENGRAM.RECALL`).
        (None, Some(t)) => {
            let (t, s2) = (t.clone(), shared.clone());
            match engine(shared, move |db| db.embed_query(&t).map_err(|e| error_reply(&s2, &e))).await {
                Ok(Ok(v)) => v,
                Ok(Err(r)) | Err(r) => return r,
            }
        }
        (None, None) => None,
    };
    let s = shared.clone();
    read_with(shared, who, ws, move |view| {
        let mut q = engram::ContextQuery::default();
        for (k, v) in &opts {
            match k.as_str() {
                "DEPTH" => q.depth = number("DEPTH", v)?,
                "BUDGET" => q.budget = number("BUDGET", v)?,
                "LIMIT" => q.max_facts = number("LIMIT", v)?,
                "PREDICATE" => q.predicates.push(v.clone()),
                "TYPE" => q.types.push(v.clone()),
                "AS_OF" => q.visibility.as_of = Some(engram::Timestamp::parse(v).map_err(|e| Reply::err(format!("AS_OF: {e}")))?),
                _ => {}
            }
        }
        let root = resolve(view, &entity)?;
        let r = match &text {
            None => view.entity_context(root, &q),
            Some(t) => view.neighborhood(root, t, vector.as_deref(), &q),
        }
        .map_err(|e| error_reply(&s, &e.into()))?;
        serde_json::to_value(&r).map(|v| super::values::json(&v)).map_err(|e| Reply::err(format!("internal error: {e}")))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `ENGRAM.NEIGHBORS ws entity [LIMIT n] [DIRECTION out|in|both]`: one map per edge.
pub(super) async fn neighbors(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(entity)) = (arg(args, 1), arg(args, 2)) else { return arity("engram.neighbors") };
    let opts: Vec<(String, String)> = match options(args, 3, &["LIMIT", "DIRECTION"]) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let entity = entity.to_owned();
    let s = shared.clone();
    read_with(shared, who, ws.to_owned(), move |view| {
        let mut q = engram::NeighborQuery::default();
        for (k, v) in &opts {
            match k.as_str() {
                "LIMIT" => q.limit = Some(number("LIMIT", v)?),
                _ => {
                    q.filter.direction = match v.to_ascii_lowercase().as_str() {
                        "out" => engram::Direction::Out,
                        "in" => engram::Direction::In,
                        "both" => engram::Direction::Both,
                        _ => return Err(Reply::err(format!("DIRECTION: `{v}` is not out, in or both"))),
                    }
                }
            }
        }
        let e = resolve(view, &entity)?;
        let page = view.neighbors(e, &q).map_err(|e| error_reply(&s, &e.into()))?;
        let item = |n: &engram::Neighbor| {
            Reply::Map(vec![
                ("claim".to_owned(), Reply::Int(i64::from(n.claim.0))),
                ("direction".to_owned(), Reply::text(if n.direction == engram::Direction::Out { "out" } else { "in" })),
                ("predicate".to_owned(), Reply::text(n.predicate.to_string())),
                ("neighbor".to_owned(), Reply::text(view.entity_ext_id(n.neighbor).unwrap_or_default().to_owned())),
                ("neighbor_id".to_owned(), Reply::Int(i64::from(n.neighbor.0))),
            ])
        };
        Ok(Reply::Map(vec![
            ("items".to_owned(), Reply::Array(page.items.iter().map(item).collect())),
            ("next_cursor".to_owned(), page.next_cursor.map_or(Reply::Nil, Reply::text)),
        ]))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `ENGRAM.STATS ws`: what the principal may see of the workspace, counted.
pub(super) async fn stats(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let Some(ws) = arg(args, 1) else { return arity("engram.stats") };
    read_with(shared, who, ws.to_owned(), |view| {
        let c = view.catalog();
        let count = |n: u64| Reply::Int(i64::try_from(n).unwrap_or(i64::MAX));
        Ok(Reply::Map(vec![
            ("entities".to_owned(), count(c.entities)),
            ("claims".to_owned(), count(c.claims)),
            ("types".to_owned(), Reply::Map(c.types.iter().map(|t| (t.name.to_string(), count(t.entities))).collect())),
            ("predicates".to_owned(), Reply::Map(c.predicates.iter().map(|p| (p.name.to_string(), count(p.claims))).collect())),
        ]))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `ENGRAM.INGEST ws json`: one ingest document or an array of them (a document naming no
/// workspace goes to `ws`; one naming another is refused before anything is written). The reply
/// is one report per document.
pub(super) async fn ingest(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(text), 3) = (arg(args, 1), arg(args, 2), args.len()) else { return arity("engram.ingest") };
    let parsed: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Reply::err(format!("ENGRAM.INGEST: not JSON at line {} column {}: {e}", e.line(), e.column())),
    };
    let mut docs = match parsed {
        serde_json::Value::Array(items) => items,
        one => vec![one],
    };
    for (i, d) in docs.iter_mut().enumerate() {
        let Some(obj) = d.as_object_mut() else { return Reply::err(format!("ENGRAM.INGEST: document {i} is not a JSON object")) };
        match obj.get("workspace").and_then(serde_json::Value::as_str) {
            None => {
                obj.insert("workspace".to_owned(), serde_json::Value::String(ws.to_owned()));
            }
            Some(w) if w == ws => {}
            Some(w) => return Reply::err(format!("ENGRAM.INGEST: document {i} names workspace `{w}`, not `{ws}`")),
        }
    }
    if let Err(r) = require(&who, ws, engram::Access::Write) {
        return r;
    }
    let ws = ws.to_owned();
    let s = shared.clone();
    engine(shared, move |db| {
        if let Err(e) = db.ensure_workspace(&ws) {
            return error_reply(&s, &e);
        }
        let scope = db.scope(who).audited_by_caller();
        let mut reports = Vec::with_capacity(docs.len());
        for d in &docs {
            match scope.ingest(&d.to_string(), &engram::ingest::IngestOptions::default()) {
                Ok(report) => reports.push(serde_json::to_value(&report).map_or(Reply::Nil, |v| super::values::json(&v))),
                Err(e) => reports.push(error_reply(&s, &e)),
            }
        }
        Reply::Array(reports)
    })
    .await
    .unwrap_or_else(|r| r)
}

/// `ENGRAM.DELETE | RESTORE | FORGET ws ENTITY id` or `… ws CLAIM id` (FORGET: `ENTITY id` or
/// `CONVERSATION id`): soft delete, its undo, and the irreversible erasure, one write each.
pub(super) async fn lifecycle(shared: &Arc<Shared>, who: Arc<engram::Principal>, name: &str, args: &[Vec<u8>]) -> Reply {
    use engram::write::batch::{ClaimRef, EntityRef, ForgetTarget, Op, WriteBatch};
    let (Some(ws), Some(kind), Some(id), 4) = (arg(args, 1), arg(args, 2).map(str::to_ascii_uppercase), arg(args, 3), args.len()) else {
        return arity(name);
    };
    let claim = |id: &str| id.parse::<u32>().map_or_else(|_| ClaimRef::Ext(id.to_owned()), |n| ClaimRef::Id(engram::ClaimId(n)));
    let op = match (name, kind.as_str()) {
        ("ENGRAM.DELETE", "ENTITY") => Op::DeleteEntity { entity: EntityRef::Ext(id.to_owned()) },
        ("ENGRAM.DELETE", "CLAIM") => Op::DeleteClaim { claim: claim(id) },
        ("ENGRAM.RESTORE", "ENTITY") => Op::RestoreEntity { entity: EntityRef::Ext(id.to_owned()) },
        ("ENGRAM.RESTORE", "CLAIM") => Op::RestoreClaim { claim: claim(id) },
        ("ENGRAM.FORGET", "ENTITY") => Op::Forget(ForgetTarget::Entity(EntityRef::Ext(id.to_owned()))),
        ("ENGRAM.FORGET", "CONVERSATION") => Op::Forget(ForgetTarget::Conversation(id.to_owned())),
        _ => {
            return Reply::err(format!(
                "{name}: expected ENTITY id or {}",
                if name == "ENGRAM.FORGET" { "CONVERSATION id" } else { "CLAIM id" }
            ))
        }
    };
    let mut batch = WriteBatch::new(ws);
    batch.push(op);
    let s = shared.clone();
    engine(shared, move |db| match db.scope(who).audited_by_caller().write(&batch) {
        Ok(_) => Reply::ok(),
        Err(e) => error_reply(&s, &e),
    })
    .await
    .unwrap_or_else(|r| r)
}
