//! `ENGRAM.ENTITY` (one entity with its claims and their evidence, as the Explorer and MCP's
//! `open_nodes` show it) and `ENGRAM.SEARCH` (entities by name or alias).

use std::sync::Arc;

use engram::{ClaimState, Direction, StateSet, Timestamp, Value, Visibility, WorkspaceView};

use super::engram_cmds::{number, options, read_with, resolve};
use super::{arg, arity, error_reply};
use crate::resp::Reply;
use crate::state::Shared;

/// Claims an `ENGRAM.ENTITY` reply holds by default (`LIMIT`).
pub const ENTITY_CLAIMS_DEFAULT: usize = 100;
/// Entities an `ENGRAM.SEARCH` reply holds by default (`LIMIT`).
pub const SEARCH_DEFAULT: usize = 10;
/// The most `LIMIT` may ask of either.
pub const LIMIT_MAX: usize = 10_000;

fn int(n: usize) -> Reply {
    Reply::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn time(t: Timestamp) -> Reply {
    if t == Timestamp::MAX {
        Reply::Nil
    } else {
        Reply::text(t.to_rfc3339())
    }
}

fn opt_text(s: Option<&Arc<str>>) -> Reply {
    s.map_or(Reply::Nil, |s| Reply::text(s.to_string()))
}

fn property(v: &Value) -> Reply {
    match v {
        Value::Null => Reply::Nil,
        Value::Bool(b) => Reply::Bool(*b),
        Value::Int(i) => Reply::Int(*i),
        Value::Float(f) => Reply::Double(*f),
        Value::Str(s) => Reply::text(s.to_string()),
        Value::List(items) => Reply::Array(items.iter().map(property).collect()),
        Value::Floats(items) => Reply::Array(items.iter().map(|f| Reply::Double(*f)).collect()),
        Value::Map(m) => Reply::Map(m.iter().map(|(k, v)| (k.to_string(), property(v))).collect()),
        Value::Temporal(t) => Reply::text(t.to_string()),
        Value::Point(p) => super::values::point(p),
    }
}

/// An entity's short form: external id, name, type.
fn entity_ref(view: &WorkspaceView<'_>, e: engram::EntityId) -> Reply {
    match view.entity(e) {
        Some(ent) => Reply::Map(vec![
            ("id".to_owned(), Reply::text(ent.ext_id.to_string())),
            ("name".to_owned(), Reply::text(ent.name.to_string())),
            ("type".to_owned(), Reply::text(ent.entity_type.to_string())),
        ]),
        None => Reply::Nil,
    }
}

/// An entity record (without its claims).
pub(super) fn entity_record(view: &WorkspaceView<'_>, ent: &engram::Entity) -> Vec<(String, Reply)> {
    vec![
        ("id".to_owned(), Reply::text(ent.ext_id.to_string())),
        ("dense_id".to_owned(), Reply::Int(i64::from(ent.id.0))),
        ("type".to_owned(), Reply::text(ent.entity_type.to_string())),
        ("name".to_owned(), Reply::text(ent.name.to_string())),
        ("aliases".to_owned(), Reply::Array(ent.aliases.iter().map(|a| Reply::text(a.to_string())).collect())),
        ("properties".to_owned(), Reply::Map(ent.properties.iter().map(|(k, v)| (k.to_string(), property(v))).collect())),
        ("created_at".to_owned(), time(ent.created_at)),
        ("updated_at".to_owned(), time(ent.updated_at)),
        ("deleted".to_owned(), Reply::Bool(ent.deleted)),
        ("merged_into".to_owned(), ent.merged_into.map_or(Reply::Nil, |m| entity_ref(view, m))),
    ]
}

/// A claim record with its evidence, seen from `from` (its direction).
pub(super) fn claim_record(view: &WorkspaceView<'_>, c: &engram::Claim, direction: Option<Direction>) -> Reply {
    let evidence = view.evidence_of(c.id).unwrap_or_default();
    let mut fields = vec![("id".to_owned(), Reply::Int(i64::from(c.id.0))), ("ext_id".to_owned(), Reply::text(c.ext_id.to_string()))];
    if let Some(d) = direction {
        fields.push(("direction".to_owned(), Reply::text(if d == Direction::Out { "out" } else { "in" })));
    }
    fields.extend([
        ("subject".to_owned(), entity_ref(view, c.subject)),
        ("predicate".to_owned(), Reply::text(c.predicate.to_string())),
        ("object".to_owned(), entity_ref(view, c.object)),
        ("text".to_owned(), opt_text(c.text.as_ref())),
        ("confidence".to_owned(), Reply::Double(engram::shortest_f64(c.confidence))),
        ("state".to_owned(), Reply::text(c.state.as_str())),
        ("valid_from".to_owned(), time(c.valid_from)),
        ("valid_until".to_owned(), time(c.valid_until)),
        ("recorded_at".to_owned(), time(c.recorded_at)),
        ("superseded_by".to_owned(), c.superseded_by.map_or(Reply::Nil, |s| Reply::Int(i64::from(s.0)))),
        ("deleted".to_owned(), Reply::Bool(c.deleted)),
        (
            "evidence".to_owned(),
            Reply::Array(
                evidence
                    .iter()
                    .map(|v| {
                        Reply::Map(vec![
                            ("id".to_owned(), Reply::text(v.ext_id.to_string())),
                            ("conversation_id".to_owned(), opt_text(v.conversation_id.as_ref())),
                            ("message_id".to_owned(), opt_text(v.message_id.as_ref())),
                            ("snippet".to_owned(), opt_text(v.snippet.as_ref())),
                            ("model".to_owned(), opt_text(v.model.as_ref())),
                            ("observed_at".to_owned(), time(v.observed_at)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ]);
    Reply::Map(fields)
}

/// `ENGRAM.ENTITY ws id [LIMIT n] [AS_OF t]`: the entity (by external id, else by its one name)
/// and its claims in both directions, every state and version (deprecated ones included, so a
/// reader sees what was replaced; with `AS_OF`, those valid then), soft-deleted ones left out;
/// `claims_total` counts them all.
pub(super) async fn entity(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(id)) = (arg(args, 1), arg(args, 2)) else { return arity("engram.entity") };
    let opts: Vec<(String, String)> = match options(args, 3, &["LIMIT", "AS_OF"]) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let id = id.to_owned();
    let s = shared.clone();
    read_with(shared, who, ws.to_owned(), move |view| {
        let mut limit = ENTITY_CLAIMS_DEFAULT;
        // Without AS_OF: every version (history included: a replaced claim's valid time has
        // ended), soft-deleted ones dropped below. With AS_OF: what was valid then, any state.
        let mut visibility = Visibility::all_versions();
        for (k, v) in &opts {
            if k == "LIMIT" {
                limit = number::<usize>("LIMIT", v)?;
                if limit > LIMIT_MAX {
                    return Err(Reply::err(format!("LIMIT {limit} is over {LIMIT_MAX}")));
                }
            } else {
                let at = Timestamp::parse(v).map_err(|e| Reply::err(format!("AS_OF: {e}")))?;
                visibility = Visibility { as_of: Some(at), states: StateSet::ALL, ..Visibility::default() };
            }
        }
        let e = resolve(view, &id)?;
        let Some(ent) = view.entity(e) else { return Err(Reply::err(format!("no entity `{id}` in the workspace"))) };
        let q = engram::NeighborQuery { visibility, ..engram::NeighborQuery::default() };
        let page = view.neighbors(e, &q).map_err(|e| error_reply(&s, &e.into()))?;
        let shown: Vec<_> = page.items.iter().filter_map(|n| view.claim(n.claim).filter(|c| !c.deleted).map(|c| (n, c))).collect();
        let total = shown.len();
        let claims: Vec<Reply> = shown.iter().take(limit).map(|(n, c)| claim_record(view, c, Some(n.direction))).collect();
        let mut fields = entity_record(view, &ent);
        fields.push(("claims".to_owned(), Reply::Array(claims)));
        fields.push(("claims_total".to_owned(), int(total)));
        Ok(Reply::Map(fields))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// How well `name` matches the normalised `needle`: 0 exact, 1 prefix, 2 contains.
fn rank(name: &str, needle: &str) -> Option<u8> {
    let n = name.to_lowercase();
    if n == needle {
        Some(0)
    } else if n.starts_with(needle) {
        Some(1)
    } else if n.contains(needle) {
        Some(2)
    } else {
        None
    }
}

/// `ENGRAM.SEARCH ws text [OFFSET n] [LIMIT n]`: entities whose name or an alias equals, starts with or
/// contains `text` (case-insensitive), best match first, then by name; deleted ones left out.
/// A scan of the workspace's entities: meant for people and agents looking up a name, not for
/// a hot path.
pub(super) async fn search(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(text)) = (arg(args, 1), arg(args, 2)) else { return arity("engram.search") };
    let opts: Vec<(String, String)> = match options(args, 3, &["OFFSET", "LIMIT"]) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let needle = text.trim().to_lowercase();
    read_with(shared, who, ws.to_owned(), move |view| {
        let (mut limit, mut offset) = (SEARCH_DEFAULT, 0usize);
        for (k, v) in &opts {
            if k == "OFFSET" {
                offset = number("OFFSET", v)?;
                continue;
            }
            limit = number::<usize>("LIMIT", v)?;
            if limit > LIMIT_MAX {
                return Err(Reply::err(format!("LIMIT {limit} is over {LIMIT_MAX}")));
            }
        }
        let mut found: Vec<(u8, Arc<str>, engram::Entity)> = Vec::new();
        for t in &view.catalog().types {
            for e in view.entities_of_type(&t.name) {
                let Some(ent) = view.entity(e) else { continue };
                if ent.deleted {
                    continue;
                }
                let best = std::iter::once(&ent.name).chain(ent.aliases.iter()).filter_map(|n| rank(n, &needle)).min();
                if let Some(r) = best {
                    found.push((r, ent.name.clone(), ent));
                }
            }
        }
        found.sort_by(|a, b| (a.0, &a.1, a.2.id).cmp(&(b.0, &b.1, b.2.id)));
        let total = found.len();
        let items = found
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|(_, _, ent)| {
                let claims = view.neighbors(ent.id, &engram::NeighborQuery::default()).map_or(0, |p| p.items.len());
                let mut fields = entity_record(view, &ent);
                fields.push(("claims".to_owned(), int(claims)));
                Reply::Map(fields)
            })
            .collect();
        Ok(Reply::Map(vec![("items".to_owned(), Reply::Array(items)), ("total".to_owned(), int(total))]))
    })
    .await
    .unwrap_or_else(|r| r)
}

/// A claim of `view` by dense id or external id.
fn claim_of(view: &WorkspaceView<'_>, id: &str) -> Result<engram::Claim, Reply> {
    let found = view.claim_id(id).or_else(|| id.parse::<u32>().ok().map(engram::ClaimId)).and_then(|c| view.claim(c));
    found.ok_or_else(|| Reply::err(format!("no claim `{id}` in the workspace")))
}

/// `ENGRAM.CLAIM ws id`: one claim (dense or external id) with its evidence, whatever its state.
pub(super) async fn claim(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let (Some(ws), Some(id), 3) = (arg(args, 1), arg(args, 2), args.len()) else { return arity("engram.claim") };
    let id = id.to_owned();
    read_with(shared, who, ws.to_owned(), move |view| Ok(claim_record(view, &claim_of(view, &id)?, None))).await.unwrap_or_else(|r| r)
}

/// `ENGRAM.CLAIMS ws [PREDICATE p] [STATE proposed|accepted|deprecated|current|all]
/// [PROPERTY k=v]… [OFFSET n] [LIMIT n]`: claims newest first (by recorded time), soft-deleted ones left out; `total`
/// counts them all.
pub(super) async fn claims(shared: &Arc<Shared>, who: Arc<engram::Principal>, args: &[Vec<u8>]) -> Reply {
    let Some(ws) = arg(args, 1) else { return arity("engram.claims") };
    let opts: Vec<(String, String)> = match options(args, 2, &["PREDICATE", "STATE", "OFFSET", "LIMIT", "PROPERTY"]) {
        Ok(o) => o,
        Err(r) => return r,
    };
    read_with(shared, who, ws.to_owned(), move |view| {
        let (mut predicate, mut states, mut offset, mut limit) =
            (None, vec![ClaimState::Proposed, ClaimState::Accepted], 0usize, SEARCH_DEFAULT);
        let mut properties: Vec<(String, Value)> = Vec::new();
        for (k, v) in &opts {
            match k.as_str() {
                "PREDICATE" => predicate = Some(v.clone()),
                "STATE" => {
                    states = match v.to_ascii_lowercase().as_str() {
                        "current" => vec![ClaimState::Proposed, ClaimState::Accepted],
                        "all" => ClaimState::ALL.to_vec(),
                        s => vec![ClaimState::ALL
                            .into_iter()
                            .find(|x| x.as_str() == s)
                            .ok_or_else(|| Reply::err(format!("STATE: `{v}` is not proposed, accepted, deprecated, current or all")))?],
                    }
                }
                "OFFSET" => offset = number("OFFSET", v)?,
                "PROPERTY" => {
                    let (key, value) = v.split_once('=').ok_or_else(|| Reply::err(format!("PROPERTY: `{v}` is not key=value")))?;
                    properties.push((key.to_owned(), Value::Str(value.into())));
                }
                _ => {
                    limit = number("LIMIT", v)?;
                    if limit > LIMIT_MAX {
                        return Err(Reply::err(format!("LIMIT {limit} is over {LIMIT_MAX}")));
                    }
                }
            }
        }
        let mut found: Vec<engram::Claim> = states
            .iter()
            .flat_map(|s| view.claims_with(predicate.as_deref(), *s))
            .filter(|c| properties.iter().all(|(k, v)| view.claim_property(*c, k) == Some(v)))
            .filter_map(|c| view.claim(c))
            .collect();
        found.sort_by_key(|c| std::cmp::Reverse((c.recorded_at, c.id)));
        let total = found.len();
        let items = found.iter().skip(offset).take(limit).map(|c| claim_record(view, c, None)).collect();
        Ok(Reply::Map(vec![("items".to_owned(), Reply::Array(items)), ("total".to_owned(), int(total))]))
    })
    .await
    .unwrap_or_else(|r| r)
}
