//! The `/v1` routes: each one RESP command run as the request's principal (the same code path,
//! checks and limits as RESP), its reply as JSON.

// Reason: utoipa's derive of the query-string parameters (`IntoParams` with `Query<T>`) writes
// qualified paths the lint flags in code we do not write.
#![allow(unused_qualifications)]

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::auth::Who;
use super::reply::{error, respond};
use super::AppState;
use crate::commands::{self, Conn};

/// Runs one command as `who`.
async fn run(state: &AppState, who: Arc<engram::Principal>, args: Vec<String>) -> Response {
    let mut conn = Conn::new(state.shared.next_client_id(), Some(who));
    conn.proto = 3;
    conn.interface = "http";
    let (reply, _) = commands::dispatch(&state.shared, &mut conn, args.into_iter().map(String::into_bytes).collect()).await;
    respond(&reply)
}

/// Reads a JSON body of type `T` under `proto-max-bulk-len` (the body becomes one argument); a
/// body too large, not JSON or of the wrong shape is a 4xx naming the limit, the position or the
/// field.
async fn body<T: DeserializeOwned>(state: &AppState, body: Body) -> Result<T, Response> {
    let max = state.shared.limits().bulk_max;
    let bytes = axum::body::to_bytes(body, max)
        .await
        .map_err(|_| error(StatusCode::PAYLOAD_TOO_LARGE, "limit", format!("the request body is over proto-max-bulk-len ({max} bytes)")))?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let parsed: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let at = format!("line {} column {}", inner.line(), inner.column());
        let field = if path == "." { String::new() } else { format!(" at field `{path}`") };
        error(StatusCode::BAD_REQUEST, "caller", format!("the request body{field} ({at}): {inner}"))
    })?;
    de.end().map_err(|e| error(StatusCode::BAD_REQUEST, "caller", format!("the request body has trailing data: {e}")))?;
    Ok(parsed)
}

/// A query request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryBody {
    /// The query text (the Cypher subset; a `CYPHER k=v` header is allowed).
    query: String,
    /// Parameters by name.
    #[serde(default)]
    params: Option<BTreeMap<String, Value>>,
    /// The deadline in milliseconds (default `query-timeout-default`, at most `query-timeout-max`).
    #[serde(default)]
    timeout_ms: Option<u64>,
    /// A write applied at most once per key (see the retry rules in docs/server.md).
    #[serde(default)]
    idempotency_key: Option<String>,
}

async fn query_as(state: AppState, who: Arc<engram::Principal>, command: &str, ws: String, b: Body) -> Response {
    let q: QueryBody = match body(&state, b).await {
        Ok(q) => q,
        Err(r) => return r,
    };
    let mut args = vec![command.to_owned(), ws, q.query];
    if let Some(p) = q.params {
        args.extend(["PARAMS".to_owned(), serde_json::to_string(&p).unwrap_or_default()]);
    }
    if let Some(t) = q.timeout_ms {
        args.extend(["TIMEOUT".to_owned(), t.to_string()]);
    }
    if let Some(k) = q.idempotency_key {
        if command != "ENGRAM.QUERY" {
            return error(StatusCode::BAD_REQUEST, "caller", "idempotency_key applies to /query only");
        }
        args.extend(["IDEMPOTENCY".to_owned(), k]);
    }
    run(&state, who, args).await
}

/// Runs a query (it may write: a write creates the workspace), as `ENGRAM.QUERY`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/query", request_body = QueryBody,
    params(("ws" = String, Path, description = "The workspace (a FalkorDB graph key).")),
    responses((status = 200, description = "`columns`, `rows`, `stats`.", body = Value), (status = "4XX", description = "`{\"error\": {\"class\", \"message\"}}`", body = Value)))]
pub async fn query(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>, b: Body) -> Response {
    query_as(state, who, "ENGRAM.QUERY", ws, b).await
}

