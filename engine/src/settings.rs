//! Settings stored in the database itself, so that every process opening the folder runs it the
//! same way: fsync policy, WAL and checkpoint thresholds, merge threshold, vector dimension and
//! embedder. They are changed by a logged commit (a WAL record, then in every snapshot), read back
//! on open, and override the opener's `Config` defaults. Per-workspace settings (the memory
//! write path's thresholds, history retention) live beside them.
//!
//! Encoding: postcard, which has no optional trailing fields, so the layout before per-workspace
//! settings is kept as `SettingsV1` and read from older WAL records and snapshots.

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
    /// Per-workspace settings: workspace name → key → value (validated text, see
    /// `WORKSPACE_SETTING_KEYS`).
    pub workspaces: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// The network server's users by name: a password hash and grants. Never listed by
    /// `entries` or printed; managed through `Database::put_user` / `remove_user`.
    pub users: std::collections::BTreeMap<String, StoredUser>,
    /// The HTTP API's bearer tokens by id: whose they are and the SHA-256 of the secret (never
    /// the secret). Managed through `Database::put_token` / `remove_token`.
    pub tokens: std::collections::BTreeMap<String, StoredToken>,
    /// Roles by name: grants per workspace. A user holds its own grants and those of its roles.
    pub roles: std::collections::BTreeMap<String, StoredRole>,
    /// The roles each user holds, by user name.
    pub memberships: std::collections::BTreeMap<String, Vec<String>>,
    /// Row policies: workspace name → policy name → policy (see `read::policy`).
    pub policies: std::collections::BTreeMap<String, std::collections::BTreeMap<String, StoredPolicy>>,
    /// The access history: `on` (default) or `off`.
    pub audit: Option<String>,
    /// Whether the embedded full-access principal's reads are recorded too: `on` or `off`
    /// (default).
    pub audit_root: Option<String>,
    /// Reads' records are synced within this many milliseconds (default 10).
    pub audit_flush_ms: Option<u64>,
    /// Records older than this many days are dropped, a segment at a time (default: kept).
    pub audit_retention_days: Option<u32>,
    /// Masking policies: workspace name → policy name → policy (see `read::mask`).
    pub masks: std::collections::BTreeMap<String, std::collections::BTreeMap<String, StoredMask>>,
    /// The key of the masks' keyed hashes (hex of 32 random bytes), made with the first masking
    /// policy. Never listed, printed or exported: a dictionary of phone numbers cannot be hashed
    /// without it.
    pub mask_secret: Option<String>,
}

/// A masking policy of one workspace: what it masks (`pii:KIND`, `pii:*`, `tag:KEY=VALUE`,
/// `property:KEY`), how (`redact`, `hash`, `hide`), and the roles (or user names) it applies to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredMask {
    /// What it masks.
    pub on: String,
    /// How.
    pub mode: String,
    /// The roles and users it applies to.
    pub roles: Vec<String>,
}

/// The `property_tags` setting's value parsed and checked (`None`: not valid).
fn property_tags(value: &str) -> Option<std::collections::BTreeMap<String, crate::tags::Tags>> {
    let parsed: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> = serde_json::from_str(value).ok()?;
    let ok = parsed.len() <= SENSITIVE_PROPERTIES_MAX
        && parsed.iter().all(|(k, tags)| {
            !k.is_empty() && tags.len() <= crate::tags::TAGS_MAX && tags.iter().all(|(t, v)| crate::tags::check(t, v).is_ok())
        });
    ok.then(|| {
        parsed
            .into_iter()
            .map(|(k, tags)| (k, tags.into_iter().map(|(t, v)| (std::sync::Arc::from(t), std::sync::Arc::from(v))).collect()))
            .collect()
    })
}

/// The settings as stored before masking policies (record format 6 and 7, snapshot format 6
/// and 7).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsV5 {
    /// See `Settings`.
    pub fsync: Option<String>,
    /// See `Settings`.
    pub checkpoint_wal_bytes: Option<u64>,
    /// See `Settings`.
    pub wal_segment_bytes_max: Option<u64>,
    /// See `Settings`.
    pub merge_delta_edges_min: Option<u64>,
    /// See `Settings`.
    pub vector_dim: Option<u32>,
    /// See `Settings`.
    pub embedder: Option<String>,
    /// See `Settings`.
    pub workspaces: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// See `Settings`.
    pub users: std::collections::BTreeMap<String, StoredUser>,
    /// See `Settings`.
    pub tokens: std::collections::BTreeMap<String, StoredToken>,
    /// See `Settings`.
    pub roles: std::collections::BTreeMap<String, StoredRole>,
    /// See `Settings`.
    pub memberships: std::collections::BTreeMap<String, Vec<String>>,
    /// See `Settings`.
    pub policies: std::collections::BTreeMap<String, std::collections::BTreeMap<String, StoredPolicy>>,
    /// See `Settings`.
    pub audit: Option<String>,
    /// See `Settings`.
    pub audit_root: Option<String>,
    /// See `Settings`.
    pub audit_flush_ms: Option<u64>,
    /// See `Settings`.
    pub audit_retention_days: Option<u32>,
}

