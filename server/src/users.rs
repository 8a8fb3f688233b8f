//! Users of the server: argon2id password hashes and grants, stored in the database (through
//! the WAL, in snapshots), and who a new connection is before it authenticates.
//!
//! The rules: with no user defined, the built-in user `default` has full access and no password
//! (loopback only). Once any user exists, `default` has no access unless it was given a password
//! (`--requirepass-stdin`, full access behind it) or grants of its own.

use std::sync::Arc;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use engram::{Access, Database, Principal, StoredGrant, StoredUser};

/// The built-in user.
pub const DEFAULT_USER: &str = "default";

/// The argon2id PHC string of `password`, with a fresh random salt.
pub fn hash_password(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| format!("hashing the password: {e}"))
}

/// Whether `password` matches the stored `hash` (constant-time in the hash comparison).
pub fn verify_password(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
}

/// Full access to everything: `default` when no user exists, or behind its password.
fn full(name: &str) -> Principal {
    Principal::named(name).grant("*", Access::Admin, true)
}

/// The engine principal stored user `name` is: its grants and its roles' (see
/// `Database::user_principal`), nothing more.
fn principal(db: &Database, name: &str) -> Principal {
    db.user_principal(name).unwrap_or_else(|| Principal::named(name))
}

/// Who a new connection is before any AUTH: `default` with full access while no user exists,
/// `default`'s own grants when it has grants and no password, else nobody (`NOAUTH`).
pub fn initial_principal(db: &Database) -> Option<Arc<Principal>> {
    let users = db.users();
    if users.is_empty() {
        return Some(Arc::new(full(DEFAULT_USER)));
    }
    match users.get(DEFAULT_USER) {
        Some(u) if u.password_hash.is_none() && !u.grants.is_empty() => Some(Arc::new(principal(db, DEFAULT_USER))),
        _ => None,
    }
}

/// Whether anyone may connect without a password (then only loopback is served).
pub fn open_without_password(db: &Database) -> bool {
    initial_principal(db).is_some()
}

/// Why an AUTH failed, as Redis words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// `AUTH pass` while `default` has no password.
    NoPasswordConfigured,
    /// Unknown user, wrong password or a user without a password.
    WrongPass,
}

/// The principal `user` authenticates as with `password`.
pub fn authenticate(db: &Database, user: &str, password: &str) -> Result<Arc<Principal>, AuthError> {
    let users = db.users();
    if users.is_empty() {
        // No users: `default` is `nopass` (any password), as in Redis.
        return if user == DEFAULT_USER { Ok(Arc::new(full(DEFAULT_USER))) } else { Err(AuthError::WrongPass) };
    }
    let Some(stored) = users.get(user) else { return Err(AuthError::WrongPass) };
    match &stored.password_hash {
        Some(hash) if verify_password(hash, password) => Ok(Arc::new(principal(db, user))),
        None if user == DEFAULT_USER && !stored.grants.is_empty() => Ok(Arc::new(principal(db, user))),
        _ => Err(AuthError::WrongPass),
    }
}

/// Adds user `name` (or sets its password when it exists, keeping its grants).
pub fn add(db: &Database, name: &str, password: Option<&str>) -> Result<(), String> {
    let mut user = db.users().remove(name).unwrap_or_default();
    user.password_hash = password.map(hash_password).transpose()?;
    db.put_user(name, user).map_err(|e| e.to_string())
}

/// Sets `default`'s password, keeping (or giving) it full access behind it.
pub fn require_pass(db: &Database, password: &str) -> Result<(), String> {
    let mut user = db.users().remove(DEFAULT_USER).unwrap_or_default();
    user.password_hash = Some(hash_password(password)?);
    user.grants.insert("*".to_owned(), StoredGrant::of(Access::Admin, true));
    db.put_user(DEFAULT_USER, user).map_err(|e| e.to_string())
}

/// The access level named `level` (`read`, `write`, `admin`).
pub fn parse_access(level: &str) -> Result<Access, String> {
    match level.to_ascii_lowercase().as_str() {
        "read" => Ok(Access::Read),
        "write" => Ok(Access::Write),
        "admin" => Ok(Access::Admin),
        other => Err(format!("access `{other}`: expected read, write or admin")),
    }
}

