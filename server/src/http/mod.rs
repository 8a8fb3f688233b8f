//! The HTTP side of `engram serve --http-port N` (axum): the JSON API under `/v1` (each route
//! one RESP command, run as the request's principal), `/healthz`, `/readyz`, `/metrics`
//! (Prometheus text), `/openapi.json`, the MCP streamable-HTTP transport at `/mcp` and the
//! Explorer page at `/`.

pub mod api;
pub mod auth;
pub mod reply;
pub mod scrape;

use rmcp::transport::streamable_http_server::{session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService};

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use utoipa::OpenApi;

use crate::state::Shared;

/// What every HTTP handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The server's shared state (the same as RESP's).
    pub shared: Arc<Shared>,
    /// Password checks already made.
    pub verified: Arc<auth::Verified>,
}

/// The `OpenAPI` document of the `/v1` routes and the service routes.
#[derive(OpenApi)]
#[openapi(
    info(title = "engram HTTP API", description = "engram's operations over HTTP/JSON: the same commands, users, grants and limits as its RESP server."),
    paths(
        api::workspaces, api::whoami, api::query, api::ro_query, api::explain, api::profile, api::recall, api::ingest,
        api::search, api::entity, api::neighbors, api::context, api::delete_entity, api::restore_entity, api::forget_entity,
        api::forget_conversation, api::delete_claim, api::restore_claim, api::stats, api::delete_workspace,
        api::checkpoint, api::backup, healthz, readyz, metrics, openapi, explorer
    ),
    components(schemas(api::QueryBody, api::RecallBody, api::ContextBody, api::BackupBody)),
    modifiers(&Security)
)]
pub struct ApiDoc;

struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme("basic", SecurityScheme::Http(Http::new(HttpAuthScheme::Basic)));
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

/// Every route: method and path as the `OpenAPI` document names them (a test checks the two agree).
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/v1/workspaces"),
    ("get", "/v1/whoami"),
    ("post", "/v1/workspaces/{ws}/query"),
    ("post", "/v1/workspaces/{ws}/ro_query"),
    ("post", "/v1/workspaces/{ws}/explain"),
    ("post", "/v1/workspaces/{ws}/profile"),
    ("post", "/v1/workspaces/{ws}/recall"),
    ("post", "/v1/workspaces/{ws}/ingest"),
    ("get", "/v1/workspaces/{ws}/entities"),
    ("get", "/v1/workspaces/{ws}/entities/{id}"),
    ("delete", "/v1/workspaces/{ws}/entities/{id}"),
    ("get", "/v1/workspaces/{ws}/entities/{id}/neighbors"),
    ("post", "/v1/workspaces/{ws}/entities/{id}/context"),
    ("post", "/v1/workspaces/{ws}/entities/{id}/restore"),
    ("post", "/v1/workspaces/{ws}/entities/{id}/forget"),
    ("post", "/v1/workspaces/{ws}/conversations/{id}/forget"),
    ("delete", "/v1/workspaces/{ws}/claims/{id}"),
    ("post", "/v1/workspaces/{ws}/claims/{id}/restore"),
    ("get", "/v1/workspaces/{ws}/stats"),
    ("delete", "/v1/workspaces/{ws}"),
    ("post", "/v1/checkpoint"),
    ("post", "/v1/backup"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
    ("get", "/openapi.json"),
    ("get", "/"),
];

