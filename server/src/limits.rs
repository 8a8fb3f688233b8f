//! The server's limits: each has a name (the `CONFIG GET` name), a default, and an error that
//! names it when it is hit.

/// The limits of one server.
#[derive(Debug, Clone)]
pub struct Limits {
    /// `maxclients`: connections served at once; the next gets `ERR max number of clients reached`.
    pub maxclients: usize,
    /// `proto-max-multibulk-len`: arguments in one command.
    pub multibulk_max: usize,
    /// Arguments in one command before the client authenticated.
    pub unauthenticated_multibulk_max: usize,
    /// `proto-max-bulk-len`: bytes in one argument.
    pub bulk_max: usize,
    /// Bytes in one argument before the client authenticated.
    pub unauthenticated_bulk_max: usize,
    /// `proto-inline-max-size`: bytes in an inline command line.
    pub inline_max: usize,
    /// `client-query-buffer-limit`: bytes a client may have sent that are not yet a command.
    pub query_buffer_max: usize,
    /// `client-output-buffer-limit`: reply bytes a client has not read before it is dropped.
    pub output_buffer_max: usize,
    /// `timeout`: seconds a client may stay idle (0: forever).
    pub idle_timeout_secs: u64,
    /// `client-stall-timeout`: seconds a reply may wait for a client that does not read it
    /// before the client is dropped.
    pub stall_timeout_secs: u64,
    /// `query-timeout-default`: a query's deadline when it names none, in ms (under redis-py's
    /// 5 s socket timeout, so a client does not retry a query still running).
    pub query_timeout_default_ms: u64,
    /// `query-timeout-max`: the longest deadline a query may ask for, in ms.
    pub query_timeout_max_ms: u64,
    /// `inline-query-budget`: a read that calls no procedure first runs on the connection's own
    /// thread under this deadline (µs), sparing the hop to the worker pool; past it the read is
    /// run again on the pool under its own deadline, and its text goes to the pool from then on.
    /// 0: every query on the pool.
    pub inline_query_budget_micros: u64,
    /// `max-pending-queries`: engine calls queued or running at once; past it a command gets a
    /// clean error (connection commands such as PING stay answered).
    pub max_pending_queries: usize,
    /// `multi-queued-max`: commands a `MULTI` may queue before it is discarded.
    pub multi_queued_max: usize,
    /// `slowlog-log-slower-than`: commands at least this long (µs) go to the `SLOWLOG`.
    pub slowlog_slower_than_micros: u64,
    /// `slowlog-max-len`: entries the `SLOWLOG` keeps.
    pub slowlog_max_len: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            maxclients: 10_000,
            multibulk_max: 1024 * 1024,
            unauthenticated_multibulk_max: 10,
            bulk_max: 512 * 1024 * 1024,
            unauthenticated_bulk_max: 16 * 1024,
            inline_max: 64 * 1024,
            query_buffer_max: 1024 * 1024 * 1024,
            output_buffer_max: 256 * 1024 * 1024,
            idle_timeout_secs: 0,
            stall_timeout_secs: 30,
            query_timeout_default_ms: 4_000,
            query_timeout_max_ms: 300_000,
            inline_query_budget_micros: 200,
            max_pending_queries: 1_024,
            multi_queued_max: 10_000,
            slowlog_slower_than_micros: 10_000,
            slowlog_max_len: 128,
        }
    }
}

impl Limits {
    /// The limits by their `CONFIG` names, with their values.
    pub fn named(&self) -> Vec<(&'static str, String)> {
        vec![
            ("maxclients", self.maxclients.to_string()),
            ("proto-max-multibulk-len", self.multibulk_max.to_string()),
            ("proto-max-bulk-len", self.bulk_max.to_string()),
            ("proto-inline-max-size", self.inline_max.to_string()),
            ("client-query-buffer-limit", self.query_buffer_max.to_string()),
            ("client-output-buffer-limit", self.output_buffer_max.to_string()),
            ("timeout", self.idle_timeout_secs.to_string()),
            ("client-stall-timeout", self.stall_timeout_secs.to_string()),
            ("query-timeout-default", self.query_timeout_default_ms.to_string()),
            ("query-timeout-max", self.query_timeout_max_ms.to_string()),
            ("inline-query-budget", self.inline_query_budget_micros.to_string()),
            ("max-pending-queries", self.max_pending_queries.to_string()),
            ("multi-queued-max", self.multi_queued_max.to_string()),
            ("slowlog-log-slower-than", self.slowlog_slower_than_micros.to_string()),
            ("slowlog-max-len", self.slowlog_max_len.to_string()),
        ]
    }

    /// Sets the limit named `name` (a `CONFIG SET`); `Err` names what is wrong.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let n = || value.parse::<u64>().map_err(|_| format!("CONFIG SET {name}: `{value}` is not a non-negative integer"));
        let u = || n().map(|v| usize::try_from(v).unwrap_or(usize::MAX));
        match name.to_ascii_lowercase().as_str() {
            "maxclients" => self.maxclients = u()?,
            "proto-max-multibulk-len" => self.multibulk_max = u()?,
            "proto-max-bulk-len" => self.bulk_max = u()?,
            "proto-inline-max-size" => self.inline_max = u()?,
            "client-query-buffer-limit" => self.query_buffer_max = u()?,
            "client-output-buffer-limit" => self.output_buffer_max = u()?,
            "timeout" => self.idle_timeout_secs = n()?,
            "client-stall-timeout" => self.stall_timeout_secs = n()?.max(1),
            "query-timeout-default" => self.query_timeout_default_ms = n()?,
            "query-timeout-max" => self.query_timeout_max_ms = n()?,
            "inline-query-budget" => self.inline_query_budget_micros = n()?,
            "max-pending-queries" => self.max_pending_queries = u()?,
            "multi-queued-max" => self.multi_queued_max = u()?,
            "slowlog-log-slower-than" => self.slowlog_slower_than_micros = n()?,
            "slowlog-max-len" => self.slowlog_max_len = u()?,
            other => return Err(format!("Unknown option or number of arguments for CONFIG SET - '{other}'")),
        }
        Ok(())
    }
}
