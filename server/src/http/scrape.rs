//! `/metrics`: the server's and the engine's counters copied into the recorder, then its text.

use crate::state::Shared;

/// The text exposition of `shared`'s metrics, with the server's and the engine's counters copied in.
pub fn render(shared: &Shared) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let m = &shared.metrics;
    let set = |name: &'static str, labels: &[(&'static str, &str)], v: f64| m.gauge(name, labels, v);
    let count = |name: &'static str, labels: &[(&'static str, &str)], v: u64| m.counter(name, labels, v);
    let st = &shared.stats;
    count("engram_refusals_total", &[("limit", "maxclients")], st.rejected_connections.load(Relaxed));
    count("engram_refusals_total", &[("limit", "max-pending-queries")], st.rejected_queue.load(Relaxed));
    count("engram_refusals_total", &[("limit", "query-timeout")], st.timeouts.load(Relaxed));
    count("engram_refusals_total", &[("limit", "client-buffer-limit")], st.buffer_overflows.load(Relaxed));
    count("engram_refusals_total", &[("limit", "timeout")], st.idle_closed.load(Relaxed));
    count("engram_refusals_total", &[("limit", "protocol")], st.protocol_errors.load(Relaxed));
    count("engram_connections_total", &[], st.connections.load(Relaxed));
    set("engram_clients_connected", &[], shared.clients.lock().map_or(0, |c| c.len()) as f64);
    let c = shared.db.commit_stats();
    count("engram_wal_commits_total", &[], c.commits);
    count("engram_commit_groups_total", &[], c.groups);
    count("engram_wal_fsyncs_total", &[], c.fsyncs);
    set("engram_snapshot_age_seconds", &[], snapshot_age(&shared.db).unwrap_or(-1.0));
    set("engram_uptime_seconds", &[], shared.started.elapsed().as_secs_f64());
    let max = shared.limits().max_pending_queries;
    set("engram_pending_queries", &[], max.saturating_sub(shared.pending.available_permits()) as f64);
    let snap = shared.db.snapshot();
    let mem = snap.memory();
    set("engram_memory_bytes", &[("part", "entities")], mem.entity_bytes as f64);
    set("engram_memory_bytes", &[("part", "claims")], mem.claim_bytes as f64);
    set("engram_memory_bytes", &[("part", "text")], mem.text_bytes as f64);
    set("engram_memory_bytes", &[("part", "other")], mem.other_bytes as f64);
    let total_bytes = (mem.entity_bytes + mem.claim_bytes + mem.text_bytes + mem.other_bytes) as f64;
    let rows = (mem.entities + mem.claims).max(1) as f64;
    let root = shared.db.scope(std::sync::Arc::new(engram::Principal::root())).audited_by_caller();
    for ws in shared.db.workspaces() {
        let Ok(view) = root.workspace(&ws.name) else { continue };
        let cat = view.catalog();
        set("engram_workspace_entities", &[("workspace", &ws.name)], cat.entities as f64);
        set("engram_workspace_claims", &[("workspace", &ws.name)], cat.claims as f64);
        set("engram_workspace_memory_bytes", &[("workspace", &ws.name)], total_bytes * (cat.entities + cat.claims) as f64 / rows);
    }
    m.text()
}

/// Seconds since the newest snapshot file of a durable database was written.
fn snapshot_age(db: &engram::Database) -> Option<f64> {
    let dir = db.dir()?;
    let newest = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "snap"))
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()?;
    Some(newest.elapsed().map_or(0.0, |d| d.as_secs_f64()))
}
