//! MCP (the official Rust SDK, `rmcp`): engram as an agent's memory server. The same tools over
//! stdio (`engram mcp DIR`, one principal and workspace for the process) and over streamable HTTP
//! at `/mcp` (the principal from the request's credentials, the workspace from `?workspace=`).
//! Every tool runs one or a few server commands as that principal on that workspace: no tool
//! argument names a workspace or a user, so an agent cannot reach beyond its connection; the
//! sub-scope arguments (`user_id`, `agent_id`, `run_id`) stamp what is written.

pub mod docs;

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{schemars, tool, tool_handler, tool_router, RoleServer, ServerHandler};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::commands::{self, Conn};
use crate::resp::json::to_json;
use crate::state::Shared;
use docs::SubScope;

/// Who a session is and where it works.
#[derive(Clone, Debug)]
pub struct McpScope {
    /// The principal.
    pub principal: Arc<engram::Principal>,
    /// The workspace.
    pub workspace: String,
}

/// Where the tools' commands run.
#[derive(Clone)]
enum Backend {
    /// In this process (`engram mcp DIR`, and `/mcp` on `engram serve`).
    Local(Arc<Shared>),
    /// On a running server, over RESP3 as the URL's user (`engram mcp DIR --connect URL`).
    Remote(Arc<tokio::sync::Mutex<crate::resp::client::Client>>),
}

/// The MCP server of one session.
#[derive(Clone)]
pub struct EngramMcp {
    backend: Backend,
    /// stdio: the process's scope; HTTP: `None` (each request carries its own).
    fixed: Option<McpScope>,
    tool_router: ToolRouter<Self>,
}

type ToolResult = Result<CallToolResult, rmcp::ErrorData>;

// Reason: the tools return `ToolResult`; these end a tool with `return ok(…)` / `fail(…)`.
#[allow(clippy::unnecessary_wraps)]
fn ok(v: Value) -> ToolResult {
    let v = if v.is_object() { v } else { json!({"result": v}) };
    Ok(CallToolResult::structured(v))
}

#[allow(clippy::unnecessary_wraps)]
fn fail(message: impl Into<String>) -> ToolResult {
    Ok(CallToolResult::structured_error(json!({"error": {"class": "caller", "message": message.into()}})))
}

/// Page sizes the list tools accept.
pub const PAGE_SIZE_MAX: u64 = 1000;

impl EngramMcp {
    /// A server on `shared`; `fixed` for stdio.
    pub fn new(shared: Arc<Shared>, fixed: Option<McpScope>) -> EngramMcp {
        EngramMcp { backend: Backend::Local(shared), fixed, tool_router: Self::tool_router() }
    }

    /// A server whose tools run on a running engram server through `client` (authenticated as
    /// the principal of `scope`, which the server enforces).
    pub fn remote(client: crate::resp::client::Client, scope: McpScope) -> EngramMcp {
        EngramMcp {
            backend: Backend::Remote(Arc::new(tokio::sync::Mutex::new(client))),
            fixed: Some(scope),
            tool_router: Self::tool_router(),
        }
    }

    fn scope(&self, ctx: &RequestContext<RoleServer>) -> Result<McpScope, CallToolResult> {
        if let Some(s) = &self.fixed {
            return Ok(s.clone());
        }
        ctx.extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<McpScope>().cloned()).ok_or_else(|| {
            CallToolResult::structured_error(json!({"error": {"class": "auth", "message": "no principal for this request"}}))
        })
    }

    /// Runs one command as the session; its reply as JSON, an error reply as `Err`.
    async fn call(&self, scope: &McpScope, args: Vec<String>) -> Result<Value, Value> {
        let shared = match &self.backend {
            Backend::Local(shared) => shared,
            Backend::Remote(client) => {
                let mut client = client.lock().await;
                return client
                    .call(&args)
                    .await
                    .unwrap_or_else(|e| Err(json!({"error": {"class": "operator", "message": format!("the server: {e}")}})));
            }
        };
        let mut conn = Conn::new(shared.next_client_id(), Some(scope.principal.clone()));
        conn.proto = 3;
        conn.interface = "mcp";
        let (reply, _) = commands::dispatch(shared, &mut conn, args.into_iter().map(String::into_bytes).collect()).await;
        let v = to_json(&reply);
        if reply.is_error() {
            Err(v)
        } else {
            Ok(v)
        }
    }

    /// Runs a command and makes its reply the tool's result.
    async fn tool(&self, ctx: &RequestContext<RoleServer>, args: Vec<String>) -> ToolResult {
        let scope = match self.scope(ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let args = args.into_iter().map(|a| if a == WS { scope.workspace.clone() } else { a }).collect();
        match self.call(&scope, args).await {
            Ok(v) => ok(v),
            Err(e) => Ok(CallToolResult::structured_error(e)),
        }
    }

    /// Ingests documents, returning the per-document reports.
    async fn ingest(&self, scope: &McpScope, docs: &[Value]) -> Result<Vec<Value>, Value> {
        let v =
            self.call(scope, vec!["ENGRAM.INGEST".to_owned(), scope.workspace.clone(), Value::Array(docs.to_vec()).to_string()]).await?;
        let reports = v.as_array().cloned().unwrap_or_default();
        if let Some(e) = reports.iter().find(|r| r.get("error").is_some()) {
            return Err(e.clone());
        }
        Ok(reports)
    }
}