impl From<SettingsV5> for Settings {
    fn from(v: SettingsV5) -> Settings {
        Settings {
            fsync: v.fsync,
            checkpoint_wal_bytes: v.checkpoint_wal_bytes,
            wal_segment_bytes_max: v.wal_segment_bytes_max,
            merge_delta_edges_min: v.merge_delta_edges_min,
            vector_dim: v.vector_dim,
            embedder: v.embedder,
            workspaces: v.workspaces,
            users: v.users,
            tokens: v.tokens,
            roles: v.roles,
            memberships: v.memberships,
            policies: v.policies,
            audit: v.audit,
            audit_root: v.audit_root,
            audit_flush_ms: v.audit_flush_ms,
            audit_retention_days: v.audit_retention_days,
            ..Settings::default()
        }
    }
}

/// A role: grants by workspace name (`*`: every workspace).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRole {
    /// Grants by workspace name.
    pub grants: std::collections::BTreeMap<String, StoredGrant>,
}

/// A row policy of one workspace: what it filters (`claims` / `entities`), the roles (or user
/// names) it applies to, and its predicate (a Cypher expression, see `read::policy`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredPolicy {
    /// `claims` or `entities`.
    pub target: String,
    /// The roles and users it applies to.
    pub roles: Vec<String>,
    /// The predicate a row must pass to be seen.
    pub predicate: String,
}

/// The settings as stored before roles and policies (record format 5, snapshot format 5).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsV4 {
    /// See `Settings`.
    pub fsync: Option<String>,
    /// See `Settings`.
    pub checkpoint_wal_bytes: Option<u64>,
    /// See `Settings`.
    pub wal_segment_bytes_max: Option<u64>,
    /// See `Settings`.
    pub merge_delta_edges_min: Option<u64>,
    /// See `Settings`.
    pub vector_dim: Option<u32>,
    /// See `Settings`.
    pub embedder: Option<String>,
    /// See `Settings`.
    pub workspaces: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// See `Settings`.
    pub users: std::collections::BTreeMap<String, StoredUser>,
    /// See `Settings`.
    pub tokens: std::collections::BTreeMap<String, StoredToken>,
}

impl From<SettingsV4> for Settings {
    fn from(v: SettingsV4) -> Settings {
        Settings {
            fsync: v.fsync,
            checkpoint_wal_bytes: v.checkpoint_wal_bytes,
            wal_segment_bytes_max: v.wal_segment_bytes_max,
            merge_delta_edges_min: v.merge_delta_edges_min,
            vector_dim: v.vector_dim,
            embedder: v.embedder,
            workspaces: v.workspaces,
            users: v.users,
            tokens: v.tokens,
            ..Settings::default()
        }
    }
}

/// A bearer token: its user, the hex SHA-256 of its secret (a token is 32 random bytes, so a
/// fast hash is enough; a dictionary cannot reverse it) and when it was made.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredToken {
    /// The user the token authenticates as.
    pub user: String,
    /// Hex SHA-256 of the secret.
    pub sha256: String,
    /// When it was made (Unix seconds).
    pub created_at: i64,
}

/// The settings as stored before tokens (record format 4, snapshot format 4).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsV3 {
    /// See `Settings`.
    pub fsync: Option<String>,
    /// See `Settings`.
    pub checkpoint_wal_bytes: Option<u64>,
    /// See `Settings`.
    pub wal_segment_bytes_max: Option<u64>,
    /// See `Settings`.
    pub merge_delta_edges_min: Option<u64>,
    /// See `Settings`.
    pub vector_dim: Option<u32>,
    /// See `Settings`.
    pub embedder: Option<String>,
    /// See `Settings`.
    pub workspaces: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// See `Settings`.
    pub users: std::collections::BTreeMap<String, StoredUser>,
}

impl From<SettingsV3> for Settings {
    fn from(v: SettingsV3) -> Settings {
        Settings {
            fsync: v.fsync,
            checkpoint_wal_bytes: v.checkpoint_wal_bytes,
            wal_segment_bytes_max: v.wal_segment_bytes_max,
            merge_delta_edges_min: v.merge_delta_edges_min,
            vector_dim: v.vector_dim,
            embedder: v.embedder,
            workspaces: v.workspaces,
            users: v.users,
            ..Settings::default()
        }
    }
}