/// Grants `access` on `workspace` (or `*`) to existing user `name`, replacing its grant there.
pub fn grant(db: &Database, name: &str, workspace: &str, access: Access, see_sensitive: bool) -> Result<(), String> {
    let Some(mut user) = db.users().remove(name) else { return Err(format!("no user `{name}`")) };
    user.grants.insert(workspace.to_owned(), StoredGrant::of(access, see_sensitive));
    db.put_user(name, user).map_err(|e| e.to_string())
}

/// Removes user `name`'s grant on `workspace` (or `*`); `false` when it had none.
pub fn revoke(db: &Database, name: &str, workspace: &str) -> Result<bool, String> {
    let Some(mut user) = db.users().remove(name) else { return Err(format!("no user `{name}`")) };
    if user.grants.remove(workspace).is_none() {
        return Ok(false);
    }
    db.put_user(name, user).map_err(|e| e.to_string())?;
    Ok(true)
}

/// The principal user `name` is now, without a password check (for a check made before, and
/// remembered): `None` when the user does not exist (any more).
pub fn principal_of(db: &Database, name: &str) -> Option<Arc<Principal>> {
    let users = db.users();
    if users.is_empty() {
        return (name == DEFAULT_USER).then(|| Arc::new(full(DEFAULT_USER)));
    }
    users.contains_key(name).then(|| Arc::new(principal(db, name)))
}

/// Prefix of every bearer token (so a leaked one is recognisable by secret scanners).
pub const TOKEN_PREFIX: &str = "engram_";

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(text.as_bytes()))
}

/// Makes a bearer token for existing user `name`: `engram_<id>_<secret>` (the id names it for
/// revocation; the secret is 32 random bytes). Only its SHA-256 is stored; the token is returned
/// once, here.
pub fn new_token(db: &Database, name: &str) -> Result<(String, String), String> {
    use rand::RngCore as _;
    if !db.users().contains_key(name) {
        return Err(format!("no user `{name}`"));
    }
    let mut bytes = [0u8; 36];
    OsRng.fill_bytes(&mut bytes);
    let id = hex(&bytes[..4]);
    let token = format!("{TOKEN_PREFIX}{id}_{}", hex(&bytes[4..]));
    let created_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let stored =
        engram::StoredToken { user: name.to_owned(), sha256: sha256_hex(&token), created_at: i64::try_from(created_at).unwrap_or(0) };
    db.put_token(&id, stored).map_err(|e| e.to_string())?;
    Ok((id, token))
}

