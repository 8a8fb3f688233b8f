//! The JSON-lines exchange format: `engram export` writes it, `engram import --jsonl` reads it,
//! and export → import → export gives the same lines. One object per line, tagged by `kind`:
//!
//! ```text
//! {"kind":"workspace","name":"default"}
//! {"kind":"predicate","workspace":"default","name":"subclass_of","cardinality":"many","inverse":null,"transitive":true,"half_life_days":null}
//! {"kind":"entity","workspace":"default","id":"auth","type":"service","name":"AuthService","aliases":["auth-svc"],"properties":{"tier":1},"deleted":false}
//! {"kind":"claim","workspace":"default","id":"c1","subject":"auth","predicate":"uses","object":"kafka","text":null,"confidence":0.9,"state":"ACCEPTED","valid_from":"2026-03-01T00:00:00Z","valid_until":null,"expires_at":null,"superseded_by":null,"sensitive":false,"deleted":false}
//! {"kind":"evidence","workspace":"default","id":"v1","claim":"c1","conversation_id":"conv-3","message_id":null,"model":null,"model_version":null,"raw_confidence":null,"snippet":null,"reasoning":null,"observed_at":"2026-03-01T00:00:00Z"}
//! {"kind":"merge","workspace":"default","from":"auth-svc","into":"auth"}
//! ```
//!
//! Every field shown is required (`null` where empty), except evidence `reasoning`, which
//! exports from before it existed lack; any other field is an error. Elements the query language
//! wrote add optional fields, absent otherwise: an entity's `labels` (all of them, as written,
//! when it has more than its type) and `"bare": true` (it shows only its properties), a claim's
//! `properties` (typed, as written) and `"bare": true` (its type keeps its case). Transaction
//! times are not exported: an import records its own. Tags (`crate::tags`) add an optional
//! `tags` object (`{"key": "value"}`) to entities and claims (a claim's own; `sensitive` stands for
//! its `sensitivity: sensitive`), and a `message` line gives the tags of a message (or, with a
//! null `message_id`, of a conversation) that exported evidence came from:
//! `{"kind":"message","workspace":"default","conversation_id":"conv-3","message_id":"m1","tags":{"sensitivity":"confidential"}}`.
//! A workspace's row and masking policies (`docs/security.md`) follow its `workspace` line when
//! the exporter is an admin of it, and the roles (their grants, not who holds them) come first
//! when it is an admin of `*` (users, memberships and the masks' hashing secret are never
//! exported: an import hashes with its own secret):
//! `{"kind":"role","name":"agent","grants":{"support":{"access":"write","see_sensitive":true}}}`,
//! `{"kind":"policy","workspace":"default","name":"own","target":"claims","roles":["agent"],"predicate":"c.user_id = $user"}`,
//! `{"kind":"mask","workspace":"default","name":"pii","on":"pii:*","mode":"redact","roles":["engineer"]}`.
//! An admin's export also gives each workspace's stored settings (its constraints, index
//! declarations, sensitive keys, …), one `setting` line each:
//! `{"kind":"setting","workspace":"default","key":"sensitive_properties","value":"ssn"}`. An import
//! stores roles first, then each workspace's settings and policies before its rows, so what it
//! writes is never readable without them.
//! Lines of a workspace come after its `workspace` line; within it, settings, policies, masks,
//! predicates, entities, claims, messages, evidence, merges.
//!
//! Entity merges that stand are exported as they happened, so an import can undo them too: the
//! other lines show the workspace as it was before its standing merges (claims at their original
//! ends, the survivor without the names the merge gave it, the merged entity live), and each
//! `merge` line, oldest first, is applied by the import after the entities, claims and evidence
//! and before deprecations and deletions — giving the same claims, aliases and merge records.

