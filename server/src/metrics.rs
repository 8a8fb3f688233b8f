//! Prometheus metrics (`GET /metrics`), through the `metrics` facade and its Prometheus exporter.
//! Each server owns its recorder (no process-global state, so several servers in one process
//! keep apart). Requests are counted per batch of a connection (`commands::tally`), their
//! latency in bucket counts beside the recorder (`latency`; the recorder holds no histogram, so
//! nothing queues between scrapes); the counters the server and the engine keep anyway
//! (refusals, WAL fsyncs, commit groups, memory) are copied in when scraped (by the HTTP side,
//! which knows the server's state). Every family is registered at start-up, so a scrape before
//! any traffic lists them all.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use metrics::{Counter, Key, Label, Level, Metadata, Recorder as _};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};

/// The interfaces requests arrive on.
pub use crate::latency::INTERFACES;

/// The named limits whose refusals are counted.
pub const REFUSALS: [&str; 7] =
    ["maxclients", "max-pending-queries", "query-timeout", "client-buffer-limit", "timeout", "protocol", "http-auth"];

/// Every family: name, help.
const FAMILIES: [(&str, &str); 16] = [
    ("engram_requests_total", "Requests finished, by interface and command."),
    ("engram_request_errors_total", "Requests answered with an error, by interface and error class."),
    ("engram_request_duration_seconds", "Request latency, by interface."),
    ("engram_refusals_total", "Requests or connections refused by a named limit."),
    ("engram_connections_total", "RESP connections accepted."),
    ("engram_clients_connected", "RESP clients connected now."),
    ("engram_wal_commits_total", "Commits through the WAL since open."),
    ("engram_commit_groups_total", "Commit groups applied (each one WAL write) since open."),
    ("engram_wal_fsyncs_total", "Group-commit fsyncs since open."),
    ("engram_snapshot_age_seconds", "Seconds since the newest snapshot was written (-1: none, or in memory)."),
    ("engram_memory_bytes", "Heap bytes of the newest state, by part."),
    ("engram_workspace_entities", "Entities per workspace."),
    ("engram_workspace_claims", "Claims per workspace."),
    ("engram_workspace_memory_bytes", "Estimated heap bytes per workspace: the state's bytes split by its share of entities and claims."),
    ("engram_uptime_seconds", "Seconds since the server started."),
    ("engram_pending_queries", "Engine calls queued or running."),
];

static META: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

fn key(name: &'static str, labels: &[(&'static str, &str)]) -> Key {
    Key::from_parts(name, labels.iter().map(|(k, v)| Label::new(*k, (*v).to_owned())).collect::<Vec<_>>())
}

/// Each recorder's id: a thread's cached handles say which recorder they belong to.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

type Fast = foldhash::fast::FixedState;

thread_local! {
    /// This thread's request counters by recorder, interface and command: counting requests
    /// builds no label strings and looks nothing up in the recorder's registry. Bounded: the
    /// commands are the server's own names (`unknown` for the rest).
    static COUNTERS: RefCell<HashMap<(u64, &'static str, &'static str), Counter, Fast>> = RefCell::new(HashMap::with_hasher(Fast::default()));
}

/// A server's metrics.
pub struct Metrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    id: u64,
    /// `engram_request_duration_seconds`, kept as counts beside the recorder (`latency`).
    latencies: crate::latency::Latencies,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A recorder with every family registered.
    pub fn new() -> Metrics {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let m = Metrics { recorder, handle, id: NEXT_ID.fetch_add(1, Ordering::Relaxed), latencies: crate::latency::Latencies::default() };
        // The latency histogram is rendered by `latency`, not the recorder.
        for (name, help) in FAMILIES.into_iter().filter(|(name, _)| *name != "engram_request_duration_seconds") {
            let kind = if name.ends_with("_total") {
                "counter"
            } else if name.ends_with("_seconds") && name.contains("duration") {
                "histogram"
            } else {
                "gauge"
            };
            match kind {
                "counter" => m.recorder.describe_counter(name.into(), None, help.into()),
                "histogram" => m.recorder.describe_histogram(name.into(), Some(metrics::Unit::Seconds), help.into()),
                _ => m.recorder.describe_gauge(name.into(), None, help.into()),
            }
        }
        for interface in INTERFACES {
            m.recorder.register_counter(&key("engram_requests_total", &[("interface", interface), ("command", "none")]), &META).absolute(0);
            m.recorder
                .register_counter(&key("engram_request_errors_total", &[("interface", interface), ("class", "none")]), &META)
                .absolute(0);
        }
        for limit in REFUSALS {
            m.recorder.register_counter(&key("engram_refusals_total", &[("limit", limit)]), &META).absolute(0);
        }
        for name in ["engram_connections_total", "engram_wal_commits_total", "engram_commit_groups_total", "engram_wal_fsyncs_total"] {
            m.recorder.register_counter(&key(name, &[]), &META).absolute(0);
        }
        for name in ["engram_clients_connected", "engram_snapshot_age_seconds", "engram_uptime_seconds", "engram_pending_queries"] {
            m.recorder.register_gauge(&key(name, &[]), &META).set(0.0);
        }
        for part in ["entities", "claims", "text", "other"] {
            m.recorder.register_gauge(&key("engram_memory_bytes", &[("part", part)]), &META).set(0.0);
        }
        m
    }

    /// Counts a request answered with an error of `class`.
    pub fn error(&self, interface: &'static str, class: &str) {
        self.recorder
            .register_counter(&key("engram_request_errors_total", &[("interface", interface), ("class", class)]), &META)
            .increment(1);
    }

    /// Adds requests' latencies counted elsewhere (a connection's, per batch).
    pub fn latencies(&self, interface: &str, counts: &crate::latency::Counts) {
        self.latencies.add(interface, counts);
    }

    /// Records one finished request alone: its latency, its count under `command`, its error class.
    pub fn request(&self, interface: &'static str, command: &'static str, micros: u64, error_class: Option<&str>) {
        let mut one = crate::latency::Counts::default();
        one.add(micros);
        self.latencies.add(interface, &one);
        self.requests(interface, command, 1);
        if let Some(class) = error_class {
            self.error(interface, class);
        }
    }

    /// Counts `n` finished requests of `command` (one of the server's own names, or `unknown`).
    pub fn requests(&self, interface: &'static str, command: &'static str, n: u64) {
        COUNTERS.with(|c| {
            let mut c = c.borrow_mut();
            c.entry((self.id, interface, command))
                .or_insert_with(|| {
                    let labels = [("interface", interface), ("command", &command.to_ascii_lowercase())];
                    self.recorder.register_counter(&key("engram_requests_total", &labels), &META)
                })
                .increment(n);
        });
    }

    /// Counts a refusal by `limit` (one of `REFUSALS`) that the server's `INFO` counters do not.
    pub fn refused(&self, limit: &'static str) {
        self.recorder.register_counter(&key("engram_refusals_total", &[("limit", limit)]), &META).increment(1);
    }

    /// Sets gauge `name` with `labels` to `v`.
    pub fn gauge(&self, name: &'static str, labels: &[(&'static str, &str)], v: f64) {
        self.recorder.register_gauge(&key(name, labels), &META).set(v);
    }

    /// Sets counter `name` with `labels` to `v` (a count kept elsewhere, copied in).
    pub fn counter(&self, name: &'static str, labels: &[(&'static str, &str)], v: u64) {
        self.recorder.register_counter(&key(name, labels), &META).absolute(v);
    }

    /// The text exposition of everything recorded.
    pub fn text(&self) -> String {
        let mut text = self.handle.render();
        text.push_str(&self.latencies.text());
        text
    }
}
