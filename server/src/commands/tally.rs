//! A connection's request counts, kept on the connection and folded into the shared counters
//! once per batch of commands (a read's pipeline, an HTTP or MCP request): a pipeline of N
//! commands then takes the shared locks and counters once instead of N times, where two worker
//! threads would fight over their cache lines. The slow log still sees each command as it ends.

use quanta::Instant;
use std::sync::atomic::Ordering;

use crate::state::Shared;

/// What the connection's commands added since the last `fold`.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    commands: u64,
    errors: u64,
    /// Per command name (as `COMMANDS` writes it): calls and microseconds.
    per_command: Vec<(&'static str, u64, u64)>,
    /// Their latencies, for `engram_request_duration_seconds`.
    latency: crate::latency::Counts,
    /// The newest command's name, for `CLIENT LIST`'s `cmd=`.
    last: Option<String>,
    /// When the batch's previous command ended: the next one's start (one clock read a command,
    /// of the TSC through `quanta`: 2.1 % of the server's samples under pipelined `PING`s, where
    /// `clock_gettime` took 3.4 %).
    mark: Option<Instant>,
    /// The slow log's threshold and the version of the limits it was read from (the limits sit
    /// behind a lock all connections share; their version is one atomic).
    slow: Option<(u64, u64)>,
}

impl Tally {
    /// Counts one command that ended at `ended`.
    pub(crate) fn add(&mut self, name: &'static str, micros: u64, error: bool, ended: Instant) {
        self.mark = Some(ended);
        self.commands += 1;
        self.errors += u64::from(error);
        self.latency.add(micros);
        // Names come from `COMMANDS`: the same pointer, mostly, before the same bytes.
        match self.per_command.iter_mut().find(|(n, _, _)| std::ptr::eq(*n, name) || *n == name) {
            Some((_, calls, total)) => {
                *calls += 1;
                *total += micros;
            }
            None => self.per_command.push((name, 1, micros)),
        }
    }

    /// `slowlog-log-slower-than`, in microseconds.
    pub(crate) fn slow_micros(&mut self, shared: &Shared) -> u64 {
        let version = shared.limits_version();
        match self.slow {
            Some((seen, micros)) if seen == version => micros,
            _ => {
                let micros = shared.limits().slowlog_slower_than_micros;
                self.slow = Some((version, micros));
                micros
            }
        }
    }

    /// Notes the command the connection runs now (`name` as sent, upper case); when it began.
    pub(crate) fn began(&mut self, name: &str) -> Instant {
        match &mut self.last {
            Some(last) => {
                last.clear();
                last.push_str(name);
            }
            None => self.last = Some(name.to_owned()),
        }
        self.mark.take().unwrap_or_else(Instant::now)
    }

    /// Adds what was counted to the shared counters (`INFO`, `CLIENT LIST`, the metrics) and
    /// starts again from nothing.
    pub(crate) fn fold(&mut self, shared: &Shared, conn_id: u64, interface: &'static str) {
        self.mark = None;
        if self.commands > 0 {
            shared.stats.commands.fetch_add(self.commands, Ordering::Relaxed);
            if self.errors > 0 {
                shared.stats.errors.fetch_add(self.errors, Ordering::Relaxed);
            }
            if let Ok(mut per) = shared.stats.per_command.lock() {
                for &(name, calls, micros) in &self.per_command {
                    let e = per.entry(name).or_insert((0, 0));
                    e.0 += calls;
                    e.1 += micros;
                }
            }
            for &(name, calls, _) in &self.per_command {
                shared.metrics.requests(interface, name, calls);
            }
            shared.metrics.latencies(interface, &self.latency);
            (self.commands, self.errors) = (0, 0);
            self.per_command.clear();
            self.latency = crate::latency::Counts::default();
        }
        if let Some(last) = self.last.take() {
            if let Ok(mut clients) = shared.clients.lock() {
                if let Some(c) = clients.get_mut(&conn_id) {
                    c.last_command = last;
                }
            }
        }
    }
}