/// Stands for the session's workspace in a command's arguments.
const WS: &str = "\u{0}ws";

/// A chat message.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Message {
    /// `user`, `assistant` or `system`.
    pub role: String,
    /// What was said.
    pub content: String,
}

/// Arguments of `add_memory`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddMemory {
    /// A fact or note to remember, stored verbatim.
    pub text: Option<String>,
    /// Chat messages to remember, each stored verbatim as said by its role.
    pub messages: Option<Vec<Message>>,
    /// An extraction document (entities, claims, evidence: engram's ingest format) to store as is.
    pub doc: Option<Value>,
    /// The user the memory is about or from (a sub-scope key).
    pub user_id: Option<String>,
    /// The agent (a sub-scope key).
    pub agent_id: Option<String>,
    /// The run or session (a sub-scope key).
    pub run_id: Option<String>,
}

/// Arguments of `search_memory`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchMemory {
    /// What to look for, in natural language.
    pub query: String,
    /// Token budget of the returned context block (default 1024).
    pub budget: Option<u64>,
    /// Entity names or ids to start the graph search from.
    pub seeds: Option<Vec<String>>,
    /// Graph hops from the seeds.
    pub hops: Option<u64>,
    /// Recall as of this time (RFC 3339).
    pub as_of: Option<String>,
    /// At most this many facts.
    pub limit: Option<usize>,
    /// Only memories of this user (narrows what the connection sees; never widens it).
    pub user_id: Option<String>,
    /// Only memories of this agent.
    pub agent_id: Option<String>,
    /// Only memories of this run or session.
    pub run_id: Option<String>,
}

/// A memory's id.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct MemoryId {
    /// The memory's id (`mem_…`, or any claim id).
    pub id: String,
}

/// Arguments of `update_memory`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct UpdateMemory {
    /// The memory to replace.
    pub id: String,
    /// Its new text.
    pub text: String,
}

/// A page.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Page {
    /// Page number from 1 (default 1).
    pub page: Option<u64>,
    /// Items per page (default 10, at most 1000).
    pub page_size: Option<u64>,
}

/// A page of memories, optionally of one sub-scope.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct MemoryPage {
    /// Page number from 1 (default 1).
    pub page: Option<u64>,
    /// Items per page (default 10, at most 1000).
    pub page_size: Option<u64>,
    /// Only memories of this user.
    pub user_id: Option<String>,
    /// Only memories of this agent.
    pub agent_id: Option<String>,
    /// Only memories of this run or session.
    pub run_id: Option<String>,
}

/// `PROPERTY k=v` arguments for a sub-scope.
fn sub_scope_args(user_id: Option<String>, agent_id: Option<String>, run_id: Option<String>) -> Vec<String> {
    let sub = SubScope { user_id, agent_id, run_id };
    sub.properties().into_iter().flat_map(|(k, v)| ["PROPERTY".to_owned(), format!("{k}={}", v.as_str().unwrap_or_default())]).collect()
}

/// An entity of the reference knowledge-graph server.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityArg {
    /// Its name.
    pub name: String,
    /// Its type (person, project, service, …).
    pub entity_type: String,
    /// Facts about it.
    #[serde(default)]
    pub observations: Vec<String>,
}

