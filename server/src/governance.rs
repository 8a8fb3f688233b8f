//! Roles, row and masking policies as words: the one implementation of `ENGRAM.ROLE` / `ENGRAM.POLICY`
//! and of `engram role` / `engram policy` (the CLI passes its arguments as the same words).

use engram::{Database, Principal, StoredGrant, StoredMask, StoredPolicy};

/// What a governance command answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done.
    Ok,
    /// Whether something was there to change (`1` / `0`).
    Changed(bool),
    /// Lines of a listing.
    Lines(Vec<String>),
    /// Tags, by key.
    Tags(Vec<(String, String)>),
}

/// The syntax of `ENGRAM.ROLE`.
pub const ROLE_USAGE: &str = "ADD name | DEL name | GRANT name ws|* read|write|admin [SEE_SENSITIVE] | REVOKE name ws|* | ASSIGN user role | UNASSIGN user role | LIST";
/// The syntax of `ENGRAM.TAG` after its workspace.
pub const TAG_USAGE: &str =
    "SET CLAIM|ENTITY id key=value... | SET MESSAGE conversation message|* key=value... | DEL CLAIM|ENTITY id key... | DEL MESSAGE conversation message|* key... | GET CLAIM|ENTITY id | GET MESSAGE conversation message|*";

/// The syntax of `ENGRAM.POLICY`.
pub const POLICY_USAGE: &str = "SET ws name claims|entities role[,role...] predicate | DEL ws name | MASK ws name pii:KIND|tag:KEY[=VALUE]|property:KEY redact|hash|hide role[,role...] | UNMASK ws name | LIST [ws] | EXPLAIN user ws";

/// `ADD name | DEL name | GRANT … | REVOKE … | ASSIGN user role | UNASSIGN user role | LIST`.
pub fn role(db: &Database, words: &[String]) -> Result<Outcome, String> {
    let sub = words.first().map(|s| s.to_ascii_uppercase()).unwrap_or_default();
    let e = |e: engram::Error| e.to_string();
    match (sub.as_str(), words.len()) {
        ("ADD", 2) => db.add_role(&words[1]).map(Outcome::Changed).map_err(e),
        ("DEL", 2) => db.remove_role(&words[1]).map(Outcome::Changed).map_err(e),
        ("GRANT", 4 | 5) => {
            let see_sensitive = match words.get(4).map(|w| w.to_ascii_uppercase()) {
                None => false,
                Some(w) if w == "SEE_SENSITIVE" => true,
                Some(w) => return Err(format!("ROLE GRANT: unexpected `{w}` (SEE_SENSITIVE?)")),
            };
            let access = crate::users::parse_access(&words[3])?;
            db.grant_role(&words[1], &words[2], StoredGrant::of(access, see_sensitive)).map(|()| Outcome::Ok).map_err(e)
        }
        ("REVOKE", 3) => db.revoke_role(&words[1], &words[2]).map(Outcome::Changed).map_err(e),
        ("ASSIGN", 3) => db.assign_role(&words[1], &words[2]).map(Outcome::Changed).map_err(e),
        ("UNASSIGN", 3) => db.unassign_role(&words[1], &words[2]).map(Outcome::Changed).map_err(e),
        ("LIST", 1) => {
            let members = db.memberships();
            let lines = db
                .roles()
                .iter()
                .map(|(name, r)| {
                    let grants: Vec<String> = r.grants.iter().map(|(ws, g)| crate::users::grant_text(ws, *g)).collect();
                    let users: Vec<&str> =
                        members.iter().filter(|(_, held)| held.iter().any(|h| h == name)).map(|(u, _)| u.as_str()).collect();
                    format!("{name} {} users={}", grants.join(" "), users.join(",")).replace("  ", " ")
                })
                .collect();
            Ok(Outcome::Lines(lines))
        }
        _ => Err(format!("expected {ROLE_USAGE}")),
    }
}

/// `SET ws name target roles predicate | DEL ws name | LIST [ws] | EXPLAIN user ws`.
pub fn policy(db: &Database, words: &[String]) -> Result<Outcome, String> {
    let sub = words.first().map(|s| s.to_ascii_uppercase()).unwrap_or_default();
    match (sub.as_str(), words.len()) {
        ("SET", 6) => {
            let roles = words[4].split(',').filter(|r| !r.is_empty()).map(str::to_owned).collect();
            let p = StoredPolicy { target: words[3].clone(), roles, predicate: words[5].clone() };
            db.put_policy(&words[1], &words[2], p).map(|()| Outcome::Ok).map_err(|e| e.to_string())
        }
        ("DEL", 3) => db.remove_policy(&words[1], &words[2]).map(Outcome::Changed).map_err(|e| e.to_string()),
        ("MASK", 6) => {
            let roles = words[5].split(',').filter(|r| !r.is_empty()).map(str::to_owned).collect();
            let m = StoredMask { on: words[3].clone(), mode: words[4].to_ascii_lowercase(), roles };
            db.put_mask(&words[1], &words[2], m).map(|()| Outcome::Ok).map_err(|e| e.to_string())
        }
        ("UNMASK", 3) => db.remove_mask(&words[1], &words[2]).map(Outcome::Changed).map_err(|e| e.to_string()),
        ("LIST", 1 | 2) => {
            let of_ws = |ws: &String| words.get(1).is_none_or(|w| w == ws);
            let mut lines: Vec<String> = db
                .policies()
                .iter()
                .filter(|(ws, _)| of_ws(ws))
                .flat_map(|(ws, ps)| ps.iter().map(move |(name, p)| policy_line(ws, name, p)))
                .collect();
            lines.extend(
                db.masks().iter().filter(|(ws, _)| of_ws(ws)).flat_map(|(ws, ms)| ms.iter().map(move |(name, m)| mask_line(ws, name, m))),
            );
            Ok(Outcome::Lines(lines))
        }
        ("EXPLAIN", 3) => explain(db, &words[1], &words[2]).map(Outcome::Lines),
        _ => Err(format!("expected {POLICY_USAGE}")),
    }
}