/// The router: the API, the service routes and `/mcp`.
pub fn router(state: AppState) -> Router {
    Router::new()
        .nest_service("/mcp", mcp_service(&state))
        .route("/v1/workspaces", get(api::workspaces))
        .route("/v1/whoami", get(api::whoami))
        .route("/v1/workspaces/{ws}", delete(api::delete_workspace))
        .route("/v1/workspaces/{ws}/query", post(api::query))
        .route("/v1/workspaces/{ws}/ro_query", post(api::ro_query))
        .route("/v1/workspaces/{ws}/explain", post(api::explain))
        .route("/v1/workspaces/{ws}/profile", post(api::profile))
        .route("/v1/workspaces/{ws}/recall", post(api::recall))
        .route("/v1/workspaces/{ws}/ingest", post(api::ingest))
        .route("/v1/workspaces/{ws}/entities", get(api::search))
        .route("/v1/workspaces/{ws}/entities/{id}", get(api::entity).delete(api::delete_entity))
        .route("/v1/workspaces/{ws}/entities/{id}/neighbors", get(api::neighbors))
        .route("/v1/workspaces/{ws}/entities/{id}/context", post(api::context))
        .route("/v1/workspaces/{ws}/entities/{id}/restore", post(api::restore_entity))
        .route("/v1/workspaces/{ws}/entities/{id}/forget", post(api::forget_entity))
        .route("/v1/workspaces/{ws}/conversations/{id}/forget", post(api::forget_conversation))
        .route("/v1/workspaces/{ws}/claims/{id}", delete(api::delete_claim))
        .route("/v1/workspaces/{ws}/claims/{id}/restore", post(api::restore_claim))
        .route("/v1/workspaces/{ws}/stats", get(api::stats))
        .route("/v1/checkpoint", post(api::checkpoint))
        .route("/v1/backup", post(api::backup))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .route("/", get(explorer))
        .layer(axum::middleware::from_fn_with_state(state.clone(), errors_as_json))
        .with_state(state)
}

/// The MCP streamable-HTTP transport: each request authenticated like the API's (the principal
/// and the `?workspace=` it works on, `default` if none, put in the request for the tools), JSON
/// responses rather than event streams, every session ended at shutdown.
fn mcp_service(state: &AppState) -> Router {
    let shared = state.shared.clone();
    let cancel = tokio_util::sync::CancellationToken::new();
    {
        let cancel = cancel.clone();
        let mut stopped = shared.stopped.subscribe();
        tokio::spawn(async move {
            let _ = stopped.wait_for(|s| *s).await;
            cancel.cancel();
        });
    }
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    hosts.push(shared.addr.ip().to_string());
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_allowed_hosts(hosts)
        .with_cancellation_token(cancel);
    let service: StreamableHttpService<crate::mcp::EngramMcp, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(crate::mcp::EngramMcp::new(shared.clone(), None)), Arc::default(), config);
    Router::new().fallback_service(service).layer(axum::middleware::from_fn_with_state(state.clone(), mcp_scope))
}

/// Puts the request's principal and workspace in it for the MCP tools; 401 without credentials.
async fn mcp_scope(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let principal = match auth::principal(&parts, &state) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let query: std::collections::HashMap<String, String> = axum::extract::Query::try_from_uri(&parts.uri).map(|q| q.0).unwrap_or_default();
    let workspace = query.get("workspace").cloned().unwrap_or_else(|| engram::DEFAULT_WORKSPACE.to_owned());
    parts.extensions.insert(crate::mcp::McpScope { principal, workspace });
    next.run(Request::from_parts(parts, body)).await
}

/// Slack over `query-timeout-max` a whole HTTP request gets (reading its body, queueing, writing
/// the reply) before it is answered `408`.
pub const REQUEST_TIMEOUT_SLACK_MS: u64 = 5_000;

/// How long a whole request may take: `query-timeout-max` (as it is now) plus the slack.
fn request_timeout(state: &AppState) -> std::time::Duration {
    std::time::Duration::from_millis(state.shared.limits().query_timeout_max_ms.saturating_add(REQUEST_TIMEOUT_SLACK_MS))
}