use crate::db::scope::Scope;
use crate::db::Database;
use crate::error::Error;
use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId};
use crate::model::{Cardinality, ClaimState};
use crate::read::scope::{ReadContext, Ticker, ROOT_CONTEXT};
use crate::read::view::{Snapshot, WorkspaceView};
use crate::read::visibility::Visibility;
use crate::time::Timestamp;
use crate::value::{Properties, Value};
use crate::write::batch::{
    AddClaim, AddEvidence, CreateNode, CreateRelationship, DeclarePredicate, Element, Op, TagTarget, UpsertEntity, WriteBatch,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
#[allow(missing_docs)] // Reason: the fields are documented by the format in the module doc.
pub enum Line {
    Workspace {
        name: String,
    },
    Predicate {
        workspace: String,
        name: String,
        cardinality: String,
        inverse: Option<String>,
        transitive: bool,
        half_life_days: Option<f64>,
    },
    Entity {
        workspace: String,
        id: String,
        #[serde(rename = "type")]
        entity_type: String,
        name: String,
        aliases: Vec<String>,
        properties: serde_json::Map<String, serde_json::Value>,
        deleted: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        labels: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "is_false")]
        bare: bool,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        tags: BTreeMap<String, String>,
    },
    Claim {
        workspace: String,
        id: String,
        subject: String,
        predicate: String,
        object: String,
        text: Option<String>,
        confidence: f32,
        state: String,
        valid_from: String,
        valid_until: Option<String>,
        expires_at: Option<String>,
        superseded_by: Option<String>,
        sensitive: bool,
        deleted: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        properties: Option<serde_json::Map<String, serde_json::Value>>,
        #[serde(default, skip_serializing_if = "is_false")]
        bare: bool,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        tags: BTreeMap<String, String>,
    },
    Evidence {
        workspace: String,
        id: String,
        claim: String,
        conversation_id: Option<String>,
        message_id: Option<String>,
        model: Option<String>,
        model_version: Option<String>,
        raw_confidence: Option<f32>,
        snippet: Option<String>,
        #[serde(default)]
        reasoning: Option<String>,
        observed_at: String,
    },
    Merge {
        workspace: String,
        from: String,
        into: String,
    },
    Message {
        workspace: String,
        conversation_id: String,
        message_id: Option<String>,
        tags: BTreeMap<String, String>,
    },
    Role {
        name: String,
        grants: BTreeMap<String, RoleGrant>,
    },
    Policy {
        workspace: String,
        name: String,
        target: String,
        roles: Vec<String>,
        predicate: String,
    },
    Mask {
        workspace: String,
        name: String,
        on: String,
        mode: String,
        roles: Vec<String>,
    },
    Setting {
        workspace: String,
        key: String,
        value: String,
    },
}

/// The `message` lines of the messages (and conversations) the exported evidence came from.
fn message_lines<'e>(ws: &WorkspaceView<'_>, workspace: &str, evidence: impl Iterator<Item = &'e crate::model::Evidence>) -> Vec<Line> {
    let mut messages: std::collections::BTreeSet<(String, Option<String>)> = std::collections::BTreeSet::new();
    for v in evidence {
        if let Some(conv) = &v.conversation_id {
            messages.insert((conv.to_string(), None));
            if let Some(m) = &v.message_id {
                messages.insert((conv.to_string(), Some(m.to_string())));
            }
        }
    }
    messages
        .into_iter()
        .filter_map(|(conv, msg)| {
            let tags = ws.message_tags(&conv, msg.as_deref())?;
            Some(Line::Message { workspace: workspace.to_owned(), conversation_id: conv, message_id: msg, tags: tag_map(Some(tags)) })
        })
        .collect()
}

/// The operation that gives `target` the exported `tags`.
fn set_tags(target: TagTarget, tags: BTreeMap<String, String>) -> Op {
    Op::SetTags { target, set: tags, remove: Vec::new(), inherit: false }
}

/// A claim's own tags as exported: the flag is written as `sensitive`, the tag it stands for is
/// implied; the `pii` tag is the detector's, made again from the text on import.
fn own_tags(ws: &WorkspaceView<'_>, c: ClaimId, sensitive: bool) -> BTreeMap<String, String> {
    let mut t = tag_map(ws.claim_own_tags(c));
    t.remove(crate::pii::TAG);
    if sensitive && t.get(crate::tags::SENSITIVITY).map(String::as_str) == Some(crate::tags::SENSITIVE_LEVEL) {
        t.remove(crate::tags::SENSITIVITY);
    }
    t
}

/// Tags as an export writes them.
fn tag_map(t: Option<crate::tags::Tags>) -> BTreeMap<String, String> {
    t.unwrap_or_default().iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[allow(clippy::trivially_copy_pass_by_ref)] // Reason: serde's `skip_serializing_if` passes a reference.
fn is_false(b: &bool) -> bool {
    !*b
}

fn to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => (*i).into(),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::Str(s) => s.as_ref().into(),
        Value::List(items) => items.iter().map(to_json).collect(),
        Value::Floats(items) => items.iter().map(|f| to_json(&Value::Float(*f))).collect(),
        Value::Map(m) => m.iter().map(|(k, v)| (k.to_string(), to_json(v))).collect::<serde_json::Map<_, _>>().into(),
        // JSON has no temporal type: a one-key object naming the kind, read back as the value.
        Value::Temporal(t) => serde_json::json!({ format!("${}", t.kind().name()): t.to_string() }),
        // Nor a point: `{"$point": {"crs": …, …}}`, its map as `point()` takes it.
        Value::Point(p) => serde_json::json!({ "$point": crate::exec::point_json(p) }),
    }
}

