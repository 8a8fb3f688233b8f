//! Timestamps and the injectable clock.
//!
//! Times are microseconds since the Unix epoch (UTC) in an `i64`, so transaction-time order is fine
//! grained enough for many commits per second. Users give times as RFC 3339 text or epoch seconds.
//! The clock is a trait so tests control "now".

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};

/// A point in time: microseconds since 1970-01-01T00:00:00Z.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The end of time: an open `valid_until` or no expiry.
    pub const MAX: Timestamp = Timestamp(i64::MAX);
    /// The start of time.
    pub const MIN: Timestamp = Timestamp(i64::MIN);

    /// From whole seconds since the epoch.
    pub fn from_epoch_seconds(secs: i64) -> Timestamp {
        Timestamp(secs.saturating_mul(1_000_000))
    }

    /// Whole seconds since the epoch (rounded toward negative infinity).
    pub fn epoch_seconds(self) -> i64 {
        self.0.div_euclid(1_000_000)
    }

    /// Parses RFC 3339 (`2026-03-01T10:00:00Z`, offsets and fractions allowed) or an integer
    /// count of epoch seconds (`1735689600`).
    pub fn parse(text: &str) -> Result<Timestamp, TimeParseError> {
        let text = text.trim();
        if let Ok(secs) = text.parse::<i64>() {
            return Ok(Timestamp::from_epoch_seconds(secs));
        }
        let parsed = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
            .map_err(|_| TimeParseError { input: text.chars().take(64).collect() })?;
        let micros = parsed.unix_timestamp_nanos() / 1000;
        i64::try_from(micros).map(Timestamp).map_err(|_| TimeParseError { input: text.chars().take(64).collect() })
    }

    #[must_use]
    /// Adds a number of seconds, saturating at the ends of time.
    pub fn plus_seconds(self, secs: i64) -> Timestamp {
        Timestamp(self.0.saturating_add(secs.saturating_mul(1_000_000)))
    }

    /// RFC 3339 text, or `"∞"`/`"-∞"` for the open ends.
    pub fn to_rfc3339(self) -> String {
        if self == Timestamp::MAX {
            return "∞".to_owned();
        }
        if self == Timestamp::MIN {
            return "-∞".to_owned();
        }
        let nanos = i128::from(self.0) * 1000;
        time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
            .ok()
            .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
            .unwrap_or_else(|| format!("@{}us", self.0))
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

/// A time that was neither RFC 3339 nor epoch seconds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not an RFC 3339 time nor epoch seconds")]
pub struct TimeParseError {
    /// The offending text (first 64 characters).
    pub input: String,
}

/// The source of "now" for transaction time and for visibility checks.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
        Timestamp(micros)
    }
}

/// A clock that only moves when told to: for tests and deterministic replays.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> ManualClock {
        ManualClock(AtomicI64::new(start.0))
    }

    /// Moves the clock to `t`.
    pub fn set(&self, t: Timestamp) {
        self.0.store(t.0, Ordering::SeqCst);
    }

    /// Moves the clock forward by `secs` seconds.
    pub fn advance_seconds(&self, secs: i64) {
        self.0.fetch_add(secs.saturating_mul(1_000_000), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms() {
        let a = Timestamp::parse("2025-01-01T00:00:00Z").unwrap();
        let b = Timestamp::parse("1735689600").unwrap();
        assert_eq!(a, b);
        let c = Timestamp::parse("2025-01-01T01:00:00+01:00").unwrap();
        assert_eq!(a, c);
        assert!(Timestamp::parse("yesterday").is_err());
        assert_eq!(a.to_rfc3339(), "2025-01-01T00:00:00Z");
    }
}
