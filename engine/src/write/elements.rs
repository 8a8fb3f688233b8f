//! The query language's writes: nodes with any number of labels (case kept), relationships whose
//! type keeps its case, and typed properties on both (`Op::CreateNode` and the three after it).
//!
//! Such an element is `BARE`: its memory fields were not written as such, so it shows exactly its
//! properties. Where a property names a memory field and has its type, the field follows it, so
//! search, resolution, ranking and the lifecycle see what the query wrote: an entity's `name` (a
//! string), a claim's `text` (a string), `confidence` (a number in `[0, 1]`), `state` (a state
//! name, moving forward only) and `valid_until` (an RFC 3339 time or epoch seconds, after
//! `valid_from`). Such a property then reads the field (a later change through the
//! memory API shows), so it never goes stale.

use std::sync::Arc;

use crate::error::WriteErrorKind;
use crate::ids::{ClaimId, EntityId, TypeId};
use crate::model::ClaimState;
use crate::normalize::name_key;
use crate::state::{BARE, SENSITIVE};
use crate::value::{Properties, Value};
use crate::write::apply::{check_name, OpResult, Writer};
use crate::write::batch::{AddClaim, CreateNode, CreateRelationship, Element, EntityRef};

/// The name a string `name` property gives an entity's memory field.
fn name_of(props: &Properties) -> &str {
    match props.get("name") {
        Some(Value::Str(s)) => s,
        _ => "",
    }
}

/// The text a string `text` property gives a claim's memory field.
fn text_of(props: &Properties) -> Option<&str> {
    match props.get("text") {
        Some(Value::Str(s)) => Some(s),
        _ => None,
    }
}

/// The lifecycle state a state name under `state` gives a claim's memory field.
fn state_of(props: &Properties) -> Option<ClaimState> {
    match props.get("state") {
        Some(Value::Str(s)) => ClaimState::parse(s),
        _ => None,
    }
}

/// The end of valid time an RFC 3339 string or epoch seconds under `valid_until` gives a claim.
fn valid_until_of(props: &Properties) -> Option<crate::time::Timestamp> {
    match props.get("valid_until") {
        Some(Value::Str(s)) => crate::time::Timestamp::parse(s).ok(),
        Some(Value::Int(secs)) => Some(crate::time::Timestamp::from_epoch_seconds(*secs)),
        _ => None,
    }
}

/// The confidence a number in `[0, 1]` under `confidence` gives a claim's memory field.
fn confidence_of(props: &Properties) -> Option<f32> {
    let c = match props.get("confidence") {
        Some(Value::Float(f)) => *f,
        Some(Value::Int(i)) => *i as f64,
        _ => return None,
    };
    (0.0..=1.0).contains(&c).then_some(c as f32)
}