/// A `{"$date": "2024-05-06"}`-style object (the export's form of a temporal value) as its value.
fn temporal_json(m: &serde_json::Map<String, serde_json::Value>) -> Option<Value> {
    let t = crate::exec::tagged_temporal(m.iter().map(|(k, v)| (k.as_str(), v.as_str())))?.ok()?;
    Some(Value::Temporal(Box::new(t)))
}

fn from_json(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => n.as_i64().map_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN)), Value::Int),
        serde_json::Value::String(s) => Value::Str(Arc::from(s.as_str())),
        // Packed when floats only, as the query language stores such a list.
        serde_json::Value::Array(a) => Value::list(a.iter().map(from_json).collect()),
        serde_json::Value::Object(m) if m.len() == 1 && m.contains_key("$point") => match crate::exec::tagged_point(&m["$point"]) {
            Ok(p) => Value::Point(Box::new(p)),
            Err(_) => Value::Map(m.iter().map(|(k, v)| (Arc::from(k.as_str()), from_json(v))).collect()),
        },
        serde_json::Value::Object(m) => {
            temporal_json(m).unwrap_or_else(|| Value::Map(m.iter().map(|(k, v)| (Arc::from(k.as_str()), from_json(v))).collect()))
        }
    }
}

fn time(t: Timestamp) -> Option<String> {
    (t != Timestamp::MAX).then(|| t.to_rfc3339())
}

/// `snap` with every standing merge undone, newest first, and the merges undone as
/// `(workspace, from, into)` external ids, oldest first; `snap` itself when none stands.
pub(super) fn before_merges(snap: &Snapshot) -> (Snapshot, Vec<(crate::ids::WorkspaceId, String, String)>) {
    let st = &snap.state;
    let standing: Vec<&crate::state::MergeRecord> = st.entities.merges.iter().filter(|m| m.undone_at == Timestamp::MAX).collect();
    if standing.is_empty() {
        return (Snapshot { state: snap.state.clone(), now: snap.now }, Vec::new());
    }
    let ext = |e: u32| st.entities.ext_id.get(e as usize).to_owned();
    let merges: Vec<_> = standing.iter().map(|m| (*st.entities.ws.get(m.from as usize), ext(m.from), ext(m.into))).collect();
    let mut copy = (**st).clone();
    for (ws, from, _) in merges.iter().rev() {
        let Some(Some(info)) = st.catalog.workspaces.get(ws.0 as usize) else { continue };
        let mut b = WriteBatch::new(&info.name);
        b.push(Op::UnmergeEntity { entity: from.as_str().into() });
        // Undoing standing merges newest first always applies; should one not, the export
        // still shows the merged state (and the merge line then fails its import loudly).
        let _ = crate::write::apply::apply_batch(&mut copy, &b, st.committed_at, &crate::limits::Limits::default());
    }
    (Snapshot { state: Arc::new(copy), now: snap.now }, merges)
}

/// Every line of `snap`'s export, in order.
pub fn export(snap: &Snapshot) -> Vec<String> {
    let (copy, merges) = before_merges(snap);
    match export_views(&copy, &merges, copy.workspaces(), |name| copy.workspace(name).ok(), &|_| true, &ROOT_CONTEXT, None) {
        Ok(lines) => lines,
        Err(_) => unreachable!("the root context is never interrupted"),
    }
}

/// The export a principal may see: the workspaces it may read, without the claims and property
/// keys hidden from it, under its scope's deadline and cancel token (checked every
/// `CHECK_EVERY` rows; an interrupted export returns nothing).
pub fn export_scope(scope: &Scope) -> Result<Vec<String>, ReadError> {
    let (copy, merges) = before_merges(scope.snapshot());
    let admin = |ws: &str| scope.principal().may(ws, crate::read::scope::Access::Admin);
    export_views(&copy, &merges, scope.workspaces(), |name| scope.view_on(&copy, name).ok(), &admin, scope.context(), None)
}

