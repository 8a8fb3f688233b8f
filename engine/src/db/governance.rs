//! Roles, memberships, row and masking policies: stored in the settings (a logged commit each, in every
//! snapshot), so every process opening the folder enforces the same ones.

use crate::error::{Error, PolicyError};
use crate::read::policy::{self, Target};
use crate::read::scope::Principal;
use crate::settings::{SettingsError, StoredGrant, StoredMask, StoredPolicy, StoredRole};
use std::collections::BTreeMap;

/// Most row policies one workspace may hold (and, apart, most masking policies).
pub const POLICIES_MAX: usize = 64;
/// Most roles one user may hold.
pub const ROLES_PER_USER_MAX: usize = 64;

/// A role, user or policy name: 1 to 128 bytes, no spaces or control characters.
fn check_name(what: &str, name: &str) -> Result<(), Error> {
    if name.is_empty() || name.len() > 128 || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(SettingsError::BadValue {
            key: what.to_owned(),
            value: name.chars().take(64).collect(),
            expected: "a name of 1 to 128 bytes without spaces or control characters",
        }
        .into());
    }
    Ok(())
}

impl super::Database {
    /// The roles by name.
    pub fn roles(&self) -> BTreeMap<String, StoredRole> {
        self.snapshot().state.settings.roles.clone()
    }

    /// The roles each user holds.
    pub fn memberships(&self) -> BTreeMap<String, Vec<String>> {
        self.snapshot().state.settings.memberships.clone()
    }

    /// The row policies: workspace → name → policy.
    pub fn policies(&self) -> BTreeMap<String, BTreeMap<String, StoredPolicy>> {
        self.snapshot().state.settings.policies.clone()
    }

    /// Creates role `name` with no grants; an existing role is left as it is (`false`).
    pub fn add_role(&self, name: &str) -> Result<bool, Error> {
        check_name("role", name)?;
        if self.snapshot().state.settings.roles.contains_key(name) {
            return Ok(false);
        }
        self.update_settings(|s, _| {
            s.roles.insert(name.to_owned(), StoredRole::default());
            Ok(())
        })?;
        Ok(true)
    }

    /// Gives role `role` `grant` on `workspace` (or `*`), replacing its grant there.
    pub fn grant_role(&self, role: &str, workspace: &str, grant: StoredGrant) -> Result<(), Error> {
        self.update_settings(|s, _| {
            let r = s.roles.get_mut(role).ok_or_else(|| unknown("role", role))?;
            r.grants.insert(workspace.to_owned(), grant);
            Ok(())
        })
    }

    /// Takes role `role`'s grant on `workspace` (or `*`) away; `false` when it had none.
    pub fn revoke_role(&self, role: &str, workspace: &str) -> Result<bool, Error> {
        let had = self.snapshot().state.settings.roles.get(role).ok_or_else(|| unknown("role", role))?.grants.contains_key(workspace);
        if had {
            self.update_settings(|s, _| {
                if let Some(r) = s.roles.get_mut(role) {
                    r.grants.remove(workspace);
                }
                Ok(())
            })?;
        }
        Ok(had)
    }

    /// Removes role `name` and every membership of it; `false` when there was none. Policies
    /// naming it keep the name (they apply again if a role of that name is made).
    pub fn remove_role(&self, name: &str) -> Result<bool, Error> {
        if !self.snapshot().state.settings.roles.contains_key(name) {
            return Ok(false);
        }
        self.update_settings(|s, _| {
            s.roles.remove(name);
            for held in s.memberships.values_mut() {
                held.retain(|r| r != name);
            }
            s.memberships.retain(|_, held| !held.is_empty());
            Ok(())
        })?;
        Ok(true)
    }

