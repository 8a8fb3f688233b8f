//! The ingest documents MCP's write tools send: a verbatim memory (the actor `remembers` a
//! memory entity, the text on the claim), and the reference knowledge-graph server's entities,
//! observations (a claim from the entity to an observation entity of its own, predicate
//! `observation`, the text on the claim: one triple per observation, so two are never taken for
//! the same fact) and relations. Each document's source ids are a hash of its content, so a retry is a duplicate and
//! writes nothing.

use serde_json::{json, Map, Value};
use sha2::{Digest as _, Sha256};

/// The predicate of a verbatim memory.
pub const REMEMBERS: &str = "remembers";
/// The predicate of an observation.
pub const OBSERVATION: &str = "observation";
/// The entity type of a verbatim memory.
pub const MEMORY_TYPE: &str = "memory";
/// The entity type of an observation.
pub const OBSERVATION_TYPE: &str = "observation";

/// The sub-scope a write is stamped with and a read may narrow to (stored as claim and entity
/// properties of these names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubScope {
    /// `user_id`.
    pub user_id: Option<String>,
    /// `agent_id`.
    pub agent_id: Option<String>,
    /// `run_id`.
    pub run_id: Option<String>,
}

impl SubScope {
    /// The keys as properties.
    pub fn properties(&self) -> Map<String, Value> {
        let mut m = Map::new();
        for (k, v) in [("user_id", &self.user_id), ("agent_id", &self.agent_id), ("run_id", &self.run_id)] {
            if let Some(v) = v {
                m.insert(k.to_owned(), Value::String(v.clone()));
            }
        }
        m
    }
}

/// A short id from the hash of `parts`.
pub fn hash_id(prefix: &str, parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    let digest = h.finalize();
    format!("{prefix}{}", crate::users::hex(&digest[..10]))
}

/// Who a memory is about: the user, else the agent, else `user`.
fn actor(scope: &SubScope, role: Option<&str>) -> (String, &'static str) {
    match role {
        Some("assistant" | "agent") => (scope.agent_id.clone().unwrap_or_else(|| "assistant".to_owned()), "agent"),
        Some("system") => ("system".to_owned(), "agent"),
        _ => match (&scope.user_id, &scope.agent_id) {
            (Some(u), _) => (u.clone(), "user"),
            (None, Some(a)) if role.is_none() => (a.clone(), "agent"),
            _ => ("user".to_owned(), "user"),
        },
    }
}

/// A verbatim memory: `(actor) -[remembers]-> (memory)`, its id `mem_…` (the claim's and the
/// memory entity's external id, and its source's conversation and message id), the text on the
/// claim. `refines` names a claim this one replaces.
pub fn memory(text: &str, role: Option<&str>, scope: &SubScope, refines: Option<&str>, salt: &str) -> (String, Value) {
    let (who, who_type) = actor(scope, role);
    let id = hash_id("mem_", &[&who, who_type, text, salt, scope.user_id.as_deref().unwrap_or(""), scope.run_id.as_deref().unwrap_or("")]);
    let props = scope.properties();
    let mut claim = json!({
        "subject": who, "predicate": REMEMBERS, "object": id, "confidence": 1.0,
        "text": text, "id": id, "properties": props,
    });
    if let Some(old) = refines {
        claim["relation"] = json!({"refines": old});
    }
    let doc = json!({
        "source": {"conversation_id": id, "message_id": id, "model": "mcp:add_memory", "snippet": text},
        "entities": [
            {"name": who, "type": who_type, "properties": props},
            {"name": id, "type": MEMORY_TYPE, "id": id, "properties": props},
        ],
        "claims": [claim],
    });
    (id, doc)
}

/// One entity of the reference server's shape, with its observations as claims.
pub struct GraphEntity<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its type.
    pub entity_type: &'a str,
    /// Observations to add.
    pub observations: &'a [String],
}

/// A document creating `entities` (or finding them: an existing entity of the same name and type
/// resolves to itself) with their observations, and `relations` (from, type, to) between
/// entities of the document or of the graph.
pub fn graph(tool: &str, entities: &[GraphEntity<'_>], relations: &[(&str, &str, &str)], scope: &SubScope) -> Value {
    let props = scope.properties();
    let mut claims = Vec::new();
    let mut ents: Vec<Value> = entities.iter().map(|e| json!({"name": e.name, "type": e.entity_type, "properties": props})).collect();
    for e in entities {
        for o in e.observations {
            let id = hash_id("obs_", &[e.name, e.entity_type, o]);
            ents.push(json!({"name": id, "type": OBSERVATION_TYPE, "id": id}));
            claims.push(
                json!({"subject": e.name, "predicate": OBSERVATION, "object": id, "confidence": 1.0, "text": o, "properties": props}),
            );
        }
    }
    for (from, rel, to) in relations {
        claims.push(json!({"subject": from, "predicate": rel, "object": to, "confidence": 1.0, "properties": props}));
    }
    let body = json!({"entities": ents, "claims": claims});
    let id = hash_id("mcp_", &[tool, &body.to_string()]);
    let mut doc = body;
    doc["source"] = json!({"conversation_id": format!("mcp:{tool}"), "message_id": id, "model": format!("mcp:{tool}")});
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_is_stamped_and_its_id_is_stable() {
        let scope = SubScope { user_id: Some("ann".into()), ..SubScope::default() };
        let (id, doc) = memory("likes tea", None, &scope, None, "");
        let (again, _) = memory("likes tea", None, &scope, None, "");
        assert_eq!(id, again);
        assert!(id.starts_with("mem_"));
        assert_eq!(doc["claims"][0]["subject"], "ann");
        assert_eq!(doc["claims"][0]["properties"]["user_id"], "ann");
        let (other, _) = memory("likes tea", None, &SubScope::default(), None, "");
        assert_ne!(id, other);
        let (_, updated) = memory("likes coffee", None, &scope, Some(&id), "");
        assert_eq!(updated["claims"][0]["relation"]["refines"], id.as_str());
    }
}