/// `export_scope` of only what `at` sees (a moved valid or transaction time: the memory as it
/// was then): entities and claims `at` hides are left out, with their evidence. Such an export
/// is a report of a past view, not a copy of the database.
pub fn export_scope_at(scope: &Scope, at: &Visibility) -> Result<Vec<String>, ReadError> {
    let (copy, merges) = before_merges(scope.snapshot());
    let admin = |ws: &str| scope.principal().may(ws, crate::read::scope::Access::Admin);
    export_views(&copy, &merges, scope.workspaces(), |name| scope.view_on(&copy, name).ok(), &admin, scope.context(), Some(at))
}

/// The `predicate` lines of workspace `w`, by name.
fn predicate_lines(st: &crate::state::State, w: &crate::model::WorkspaceInfo) -> Vec<Line> {
    let mut preds: Vec<_> = st.catalog.predicate_defs.iter().filter(|((wid, _), _)| *wid == w.id).map(|(_, d)| d.clone()).collect();
    preds.sort_by(|a, b| a.name.cmp(&b.name));
    preds
        .into_iter()
        .map(|d| Line::Predicate {
            workspace: w.name.to_string(),
            name: d.name.to_string(),
            cardinality: if d.cardinality == Cardinality::One { "one" } else { "many" }.to_owned(),
            inverse: d.inverse.as_deref().map(str::to_owned),
            transitive: d.transitive,
            half_life_days: d.half_life_days,
        })
        .collect()
}

/// The `role` lines: each role's grants.
fn role_lines(settings: &crate::settings::Settings) -> Vec<Line> {
    let grant = |g: &crate::settings::StoredGrant| RoleGrant { access: g.access().as_str().to_owned(), see_sensitive: g.see_sensitive };
    let lines = settings
        .roles
        .iter()
        .map(|(name, r)| Line::Role { name: name.clone(), grants: r.grants.iter().map(|(ws, g)| (ws.clone(), grant(g))).collect() });
    lines.collect()
}

/// The `policy` and `mask` lines of workspace `ws`.
/// The `setting` lines of workspace `ws`: its stored settings, by key (its constraints, index
/// declarations and sensitive keys among them).
fn setting_lines(settings: &crate::settings::Settings, ws: &str) -> Vec<Line> {
    let all = settings.workspaces.get(ws).into_iter().flatten();
    all.map(|(key, value)| Line::Setting { workspace: ws.to_owned(), key: key.clone(), value: value.clone() }).collect()
}

fn policy_lines(settings: &crate::settings::Settings, ws: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for (name, p) in settings.policies.get(ws).into_iter().flatten() {
        out.push(Line::Policy {
            workspace: ws.to_owned(),
            name: name.clone(),
            target: p.target.clone(),
            roles: p.roles.clone(),
            predicate: p.predicate.clone(),
        });
    }
    for (name, m) in settings.masks.get(ws).into_iter().flatten() {
        out.push(Line::Mask {
            workspace: ws.to_owned(),
            name: name.clone(),
            on: m.on.clone(),
            mode: m.mode.clone(),
            roles: m.roles.clone(),
        });
    }
    out
}