/// Runs a read-only query (a write is refused; nothing is created), as `ENGRAM.RO_QUERY`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/ro_query", request_body = QueryBody,
    params(("ws" = String, Path, description = "The workspace.")),
    responses((status = 200, description = "`columns`, `rows`, `stats`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn ro_query(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>, b: Body) -> Response {
    query_as(state, who, "ENGRAM.RO_QUERY", ws, b).await
}

/// The plan of a query, as `ENGRAM.EXPLAIN`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/explain", request_body = QueryBody,
    params(("ws" = String, Path, description = "The workspace.")),
    responses((status = 200, description = "The plan, one row per operator.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn explain(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>, b: Body) -> Response {
    query_as(state, who, "ENGRAM.EXPLAIN", ws, b).await
}

/// Runs a query and returns its plan with rows and time per operator, as `ENGRAM.PROFILE`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/profile", request_body = QueryBody,
    params(("ws" = String, Path, description = "The workspace.")),
    responses((status = 200, description = "The profile.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn profile(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>, b: Body) -> Response {
    query_as(state, who, "ENGRAM.PROFILE", ws, b).await
}

/// A recall request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallBody {
    /// What to recall.
    text: String,
    /// The token budget of the context block.
    #[serde(default)]
    budget: Option<u64>,
    /// Entities (external id or name) the graph path starts from.
    #[serde(default)]
    seeds: Vec<String>,
    /// Graph hops from the seeds.
    #[serde(default)]
    hops: Option<u64>,
    /// Valid time to recall at (RFC 3339).
    #[serde(default)]
    as_of: Option<String>,
    /// Only claims holding these string properties (a sub-scope such as `{"user_id": "ann"}`).
    #[serde(default)]
    properties: BTreeMap<String, String>,
}

/// Hybrid recall (vector, text, graph, recency fused) under a token budget, as `ENGRAM.RECALL`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/recall", request_body = RecallBody,
    params(("ws" = String, Path, description = "The workspace.")),
    responses((status = 200, description = "The context block, the facts with ids, scores, paths and evidence.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn recall(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>, b: Body) -> Response {
    let r: RecallBody = match body(&state, b).await {
        Ok(r) => r,
        Err(e) => return e,
    };
    let mut args = vec!["ENGRAM.RECALL".to_owned(), ws, r.text];
    if let Some(n) = r.budget {
        args.extend(["BUDGET".to_owned(), n.to_string()]);
    }
    for s in r.seeds {
        args.extend(["SEED".to_owned(), s]);
    }
    if let Some(n) = r.hops {
        args.extend(["HOPS".to_owned(), n.to_string()]);
    }
    if let Some(t) = r.as_of {
        args.extend(["AS_OF".to_owned(), t]);
    }
    for (k, v) in r.properties {
        args.extend(["PROPERTY".to_owned(), format!("{k}={v}")]);
    }
    run(&state, who, args).await
}

/// Ingests one document or an array of them (idempotent by message ids), as `ENGRAM.INGEST`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/ingest", request_body(content = Value, description = "The pinned ingest document, or an array of them."),
    params(("ws" = String, Path, description = "The workspace (created if absent).")),
    responses((status = 200, description = "One report per document (an error in place for a failed one).", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn ingest(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>, b: Body) -> Response {
    let doc: Value = match body(&state, b).await {
        Ok(d) => d,
        Err(e) => return e,
    };
    run(&state, who, vec!["ENGRAM.INGEST".to_owned(), ws, doc.to_string()]).await
}

/// Paging of a list.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    /// At most this many items.
    limit: Option<u64>,
    /// Valid time (RFC 3339) for `/entities/{id}`.
    as_of: Option<String>,
}

/// The entity (external id, else its one name) with its claims of every state and their
/// evidence, as `ENGRAM.ENTITY`.
#[utoipa::path(get, path = "/v1/workspaces/{ws}/entities/{id}", params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "External id or name."), Limit),
    responses((status = 200, description = "The entity with `claims` and `claims_total`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn entity(
    State(state): State<AppState>,
    Who(who): Who,
    Path((ws, id)): Path<(String, String)>,
    Query(q): Query<Limit>,
) -> Response {
    let mut args = vec!["ENGRAM.ENTITY".to_owned(), ws, id];
    if let Some(n) = q.limit {
        args.extend(["LIMIT".to_owned(), n.to_string()]);
    }
    if let Some(t) = q.as_of {
        args.extend(["AS_OF".to_owned(), t]);
    }
    run(&state, who, args).await
}

/// A search of entities.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct Search {
    /// Text the name or an alias equals, starts with or contains.
    q: String,
    /// At most this many entities (default 10).
    limit: Option<u64>,
}

/// Entities by name or alias, best match first, as `ENGRAM.SEARCH`.
#[utoipa::path(get, path = "/v1/workspaces/{ws}/entities", params(("ws" = String, Path, description = "The workspace."), Search),
    responses((status = 200, description = "`items` and `total`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn search(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>, Query(q): Query<Search>) -> Response {
    let mut args = vec!["ENGRAM.SEARCH".to_owned(), ws, q.q];
    if let Some(n) = q.limit {
        args.extend(["LIMIT".to_owned(), n.to_string()]);
    }
    run(&state, who, args).await
}

/// Which neighbours.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct NeighborParams {
    /// At most this many edges.
    limit: Option<u64>,
    /// `out`, `in` or `both` (default).
    direction: Option<String>,
}

/// The entity's edges, as `ENGRAM.NEIGHBORS`.
#[utoipa::path(get, path = "/v1/workspaces/{ws}/entities/{id}/neighbors", params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "External id or name."), NeighborParams),
    responses((status = 200, description = "`items` (claim, direction, predicate, neighbor) and `next_cursor`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn neighbors(
    State(state): State<AppState>,
    Who(who): Who,
    Path((ws, id)): Path<(String, String)>,
    Query(q): Query<NeighborParams>,
) -> Response {
    let mut args = vec!["ENGRAM.NEIGHBORS".to_owned(), ws, id];
    if let Some(n) = q.limit {
        args.extend(["LIMIT".to_owned(), n.to_string()]);
    }
    if let Some(d) = q.direction {
        args.extend(["DIRECTION".to_owned(), d]);
    }
    run(&state, who, args).await
}

/// A context request: what `ENGRAM.CONTEXT` takes after the entity.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextBody {
    /// Rank the entity's neighbourhood by similarity to this text (absent: its context, nearest first).
    #[serde(default)]
    text: Option<String>,
    /// Hops from the entity.
    #[serde(default)]
    depth: Option<u64>,
    /// The token budget of the context block.
    #[serde(default)]
    budget: Option<u64>,
    /// Most facts.
    #[serde(default)]
    max_facts: Option<u64>,
    /// Relationship types to follow (absent: all).
    #[serde(default)]
    predicates: Vec<String>,
    /// Entity types to reach (absent: all).
    #[serde(default)]
    types: Vec<String>,
    /// Valid time (RFC 3339).
    #[serde(default)]
    as_of: Option<String>,
}

/// The entity's context, or with `text` its neighbourhood ranked by similarity, under a token
/// budget, as `ENGRAM.CONTEXT`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/entities/{id}/context", request_body = ContextBody,
    params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "External id or name.")),
    responses((status = 200, description = "The context block, the facts with ids, scores and evidence, as a recall's.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn context(State(state): State<AppState>, Who(who): Who, Path((ws, id)): Path<(String, String)>, b: Body) -> Response {
    let c: ContextBody = match body(&state, b).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let mut args = vec!["ENGRAM.CONTEXT".to_owned(), ws, id];
    let numbers = [("DEPTH", c.depth), ("BUDGET", c.budget), ("LIMIT", c.max_facts)];
    for (name, n) in numbers.into_iter().filter_map(|(name, n)| n.map(|n| (name, n))) {
        args.extend([name.to_owned(), n.to_string()]);
    }
    let words = c.text.map(|t| ("TEXT", t)).into_iter().chain(c.as_of.map(|t| ("AS_OF", t)));
    let lists = c.predicates.into_iter().map(|p| ("PREDICATE", p)).chain(c.types.into_iter().map(|t| ("TYPE", t)));
    for (name, v) in words.chain(lists) {
        args.extend([name.to_owned(), v]);
    }
    run(&state, who, args).await
}

/// Soft-deletes an entity (its claims are hidden with it; restorable), as `ENGRAM.DELETE`.
#[utoipa::path(delete, path = "/v1/workspaces/{ws}/entities/{id}", params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "External id.")),
    responses((status = 200, description = "`\"OK\"`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn delete_entity(State(state): State<AppState>, Who(who): Who, Path((ws, id)): Path<(String, String)>) -> Response {
    run(&state, who, vec!["ENGRAM.DELETE".to_owned(), ws, "ENTITY".to_owned(), id]).await
}

/// Undoes an entity's soft delete, as `ENGRAM.RESTORE`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/entities/{id}/restore", params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "External id.")),
    responses((status = 200, description = "`\"OK\"`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn restore_entity(State(state): State<AppState>, Who(who): Who, Path((ws, id)): Path<(String, String)>) -> Response {
    run(&state, who, vec!["ENGRAM.RESTORE".to_owned(), ws, "ENTITY".to_owned(), id]).await
}

/// Erases an entity irreversibly, as `ENGRAM.FORGET`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/entities/{id}/forget", params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "External id.")),
    responses((status = 200, description = "`\"OK\"`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn forget_entity(State(state): State<AppState>, Who(who): Who, Path((ws, id)): Path<(String, String)>) -> Response {
    run(&state, who, vec!["ENGRAM.FORGET".to_owned(), ws, "ENTITY".to_owned(), id]).await
}

/// Erases everything a conversation gave irreversibly, as `ENGRAM.FORGET … CONVERSATION`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/conversations/{id}/forget", params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "The conversation id.")),
    responses((status = 200, description = "`\"OK\"`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn forget_conversation(State(state): State<AppState>, Who(who): Who, Path((ws, id)): Path<(String, String)>) -> Response {
    run(&state, who, vec!["ENGRAM.FORGET".to_owned(), ws, "CONVERSATION".to_owned(), id]).await
}

/// Soft-deletes a claim (dense id or external id), as `ENGRAM.DELETE … CLAIM`.
#[utoipa::path(delete, path = "/v1/workspaces/{ws}/claims/{id}", params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "Dense or external id.")),
    responses((status = 200, description = "`\"OK\"`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn delete_claim(State(state): State<AppState>, Who(who): Who, Path((ws, id)): Path<(String, String)>) -> Response {
    run(&state, who, vec!["ENGRAM.DELETE".to_owned(), ws, "CLAIM".to_owned(), id]).await
}

/// Undoes a claim's soft delete, as `ENGRAM.RESTORE … CLAIM`.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/claims/{id}/restore", params(("ws" = String, Path, description = "The workspace."), ("id" = String, Path, description = "Dense or external id.")),
    responses((status = 200, description = "`\"OK\"`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn restore_claim(State(state): State<AppState>, Who(who): Who, Path((ws, id)): Path<(String, String)>) -> Response {
    run(&state, who, vec!["ENGRAM.RESTORE".to_owned(), ws, "CLAIM".to_owned(), id]).await
}

/// Entity and claim counts by type and predicate, as `ENGRAM.STATS`.
#[utoipa::path(get, path = "/v1/workspaces/{ws}/stats", params(("ws" = String, Path, description = "The workspace.")),
    responses((status = 200, description = "`entities`, `claims`, `types`, `predicates`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn stats(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>) -> Response {
    run(&state, who, vec!["ENGRAM.STATS".to_owned(), ws]).await
}

/// Deletes a workspace and everything in it, as `GRAPH.DELETE`.
#[utoipa::path(delete, path = "/v1/workspaces/{ws}", params(("ws" = String, Path, description = "The workspace.")),
    responses((status = 200, description = "`\"OK\"`.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn delete_workspace(State(state): State<AppState>, Who(who): Who, Path(ws): Path<String>) -> Response {
    run(&state, who, vec!["GRAPH.DELETE".to_owned(), ws]).await
}

/// The workspaces the principal may read, with counts, as `ENGRAM.WORKSPACES`.
#[utoipa::path(get, path = "/v1/workspaces", responses((status = 200, description = "One `{name, entities, claims}` per workspace.", body = Value), (status = 401, description = "Credentials needed.", body = Value)))]
pub async fn workspaces(State(state): State<AppState>, Who(who): Who) -> Response {
    run(&state, who, vec!["ENGRAM.WORKSPACES".to_owned()]).await
}

/// Who the request authenticates as, with its grants (for a page that logs in).
#[utoipa::path(get, path = "/v1/whoami", responses((status = 200, description = "`user` and `grants` by workspace.", body = Value), (status = 401, description = "Credentials needed.", body = Value)))]
pub async fn whoami(Who(who): Who) -> Response {
    let grants: serde_json::Map<String, Value> = who
        .grants()
        .map(|(ws, g)| (ws.to_owned(), serde_json::json!({"access": g.access.as_str(), "see_sensitive": g.see_sensitive})))
        .collect();
    respond_json(&serde_json::json!({"user": who.name(), "grants": grants}))
}

fn respond_json(v: &Value) -> Response {
    use axum::response::IntoResponse as _;
    (StatusCode::OK, axum::Json(v)).into_response()
}

/// Writes a snapshot and truncates the WAL (admin on `*`), as `ENGRAM.CHECKPOINT`.
#[utoipa::path(post, path = "/v1/checkpoint", responses((status = 200, description = "The snapshot's path, or `\"OK\"` in memory.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn checkpoint(State(state): State<AppState>, Who(who): Who) -> Response {
    run(&state, who, vec!["ENGRAM.CHECKPOINT".to_owned()]).await
}

/// A backup request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupBody {
    /// A new folder on the server's machine.
    path: String,
}

/// A consistent copy of the database into a new folder (admin on `*`), as `ENGRAM.BACKUP`.
#[utoipa::path(post, path = "/v1/backup", request_body = BackupBody, responses((status = 200, description = "The backup's path.", body = Value), (status = "4XX", description = "An error.", body = Value)))]
pub async fn backup(State(state): State<AppState>, Who(who): Who, b: Body) -> Response {
    let req: BackupBody = match body(&state, b).await {
        Ok(r) => r,
        Err(e) => return e,
    };
    run(&state, who, vec!["ENGRAM.BACKUP".to_owned(), req.path]).await
}