/// The principal a bearer token authenticates as (`None`: unknown, revoked, or its user gone).
pub fn authenticate_token(db: &Database, token: &str) -> Option<Arc<Principal>> {
    let id = token.strip_prefix(TOKEN_PREFIX)?.split('_').next()?;
    let stored = db.tokens().remove(id)?;
    let given = sha256_hex(token);
    // Constant time in the comparison: every byte is looked at.
    let same = given.len() == stored.sha256.len() && given.bytes().zip(stored.sha256.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if !same {
        return None;
    }
    db.user_principal(&stored.user).map(Arc::new)
}

/// One line per token: `id user created_at` (never the secret or its hash).
pub fn list_tokens(db: &Database) -> Vec<String> {
    db.tokens().iter().map(|(id, t)| format!("{id} {} {}", t.user, t.created_at)).collect()
}

/// One line per user: `name password|nopass ws=level[+sensitive] …` (never the hash).
/// `roles=a,b` follows when the user holds roles.
pub fn list(db: &Database) -> Vec<String> {
    let members = db.memberships();
    db.users().iter().map(|(name, u)| line(name, u, members.get(name).map(Vec::as_slice).unwrap_or_default())).collect()
}

/// `ws=level[+sensitive]`.
pub fn grant_text(ws: &str, g: StoredGrant) -> String {
    format!("{ws}={}{}", g.access().as_str(), if g.see_sensitive { "+sensitive" } else { "" })
}

fn line(name: &str, u: &StoredUser, roles: &[String]) -> String {
    let mut words: Vec<String> = u.grants.iter().map(|(ws, g)| grant_text(ws, *g)).collect();
    if !roles.is_empty() {
        words.push(format!("roles={}", roles.join(",")));
    }
    format!("{name} {} {}", if u.password_hash.is_some() { "password" } else { "nopass" }, words.join(" ")).trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_connects_follows_the_rules() {
        let db = Database::in_memory();
        // No users: default has everything, AUTH default takes any password, others do not exist.
        assert!(initial_principal(&db).is_some_and(|p| p.sees_all()));
        assert!(authenticate(&db, DEFAULT_USER, "anything").is_ok());
        assert_eq!(authenticate(&db, "alice", "x").unwrap_err(), AuthError::WrongPass);
        // Once a user exists, default has no access.
        add(&db, "alice", Some("pw")).unwrap();
        grant(&db, "alice", "w", Access::Write, false).unwrap();
        assert!(initial_principal(&db).is_none());
        assert_eq!(authenticate(&db, DEFAULT_USER, "anything").unwrap_err(), AuthError::WrongPass);
        assert_eq!(authenticate(&db, "alice", "wrong").unwrap_err(), AuthError::WrongPass);
        let alice = authenticate(&db, "alice", "pw").unwrap();
        assert!(
            alice.may("w", Access::Read)
                && alice.may("w", Access::Write)
                && !alice.may("w", Access::Admin)
                && !alice.may("v", Access::Read)
        );
        // The hash is argon2id and never the password; listing shows neither.
        let stored = db.users()["alice"].password_hash.clone().unwrap();
        // (No field of it is the password: a random salt may hold the letters "pw" by chance.)
        assert!(stored.starts_with("$argon2id$") && !stored.split('$').any(|field| field == "pw"));
        assert_eq!(list(&db), vec!["alice password w=write".to_owned()]);
        // A password for default gives it full access behind the password.
        require_pass(&db, "s3").unwrap();
        assert!(initial_principal(&db).is_none());
        assert!(authenticate(&db, DEFAULT_USER, "s3").unwrap().sees_all());
        assert!(revoke(&db, "alice", "w").unwrap());
        assert!(!revoke(&db, "alice", "w").unwrap());
    }

    #[test]
    fn tokens_authenticate_until_revoked() {
        let db = Database::in_memory();
        add(&db, "alice", Some("pw")).unwrap();
        grant(&db, "alice", "w", Access::Read, false).unwrap();
        assert!(new_token(&db, "nobody").is_err());
        let (id, token) = new_token(&db, "alice").unwrap();
        assert!(token.starts_with(TOKEN_PREFIX) && token.contains(&id));
        // Only the hash is stored.
        assert!(!format!("{:?}", db.tokens()).contains(&token[TOKEN_PREFIX.len() + 9..]));
        let p = authenticate_token(&db, &token).unwrap();
        assert!(p.name() == "alice" && p.may("w", Access::Read) && !p.may("w", Access::Write));
        // A token altered in one character, or of another id, fails.
        let mut wrong = token.clone();
        let last = if wrong.ends_with('0') { "1" } else { "0" };
        wrong.replace_range(wrong.len() - 1.., last);
        assert!(authenticate_token(&db, &wrong).is_none());
        assert!(authenticate_token(&db, "engram_zzzz_00").is_none());
        assert_eq!(list_tokens(&db).len(), 1);
        assert!(db.remove_token(&id).unwrap());
        assert!(authenticate_token(&db, &token).is_none());
        // Removing a user removes its tokens.
        let (_, t2) = new_token(&db, "alice").unwrap();
        db.remove_user("alice").unwrap();
        assert!(authenticate_token(&db, &t2).is_none() && db.tokens().is_empty());
    }

    /// Users are stored in the database: they survive a reopen from the WAL and from a checkpoint.
    #[test]
    fn users_survive_reopen_and_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = Database::open(dir.path()).unwrap();
            add(&db, "bob", Some("pw")).unwrap();
            grant(&db, "bob", "*", Access::Read, true).unwrap();
        }
        {
            let db = Database::open(dir.path()).unwrap();
            assert!(authenticate(&db, "bob", "pw").is_ok_and(|p| p.may("any", Access::Read)));
            db.checkpoint().unwrap();
            add(&db, "carol", None).unwrap();
        }
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(list(&db), vec!["bob password *=read+sensitive".to_owned(), "carol nopass".to_owned()]);
    }
}