/// The lines of `workspaces`, each read through the view `open` gives for it; the policies of
/// those `governs` says the exporter administers.
pub(super) fn export_views<'s>(
    snap: &'s Snapshot,
    merges: &[(crate::ids::WorkspaceId, String, String)],
    workspaces: Vec<crate::model::WorkspaceInfo>,
    open: impl Fn(&str) -> Option<WorkspaceView<'s>>,
    governs: &dyn Fn(&str) -> bool,
    cx: &ReadContext,
    at: Option<&Visibility>,
) -> Result<Vec<String>, ReadError> {
    let mut out = Vec::new();
    let line = |l: Line| serde_json::to_string(&l).expect("lines serialize");
    let st = &snap.state;
    if governs("*") {
        out.extend(role_lines(&st.settings).into_iter().map(line));
    }
    let mut ticker = Ticker::new(cx);
    for w in workspaces {
        let Some(ws) = open(&w.name) else { continue };
        out.push(line(Line::Workspace { name: w.name.to_string() }));
        if governs(&w.name) {
            out.extend(setting_lines(&st.settings, &w.name).into_iter().map(line));
            out.extend(policy_lines(&st.settings, &w.name).into_iter().map(line));
        }
        out.extend(predicate_lines(st, &w).into_iter().map(line));
        let ents = st.bitmaps.entities_by_ws.get(&w.id).map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default();
        for e in ents {
            ticker.tick(1).map_err(ReadError::Interrupted)?;
            let Some(ent) = ws.entity(EntityId(e)) else { continue };
            if at.is_some_and(|v| !ws.entity_visible(EntityId(e), v)) {
                continue;
            }
            let bare = ws.entity_bare(EntityId(e));
            let labels = ws.entity_labels(EntityId(e));
            let labels = (bare || labels.len() > 1)
                .then(|| labels.into_iter().filter_map(|t| ws.type_name(t)).map(|n| n.to_string()).collect::<Vec<_>>());
            out.push(line(Line::Entity {
                workspace: w.name.to_string(),
                id: ent.ext_id.to_string(),
                entity_type: ent.entity_type.to_string(),
                name: ent.name.to_string(),
                aliases: ent.aliases.iter().map(ToString::to_string).collect(),
                properties: ent.properties.iter().map(|(k, v)| (k.to_string(), to_json(v))).collect(),
                deleted: ent.deleted,
                labels,
                bare,
                tags: tag_map(ws.entity_tags(EntityId(e)).map(|mut t| {
                    t.remove(crate::pii::TAG);
                    t
                })),
            }));
        }
        let claims = st.bitmaps.claims_by_ws.get(&w.id).map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default();
        let ext = |e: EntityId| ws.entity(e).map_or_else(String::new, |x| x.ext_id.to_string());
        let mut evidence = Vec::new();
        for c in &claims {
            ticker.tick(1).map_err(ReadError::Interrupted)?;
            let Some(claim) = ws.claim(ClaimId(*c)) else { continue };
            if at.is_some_and(|v| !ws.claim_visible(ClaimId(*c), v)) {
                continue;
            }
            out.push(line(Line::Claim {
                workspace: w.name.to_string(),
                id: claim.ext_id.to_string(),
                subject: ext(claim.subject),
                predicate: claim.predicate.to_string(),
                object: ext(claim.object),
                text: claim.text.as_deref().map(str::to_owned),
                confidence: claim.confidence,
                state: claim.state.as_str().to_owned(),
                valid_from: claim.valid_from.to_rfc3339(),
                valid_until: time(claim.valid_until),
                expires_at: time(claim.expires_at),
                superseded_by: claim.superseded_by.and_then(|s| ws.claim(s)).map(|s| s.ext_id.to_string()),
                sensitive: claim.sensitive,
                deleted: claim.deleted,
                properties: {
                    let props: serde_json::Map<String, serde_json::Value> =
                        ws.claim_properties(ClaimId(*c)).map(|(k, v)| (k.to_string(), to_json(v))).collect();
                    (!props.is_empty()).then_some(props)
                },
                bare: ws.claim_bare(ClaimId(*c)),
                tags: own_tags(&ws, ClaimId(*c), claim.sensitive),
            }));
            evidence.extend(ws.evidence_of(ClaimId(*c)).unwrap_or_default().into_iter().map(|v| (v.id, claim.ext_id.to_string(), v)));
        }
        evidence.sort_by_key(|x| x.0);
        out.extend(message_lines(&ws, &w.name, evidence.iter().map(|x| &x.2)).into_iter().map(line));
        for (_, claim, v) in evidence {
            out.push(line(Line::Evidence {
                workspace: w.name.to_string(),
                id: v.ext_id.to_string(),
                claim,
                conversation_id: v.conversation_id.as_deref().map(str::to_owned),
                message_id: v.message_id.as_deref().map(str::to_owned),
                model: v.model.as_deref().map(str::to_owned),
                model_version: v.model_version.as_deref().map(str::to_owned),
                raw_confidence: v.raw_confidence,
                snippet: v.snippet.as_deref().map(str::to_owned),
                reasoning: v.reasoning.as_deref().map(str::to_owned),
                observed_at: v.observed_at.to_rfc3339(),
            }));
        }
        for (_, from, into) in merges.iter().filter(|m| m.0 == w.id) {
            out.push(line(Line::Merge { workspace: w.name.to_string(), from: from.clone(), into: into.clone() }));
        }
    }
    Ok(out)
}

/// A bad line: its number, the column, and what was wrong.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct JsonlError {
    /// File name as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (1 when the problem is the line's meaning).
    pub column: usize,
    /// What was wrong.
    pub message: String,
}