/// Arguments of `create_entities`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CreateEntities {
    /// The entities.
    pub entities: Vec<EntityArg>,
}

/// A relation of the reference server.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelationArg {
    /// The source entity's name.
    pub from: String,
    /// The target entity's name.
    pub to: String,
    /// The relation, in active voice (`works_at`, `depends_on`).
    pub relation_type: String,
}

/// Arguments of `create_relations`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CreateRelations {
    /// The relations.
    pub relations: Vec<RelationArg>,
}

/// Observations for one entity.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservationArg {
    /// The entity's name.
    pub entity_name: String,
    /// The observations to add.
    pub contents: Vec<String>,
}

/// Arguments of `add_observations`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddObservations {
    /// The observations.
    pub observations: Vec<ObservationArg>,
}

/// Entity names.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Names {
    /// The names.
    pub names: Vec<String>,
}

/// Entity names to delete.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteEntities {
    /// The names.
    pub entity_names: Vec<String>,
}

/// Arguments of `search_nodes`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchNodes {
    /// Text a name or alias equals, starts with or contains.
    pub query: String,
    /// At most this many (default 10).
    pub limit: Option<u64>,
}

/// Arguments of `neighbors`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct NeighborsArg {
    /// The entity's name or id.
    pub name: String,
    /// At most this many edges.
    pub limit: Option<u64>,
    /// `out`, `in` or `both` (default).
    pub direction: Option<String>,
}

/// Arguments of `entity_context`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EntityContextArg {
    /// The entity's name or id.
    pub name: String,
    /// Rank its facts by similarity to this text instead (what you want to know about it).
    pub query: Option<String>,
    /// Hops from the entity (default 2).
    pub depth: Option<u64>,
    /// Token budget of the returned context block (default 800).
    pub budget: Option<u64>,
    /// At most this many facts (default 50).
    pub limit: Option<u64>,
    /// What was true at this time (RFC 3339).
    pub as_of: Option<String>,
}

/// Arguments of `query`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct QueryArg {
    /// The query (a subset of Cypher).
    pub query: String,
    /// Parameters by name.
    pub params: Option<serde_json::Map<String, Value>>,
}

/// Arguments of tools that take none.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}

/// The reference server's shape of an entity from an `ENGRAM.ENTITY` reply.
fn node(entity: &Value) -> Value {
    let observations: Vec<Value> = entity["claims"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| c["predicate"] == docs::OBSERVATION && c["direction"] == "out" && c["state"] != "deprecated")
                .map(|c| c["text"].clone())
                .collect()
        })
        .unwrap_or_default();
    json!({"name": entity["name"], "entityType": entity["type"], "id": entity["id"], "observations": observations})
}

/// Whether an entity is one the memory tools made to hold a memory or an observation (not a
/// node of the reference server's graph).
fn internal(entity: &Value) -> bool {
    entity["type"] == docs::MEMORY_TYPE || entity["type"] == docs::OBSERVATION_TYPE
}

/// Its relations (claims other than observations and memories), outgoing, current.
fn relations(entity: &Value) -> Vec<Value> {
    entity["claims"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| {
                    c["predicate"] != docs::OBSERVATION
                        && c["predicate"] != docs::REMEMBERS
                        && c["direction"] == "out"
                        && c["state"] != "deprecated"
                })
                .map(|c| json!({"from": c["subject"]["name"], "to": c["object"]["name"], "relationType": c["predicate"], "id": c["id"]}))
                .collect()
        })
        .unwrap_or_default()
}

