//! A connection's request counts, kept on the connection and folded into the shared counters
//! once per batch of commands (a read's pipeline, an HTTP or MCP request): a pipeline of N
//! commands then takes the shared locks and counters once instead of N times, where two worker
//! threads would fight over their cache lines. The latency histogram and the slow log still see
//! every command as it ends.

use std::sync::atomic::Ordering;

use crate::state::Shared;

/// What the connection's commands added since the last `fold`.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    commands: u64,
    errors: u64,
    /// Per command name (as `COMMANDS` writes it): calls and microseconds.
    per_command: Vec<(&'static str, u64, u64)>,
    /// The newest command's name, for `CLIENT LIST`'s `cmd=`.
    last: Option<String>,
}

impl Tally {
    /// Counts one finished command.
    pub(crate) fn add(&mut self, name: &'static str, micros: u64, error: bool) {
        self.commands += 1;
        self.errors += u64::from(error);
        match self.per_command.iter_mut().find(|(n, _, _)| *n == name) {
            Some((_, calls, total)) => {
                *calls += 1;
                *total += micros;
            }
            None => self.per_command.push((name, 1, micros)),
        }
    }

    /// Notes the command the connection runs now (`name` as sent, upper case).
    pub(crate) fn began(&mut self, name: &str) {
        match &mut self.last {
            Some(last) => {
                last.clear();
                last.push_str(name);
            }
            None => self.last = Some(name.to_owned()),
        }
    }

    /// Adds what was counted to the shared counters (`INFO`, `CLIENT LIST`, the metrics) and
    /// starts again from nothing.
    pub(crate) fn fold(&mut self, shared: &Shared, conn_id: u64, interface: &'static str) {
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
            (self.commands, self.errors) = (0, 0);
            self.per_command.clear();
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