/// Bounds the whole request (`408` past `query-timeout-max` + the slack: a client that never
/// finishes its body holds nothing longer), makes every error JSON (axum's own rejections of a bad
/// path, query string or method are text) and records the request in the metrics.
async fn errors_as_json(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = std::time::Instant::now();
    let path = req.uri().path().to_owned();
    let response = match tokio::time::timeout(request_timeout(&state), next.run(req)).await {
        Ok(r) => r,
        Err(_) => StatusCode::REQUEST_TIMEOUT.into_response(),
    };
    let status = response.status();
    let is_json = response.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let response = if (status.is_client_error() || status.is_server_error()) && !is_json {
        let bytes = axum::body::to_bytes(response.into_body(), 64 * 1024).await.unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).trim().to_owned();
        let message = if text.is_empty() { status.canonical_reason().unwrap_or("error").to_owned() } else { text };
        let (class, message) = match status {
            StatusCode::NOT_FOUND => ("caller", format!("no route {path}")),
            StatusCode::REQUEST_TIMEOUT => {
                ("limit", format!("the request took longer than query-timeout-max + {REQUEST_TIMEOUT_SLACK_MS} ms"))
            }
            _ => ("caller", message),
        };
        reply::error(status, class, message)
    } else {
        response
    };
    if response.status() == StatusCode::UNAUTHORIZED {
        state.shared.metrics.refused("http-auth");
    }
    if !path.starts_with("/v1/") {
        // `/v1` requests are recorded per command where they run; the service routes here.
        let class = response.status().is_client_error().then_some("caller");
        // The service routes by name; any other path is `unknown` (a label per path a client
        // makes up would grow the metrics without bound).
        let route = ["healthz", "readyz", "metrics", "openapi.json", ""].into_iter().find(|r| path.trim_start_matches('/') == *r);
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        state.shared.metrics.request("http", route.unwrap_or("unknown"), micros, class);
    }
    response
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "`{\"status\": \"ok\"}`", body = serde_json::Value)))]
pub async fn healthz() -> Response {
    axum::Json(serde_json::json!({"status": "ok"})).into_response()
}

/// Readiness: the database is open and the server is not shutting down.
#[utoipa::path(get, path = "/readyz", responses((status = 200, description = "Ready.", body = serde_json::Value), (status = 503, description = "Shutting down.", body = serde_json::Value)))]
pub async fn readyz(State(state): State<AppState>) -> Response {
    if state.shared.stopping.load(Ordering::SeqCst) {
        return reply::error(StatusCode::SERVICE_UNAVAILABLE, "operator", "shutting down");
    }
    axum::Json(serde_json::json!({"status": "ready", "workspaces": state.shared.db.workspaces().len()})).into_response()
}

/// Metrics in the Prometheus text format; admin on `*` (they name every workspace).
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text exposition format 0.0.4.", content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>, who: Result<auth::Who, Response>) -> Response {
    match who {
        Ok(auth::Who(p)) if p.may("*", engram::Access::Admin) => {}
        Ok(_) => return reply::error(StatusCode::FORBIDDEN, "denied", "/metrics needs admin on *"),
        Err(r) => return r,
    }
    let shared = state.shared.clone();
    let text = tokio::task::spawn_blocking(move || scrape::render(&shared)).await.unwrap_or_default();
    let mut r = text.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    r
}

/// The Explorer: one build-free page (plain HTML, CSS and JavaScript, no framework), embedded in
/// the binary so the server needs no files beside it and CI no JavaScript build. It calls only
/// the `/v1` routes, as the user it signs in as.
#[utoipa::path(get, path = "/", responses((status = 200, description = "The Explorer page.", content_type = "text/html")))]
pub async fn explorer() -> Response {
    let mut r = include_str!("../../explorer/index.html").into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:",
        ),
    );
    r
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", responses((status = 200, description = "The OpenAPI 3.1 document.", body = serde_json::Value)))]
pub async fn openapi() -> Response {
    axum::Json(ApiDoc::openapi()).into_response()
}

/// Serves `router` on `listener` until `shared` stops.
pub async fn serve<L>(listener: L, router: Router, shared: Arc<Shared>) -> std::io::Result<()>
where
    L: axum::serve::Listener<Addr = std::net::SocketAddr>,
{
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = shared.stopped.subscribe().wait_for(|stopped| *stopped).await;
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `OpenAPI` document names exactly the routes served.
    #[test]
    fn openapi_lists_every_route() {
        let doc = serde_json::to_value(ApiDoc::openapi()).expect("the document encodes");
        assert_eq!(doc["openapi"], "3.1.0");
        let mut documented: Vec<(String, String)> = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("an item").keys() {
                documented.push((method.clone(), path.clone()));
            }
        }
        documented.sort();
        let mut served: Vec<(String, String)> = ROUTES.iter().map(|(m, p)| ((*m).to_owned(), (*p).to_owned())).collect();
        served.sort();
        assert_eq!(documented, served);
    }
}