#[tool_router]
impl EngramMcp {
    #[tool(
        description = "Remember something. Give `text` (a fact or note, stored verbatim), or `messages` (a chat: each message stored verbatim as said by its role), or `doc` (an extraction document with entities, claims and evidence in engram's ingest format). Optional `user_id`, `agent_id`, `run_id` stamp the memory with who and which session it belongs to. Adding the same text again for the same user is recognised and stores nothing new. Returns the ids of the memories stored."
    )]
    async fn add_memory(&self, Parameters(a): Parameters<AddMemory>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let sub = SubScope { user_id: a.user_id, agent_id: a.agent_id, run_id: a.run_id };
        let (ids, docs): (Vec<String>, Vec<Value>) = match (a.text, a.messages, a.doc) {
            (Some(text), None, None) if !text.trim().is_empty() => {
                let (id, doc) = docs::memory(&text, None, &sub, None, "");
                (vec![id], vec![doc])
            }
            (None, Some(messages), None) if !messages.is_empty() => messages
                .iter()
                .enumerate()
                .map(|(i, m)| docs::memory(&m.content, Some(m.role.as_str()), &sub, None, &i.to_string()))
                .unzip(),
            (None, None, Some(doc)) => {
                let mut docs = match doc {
                    Value::Array(items) => items,
                    one => vec![one],
                };
                let props = sub.properties();
                for d in &mut docs {
                    for c in d.get_mut("claims").and_then(Value::as_array_mut).into_iter().flatten() {
                        if let Some(p) = c.as_object_mut().map(|o| o.entry("properties").or_insert_with(|| json!({}))) {
                            if let Some(p) = p.as_object_mut() {
                                p.extend(props.clone());
                            }
                        }
                    }
                }
                (Vec::new(), docs)
            }
            _ => return fail("add_memory: give exactly one of `text` (non-empty), `messages` (non-empty) or `doc`"),
        };
        match self.ingest(&scope, &docs).await {
            Ok(reports) => {
                let dup: Vec<bool> = reports.iter().map(|r| r["duplicate"].as_bool().unwrap_or(false)).collect();
                ok(json!({"ids": ids, "duplicate": dup, "reports": reports}))
            }
            Err(e) => Ok(CallToolResult::structured_error(e)),
        }
    }

    #[tool(
        description = "Find what is remembered about something: hybrid search (meaning, words, the graph around named entities, recency) fused into a context block of at most `budget` tokens, plus the facts behind it with their ids, scores, the paths that found them and their evidence. Use `seeds` (entity names) to search around known entities; name a time in `query` (\"last week\", \"in March 2026\", \"on 2026-03-02\", \"since June\") to put first what was said then; `as_of` to ask what was true at a past time; `user_id` / `agent_id` / `run_id` to search only the memories of that user, agent or run. Put the `context` text in your prompt; cite facts by id."
    )]
    async fn search_memory(&self, Parameters(a): Parameters<SearchMemory>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let mut args = vec!["ENGRAM.RECALL".to_owned(), WS.to_owned(), a.query];
        if let Some(b) = a.budget {
            args.extend(["BUDGET".to_owned(), b.to_string()]);
        }
        for s in a.seeds.unwrap_or_default() {
            args.extend(["SEED".to_owned(), s]);
        }
        if let Some(h) = a.hops {
            args.extend(["HOPS".to_owned(), h.to_string()]);
        }
        if let Some(t) = a.as_of {
            args.extend(["AS_OF".to_owned(), t]);
        }
        args.extend(sub_scope_args(a.user_id, a.agent_id, a.run_id));
        let mut r = self.tool(&ctx, args).await?;
        if let (Some(limit), Some(v)) = (a.limit, r.structured_content.as_mut()) {
            if let Some(facts) = v.get_mut("facts").and_then(Value::as_array_mut) {
                facts.truncate(limit);
            }
            r.content = vec![rmcp::model::ContentBlock::text(v.to_string())];
        }
        Ok(r)
    }

    #[tool(
        description = "Read one memory (or any fact) by id: its text, who or what it is about, its state (proposed, accepted, deprecated), confidence, when it was valid and recorded, what replaced it, and its evidence."
    )]
    async fn get_memory(&self, Parameters(a): Parameters<MemoryId>, ctx: RequestContext<RoleServer>) -> ToolResult {
        self.tool(&ctx, vec!["ENGRAM.CLAIM".to_owned(), WS.to_owned(), a.id]).await
    }

    #[tool(
        description = "Correct a memory: stores `text` as a new memory that replaces the one with `id`. The old one is kept, marked deprecated and linked to its replacement, so history stays auditable. Returns the new id."
    )]
    async fn update_memory(&self, Parameters(a): Parameters<UpdateMemory>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let old = match self.call(&scope, vec!["ENGRAM.CLAIM".to_owned(), scope.workspace.clone(), a.id.clone()]).await {
            Ok(v) => v,
            Err(e) => return Ok(CallToolResult::structured_error(e)),
        };
        let role = if old["subject"]["type"] == "agent" { Some("assistant") } else { None };
        let who = old["subject"]["name"].as_str().map(str::to_owned);
        let sub = if role.is_some() {
            SubScope { agent_id: who, ..SubScope::default() }
        } else {
            SubScope { user_id: who, ..SubScope::default() }
        };
        let old_id = old["ext_id"].as_str().unwrap_or(&a.id).to_owned();
        let (id, doc) = docs::memory(&a.text, role, &sub, Some(&old_id), &old_id);
        match self.ingest(&scope, &[doc]).await {
            Ok(reports) => ok(json!({"id": id, "replaces": old_id, "report": reports.first()})),
            Err(e) => Ok(CallToolResult::structured_error(e)),
        }
    }

    #[tool(
        description = "Delete a memory softly: it is no longer recalled or listed, but it can be brought back with restore_memory. Use forget_memory to erase it for good."
    )]
    async fn delete_memory(&self, Parameters(a): Parameters<MemoryId>, ctx: RequestContext<RoleServer>) -> ToolResult {
        self.tool(&ctx, vec!["ENGRAM.DELETE".to_owned(), WS.to_owned(), "CLAIM".to_owned(), a.id]).await
    }

    #[tool(description = "Bring back a memory deleted with delete_memory.")]
    async fn restore_memory(&self, Parameters(a): Parameters<MemoryId>, ctx: RequestContext<RoleServer>) -> ToolResult {
        self.tool(&ctx, vec!["ENGRAM.RESTORE".to_owned(), WS.to_owned(), "CLAIM".to_owned(), a.id]).await
    }

    #[tool(
        description = "Erase a memory stored with add_memory (text or messages) irreversibly: its text, evidence and vectors are removed from the database, as a user's request to be forgotten requires. Cannot be undone."
    )]
    async fn forget_memory(&self, Parameters(a): Parameters<MemoryId>, ctx: RequestContext<RoleServer>) -> ToolResult {
        if !a.id.starts_with("mem_") {
            return fail("forget_memory erases memories stored with add_memory (ids `mem_…`); delete_memory hides any fact");
        }
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        if let Err(e) = self.call(&scope, vec!["ENGRAM.CLAIM".to_owned(), scope.workspace.clone(), a.id.clone()]).await {
            return Ok(CallToolResult::structured_error(e));
        }
        for kind in ["CONVERSATION", "ENTITY"] {
            if let Err(e) =
                self.call(&scope, vec!["ENGRAM.FORGET".to_owned(), scope.workspace.clone(), kind.to_owned(), a.id.clone()]).await
            {
                return Ok(CallToolResult::structured_error(e));
            }
        }
        ok(json!({"forgotten": a.id}))
    }

    #[tool(
        description = "List stored memories, newest first, a page at a time (`page` from 1, `page_size` up to 1000), optionally only those of one `user_id`, `agent_id` or `run_id`. Returns the memories and the total count."
    )]
    async fn list_memories(&self, Parameters(a): Parameters<MemoryPage>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let size = a.page_size.unwrap_or(10).clamp(1, PAGE_SIZE_MAX);
        let offset = a.page.unwrap_or(1).max(1).saturating_sub(1).saturating_mul(size);
        let args = ["ENGRAM.CLAIMS", WS, "PREDICATE", docs::REMEMBERS, "OFFSET", &offset.to_string(), "LIMIT", &size.to_string()];
        let mut args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        args.extend(sub_scope_args(a.user_id, a.agent_id, a.run_id));
        self.tool(&ctx, args).await
    }

    #[tool(
        description = "Create entities in the knowledge graph, each with a name, an entityType and optional observations (facts about it). An entity that already exists with the same name and type is reused, and the observations are added to it."
    )]
    async fn create_entities(&self, Parameters(a): Parameters<CreateEntities>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let ents: Vec<docs::GraphEntity<'_>> = a
            .entities
            .iter()
            .map(|e| docs::GraphEntity { name: &e.name, entity_type: &e.entity_type, observations: &e.observations })
            .collect();
        match self.ingest(&scope, &[docs::graph("create_entities", &ents, &[], &SubScope::default())]).await {
            Ok(_) => ok(
                json!({"entities": a.entities.iter().map(|e| json!({"name": e.name, "entityType": e.entity_type, "observations": e.observations})).collect::<Vec<_>>()}),
            ),
            Err(e) => Ok(CallToolResult::structured_error(e)),
        }
    }

    #[tool(
        description = "Create relations between entities that exist, each {from, to, relationType}; relationType in active voice (works_at, depends_on)."
    )]
    async fn create_relations(&self, Parameters(a): Parameters<CreateRelations>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let rels: Vec<(&str, &str, &str)> =
            a.relations.iter().map(|r| (r.from.as_str(), r.relation_type.as_str(), r.to.as_str())).collect();
        match self.ingest(&scope, &[docs::graph("create_relations", &[], &rels, &SubScope::default())]).await {
            Ok(_) => ok(
                json!({"relations": a.relations.iter().map(|r| json!({"from": r.from, "to": r.to, "relationType": r.relation_type})).collect::<Vec<_>>()}),
            ),
            Err(e) => Ok(CallToolResult::structured_error(e)),
        }
    }

    #[tool(description = "Add observations (facts) to existing entities: [{entityName, contents: [...]}].")]
    async fn add_observations(&self, Parameters(a): Parameters<AddObservations>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let mut ents = Vec::new();
        for o in &a.observations {
            let found = self
                .call(
                    &scope,
                    vec!["ENGRAM.ENTITY".to_owned(), scope.workspace.clone(), o.entity_name.clone(), "LIMIT".to_owned(), "0".to_owned()],
                )
                .await;
            match found {
                Ok(v) => ents.push((o, v["type"].as_str().unwrap_or("thing").to_owned())),
                Err(e) => return Ok(CallToolResult::structured_error(e)),
            }
        }
        let graph: Vec<docs::GraphEntity<'_>> =
            ents.iter().map(|(o, t)| docs::GraphEntity { name: &o.entity_name, entity_type: t, observations: &o.contents }).collect();
        match self.ingest(&scope, &[docs::graph("add_observations", &graph, &[], &SubScope::default())]).await {
            Ok(_) => ok(
                json!({"added": a.observations.iter().map(|o| json!({"entityName": o.entity_name, "addedObservations": o.contents})).collect::<Vec<_>>()}),
            ),
            Err(e) => Ok(CallToolResult::structured_error(e)),
        }
    }

    #[tool(description = "Open entities by name: each with its type, observations and outgoing relations.")]
    async fn open_nodes(&self, Parameters(a): Parameters<Names>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let (mut entities, mut rels, mut missing) = (Vec::new(), Vec::new(), Vec::new());
        for name in &a.names {
            match self.call(&scope, vec!["ENGRAM.ENTITY".to_owned(), scope.workspace.clone(), name.clone()]).await {
                Ok(v) => {
                    entities.push(node(&v));
                    rels.extend(relations(&v));
                }
                Err(_) => missing.push(name.clone()),
            }
        }
        ok(json!({"entities": entities, "relations": rels, "missing": missing}))
    }

    #[tool(
        description = "Find entities whose name or alias matches `query` (exact first, then prefix, then substring), with their types and observations."
    )]
    async fn search_nodes(&self, Parameters(a): Parameters<SearchNodes>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let limit = a.limit.unwrap_or(10).clamp(1, PAGE_SIZE_MAX).to_string();
        let found =
            match self.call(&scope, vec!["ENGRAM.SEARCH".to_owned(), scope.workspace.clone(), a.query, "LIMIT".to_owned(), limit]).await {
                Ok(v) => v,
                Err(e) => return Ok(CallToolResult::structured_error(e)),
            };
        let mut entities = Vec::new();
        for item in found["items"].as_array().into_iter().flatten() {
            let Some(id) = item["id"].as_str() else { continue };
            if internal(item) {
                continue;
            }
            if let Ok(v) = self.call(&scope, vec!["ENGRAM.ENTITY".to_owned(), scope.workspace.clone(), id.to_owned()]).await {
                entities.push(node(&v));
            }
        }
        ok(json!({"entities": entities}))
    }

    #[tool(
        description = "Read the knowledge graph a page at a time (`page` from 1, `page_size` up to 1000 entities, by name): entities with observations, and their outgoing relations."
    )]
    async fn read_graph(&self, Parameters(a): Parameters<Page>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let size = a.page_size.unwrap_or(100).clamp(1, PAGE_SIZE_MAX);
        let offset = a.page.unwrap_or(1).max(1).saturating_sub(1).saturating_mul(size);
        // The graph's own entities (not the ones holding memories and observations), by name.
        let filter = format!("WHERE NOT n:{} AND NOT n:{}", docs::MEMORY_TYPE, docs::OBSERVATION_TYPE);
        let page = format!("MATCH (n) {filter} RETURN n.id ORDER BY n.name, n.id SKIP {offset} LIMIT {size}");
        let count = format!("MATCH (n) {filter} RETURN count(n)");
        let (page, count) = match (
            self.call(&scope, vec!["ENGRAM.RO_QUERY".to_owned(), scope.workspace.clone(), page]).await,
            self.call(&scope, vec!["ENGRAM.RO_QUERY".to_owned(), scope.workspace.clone(), count]).await,
        ) {
            (Ok(p), Ok(c)) => (p, c),
            (Err(e), _) | (_, Err(e)) => return Ok(CallToolResult::structured_error(e)),
        };
        let (mut entities, mut rels) = (Vec::new(), Vec::new());
        for row in page["rows"].as_array().into_iter().flatten() {
            let Some(id) = row[0].as_str() else { continue };
            if let Ok(v) = self.call(&scope, vec!["ENGRAM.ENTITY".to_owned(), scope.workspace.clone(), id.to_owned()]).await {
                entities.push(node(&v));
                rels.extend(relations(&v));
            }
        }
        let found = json!({"total": count["rows"][0][0]});
        ok(
            json!({"entities": entities, "relations": rels, "total_entities": found["total"], "page": a.page.unwrap_or(1).max(1), "page_size": size}),
        )
    }

    #[tool(
        description = "The edges of an entity (by name or id): each with the fact's id, direction, predicate and the entity at the other end."
    )]
    async fn neighbors(&self, Parameters(a): Parameters<NeighborsArg>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let mut args = vec!["ENGRAM.NEIGHBORS".to_owned(), WS.to_owned(), a.name];
        if let Some(n) = a.limit {
            args.extend(["LIMIT".to_owned(), n.to_string()]);
        }
        if let Some(d) = a.direction {
            args.extend(["DIRECTION".to_owned(), d]);
        }
        self.tool(&ctx, args).await
    }

    #[tool(
        description = "What the memory holds about one entity (by name or id): its current facts within `depth` hops, nearest first, then by confidence and recent activity, packed into a context block of at most `budget` tokens, with the facts behind it and their evidence. Give `query` to put first the facts most like it (\"what is failing\"). Put the `context` text in your prompt; cite facts by id."
    )]
    async fn entity_context(&self, Parameters(a): Parameters<EntityContextArg>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let mut args = vec!["ENGRAM.CONTEXT".to_owned(), WS.to_owned(), a.name];
        for (name, n) in [("DEPTH", a.depth), ("BUDGET", a.budget), ("LIMIT", a.limit)] {
            if let Some(n) = n {
                args.extend([name.to_owned(), n.to_string()]);
            }
        }
        for (name, t) in [("TEXT", a.query), ("AS_OF", a.as_of)] {
            if let Some(t) = t {
                args.extend([name.to_owned(), t]);
            }
        }
        self.tool(&ctx, args).await
    }

    #[tool(
        description = "Delete entities by name, softly: they and their facts are hidden from every read (restorable by an administrator)."
    )]
    async fn delete_entities(&self, Parameters(a): Parameters<DeleteEntities>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let mut deleted = Vec::new();
        for name in &a.entity_names {
            let id = match self
                .call(&scope, vec!["ENGRAM.ENTITY".to_owned(), scope.workspace.clone(), name.clone(), "LIMIT".to_owned(), "0".to_owned()])
                .await
            {
                Ok(v) => v["id"].as_str().unwrap_or_default().to_owned(),
                Err(e) => return Ok(CallToolResult::structured_error(e)),
            };
            if let Err(e) = self.call(&scope, vec!["ENGRAM.DELETE".to_owned(), scope.workspace.clone(), "ENTITY".to_owned(), id]).await {
                return Ok(CallToolResult::structured_error(e));
            }
            deleted.push(name.clone());
        }
        ok(json!({"deleted": deleted}))
    }

    #[tool(
        description = "Run a query in a subset of Cypher on the memory graph: entities are nodes (labels = types), facts are relationships (type = predicate). Read-only unless this connection may write. Returns columns, rows and statistics. To learn the graph's labels, types and property keys first: CALL db.schema.nodeTypeProperties(), CALL db.schema.relTypeProperties(); the procedures (engram.recall, engram.neighbors, …): SHOW PROCEDURES."
    )]
    async fn query(&self, Parameters(a): Parameters<QueryArg>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let command = if scope.principal.may(&scope.workspace, engram::Access::Write) { "ENGRAM.QUERY" } else { "ENGRAM.RO_QUERY" };
        let mut args = vec![command.to_owned(), WS.to_owned(), a.query];
        if let Some(p) = a.params {
            args.extend(["PARAMS".to_owned(), Value::Object(p).to_string()]);
        }
        self.tool(&ctx, args).await
    }

    #[tool(
        description = "The memory's status: the workspace and user of this connection, what it may do, and how many entities and facts it holds."
    )]
    async fn get_status(&self, Parameters(_): Parameters<NoArgs>, ctx: RequestContext<RoleServer>) -> ToolResult {
        let scope = match self.scope(&ctx) {
            Ok(s) => s,
            Err(r) => return Ok(r),
        };
        let stats = self.call(&scope, vec!["ENGRAM.STATS".to_owned(), scope.workspace.clone()]).await.unwrap_or_else(|e| e);
        let ws = &scope.workspace;
        let may = |a| scope.principal.may(ws, a);
        ok(json!({
            "workspace": ws,
            "user": scope.principal.name(),
            "read": may(engram::Access::Read),
            "write": may(engram::Access::Write),
            "entities": stats["entities"],
            "facts": stats["claims"],
            "server": format!("engram {}", env!("CARGO_PKG_VERSION")),
        }))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for EngramMcp {
    /// Runs the tool; an error the SDK reports as text (arguments that do not match the schema)
    /// becomes the same `{"error": {"class", "message"}}` as the tools' own errors.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let response = self.tool_router.call(call).await?;
        Ok(match response {
            rmcp::model::CallToolResponse::Complete(r) if r.is_error == Some(true) && r.structured_content.is_none() => {
                let message: Vec<String> = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
                rmcp::model::CallToolResponse::Complete(CallToolResult::structured_error(
                    json!({"error": {"class": "caller", "message": message.join(" ")}}),
                ))
            }
            other => other,
        })
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("engram", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "engram is your long-term memory: a knowledge graph of facts with evidence, confidence and time. Store what you learn with add_memory (or create_entities / create_relations / add_observations for structured facts); before answering, call search_memory with the question and use the returned context; cite facts by id. Corrections go through update_memory, so history is kept.",
            )
    }
}