/// `ws name target roles=a,b predicate`.
fn policy_line(ws: &str, name: &str, p: &StoredPolicy) -> String {
    format!("{ws} {name} {} roles={} {}", p.target, p.roles.join(","), p.predicate)
}

/// `ws name mask ON MODE roles=a,b`.
fn mask_line(ws: &str, name: &str, m: &StoredMask) -> String {
    format!("{ws} {name} mask {} {} roles={}", m.on, m.mode, m.roles.join(","))
}

/// Which policies apply to `user` on `ws`, one line each, then what they hide from it there:
/// `hidden: N claims, M entities` (for the admin asking; the user never sees these counts).
pub fn explain(db: &Database, user: &str, ws: &str) -> Result<Vec<String>, String> {
    let principal: Principal = db.user_principal(user).ok_or_else(|| format!("no user `{user}`"))?;
    let mut lines: Vec<String> = db.policies_applying(&principal, ws).iter().map(|(name, p)| policy_line(ws, name, p)).collect();
    lines.extend(db.masks_applying(&principal, ws).iter().map(|(name, m)| mask_line(ws, name, m)));
    if lines.is_empty() {
        lines.push(format!("no policy of `{ws}` applies to `{user}`"));
    }
    let roles: Vec<&str> = principal.roles().collect();
    lines.insert(
        0,
        format!(
            "user {user} roles={} grant={}",
            roles.join(","),
            principal.grant_on(ws).map_or("none".to_owned(), |g| g.access.as_str().to_owned())
        ),
    );
    let scope = db.scope(std::sync::Arc::new(principal.grant(ws, engram::Access::Read, true))).audited_by_caller();
    let root = db.snapshot();
    if let (Ok(mine), Ok(all)) = (scope.workspace(ws), root.workspace(ws)) {
        let (a, b) = (mine.catalog(), all.catalog());
        lines.push(format!("hidden: {} claims, {} entities", b.claims.saturating_sub(a.claims), b.entities.saturating_sub(a.entities)));
    }
    Ok(lines)
}

/// `SET | DEL | GET` tags of a claim, an entity or a message of workspace `ws`, through `scope`
/// (setting needs `write` on it; reading shows only what the scope sees: a claim's tags include
/// its messages').
pub fn tag(scope: &engram::Scope, ws: &str, words: &[String]) -> Result<Outcome, String> {
    use engram::{Op, TagTarget};
    let usage = || format!("expected {TAG_USAGE}");
    let sub = words.first().map(|s| s.to_ascii_uppercase()).unwrap_or_default();
    let kind = words.get(1).map(|s| s.to_ascii_uppercase()).unwrap_or_default();
    let (target, rest) = match (kind.as_str(), words.get(2), words.get(3)) {
        ("CLAIM", Some(id), _) => (TagTarget::Claim(id.as_str().into()), &words[3..]),
        ("ENTITY", Some(id), _) => {
            // By external id, else by its one name.
            let view = scope.workspace(ws).map_err(|e| e.to_string())?;
            let e = view.entity_by_id_or_name(id).map_err(|e| e.to_string())?;
            (TagTarget::Entity(engram::EntityRef::Id(e)), &words[3..])
        }
        ("MESSAGE", Some(conv), Some(msg)) => {
            let message_id = (msg != "*").then(|| msg.clone());
            (TagTarget::Message { conversation_id: conv.clone(), message_id }, &words[4..])
        }
        _ => return Err(usage()),
    };
    let write = |set: std::collections::BTreeMap<String, String>, remove: Vec<String>| {
        let mut b = engram::WriteBatch::new(ws);
        b.push(Op::SetTags { target: target.clone(), set, remove, inherit: false });
        scope.write(&b).map(|_| Outcome::Ok).map_err(|e| e.to_string())
    };
    match sub.as_str() {
        "SET" if !rest.is_empty() => write(engram::tags::parse_pairs(rest.iter().map(String::as_str))?, Vec::new()),
        "DEL" if !rest.is_empty() => write(std::collections::BTreeMap::new(), rest.to_vec()),
        "GET" if rest.is_empty() => {
            let view = scope.workspace(ws).map_err(|e| e.to_string())?;
            let tags = match &target {
                TagTarget::Claim(engram::ClaimRef::Ext(id)) => {
                    view.claim_id(id).and_then(|c| view.claim_tags(c)).ok_or_else(|| format!("unknown claim `{id}` in this workspace"))?
                }
                TagTarget::Entity(engram::EntityRef::Id(e)) => view.entity_tags(*e).unwrap_or_default(),
                TagTarget::Message { conversation_id, message_id } => {
                    view.message_tags(conversation_id, message_id.as_deref()).unwrap_or_default()
                }
                _ => return Err(usage()),
            };
            Ok(Outcome::Tags(tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()))
        }
        _ => Err(usage()),
    }
}