/// A user of the network server: an argon2 password hash (PHC string; none: no password) and
/// grants by workspace (`*`: every workspace).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredUser {
    /// The PHC string of the password's hash.
    pub password_hash: Option<String>,
    /// Grants by workspace name.
    pub grants: std::collections::BTreeMap<String, StoredGrant>,
}

/// A stored grant: the level (1 read, 2 write, 3 admin) and `see_sensitive`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredGrant {
    /// 1 read, 2 write, 3 admin.
    pub level: u8,
    /// Sensitive claims exist for this grant.
    pub see_sensitive: bool,
}

impl StoredGrant {
    /// The grant's access level.
    pub fn access(self) -> crate::model::Access {
        match self.level {
            3.. => crate::model::Access::Admin,
            2 => crate::model::Access::Write,
            _ => crate::model::Access::Read,
        }
    }

    /// A grant of `access`.
    pub fn of(access: crate::model::Access, see_sensitive: bool) -> StoredGrant {
        let level = match access {
            crate::model::Access::Read => 1,
            crate::model::Access::Write => 2,
            crate::model::Access::Admin => 3,
        };
        StoredGrant { level, see_sensitive }
    }
}

/// The settings as stored before users existed (record format 3, snapshot format 3).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsV2 {
    /// See `Settings`.
    pub fsync: Option<String>,
    /// See `Settings`.
    pub checkpoint_wal_bytes: Option<u64>,
    /// See `Settings`.
    pub wal_segment_bytes_max: Option<u64>,
    /// See `Settings`.
    pub merge_delta_edges_min: Option<u64>,
    /// See `Settings`.
    pub vector_dim: Option<u32>,
    /// See `Settings`.
    pub embedder: Option<String>,
    /// Per-workspace settings: workspace name → key → value (validated text, see
    /// See `Settings`.
    pub workspaces: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
}

/// The settings as stored before per-workspace settings existed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsV1 {
    /// See `Settings`.
    pub fsync: Option<String>,
    /// See `Settings`.
    pub checkpoint_wal_bytes: Option<u64>,
    /// See `Settings`.
    pub wal_segment_bytes_max: Option<u64>,
    /// See `Settings`.
    pub merge_delta_edges_min: Option<u64>,
    /// See `Settings`.
    pub vector_dim: Option<u32>,
    /// See `Settings`.
    pub embedder: Option<String>,
}

impl From<SettingsV2> for Settings {
    fn from(v: SettingsV2) -> Settings {
        Settings {
            fsync: v.fsync,
            checkpoint_wal_bytes: v.checkpoint_wal_bytes,
            wal_segment_bytes_max: v.wal_segment_bytes_max,
            merge_delta_edges_min: v.merge_delta_edges_min,
            vector_dim: v.vector_dim,
            embedder: v.embedder,
            workspaces: v.workspaces,
            ..Settings::default()
        }
    }
}

impl From<SettingsV1> for Settings {
    fn from(v: SettingsV1) -> Settings {
        Settings {
            fsync: v.fsync,
            checkpoint_wal_bytes: v.checkpoint_wal_bytes,
            wal_segment_bytes_max: v.wal_segment_bytes_max,
            merge_delta_edges_min: v.merge_delta_edges_min,
            vector_dim: v.vector_dim,
            embedder: v.embedder,
            workspaces: std::collections::BTreeMap::new(),
            ..Settings::default()
        }
    }
}

/// The workspace setting holding the indexes declared by index statements (JSON), listed by
/// `CALL db.indexes()`.
pub const INDEXES_KEY: &str = "indexes";

/// The workspace setting holding the constraints declared by constraint statements (JSON),
/// checked by every write (`write::constraints`).
pub const CONSTRAINTS_KEY: &str = "constraints";

/// Per-workspace setting names.
pub const WORKSPACE_SETTING_KEYS: [&str; 5] =
    ["accept_confidence", "resolve_similarity", "retention_days", "sensitive_properties", "property_tags"];

/// Most property keys one workspace may mark sensitive.
pub const SENSITIVE_PROPERTIES_MAX: usize = 64;

/// The setting names, in the order `entries` lists them.
pub const SETTING_KEYS: [&str; 10] = [
    "fsync",
    "checkpoint_wal_bytes",
    "wal_segment_bytes_max",
    "merge_delta_edges_min",
    "vector_dim",
    "embedder",
    "audit",
    "audit_root",
    "audit_flush_ms",
    "audit_retention_days",
];

