//! Settings stored in the database itself, so that every process opening the folder runs it the
//! same way: fsync policy, WAL and checkpoint thresholds, merge threshold, vector dimension and
//! embedder. They are changed by a logged commit (a WAL record, then in every snapshot), read back
//! on open, and override the opener's `Config` defaults.

use crate::db::Config;
use engram_storage::FsyncPolicy;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The stored settings; `None` = not set (the opener's `Config` applies).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// `always`, `never`, or `batch:MILLISECONDS`.
    pub fsync: Option<String>,
    /// Automatic checkpoint threshold in WAL bytes.
    pub checkpoint_wal_bytes: Option<u64>,
    /// WAL segment size.
    pub wal_segment_bytes_max: Option<u64>,
    /// Delta edges before a CSR merge.
    pub merge_delta_edges_min: Option<u64>,
    /// Vector dimension (set once).
    pub vector_dim: Option<u32>,
    /// Embedder name.
    pub embedder: Option<String>,
}

/// The setting names, in the order `entries` lists them.
pub const SETTING_KEYS: [&str; 6] =
    ["fsync", "checkpoint_wal_bytes", "wal_segment_bytes_max", "merge_delta_edges_min", "vector_dim", "embedder"];

/// A rejected setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// No such setting.
    #[error("unknown setting `{0}`; the settings are: {keys}", keys = SETTING_KEYS.join(", "))]
    UnknownKey(String),
    /// The value does not parse for this setting.
    #[error("setting `{key}`: `{value}` is not {expected}")]
    BadValue {
        /// The setting.
        key: String,
        /// The value given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// The setting cannot change once set.
    #[error("setting `{0}` is already set and cannot change")]
    Frozen(String),
}

/// An fsync policy from its setting text: `always`, `never` or `batch:MILLISECONDS`.
pub fn parse_fsync(v: &str) -> Option<FsyncPolicy> {
    match v {
        "always" => Some(FsyncPolicy::Always),
        "never" => Some(FsyncPolicy::Never),
        _ => v.strip_prefix("batch:").and_then(|ms| ms.parse::<u64>().ok()).map(|ms| FsyncPolicy::Batch(Duration::from_millis(ms))),
    }
}

impl Settings {
    /// A setting's value as text (`None` when unset).
    pub fn get(&self, key: &str) -> Result<Option<String>, SettingsError> {
        Ok(match key {
            "fsync" => self.fsync.clone(),
            "checkpoint_wal_bytes" => self.checkpoint_wal_bytes.map(|v| v.to_string()),
            "wal_segment_bytes_max" => self.wal_segment_bytes_max.map(|v| v.to_string()),
            "merge_delta_edges_min" => self.merge_delta_edges_min.map(|v| v.to_string()),
            "vector_dim" => self.vector_dim.map(|v| v.to_string()),
            "embedder" => self.embedder.clone(),
            _ => return Err(SettingsError::UnknownKey(key.to_owned())),
        })
    }

    /// Sets a setting from text, validating it.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SettingsError> {
        let bad = |expected| SettingsError::BadValue { key: key.to_owned(), value: value.to_owned(), expected };
        let number = |min: u64| value.parse::<u64>().ok().filter(|v| *v >= min);
        match key {
            "fsync" => {
                parse_fsync(value).ok_or_else(|| bad("`always`, `never` or `batch:MILLISECONDS`"))?;
                self.fsync = Some(value.to_owned());
            }
            "checkpoint_wal_bytes" => self.checkpoint_wal_bytes = Some(number(4096).ok_or_else(|| bad("an integer ≥ 4096"))?),
            "wal_segment_bytes_max" => self.wal_segment_bytes_max = Some(number(4096).ok_or_else(|| bad("an integer ≥ 4096"))?),
            "merge_delta_edges_min" => self.merge_delta_edges_min = Some(number(1).ok_or_else(|| bad("a positive integer"))?),
            "vector_dim" => {
                let dim = value.parse::<u32>().ok().filter(|d| (1..=65_536).contains(d)).ok_or_else(|| bad("an integer in 1..=65536"))?;
                if self.vector_dim.is_some_and(|d| d != dim) {
                    return Err(SettingsError::Frozen(key.to_owned()));
                }
                self.vector_dim = Some(dim);
            }
            "embedder" => {
                if value.is_empty() || value.len() > 128 || value.chars().any(char::is_control) {
                    return Err(bad("a name of 1..=128 characters"));
                }
                self.embedder = Some(value.to_owned());
            }
            _ => return Err(SettingsError::UnknownKey(key.to_owned())),
        }
        Ok(())
    }

    /// Every setting, set or not, in `SETTING_KEYS` order.
    pub fn entries(&self) -> Vec<(&'static str, Option<String>)> {
        SETTING_KEYS.iter().map(|k| (*k, self.get(k).ok().flatten())).collect()
    }

    /// `config` with the stored settings applied over it.
    pub fn apply(&self, config: &mut Config) {
        if let Some(p) = self.fsync.as_deref().and_then(parse_fsync) {
            config.fsync = p;
        }
        if let Some(v) = self.checkpoint_wal_bytes {
            config.checkpoint_wal_bytes = v;
        }
        if let Some(v) = self.wal_segment_bytes_max {
            config.wal_segment_bytes_max = v;
        }
        if let Some(v) = self.merge_delta_edges_min {
            config.merge_delta_edges_min = usize::try_from(v).unwrap_or(usize::MAX);
        }
    }
}
