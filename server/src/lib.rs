//! engram's network server: RESP2 and RESP3 on TCP, so any Redis client reaches the engine, and
//! FalkorDB's `GRAPH.*` commands with its result formats, so FalkorDB's clients work unchanged.
//!
//! Layout: `resp` (the request decoder with its limits, the reply encoder), `state` (what the
//! connections share), `server` (accept loop, one task per connection, the engine work on the blocking pool behind a bounded queue),
//! `commands` (one module per family: connection, `ENGRAM.*`, `GRAPH.*`, server information),
//! `http` (the JSON API, health, metrics and `OpenAPI` on axum: each route one command), `metrics`
//! (the Prometheus families).

mod audit;
pub mod commands;
pub mod governance;
pub mod http;
pub mod latency;
pub mod limits;
pub mod mcp;
pub mod metrics;
pub mod resp;
pub mod server;
pub mod state;
pub mod tls;
pub mod users;

pub use limits::Limits;
pub use server::{run, Config};