/// `current` with `changes` applied (`Null` removes; `replace` starts from nothing).
fn updated(current: Option<&Arc<Properties>>, changes: &Properties, replace: bool) -> Properties {
    let mut out = if replace { Properties::new() } else { current.map(|p| p.as_ref().clone()).unwrap_or_default() };
    for (k, v) in changes {
        if *v == Value::Null {
            out.remove(k);
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

impl Writer<'_> {
    /// Interns a label or relationship type as written (case kept).
    pub(super) fn intern_written(&mut self, field: &'static str, name: &str) -> OpResult<u16> {
        check_name(field, name, self.limits.name_bytes_max)?;
        let table = if field == "predicate" { &mut self.st.catalog.predicates } else { &mut self.st.catalog.types };
        table.intern(name).ok_or((field, WriteErrorKind::Invalid("the vocabulary is full (65,536 names)")))
    }

    /// Appends the labels `names` (as written) that `labels` lacks.
    fn add_labels(&mut self, labels: &mut Vec<TypeId>, names: &[String]) -> OpResult<()> {
        for l in names {
            let t = TypeId(self.intern_written("labels", l)?);
            if !labels.contains(&t) {
                labels.push(t);
            }
        }
        Ok(())
    }

    /// The type an entity with `labels` has: the first, or the empty name when there is none.
    fn type_of(&mut self, labels: &[TypeId]) -> OpResult<TypeId> {
        match labels.first() {
            Some(t) => Ok(*t),
            None => self
                .st
                .catalog
                .types
                .intern("")
                .map(TypeId)
                .ok_or(("labels", WriteErrorKind::Invalid("the vocabulary is full (65,536 names)"))),
        }
    }

    /// `_n<id>`, or with a suffix when a caller took that external id.
    fn generated_entity_id(&self, id: usize) -> String {
        let base = format!("_n{id}");
        if self.st.entities.find_ext(self.ws, &base).is_none() {
            return base;
        }
        // At most one suffix per entity can be taken, so one of these is free.
        (1..=self.st.entities.len() + 1)
            .map(|n| format!("{base}_{n}"))
            .find(|c| self.st.entities.find_ext(self.ws, c).is_none())
            .unwrap_or(base)
    }

    pub(super) fn create_node(&mut self, n: &CreateNode) -> OpResult<()> {
        self.check_properties(&n.properties)?;
        let mut labels: Vec<TypeId> = Vec::with_capacity(n.labels.len());
        self.add_labels(&mut labels, &n.labels)?;
        let ty = self.type_of(&labels)?;
        let ext = match &n.ext_id {
            Some(ext) => {
                check_name("ext_id", ext, self.limits.ext_id_bytes_max)?;
                if self.st.entities.find_ext(self.ws, ext).is_some() {
                    return Err(("ext_id", WriteErrorKind::DuplicateId(ext.clone())));
                }
                ext.clone()
            }
            None => self.generated_entity_id(self.st.entities.len()),
        };
        let e = self.push_entity(&ext, ty, BARE, name_of(&n.properties), &n.properties)?;
        if labels.len() > 1 {
            for t in &labels[1..] {
                self.st.catalog.note_label(self.ws, *t);
            }
            self.st.entities.labels.insert(e, Arc::from(&labels[1..]));
        }
        self.created.entities.push(EntityId(e));
        Ok(())
    }

    pub(super) fn create_relationship(&mut self, r: &CreateRelationship) -> OpResult<()> {
        self.check_properties(&r.properties)?;
        let claim = AddClaim {
            ext_id: r.ext_id.clone(),
            subject: r.subject.clone(),
            predicate: r.rel_type.clone(),
            object: r.object.clone(),
            text: text_of(&r.properties).map(str::to_owned),
            confidence: confidence_of(&r.properties).unwrap_or(1.0),
            state: state_of(&r.properties).unwrap_or(ClaimState::Proposed),
            valid_from: r.valid_from,
            valid_until: None,
            expires_at: None,
            sensitive: false,
        };
        let c = self.add_claim(&claim, true)?;
        let props = updated(None, &r.properties, true);
        self.st.catalog.note_keys(self.ws, props.keys().map(AsRef::as_ref), false);
        if !props.is_empty() {
            self.st.set_claim_props(c, Some(props));
            self.st.note_pii(c);
        }
        self.created.claims.push(ClaimId(c));
        Ok(())
    }

    pub(super) fn set_properties(&mut self, target: &Element, changes: &Properties, replace: bool) -> OpResult<()> {
        self.check_properties(changes)?;
        let sensitive = match target {
            Element::Claim(r) => *self.st.claims.flags.get(self.claim(r, "claim")? as usize) & SENSITIVE != 0,
            Element::Entity(_) => false,
        };
        let written = changes.iter().filter(|(_, v)| **v != Value::Null).map(|(k, _)| k.as_ref());
        self.st.catalog.note_keys(self.ws, written, sensitive);
        match target {
            Element::Entity(r) => {
                let e = self.entity(r)?;
                let props = updated(self.st.entities.props.get(e), changes, replace);
                let name = name_of(&props).to_owned();
                self.st.entities.set_props(e, Some(props));
                self.created.touched.entities.push(e);
                self.st.entities.updated_at.insert(e, self.now);
                let bare = *self.st.entities.flags.get(e as usize) & BARE != 0;
                if self.st.entities.name.get(e as usize) != name && (bare || !name.is_empty()) {
                    if bare {
                        // No alias keeps the old name: the query language never wrote one.
                        self.st.entities.name.set(e as usize, &name);
                        self.names_changed.push(e);
                        if !name.is_empty() {
                            self.index_name(e, &name_key(&name));
                        }
                    } else {
                        self.rename(e, &name);
                    }
                }
            }
            Element::Claim(r) => {
                let c = self.claim(r, "claim")?;
                let props = updated(self.st.claims.props.get(c), changes, replace);
                let bare = *self.st.claims.flags.get(c as usize) & BARE != 0;
                // A state written moves the lifecycle (forward only: a move back is refused).
                if let Some(state) = state_of(changes) {
                    self.transition(c, state)?;
                }
                // A time written under `valid_until` ends the claim's valid time (after it began).
                if let Some(until) = valid_until_of(changes) {
                    self.end_validity(c, until)?;
                }
                if let Some(conf) = confidence_of(&props).or(bare.then_some(1.0)) {
                    self.st.claims.confidence.set(c as usize, conf);
                }
                if let Some(text) = text_of(&props).or(bare.then_some("")) {
                    if self.st.claims.text.get(c as usize) != text {
                        crate::write::apply::check_text(text, self.limits)?;
                        let text = text.to_owned();
                        self.st.claims.text.set(c as usize, &text);
                        if self.index_text {
                            let ws = self.ws;
                            self.st.text.claims.index(c, ws, &text);
                        }
                    }
                }
                self.st.set_claim_props(c, Some(props));
                self.st.note_pii(c);
                self.st.claims.updated_at.insert(c, self.now);
                self.created.touched.claims.push(c);
            }
        }
        Ok(())
    }

    pub(super) fn set_labels(&mut self, entity: &EntityRef, add: &[String], remove: &[String]) -> OpResult<()> {
        let e = self.entity(entity)?;
        let ty = *self.st.entities.ty.get(e as usize);
        let mut labels: Vec<TypeId> = Vec::new();
        if !self.st.catalog.types.name(ty.0).is_empty() {
            labels.push(ty);
        }
        labels.extend(self.st.entities.labels.get(&e).iter().flat_map(|l| l.iter().copied()));
        for l in remove {
            // A label never interned is on no entity.
            if let Some(t) = self.st.catalog.types.get(l) {
                labels.retain(|x| x.0 != t);
            }
        }
        self.add_labels(&mut labels, add)?;
        let first = self.type_of(&labels)?;
        self.set_type(e, first);
        for t in &labels {
            self.st.catalog.note_label(self.ws, *t);
        }
        if labels.len() > 1 {
            self.st.entities.labels.insert(e, Arc::from(&labels[1..]));
        } else {
            self.st.entities.labels.remove(&e);
        }
        self.created.touched.entities.push(e);
        self.st.entities.updated_at.insert(e, self.now);
        Ok(())
    }
}