    /// Makes user `user` hold role `role` (both must exist); `false` when it already did.
    pub fn assign_role(&self, user: &str, role: &str) -> Result<bool, Error> {
        let st = self.snapshot().state;
        if !st.settings.users.contains_key(user) {
            return Err(unknown("user", user));
        }
        if !st.settings.roles.contains_key(role) {
            return Err(unknown("role", role));
        }
        let held = st.settings.memberships.get(user);
        if held.is_some_and(|h| h.iter().any(|r| r == role)) {
            return Ok(false);
        }
        if held.is_some_and(|h| h.len() >= ROLES_PER_USER_MAX) {
            return Err(SettingsError::BadValue {
                key: "role".to_owned(),
                value: role.to_owned(),
                expected: "at most ROLES_PER_USER_MAX = 64 roles per user",
            }
            .into());
        }
        self.update_settings(|s, _| {
            s.memberships.entry(user.to_owned()).or_default().push(role.to_owned());
            Ok(())
        })?;
        Ok(true)
    }

    /// Takes role `role` from user `user`; `false` when it did not hold it.
    pub fn unassign_role(&self, user: &str, role: &str) -> Result<bool, Error> {
        if !self.snapshot().state.settings.memberships.get(user).is_some_and(|h| h.iter().any(|r| r == role)) {
            return Ok(false);
        }
        self.update_settings(|s, _| {
            if let Some(held) = s.memberships.get_mut(user) {
                held.retain(|r| r != role);
                if held.is_empty() {
                    s.memberships.remove(user);
                }
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// Stores row policy `name` of `workspace` (replacing one of that name): it is compiled
    /// first, and refused with the place of what is wrong.
    pub fn put_policy(&self, workspace: &str, name: &str, p: StoredPolicy) -> Result<(), Error> {
        check_name("policy", name)?;
        check_name("workspace", workspace)?;
        let target = Target::parse(&p.target).ok_or_else(|| PolicyError {
            message: format!("unknown target `{}`; expected `claims` or `entities`", p.target),
            line: 1,
            column: 1,
        })?;
        if p.roles.is_empty() {
            return Err(PolicyError { message: "a policy applies to at least one role".to_owned(), line: 1, column: 1 }.into());
        }
        for r in &p.roles {
            check_name("role", r)?;
        }
        policy::compile(target, &p.predicate, "user")?;
        let stored = StoredPolicy { target: target.name().to_owned(), ..p };
        self.update_settings(|s, _| {
            let of_ws = s.policies.entry(workspace.to_owned()).or_default();
            if !of_ws.contains_key(name) && of_ws.len() >= POLICIES_MAX {
                return Err(SettingsError::BadValue {
                    key: "policy".to_owned(),
                    value: name.to_owned(),
                    expected: "at most POLICIES_MAX = 64 policies per workspace",
                }
                .into());
            }
            of_ws.insert(name.to_owned(), stored);
            Ok(())
        })
    }

    /// Removes row policy `name` of `workspace`; `false` when there was none.
    pub fn remove_policy(&self, workspace: &str, name: &str) -> Result<bool, Error> {
        if !self.snapshot().state.settings.policies.get(workspace).is_some_and(|m| m.contains_key(name)) {
            return Ok(false);
        }
        self.update_settings(|s, _| {
            if let Some(m) = s.policies.get_mut(workspace) {
                m.remove(name);
                if m.is_empty() {
                    s.policies.remove(workspace);
                }
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// The masking policies by workspace, then name.
    pub fn masks(&self) -> BTreeMap<String, BTreeMap<String, StoredMask>> {
        self.snapshot().state.settings.masks.clone()
    }

    /// Stores masking policy `name` of `workspace` (replacing one of that name). Its target and
    /// mode are checked first (`read::mask::compile`); nothing is stored when they are refused.
    /// The first one makes the database's hashing secret.
    pub fn put_mask(&self, workspace: &str, name: &str, m: StoredMask) -> Result<(), Error> {
        check_name("mask", name)?;
        check_name("workspace", workspace)?;
        if crate::read::mask::Mode::parse(&m.mode).is_none() {
            return Err(SettingsError::BadValue { key: "mode".to_owned(), value: m.mode.clone(), expected: "redact, hash or hide" }.into());
        }
        let rule = crate::read::mask::compile(&m.on, &m.mode).map_err(|_| SettingsError::BadValue {
            key: "on".to_owned(),
            value: m.on.chars().take(64).collect(),
            expected: "pii:KIND (email, phone, card, ip or *), tag:KEY[=VALUE] or property:KEY",
        })?;
        if m.roles.is_empty() {
            return Err(SettingsError::BadValue { key: "roles".to_owned(), value: String::new(), expected: "at least one role" }.into());
        }
        for r in &m.roles {
            check_name("role", r)?;
        }
        let stored = StoredMask { mode: rule.mode.name().to_owned(), ..m };
        let secret = if self.snapshot().state.settings.mask_secret.is_none() { Some(new_secret()?) } else { None };
        self.update_settings(|s, _| {
            let of_ws = s.masks.entry(workspace.to_owned()).or_default();
            if !of_ws.contains_key(name) && of_ws.len() >= POLICIES_MAX {
                return Err(SettingsError::BadValue {
                    key: "mask".to_owned(),
                    value: name.to_owned(),
                    expected: "at most POLICIES_MAX = 64 masking policies per workspace",
                }
                .into());
            }
            of_ws.insert(name.to_owned(), stored);
            if s.mask_secret.is_none() {
                s.mask_secret.clone_from(&secret);
            }
            Ok(())
        })
    }

    /// Removes masking policy `name` of `workspace`; `false` when there was none.
    pub fn remove_mask(&self, workspace: &str, name: &str) -> Result<bool, Error> {
        if !self.snapshot().state.settings.masks.get(workspace).is_some_and(|m| m.contains_key(name)) {
            return Ok(false);
        }
        self.update_settings(|s, _| {
            if let Some(m) = s.masks.get_mut(workspace) {
                m.remove(name);
                if m.is_empty() {
                    s.masks.remove(workspace);
                }
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// The masking policies of `workspace` that apply to `principal`, by name.
    pub fn masks_applying(&self, principal: &Principal, workspace: &str) -> Vec<(String, StoredMask)> {
        let st = self.snapshot().state;
        st.settings
            .masks
            .get(workspace)
            .into_iter()
            .flatten()
            .filter(|(_, m)| m.roles.iter().any(|r| principal.holds(r)))
            .map(|(n, m)| (n.clone(), m.clone()))
            .collect()
    }

    /// The policies of `workspace` that apply to `principal`, by name: what `engram policy
    /// explain` shows.
    pub fn policies_applying(&self, principal: &Principal, workspace: &str) -> Vec<(String, StoredPolicy)> {
        let st = self.snapshot().state;
        st.settings
            .policies
            .get(workspace)
            .into_iter()
            .flatten()
            .filter(|(_, p)| p.roles.iter().any(|r| principal.holds(r)))
            .map(|(n, p)| (n.clone(), p.clone()))
            .collect()
    }

    /// The principal of stored user `name`: its own grants and those of the roles it holds
    /// (each level and `see_sensitive` the widest), holding those roles. `None`: no such user.
    pub fn user_principal(&self, name: &str) -> Option<Principal> {
        let st = self.snapshot().state;
        let s = &st.settings;
        let user = s.users.get(name)?;
        let mut grants: BTreeMap<&str, StoredGrant> = user.grants.iter().map(|(w, g)| (w.as_str(), *g)).collect();
        let held = s.memberships.get(name).map(Vec::as_slice).unwrap_or_default();
        for role in held.iter().filter_map(|r| s.roles.get(r)) {
            for (w, g) in &role.grants {
                let wider = match grants.get(w.as_str()) {
                    Some(had) => StoredGrant { level: had.level.max(g.level), see_sensitive: had.see_sensitive || g.see_sensitive },
                    None => *g,
                };
                grants.insert(w, wider);
            }
        }
        let p = grants.into_iter().fold(Principal::named(name), |p, (w, g)| p.grant(w, g.access(), g.see_sensitive));
        Some(held.iter().fold(p, |p, r| p.with_role(r)))
    }
}

/// 32 random bytes from the operating system, in hex: the key of the masks' hashes.
fn new_secret() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes).map_err(|e| {
        engram_storage::StorageError::io("getrandom", std::io::Error::other(format!("no random bytes for the mask secret: {e}")))
    })?;
    Ok(crate::read::mask::hex(&bytes))
}

fn unknown(what: &'static str, name: &str) -> Error {
    SettingsError::BadValue {
        key: what.to_owned(),
        value: name.chars().take(64).collect(),
        expected: if what == "role" { "an existing role" } else { "an existing user" },
    }
    .into()
}