fn parse_time(file: &str, line: usize, field: &str, s: &str) -> Result<Timestamp, JsonlError> {
    Timestamp::parse(s).map_err(|e| JsonlError { file: file.to_owned(), line, column: 1, message: format!("{field}: {e}") })
}

/// The batches of an import, in the order they are written (per workspace).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// Predicates, entities, claims, evidence.
    Main,
    /// Entity merges, once everything they move exists.
    Merges,
    /// Lifecycle changes (supersession, deletion) once everything they name exists.
    After,
}

const PHASES: [Phase; 3] = [Phase::Main, Phase::Merges, Phase::After];

/// Per workspace, the batches an import writes, one per phase.
#[derive(Default)]
struct Plan {
    order: Vec<String>,
    batches: BTreeMap<(String, Phase), WriteBatch>,
    /// The line of each operation, to name it when the database refuses one.
    lines: BTreeMap<(String, Phase), Vec<usize>>,
}

impl Plan {
    fn has(&self, ws: &str) -> bool {
        self.batches.contains_key(&(ws.to_owned(), Phase::Main))
    }

    fn push(&mut self, ws: &str, phase: Phase, line: usize, op: Op) {
        self.batches.get_mut(&(ws.to_owned(), phase)).expect("the workspace line came first").push(op);
        self.lines.entry((ws.to_owned(), phase)).or_default().push(line);
    }
}

