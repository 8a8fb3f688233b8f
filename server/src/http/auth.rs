//! Who an HTTP request is: `Authorization: Basic` (a user and password, the same as RESP's AUTH)
//! or `Bearer` (a token of `engram user token`), else the connection's default (`default` while
//! it needs no password). Mapped to the same users and grants as RESP.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use super::reply::error;
use super::AppState;
use crate::users;

/// Successful password checks remembered (argon2 is slow by design; a request per call must not
/// pay it each time): by the SHA-256 of user, password and the stored hash, so a changed
/// password misses. At most `VERIFIED_MAX` entries; past it the cache is cleared.
#[derive(Default)]
pub struct Verified(Mutex<HashSet<[u8; 32]>>);

/// Entries the password-check cache holds.
pub const VERIFIED_MAX: usize = 4096;

impl Verified {
    fn key(user: &str, password: &str, hash: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        for part in [user, password, hash] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.finalize().into()
    }

    /// Whether `password` is `user`'s, remembering a success.
    fn check(&self, db: &engram::Database, user: &str, password: &str) -> Option<Arc<engram::Principal>> {
        let stored = db.users().remove(user);
        let hash = stored.as_ref().and_then(|u| u.password_hash.clone());
        if let Some(hash) = &hash {
            let key = Verified::key(user, password, hash);
            if self.0.lock().is_ok_and(|m| m.contains(&key)) {
                return users::principal_of(db, user);
            }
            let found = users::authenticate(db, user, password).ok()?;
            if let Ok(mut m) = self.0.lock() {
                if m.len() >= VERIFIED_MAX {
                    m.clear();
                }
                m.insert(key);
            }
            return Some(found);
        }
        users::authenticate(db, user, password).ok()
    }
}

/// The principal of a request (an extractor): a request that names no valid credentials, where
/// credentials are needed, is answered 401 with a JSON error.
pub struct Who(pub Arc<engram::Principal>);

impl FromRequestParts<AppState> for Who {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Who, Response> {
        if let Some(p) = parts.extensions.get::<Who>() {
            return Ok(Who(p.0.clone()));
        }
        let who = principal(parts, state)?;
        parts.extensions.insert(Who(who.clone()));
        Ok(Who(who))
    }
}

impl Clone for Who {
    fn clone(&self) -> Who {
        Who(self.0.clone())
    }
}

/// Authenticates the request's `Authorization` header.
// Reason: the rejection is axum's `Response`, as every extractor's here; boxing it buys nothing.
#[allow(clippy::result_large_err)]
pub fn principal(parts: &Parts, state: &AppState) -> Result<Arc<engram::Principal>, Response> {
    let db = &state.shared.db;
    let unauthorized = |why: &str| error(StatusCode::UNAUTHORIZED, "auth", why);
    let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
        return users::initial_principal(db).ok_or_else(|| unauthorized("authentication required: send Authorization: Basic or Bearer"));
    };
    let value = value.to_str().map_err(|_| unauthorized("the Authorization header is not ASCII"))?;
    let (scheme, credentials) = value.split_once(' ').unwrap_or((value, ""));
    match scheme.to_ascii_lowercase().as_str() {
        "basic" => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(credentials.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| unauthorized("Basic credentials are not base64 of user:password"))?;
            let (user, password) = decoded.split_once(':').ok_or_else(|| unauthorized("Basic credentials are not user:password"))?;
            state.verified.check(db, user, password).ok_or_else(|| unauthorized("invalid username-password pair or user is disabled"))
        }
        "bearer" => users::authenticate_token(db, credentials.trim()).ok_or_else(|| unauthorized("invalid or revoked token")),
        _ => Err(unauthorized("unsupported Authorization scheme: use Basic or Bearer")),
    }
}