/// Serves MCP over stdio as `scope` until the client closes the stream.
pub async fn serve_stdio(shared: Arc<Shared>, scope: McpScope) -> std::io::Result<()> {
    serve_stdio_with(EngramMcp::new(shared, Some(scope))).await
}

/// Serves MCP over stdio in front of the engram server at `url` (`redis://[user:password@]host:port`),
/// working in `workspace` as the URL's user: the server checks every command.
pub async fn serve_stdio_remote(url: &str, workspace: String) -> std::io::Result<()> {
    let target = crate::resp::client::Target::parse(url).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut client = crate::resp::client::Client::connect(&target).await?;
    let who = match client.call(&["ENGRAM.WHOAMI".to_owned()]).await? {
        Ok(v) => v,
        Err(e) => return Err(std::io::Error::other(format!("ENGRAM.WHOAMI: {}", e["error"]["message"]))),
    };
    // The server enforces the grants; the session keeps a copy to choose read-only queries and to
    // report what it may do.
    let mut principal = engram::Principal::named(who["user"].as_str().unwrap_or("default"));
    for (ws, g) in who["grants"].as_object().into_iter().flatten() {
        if let Ok(access) = crate::users::parse_access(g["access"].as_str().unwrap_or("read")) {
            principal = principal.grant(ws, access, g["see_sensitive"].as_bool().unwrap_or(false));
        }
    }
    serve_stdio_with(EngramMcp::remote(client, McpScope { principal: Arc::new(principal), workspace })).await
}

async fn serve_stdio_with(server: EngramMcp) -> std::io::Result<()> {
    use rmcp::ServiceExt as _;
    let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| std::io::Error::other(format!("MCP start: {e}")))?;
    running.waiting().await.map_err(|e| std::io::Error::other(format!("MCP: {e}")))?;
    Ok(())
}