#[allow(clippy::too_many_lines)] // Reason: one match arm per line kind keeps the format in one place.
/// Parses `text` (JSON lines) completely, then writes it: each workspace is created if absent and
/// filled by one atomic batch (plus one for deprecations and deletions). A bad line stops
/// everything before the first write.
pub fn import(db: &Database, text: &str, file: &str) -> Result<usize, ImportError> {
    let mut plan = Plan::default();
    let mut policies: Vec<(usize, String, String, Governance)> = Vec::new();
    let mut roles: Vec<RoleLine> = Vec::new();
    let mut settings: Vec<(usize, String, String, String)> = Vec::new();
    let mut count = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(raw).map_err(|e| JsonlError {
            file: file.to_owned(),
            line: n,
            column: e.column(),
            message: e.to_string(),
        })?;
        count += 1;
        let bad = |message: String| JsonlError { file: file.to_owned(), line: n, column: 1, message };
        let ws_of = |plan: &mut Plan, ws: &str| -> Result<(), JsonlError> {
            if plan.has(ws) {
                Ok(())
            } else {
                Err(bad(format!("workspace `{ws}` has no `workspace` line before this one")))
            }
        };
        match line {
            Line::Workspace { name } => {
                if !plan.has(&name) {
                    plan.order.push(name.clone());
                    for phase in PHASES {
                        plan.batches.insert((name.clone(), phase), WriteBatch::new(&name));
                    }
                }
            }
            Line::Predicate { workspace, name, cardinality, inverse, transitive, half_life_days } => {
                ws_of(&mut plan, &workspace)?;
                let cardinality = match cardinality.as_str() {
                    "one" => Cardinality::One,
                    "many" => Cardinality::Many,
                    other => return Err(bad(format!("cardinality `{other}` is not `one` or `many`")).into()),
                };
                plan.push(
                    &workspace,
                    Phase::Main,
                    n,
                    Op::DeclarePredicate(DeclarePredicate { name, cardinality, inverse, transitive, half_life_days }),
                );
            }
            Line::Entity { workspace, id, entity_type, name, aliases, properties, deleted, labels, bare, tags } => {
                ws_of(&mut plan, &workspace)?;
                let properties: Properties = properties.iter().map(|(k, v)| (Arc::from(k.as_str()), from_json(v))).collect();
                if bare {
                    // Written by the query language: its labels and properties as written.
                    let labels = labels.unwrap_or_default();
                    plan.push(&workspace, Phase::Main, n, Op::CreateNode(CreateNode { ext_id: Some(id.clone()), labels, properties }));
                } else {
                    plan.push(
                        &workspace,
                        Phase::Main,
                        n,
                        Op::UpsertEntity(UpsertEntity { ext_id: id.clone(), entity_type, name, aliases, properties }),
                    );
                    if let Some(labels) = labels.filter(|l| l.len() > 1) {
                        let add = labels[1..].to_vec();
                        plan.push(&workspace, Phase::Main, n, Op::SetLabels { entity: id.clone().into(), add, remove: Vec::new() });
                    }
                }
                if !tags.is_empty() {
                    plan.push(&workspace, Phase::Main, n, set_tags(TagTarget::Entity(id.clone().into()), tags));
                }
                if deleted {
                    plan.push(&workspace, Phase::After, n, Op::DeleteEntity { entity: id.into() });
                }
            }
            Line::Claim {
                workspace,
                id,
                subject,
                predicate,
                object,
                text,
                confidence,
                state,
                valid_from,
                valid_until,
                expires_at,
                superseded_by,
                sensitive,
                deleted,
                properties,
                bare,
                tags,
            } => {
                ws_of(&mut plan, &workspace)?;
                let state =
                    ClaimState::parse(&state).ok_or_else(|| bad(format!("state `{state}` is not PROPOSED, ACCEPTED or DEPRECATED")))?;
                let superseded = state == ClaimState::Deprecated && superseded_by.is_some();
                let mut claim = AddClaim::new(subject.as_str(), &predicate, object.as_str())
                    .id(&id)
                    .confidence(confidence)
                    .state(if superseded { ClaimState::Proposed } else { state });
                claim.text = text;
                claim.valid_from = Some(parse_time(file, n, "valid_from", &valid_from)?);
                claim.valid_until = valid_until.map(|t| parse_time(file, n, "valid_until", &t)).transpose()?;
                claim.expires_at = expires_at.map(|t| parse_time(file, n, "expires_at", &t)).transpose()?;
                claim.sensitive = sensitive;
                let properties: Option<Properties> =
                    properties.map(|p| p.iter().map(|(k, v)| (Arc::from(k.as_str()), from_json(v))).collect());
                if bare {
                    // Written by the query language: its type and properties as written.
                    let rel = CreateRelationship {
                        valid_from: claim.valid_from,
                        ext_id: Some(id.clone()),
                        subject: subject.as_str().into(),
                        rel_type: predicate,
                        object: object.as_str().into(),
                        properties: properties.unwrap_or_default(),
                    };
                    plan.push(&workspace, Phase::Main, n, Op::CreateRelationship(rel));
                    if state == ClaimState::Accepted {
                        plan.push(&workspace, Phase::After, n, Op::AcceptClaim { claim: id.clone().into() });
                    }
                    if state == ClaimState::Deprecated && !superseded {
                        plan.push(&workspace, Phase::After, n, Op::Deprecate { claim: id.clone().into(), superseded_by: None });
                    }
                } else {
                    plan.push(&workspace, Phase::Main, n, Op::AddClaim(claim));
                    if let Some(properties) = properties {
                        let target = Element::Claim(id.clone().into());
                        plan.push(&workspace, Phase::Main, n, Op::SetProperties { target, properties, replace: false });
                    }
                }
                if superseded {
                    plan.push(
                        &workspace,
                        Phase::After,
                        n,
                        Op::Deprecate { claim: id.clone().into(), superseded_by: superseded_by.map(Into::into) },
                    );
                }
                if !tags.is_empty() {
                    plan.push(&workspace, Phase::Main, n, set_tags(TagTarget::Claim(id.clone().into()), tags));
                }
                if deleted {
                    plan.push(&workspace, Phase::After, n, Op::DeleteClaim { claim: id.into() });
                }
            }
            Line::Evidence {
                workspace,
                id,
                claim,
                conversation_id,
                message_id,
                model,
                model_version,
                raw_confidence,
                snippet,
                reasoning,
                observed_at,
            } => {
                ws_of(&mut plan, &workspace)?;
                plan.push(
                    &workspace,
                    Phase::Main,
                    n,
                    Op::AddEvidence(AddEvidence {
                        ext_id: Some(id),
                        claim: Some(claim.into()),
                        conversation_id,
                        message_id,
                        model,
                        model_version,
                        raw_confidence,
                        snippet,
                        reasoning,
                        observed_at: Some(parse_time(file, n, "observed_at", &observed_at)?),
                    }),
                );
            }
            Line::Merge { workspace, from, into } => {
                ws_of(&mut plan, &workspace)?;
                plan.push(&workspace, Phase::Merges, n, Op::MergeEntities { from: from.into(), into: into.into() });
            }
            Line::Message { workspace, conversation_id, message_id, tags } => {
                ws_of(&mut plan, &workspace)?;
                plan.push(&workspace, Phase::Main, n, set_tags(TagTarget::Message { conversation_id, message_id }, tags));
            }
            Line::Role { name, grants } => {
                let mut checked = Vec::new();
                for (ws, g) in grants {
                    let access = crate::model::Access::parse(&g.access)
                        .ok_or_else(|| bad(format!("role `{name}`: access `{}` is not read, write or admin", g.access)))?;
                    checked.push((ws, crate::settings::StoredGrant::of(access, g.see_sensitive)));
                }
                roles.push(RoleLine { line: n, name, grants: checked });
            }
            Line::Policy { workspace, name, target, roles, predicate } => {
                ws_of(&mut plan, &workspace)?;
                policies.push((n, workspace, name, Governance::Row(crate::settings::StoredPolicy { target, roles, predicate })));
            }
            Line::Mask { workspace, name, on, mode, roles } => {
                ws_of(&mut plan, &workspace)?;
                policies.push((n, workspace, name, Governance::Mask(crate::settings::StoredMask { on, mode, roles })));
            }
            Line::Setting { workspace, key, value } => {
                ws_of(&mut plan, &workspace)?;
                // Checked now, as the database will check it: a refused one writes nothing.
                crate::settings::Settings::default().set_for(&workspace, &key, &value).map_err(|e| bad(e.to_string()))?;
                settings.push((n, workspace, key, value));
            }
        }
    }
    // Policies are checked before anything is written: a refused one writes nothing.
    for (n, _, _, g) in &policies {
        let checked = match g {
            Governance::Row(p) => crate::read::policy::Target::parse(&p.target)
                .ok_or_else(|| format!("unknown target `{}`", p.target))
                .and_then(|t| crate::read::policy::compile(t, &p.predicate, "user").map(drop).map_err(|e| e.to_string())),
            Governance::Mask(m) => crate::read::mask::compile(&m.on, &m.mode).map(drop),
        };
        checked.map_err(|message| JsonlError { file: file.to_owned(), line: *n, column: 1, message })?;
    }
    // Roles, then each workspace's settings and policies before its data: what is imported is
    // never readable without the protections it was exported with.
    for RoleLine { line: n, name, grants } in roles {
        let stored = db.add_role(&name).and_then(|_| grants.into_iter().try_for_each(|(ws, g)| db.grant_role(&name, &ws, g)));
        stored.map_err(|e| JsonlError { file: file.to_owned(), line: n, column: 1, message: e.to_string() })?;
    }
    for ws in &plan.order {
        if db.snapshot().workspace(ws).is_err() {
            db.create_workspace(ws)?;
        }
        for (n, _, key, value) in settings.iter().filter(|s| s.1 == *ws) {
            db.set_workspace_setting(ws, key, value).map_err(|e| JsonlError {
                file: file.to_owned(),
                line: *n,
                column: 1,
                message: e.to_string(),
            })?;
        }
        for (n, _, name, g) in policies.iter().filter(|p| p.1 == *ws) {
            match g.clone() {
                Governance::Row(p) => db.put_policy(ws, name, p),
                Governance::Mask(m) => db.put_mask(ws, name, m),
            }
            .map_err(|e| JsonlError { file: file.to_owned(), line: *n, column: 1, message: e.to_string() })?;
        }
        for phase in PHASES {
            let batch = &plan.batches[&(ws.clone(), phase)];
            if batch.is_empty() {
                continue;
            }
            db.write(batch).map_err(|e| match e.as_write() {
                Some(w) => ImportError::Line(JsonlError {
                    file: file.to_owned(),
                    line: plan.lines.get(&(ws.clone(), phase)).and_then(|l| l.get(w.op_index)).copied().unwrap_or(0),
                    column: 1,
                    message: format!("{}: {}", w.field, w.kind),
                }),
                None => ImportError::Database(e),
            })?;
        }
    }
    Ok(count)
}

/// One grant of a `role` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleGrant {
    access: String,
    see_sensitive: bool,
}

/// A role line of an import, stored after the rows.
struct RoleLine {
    line: usize,
    name: String,
    grants: Vec<(String, crate::settings::StoredGrant)>,
}

/// A policy line of an import, stored before the rows.
#[derive(Clone)]
enum Governance {
    Row(crate::settings::StoredPolicy),
    Mask(crate::settings::StoredMask),
}

/// A failed JSON-lines import.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A line did not parse.
    #[error(transparent)]
    Line(#[from] JsonlError),
    /// The database refused a batch (nothing of that batch was written).
    #[error(transparent)]
    Database(#[from] Error),
}