/// A rejected setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// No such setting.
    #[error("unknown setting `{0}`; the settings are: {keys}", keys = SETTING_KEYS.join(", "))]
    UnknownKey(String),
    /// No such per-workspace setting.
    #[error("unknown workspace setting `{0}`; the workspace settings are: {keys}", keys = WORKSPACE_SETTING_KEYS.join(", "))]
    UnknownWorkspaceKey(String),
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
    /// Decodes stored settings (any layout: each adds trailing fields, so an older one fails
    /// to decode as a newer one at its end).
    pub fn decode(bytes: &[u8]) -> Option<Settings> {
        postcard::from_bytes::<Settings>(bytes)
            .ok()
            .or_else(|| postcard::from_bytes::<SettingsV5>(bytes).ok().map(Settings::from))
            .or_else(|| postcard::from_bytes::<SettingsV4>(bytes).ok().map(Settings::from))
            .or_else(|| postcard::from_bytes::<SettingsV3>(bytes).ok().map(Settings::from))
            .or_else(|| postcard::from_bytes::<SettingsV2>(bytes).ok().map(Settings::from))
            .or_else(|| postcard::from_bytes::<SettingsV1>(bytes).ok().map(Settings::from))
    }

    /// Workspace `ws`'s setting `key` as text (`None` when unset).
    pub fn get_for(&self, ws: &str, key: &str) -> Result<Option<String>, SettingsError> {
        if !WORKSPACE_SETTING_KEYS.contains(&key) {
            return Err(SettingsError::UnknownWorkspaceKey(key.to_owned()));
        }
        Ok(self.workspaces.get(ws).and_then(|m| m.get(key)).cloned())
    }

    /// Sets workspace `ws`'s setting `key`, validating it; `-` unsets it.
    pub fn set_for(&mut self, ws: &str, key: &str, value: &str) -> Result<(), SettingsError> {
        let bad = |expected| SettingsError::BadValue { key: key.to_owned(), value: value.to_owned(), expected };
        let unit = |lo: f32| value.parse::<f32>().ok().filter(|v| (lo..=1.0).contains(v));
        if value != "-" {
            match key {
                "accept_confidence" => drop(unit(0.0).ok_or_else(|| bad("a number in 0..=1"))?),
                "resolve_similarity" => drop(unit(-1.0).ok_or_else(|| bad("a number in -1..=1"))?),
                "retention_days" => drop(value.parse::<u32>().ok().filter(|d| *d >= 1).ok_or_else(|| bad("a whole number of days ≥ 1"))?),
                "sensitive_properties" => {
                    let keys: Vec<&str> = value.split(',').collect();
                    let ok = keys.len() <= SENSITIVE_PROPERTIES_MAX
                        && keys.iter().all(|k| !k.is_empty() && k.len() <= 256 && !crate::normalize::has_control_chars(k));
                    if !ok {
                        return Err(bad("property keys separated by commas (at most 64, none empty)"));
                    }
                }
                // Tags of property keys, as JSON: `{"phone": {"pii": "phone"}}` (`read::mask`).
                "property_tags" => drop(property_tags(value).ok_or_else(|| bad("a JSON object: property key → {tag key: tag value}"))?),
                // The declared indexes (`exec::ddl`), kept as JSON: written by index statements.
                INDEXES_KEY => {
                    drop(serde_json::from_str::<Vec<serde_json::Value>>(value).map_err(|_| bad("a JSON array of index declarations"))?);
                }
                // The declared constraints (`write::constraints`): written by constraint statements.
                CONSTRAINTS_KEY => {
                    drop(serde_json::from_str::<Vec<serde_json::Value>>(value).map_err(|_| bad("a JSON array of constraints"))?);
                }
                _ => return Err(SettingsError::UnknownWorkspaceKey(key.to_owned())),
            }
        } else if !WORKSPACE_SETTING_KEYS.contains(&key) && key != INDEXES_KEY && key != CONSTRAINTS_KEY {
            return Err(SettingsError::UnknownWorkspaceKey(key.to_owned()));
        }
        let map = self.workspaces.entry(ws.to_owned()).or_default();
        if value == "-" {
            map.remove(key);
        } else {
            map.insert(key.to_owned(), value.to_owned());
        }
        if map.is_empty() {
            self.workspaces.remove(ws);
        }
        Ok(())
    }

    /// The tags workspace `ws` gives its property keys (`property_tags`), by key.
    pub fn property_tags(&self, ws: &str) -> std::collections::BTreeMap<String, crate::tags::Tags> {
        self.workspaces.get(ws).and_then(|m| m.get("property_tags")).and_then(|v| property_tags(v)).unwrap_or_default()
    }

    /// The property keys workspace `ws` marks sensitive (`sensitive_properties`, comma-separated):
    /// for a principal without `see_sensitive` they do not exist on any entity.
    pub fn sensitive_properties(&self, ws: &str) -> Option<&str> {
        self.workspaces.get(ws)?.get("sensitive_properties").map(String::as_str)
    }

    /// Workspace `ws`'s setting `key` parsed (it was validated when set).
    pub fn workspace_value<T: std::str::FromStr>(&self, ws: &str, key: &str) -> Option<T> {
        self.workspaces.get(ws)?.get(key)?.parse().ok()
    }

    /// A setting's value as text (`None` when unset).
    pub fn get(&self, key: &str) -> Result<Option<String>, SettingsError> {
        Ok(match key {
            "fsync" => self.fsync.clone(),
            "checkpoint_wal_bytes" => self.checkpoint_wal_bytes.map(|v| v.to_string()),
            "wal_segment_bytes_max" => self.wal_segment_bytes_max.map(|v| v.to_string()),
            "merge_delta_edges_min" => self.merge_delta_edges_min.map(|v| v.to_string()),
            "vector_dim" => self.vector_dim.map(|v| v.to_string()),
            "embedder" => self.embedder.clone(),
            "audit" => self.audit.clone(),
            "audit_root" => self.audit_root.clone(),
            "audit_flush_ms" => self.audit_flush_ms.map(|v| v.to_string()),
            "audit_retention_days" => self.audit_retention_days.map(|v| v.to_string()),
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
                if value.is_empty() || value.len() > 128 || crate::normalize::has_control_chars(value) {
                    return Err(bad("a name of 1..=128 characters"));
                }
                self.embedder = Some(value.to_owned());
            }
            "audit" | "audit_root" => {
                if value != "on" && value != "off" {
                    return Err(bad("`on` or `off`"));
                }
                *(if key == "audit" { &mut self.audit } else { &mut self.audit_root }) = Some(value.to_owned());
            }
            "audit_flush_ms" => {
                self.audit_flush_ms =
                    Some(value.parse::<u64>().ok().filter(|v| (1..=60_000).contains(v)).ok_or_else(|| bad("an integer in 1..=60000"))?);
            }
            "audit_retention_days" => {
                self.audit_retention_days =
                    Some(value.parse::<u32>().ok().filter(|d| *d >= 1).ok_or_else(|| bad("a whole number of days ≥ 1"))?);
            }
            _ => return Err(SettingsError::UnknownKey(key.to_owned())),
        }
        Ok(())
    }

    /// Whether the access history records (`audit`, default on).
    pub fn audit_on(&self) -> bool {
        self.audit.as_deref() != Some("off")
    }

    /// Whether the embedded full-access principal is recorded too (`audit_root`, default off).
    pub fn audit_root_on(&self) -> bool {
        self.audit_root.as_deref() == Some("on")
    }

    /// Every setting, set or not, in `SETTING_KEYS` order.
    pub fn entries(&self) -> Vec<(&'static str, Option<String>)> {
        SETTING_KEYS.iter().map(|k| (*k, self.get(k).ok().flatten())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settings stored before per-workspace settings existed still decode (snapshots hold them
    /// as bytes); the current layout round-trips.
    #[test]
    fn both_layouts_decode() {
        let old =
            SettingsV1 { fsync: Some("never".into()), vector_dim: Some(64), embedder: Some("hash/1/64".into()), ..SettingsV1::default() };
        let bytes = postcard::to_allocvec(&old).unwrap();
        assert_eq!(Settings::decode(&bytes), Some(Settings::from(old)));
        let mut new = Settings::default();
        new.set("vector_dim", "8").unwrap();
        new.set_for("w", "retention_days", "30").unwrap();
        new.set_for("w", "resolve_similarity", "0.8").unwrap();
        assert_eq!(Settings::decode(&postcard::to_allocvec(&new).unwrap()), Some(new.clone()));
        assert_eq!(new.workspace_value::<u32>("w", "retention_days"), Some(30));
        assert_eq!(new.workspace_value::<f32>("w", "resolve_similarity"), Some(0.8));
        assert!(matches!(new.set_for("w", "retention_days", "0"), Err(SettingsError::BadValue { .. })));
        assert!(matches!(new.set_for("w", "colour", "red"), Err(SettingsError::UnknownWorkspaceKey(_))));
        new.set_for("w", "retention_days", "-").unwrap();
        new.set_for("w", "resolve_similarity", "-").unwrap();
        assert!(new.workspaces.is_empty());
        assert_eq!(Settings::decode(b"\x05garbage"), None);
    }
}
