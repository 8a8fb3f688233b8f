//! How the language sees a workspace: an entity is a node, a claim a relationship whose type is
//! its predicate. Everything goes through the read surface (`WorkspaceView`'s scans, expander and
//! column accessors), so what the scope hides stays hidden.
//!
//! Properties. A node shows its external `id`, `name`, `aliases` (when any) and its typed
//! properties; `created_at` and `updated_at` are readable but not listed. A relationship shows its
//! `text` (when set), `confidence` and `state`; `id`, `valid_from`, `valid_until`, `recorded_at`
//! and `updated_at` are readable but not listed. Times read as RFC 3339 strings.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::ids::{ClaimId, EntityId, PredicateId};
use crate::index::graph::Direction;
use crate::read::expand::Expander;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use crate::time::Timestamp;
use crate::value::Value;

use super::value::Val;
use engram_query::plan::Labels;

/// A workspace view, the visibility a query reads it under, and the statement's clock.
pub(crate) struct Graph<'v, 'a> {
    pub view: &'v WorkspaceView<'a>,
    pub vis: Visibility,
    /// Now, in nanoseconds since the epoch: what `datetime()` and its kin return, the same for
    /// every call of one statement (a write's transaction time; a read's snapshot time, the
    /// database's clock when the snapshot was taken, which its visibility uses too).
    pub now: i128,
}

impl Graph<'_, '_> {
    /// The statement's clock (`now`).
    pub fn now(&self) -> i128 {
        self.now
    }
}

/// What the property index makes of a wanted value.
enum Wanted<'v> {
    /// Nothing equals it (null, NaN).
    Nothing,
    /// Look it up.
    Key(crate::index::propindex::Scalar<'v>),
    /// The index does not hold its kind (lists, maps, graph values): scan.
    Unindexed,
}

fn scalar(want: &Val) -> Wanted<'_> {
    use crate::index::propindex::Scalar;
    Wanted::Key(match want {
        Val::Null => return Wanted::Nothing,
        Val::Int(i) => Scalar::Int(*i),
        Val::Float(f) => match Scalar::float(*f) {
            Some(s) => s,
            None => return Wanted::Nothing,
        },
        Val::Bool(b) => Scalar::Bool(*b),
        Val::Str(s) => Scalar::Str(s),
        Val::Temporal(t) => Scalar::Temporal(t),
        _ => return Wanted::Unindexed,
    })
}

/// The elements `lookup` gives for each of `wanted`, ascending, once each; `None` when it cannot
/// answer for one of them.
fn union_of<T: Ord>(wanted: &[Val], mut lookup: impl FnMut(&Val) -> Option<Vec<T>>) -> Option<Vec<T>> {
    let mut out = Vec::new();
    for want in wanted {
        out.extend(lookup(want)?);
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// What lies between two bounds, in the order words of the property index (`index::order`).
enum Between {
    /// Values of this class with a word in `lo..=hi`.
    Words(u8, u64, u64),
    /// No value: a bound null, NaN or a duration (which nothing compares with), or bounds of
    /// two classes.
    Nothing,
    /// The index cannot tell (a list bound, no bound).
    Unknown,
}

/// What lies between `lower` and `upper` (either may be absent).
fn range_words(lower: Option<&Val>, upper: Option<&Val>) -> Between {
    // A bound's class and word; `Err(true)` when nothing compares with it, `Err(false)` when the
    // index cannot tell.
    let word = |v: &Val| match scalar(v) {
        Wanted::Key(s) => crate::index::order::order_word(s).ok_or(true),
        Wanted::Nothing => Err(true),
        Wanted::Unindexed => Err(false),
    };
    match (lower.map(word), upper.map(word)) {
        (Some(Err(false)), _) | (_, Some(Err(false))) | (None, None) => Between::Unknown,
        (Some(Ok((a, lo))), Some(Ok((b, hi)))) if a == b => Between::Words(a, lo, hi),
        (Some(Err(true)), _) | (_, Some(Err(true))) | (Some(Ok(_)), Some(Ok(_))) => Between::Nothing,
        (Some(Ok((a, lo))), None) => Between::Words(a, lo, u64::MAX),
        (None, Some(Ok((b, hi)))) => Between::Words(b, 0, hi),
    }
}

/// The elements `lookup` gives for the words between `bounds` under `key` (`range_words`), those
/// `visible` keeps; `None` for a memory field's key (in `fields`) or bounds the index cannot
/// place, as `looked_up`.
fn ranged<T>(
    fields: &[&str],
    key: &str,
    (lower, upper): (Option<&Val>, Option<&Val>),
    lookup: impl FnOnce((u8, u64, u64)) -> Option<Vec<T>>,
    visible: impl Fn(&T) -> bool,
) -> Option<Vec<T>> {
    if fields.contains(&key) {
        return None;
    }
    let mut out = match range_words(lower, upper) {
        Between::Words(class, lo, hi) => lookup((class, lo, hi))?,
        Between::Nothing => Vec::new(),
        Between::Unknown => return None,
    };
    out.retain(visible);
    Some(out)
}

/// The elements `lookup` gives for `want` under `key`, those `visible` keeps; `None` for a
/// memory field's key (in `fields`) or a value the index does not hold.
fn looked_up<'v, T>(
    fields: &[&str],
    key: &str,
    want: &'v Val,
    lookup: impl FnOnce(crate::index::propindex::Scalar<'v>) -> Option<Vec<T>>,
    visible: impl Fn(&T) -> bool,
) -> Option<Vec<T>> {
    if fields.contains(&key) {
        return None;
    }
    let mut out = match scalar(want) {
        Wanted::Key(s) => lookup(s)?,
        Wanted::Nothing => Vec::new(),
        Wanted::Unindexed => return None,
    };
    out.retain(visible);
    Some(out)
}

/// The candidates `count` counts for `want` under `key` where `looked_up` would read them: `None`
/// where it could not answer, none for a value nothing holds.
fn counted<'v>(
    fields: &[&str],
    key: &str,
    want: &'v Val,
    count: impl FnOnce(crate::index::propindex::Scalar<'v>) -> Option<usize>,
) -> Option<usize> {
    if fields.contains(&key) {
        return None;
    }
    match scalar(want) {
        Wanted::Key(s) => count(s),
        Wanted::Nothing => Some(0),
        Wanted::Unindexed => None,
    }
}

/// The candidates `count` counts for the words between `bounds` where `ranged` would read them,
/// as `counted`.
fn range_counted(
    fields: &[&str],
    key: &str,
    (lower, upper): (Option<&Val>, Option<&Val>),
    count: impl FnOnce((u8, u64, u64)) -> Option<usize>,
) -> Option<usize> {
    if fields.contains(&key) {
        return None;
    }
    match range_words(lower, upper) {
        Between::Words(class, lo, hi) => count((class, lo, hi)),
        Between::Nothing => Some(0),
        Between::Unknown => None,
    }
}

/// The statement clock at `t`, in nanoseconds.
pub(crate) fn clock_at(t: Timestamp) -> i128 {
    i128::from(t.0) * 1000
}

/// A listed property's name: a memory field's, or one written to the element.
pub(crate) enum PropKey<'a> {
    Field(&'static str),
    Stored(&'a Arc<str>),
}

impl PropKey<'_> {
    pub fn as_str(&self) -> &str {
        match self {
            PropKey::Field(k) => k,
            PropKey::Stored(k) => k,
        }
    }

    fn to_arc(&self) -> Arc<str> {
        match self {
            PropKey::Field(k) => Arc::from(*k),
            PropKey::Stored(k) => Arc::clone(k),
        }
    }
}

/// A listed property's value, its strings borrowed from the snapshot.
pub(crate) enum Prop<'a> {
    Str(&'a str),
    Strs(Vec<&'a str>),
    /// A value written to the element, as stored.
    Stored(&'a Value),
    /// A value computed from a field (a number, a time, a field a property mirrors).
    Val(Val),
}

impl Prop<'_> {
    fn to_val(&self) -> Val {
        match self {
            Prop::Str(s) => Val::str(s),
            Prop::Strs(items) => Val::list(items.iter().map(|s| Val::str(s)).collect()),
            Prop::Stored(v) => from_value(v),
            Prop::Val(v) => v.clone(),
        }
    }
}

/// An engine property value as a query value.
pub(crate) fn from_value(v: &Value) -> Val {
    match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Int(i) => Val::Int(*i),
        Value::Float(f) => Val::Float(*f),
        Value::Str(s) => Val::Str(s.clone()),
        Value::List(items) => Val::list(items.iter().map(from_value).collect()),
        Value::Floats(items) => Val::list(items.iter().map(|f| Val::Float(*f)).collect()),
        Value::Temporal(t) => Val::temporal(**t),
        Value::Point(p) => Val::point(**p),
        Value::Map(m) => Val::map(m.iter().map(|(k, v)| (k.clone(), from_value(v))).collect()),
    }
}

fn time(t: Timestamp) -> Val {
    if t == Timestamp::MAX || t == Timestamp::MIN {
        Val::Null
    } else {
        Val::Str(Arc::from(t.to_rfc3339()))
    }
}

impl<'a> Graph<'_, 'a> {
    /// Every node visible under the query's visibility (deleted ones too for `ALL VERSIONS`).
    pub fn nodes(&self) -> Vec<EntityId> {
        self.view.entities_under(&self.vis, None).iter().collect()
    }

    /// Whether `e` is a node of this workspace visible under the query's visibility (`nodes`
    /// holds it).
    pub fn node_visible(&self, e: EntityId) -> bool {
        self.view.entity_visible(e, &self.vis)
    }

    /// The visible nodes carrying `label` (see `WorkspaceView::label_ids`).
    pub fn nodes_with_label(&self, label: &str) -> Vec<EntityId> {
        let mut out: Vec<EntityId> = Vec::new();
        for t in self.view.label_ids(label).into_iter().flatten() {
            out.extend(self.view.entities_under(&self.vis, Some(t)).iter());
            out.extend(self.view.entities_with_later_label(t).into_iter().filter(|e| self.view.entity_visible(*e, &self.vis)));
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How many nodes `nodes_with_label` gives: the sizes of the label's sets (an entity has one
    /// type, so they are disjoint) where no node carries it as a later label, else by reading.
    pub fn count_nodes_with_label(&self, label: &str) -> u64 {
        let ids: Vec<_> = self.view.label_ids(label).into_iter().flatten().collect();
        if ids.iter().all(|t| self.view.entities_with_later_label(*t).is_empty()) {
            return ids.iter().map(|t| self.view.entities_under(&self.vis, Some(*t)).len()).sum();
        }
        self.nodes_with_label(label).len() as u64
    }

    /// How many nodes `nodes` gives, from its set's size.
    pub fn count_nodes(&self) -> u64 {
        self.view.entities_under(&self.vis, None).len()
    }

    /// The visible nodes that may hold `want` under `key` (ascending, to be tested like scanned
    /// ones), from the property index; `None` when it cannot answer: a memory field's key (its
    /// value is not a stored property), a value it does not index, or a masked view.
    pub fn nodes_with_prop(&self, key: &str, want: &Val) -> Option<Vec<EntityId>> {
        // A stored key hidden from this view reads null on every node: no node holds a value
        // under it (the name is a field, which the view still reads).
        if key != "name" && self.view.hidden_key(key) {
            return Some(Vec::new());
        }
        // A non-empty string `name` is the entity's name field (`node_prop`), which the name
        // index holds under its normalised key.
        if let ("name", Val::Str(name)) = (key, want) {
            let mut out = if name.is_empty() { None } else { self.view.entities_maybe_named(name) }?;
            out.retain(|e| self.node_visible(*e));
            return Some(out);
        }
        let fields = &engram_query::plan::NODE_FIELDS;
        looked_up(fields, key, want, |s| self.view.entities_with_prop(key, s), |e| self.node_visible(*e))
    }

    /// How many candidates `nodes_with_prop` would read (counted in the index, not read, so an
    /// upper bound: it includes nodes not visible here); `None` exactly where it cannot answer.
    /// A view that hides rows counts what it sees (by reading it): which index a seek reads shows
    /// in PROFILE, so a count must not weigh rows the principal may not see.
    pub fn count_with_prop(&self, key: &str, want: &Val) -> Option<usize> {
        if self.view.hides_rows() || self.view.hidden_key(key) {
            return self.nodes_with_prop(key, want).map(|found| found.len());
        }
        if let ("name", Val::Str(name)) = (key, want) {
            return if name.is_empty() { None } else { self.view.entities_named_count(name) };
        }
        counted(&engram_query::plan::NODE_FIELDS, key, want, |s| self.view.entities_count(key, s))
    }

    /// `count_with_prop` summed over `wanted`, as `nodes_with_any` reads them (an `id`, one
    /// node per value, the external id's, and each node with an `id` property).
    pub fn count_with_any(&self, key: &str, wanted: &[Val]) -> Option<usize> {
        if self.view.hides_rows() {
            return self.nodes_with_any(key, wanted).map(|found| found.len());
        }
        if key == "id" {
            return Some(wanted.len().saturating_mul(1 + self.view.id_property_count()));
        }
        wanted.iter().try_fold(0usize, |n, want| Some(n.saturating_add(self.count_with_prop(key, want)?)))
    }

    /// How many candidates `nodes_in_range` would read, as `count_with_prop`.
    pub fn count_in_range(&self, key: &str, lower: Option<&Val>, upper: Option<&Val>) -> Option<usize> {
        if self.view.hides_rows() || self.view.hidden_key(key) {
            return self.nodes_in_range(key, lower, upper).map(|found| found.len());
        }
        range_counted(&engram_query::plan::NODE_FIELDS, key, (lower, upper), |r| self.view.entities_in_range_count(key, r))
    }

    /// The visible nodes that may hold one of `wanted` under `key` (ascending, once each, to be
    /// tested): `nodes_with_prop` of each (`nodes_with_id` for `id`), `None` when it cannot
    /// answer for one of them.
    pub fn nodes_with_any(&self, key: &str, wanted: &[Val]) -> Option<Vec<EntityId>> {
        union_of(wanted, |want| if key == "id" { Some(self.nodes_with_id(want)) } else { self.nodes_with_prop(key, want) })
    }

    /// The visible relationships that may hold one of `wanted` under `key`, as `nodes_with_any`.
    pub fn rels_with_any(&self, key: &str, wanted: &[Val]) -> Option<Vec<ClaimId>> {
        union_of(wanted, |want| self.rels_with_prop(key, want))
    }

    /// The visible nodes that may hold under `key` a value between `lower` and `upper` (taken
    /// as inclusive: the test after decides a strict bound; ascending, to be tested like scanned
    /// ones), from the property index's order; `None` where it cannot answer, as
    /// `nodes_with_prop`.
    pub fn nodes_in_range(&self, key: &str, lower: Option<&Val>, upper: Option<&Val>) -> Option<Vec<EntityId>> {
        if self.view.hidden_key(key) {
            return Some(Vec::new());
        }
        let fields = &engram_query::plan::NODE_FIELDS;
        ranged(fields, key, (lower, upper), |r| self.view.entities_in_range(key, r), |e| self.node_visible(*e))
    }

    /// The visible nodes holding under `key` a value between `lower` and `upper`, with its order
    /// word, in the words' order (ascending, or `descending`), read as they are needed: those
    /// `nodes_in_range` gives, each under the word its value has now (twice where the index holds
    /// it twice, as `Ordered::in_order` says). A word's nodes come
    /// together, and the values of a later word all sort after (before, descending) an earlier
    /// one's. `None` where the index cannot answer, as `nodes_in_range`.
    pub fn nodes_in_order<'s>(
        &'s self,
        key: &'s str,
        (lower, upper): (Option<&Val>, Option<&Val>),
        descending: bool,
    ) -> Option<Box<dyn Iterator<Item = (u64, EntityId)> + 's>> {
        if self.view.hidden_key(key) {
            return Some(Box::new(std::iter::empty()));
        }
        if engram_query::plan::NODE_FIELDS.contains(&key) {
            return None;
        }
        let (class, lo, hi) = match range_words(lower, upper) {
            Between::Words(class, lo, hi) => (class, lo, hi),
            Between::Nothing => return Some(Box::new(std::iter::empty())),
            Between::Unknown => return None,
        };
        let found = self.view.entities_in_order(key, (class, lo, hi), descending)?;
        // An entry under a word its node's value no longer has is stale: that node comes under
        // its value's word, or not at all.
        let current = move |(word, e): &(u64, EntityId)| {
            self.view.entity_property(*e, key).and_then(crate::index::propindex::Scalar::of_value).and_then(crate::index::order::order_word)
                == Some((class, *word))
        };
        Some(Box::new(found.filter(move |item| current(item) && self.node_visible(item.1))))
    }

    /// The visible relationships that may hold under `key` a value between `lower` and `upper`
    /// (ascending, to be tested), as `nodes_in_range`.
    pub fn rels_in_range(&self, key: &str, lower: Option<&Val>, upper: Option<&Val>) -> Option<Vec<ClaimId>> {
        if self.view.hidden_key(key) {
            return Some(Vec::new());
        }
        let fields = &engram_query::plan::REL_FIELDS;
        ranged(fields, key, (lower, upper), |r| self.view.claims_in_range(key, r), |c| self.view.claim_visible(*c, &self.vis))
    }

    /// How many candidates `rels_with_prop` would read, as `count_with_prop`.
    pub fn count_rels_with_prop(&self, key: &str, want: &Val) -> Option<usize> {
        if self.view.hides_rows() || self.view.hidden_key(key) {
            return self.rels_with_prop(key, want).map(|found| found.len());
        }
        counted(&engram_query::plan::REL_FIELDS, key, want, |s| self.view.claims_count(key, s))
    }

    /// `count_rels_with_prop` summed over `wanted`, as `rels_with_any` reads them.
    pub fn count_rels_with_any(&self, key: &str, wanted: &[Val]) -> Option<usize> {
        wanted.iter().try_fold(0usize, |n, want| Some(n.saturating_add(self.count_rels_with_prop(key, want)?)))
    }

    /// How many candidates `rels_in_range` would read, as `count_in_range`.
    pub fn count_rels_in_range(&self, key: &str, lower: Option<&Val>, upper: Option<&Val>) -> Option<usize> {
        if self.view.hides_rows() || self.view.hidden_key(key) {
            return self.rels_in_range(key, lower, upper).map(|found| found.len());
        }
        range_counted(&engram_query::plan::REL_FIELDS, key, (lower, upper), |r| self.view.claims_in_range_count(key, r))
    }

    /// The visible relationships that may hold `want` under `key` (ascending, to be tested), as
    /// `nodes_with_prop`.
    pub fn rels_with_prop(&self, key: &str, want: &Val) -> Option<Vec<ClaimId>> {
        // A key hidden from this view reads null on every relationship (as `nodes_with_prop`).
        if self.view.hidden_key(key) {
            return Some(Vec::new());
        }
        let fields = &engram_query::plan::REL_FIELDS;
        looked_up(fields, key, want, |s| self.view.claims_with_prop(key, s), |c| self.view.claim_visible(*c, &self.vis))
    }

    /// The visible relationships of type `rel_type` (as `WorkspaceView::rel_type_ids` names
    /// it), in id order.
    pub fn rels_with_type(&self, rel_type: &str) -> Vec<ClaimId> {
        let mut out: Vec<ClaimId> =
            self.view.claims_of_rel_type(rel_type).into_iter().filter(|c| self.view.claim_visible(*c, &self.vis)).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The visible nodes whose `id` is `id`: an entity's external id (a string), unless the
    /// query language gave it an `id` property, which then holds.
    pub fn nodes_with_id(&self, id: &Val) -> Vec<EntityId> {
        let mut out: Vec<EntityId> = self.node_with_ext_id(id).into_iter().collect();
        if !self.view.has_id_properties() {
            return out;
        }
        for e in self.view.entities_with_id_property() {
            if self.view.entity_visible(e, &self.vis)
                && self.view.entity_property(e, "id").is_some_and(|v| from_value(v).equals(id) == Some(true))
            {
                out.push(e);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The visible node `{id: id}` matches by its external id: all of them when no entity has
    /// an `id` property (the common case, which `nodes_with_id` adds to otherwise).
    pub fn node_with_ext_id(&self, id: &Val) -> Option<EntityId> {
        let Val::Str(s) = id else { return None };
        self.node_with_ext_text(s)
    }

    /// `node_with_ext_id` given the text itself (a string parameter, never copied).
    pub fn node_with_ext_text(&self, s: &str) -> Option<EntityId> {
        let e = self.view.entity_id(s)?;
        // An `id` written in Cypher shadows the external id (checked only when one exists).
        let shadowed = self.view.has_id_properties() && self.view.entity_property(e, "id").is_some();
        (!self.view.entity_bare(e) && !shadowed && self.view.entity_visible(e, &self.vis)).then_some(e)
    }

    /// The visible node whose external id is `id` (procedures name entities so).
    pub fn node_by_ext_id(&self, id: &str) -> Option<EntityId> {
        self.view.entity_id(id).filter(|e| self.view.entity_visible(*e, &self.vis))
    }

    /// The node's labels: its type (none when it has none) and the labels written after it.
    pub fn labels(&self, e: EntityId) -> Vec<Arc<str>> {
        self.view.entity_labels(e).into_iter().filter_map(|t| self.view.type_name(t)).collect()
    }

    /// `labels`, borrowed from the snapshot.
    pub fn label_names(&self, e: EntityId) -> impl Iterator<Item = &'a str> + '_ {
        self.view.entity_labels(e).into_iter().filter_map(|t| self.view.type_name_ref(t))
    }

    /// Whether the node carries `label`.
    pub fn has_label(&self, e: EntityId, label: &str) -> bool {
        self.view.label_ids(label).into_iter().flatten().any(|t| self.view.entity_carries(e, t))
    }

    /// Whether the node's labels satisfy a label expression (`:A|B`, `:!A`, `:%`).
    pub fn labels_match(&self, e: EntityId, expr: &Labels) -> bool {
        expr.matches(&|l| self.has_label(e, l), &|| !self.labels(e).is_empty())
    }

    /// Refuses to read an element deleted under a present-time visibility: one the running
    /// query deleted itself (a read of the present never binds a deleted element).
    pub fn check_not_deleted(&self, v: &Val) -> Result<(), engram_query::QueryError> {
        // Only a read of the latest state: `KNOWN AS OF` meets elements deleted since, alive then.
        if self.vis.all_versions || self.vis.include_deleted || self.vis.known_as_of.is_some() {
            return Ok(());
        }
        let deleted = match v {
            Val::Node(n) => self.view.entity_deleted(*n) == Some(true),
            Val::Rel(r) => self.view.claim_deleted(*r) == Some(true),
            _ => false,
        };
        if deleted {
            return Err(engram_query::QueryError::runtime(
                engram_query::ErrorType::EntityNotFound,
                engram_query::Detail::DeletedEntityAccess,
                format!("{} was deleted by this query", v.kind()),
            ));
        }
        Ok(())
    }

    /// One property of a node; null when absent. A property written as such wins over the memory
    /// field of the same name; a node the query language wrote has only its properties (and
    /// `created_at`).
    pub fn node_prop(&self, e: EntityId, key: &str) -> Val {
        if let Some(v) = self.view.entity_property(e, key) {
            // A string `name` is the entity's name: read the field, which later renames keep.
            if let (Value::Str(_), "name") = (v, key) {
                return self.view.entity_name(e).map_or(Val::Null, Val::str);
            }
            return from_value(v);
        }
        let bare = self.view.entity_bare(e);
        match key {
            "id" if !bare => self.view.entity_ext_id(e).map_or(Val::Null, Val::str),
            "name" if !bare => self.view.entity_name(e).filter(|n| !n.is_empty()).map_or(Val::Null, Val::str),
            "aliases" if !bare => {
                let aliases: Vec<Val> = self.view.entity_aliases(e).map(Val::str).collect();
                if aliases.is_empty() {
                    Val::Null
                } else {
                    Val::list(aliases)
                }
            }
            "created_at" => self.view.entity_created_at(e).map_or(Val::Null, time),
            _ => Val::Null,
        }
    }

    /// The stored list `v.key` holds, borrowed from the snapshot (no copy); `None` when `v` is
    /// no node or relationship or the property is no stored list.
    pub fn stored_list(&self, v: &Val, key: &str) -> Option<super::functions::Items<'a>> {
        let stored = match v {
            Val::Node(e) => self.view.entity_property(*e, key),
            Val::Rel(c) => self.view.claim_property(*c, key),
            _ => None,
        };
        match stored {
            Some(Value::List(items)) => Some(super::functions::Items::Stored(items)),
            Some(Value::Floats(items)) => Some(super::functions::Items::Floats(items)),
            _ => None,
        }
    }

    /// `node_prop(e, key).equals(want)`, without copying the field when a string is compared
    /// with the node's external id or name (a scan's `{name: $n}` tests every candidate).
    pub fn node_prop_equals(&self, e: EntityId, key: &str, want: &Val) -> Option<bool> {
        let v = self.view;
        if let (Val::Str(w), "id" | "name") = (want, key) {
            if v.entity_property(e, key).is_none() && !v.entity_bare(e) {
                let field = if key == "id" { v.entity_ext_id(e) } else { v.entity_name(e).filter(|n| !n.is_empty()) };
                return field.map(|f| f == &**w);
            }
        }
        self.node_prop(e, key).equals(want)
    }

    /// The node's listed properties.
    pub fn node_props(&self, e: EntityId) -> BTreeMap<Arc<str>, Val> {
        let mut out = BTreeMap::new();
        self.for_each_node_prop(e, |k, v| {
            out.insert(k.to_arc(), v.to_val());
        });
        out
    }

    /// Calls `f` with each listed property of node `e`, each key once: what was written to it,
    /// and its `id`, `name` and `aliases` fields where nothing of that name was (a node the
    /// language wrote has only what was written). Strings come borrowed from the snapshot, so a
    /// caller building its own form (a result's node) copies each once.
    pub fn for_each_node_prop(&self, e: EntityId, mut f: impl FnMut(PropKey<'a>, Prop<'a>)) {
        let v = self.view;
        let stored: Vec<(&'a Arc<str>, &'a Value)> = v.entity_properties(e).collect();
        if !v.entity_bare(e) {
            let aliases = || {
                let aliases: Vec<&'a str> = v.entity_aliases(e).collect();
                (!aliases.is_empty()).then_some(Prop::Strs(aliases))
            };
            unwritten_fields(
                &stored,
                [
                    ("id", &|| v.entity_ext_id(e).map(Prop::Str)),
                    ("name", &|| v.entity_name(e).filter(|n| !n.is_empty()).map(Prop::Str)),
                    ("aliases", &aliases),
                ],
                &mut f,
            );
        }
        for (k, value) in stored {
            // A string `name` is the entity's name: read the field, which later renames keep.
            let prop = match value {
                Value::Str(_) if &**k == "name" => v.entity_name(e).map_or(Prop::Val(Val::Null), Prop::Str),
                _ => Prop::Stored(value),
            };
            f(PropKey::Stored(k), prop);
        }
    }

    /// A relationship's type (its predicate).
    pub fn rel_type(&self, c: ClaimId) -> Option<Arc<str>> {
        let (_, p, _) = self.view.claim_triple(c)?;
        self.view.predicate_name(p)
    }

    /// Whether a relationship's type passes a label test on it (`WHERE r:KNOWS`, `r:!KNOWS`).
    pub fn rel_type_matches(&self, c: ClaimId, e: &Labels) -> bool {
        self.view.claim_triple(c).is_some_and(|(_, p, _)| self.type_passes(p, e))
    }

    /// A relationship's start and end nodes.
    pub fn endpoints(&self, c: ClaimId) -> Option<(EntityId, EntityId)> {
        self.view.claim_triple(c).map(|(s, _, o)| (s, o))
    }

    /// One property of a relationship; null when absent. A property written as such wins over
    /// the memory field of the same name.
    pub fn rel_prop(&self, c: ClaimId, key: &str) -> Val {
        let v = self.view;
        if let Some(p) = v.claim_property(c, key) {
            if !mirrors(key, p) {
                return from_value(p);
            }
        }
        match key {
            "id" => v.claim_ext_id(c).map_or(Val::Null, Val::str),
            "text" => v.claim_text(c).map_or(Val::Null, Val::str),
            "confidence" => v.claim_confidence(c).map_or(Val::Null, |f| Val::Float(crate::value::shortest_f64(f))),
            "state" => v.claim_state(c).map_or(Val::Null, |s| Val::str(s.as_str())),
            "valid_from" => v.claim_valid(c).map_or(Val::Null, |(f, _)| time(f)),
            "valid_until" => v.claim_valid(c).map_or(Val::Null, |(_, u)| time(u)),
            "recorded_at" => v.claim_recorded_at(c).map_or(Val::Null, time),
            _ => Val::Null,
        }
    }

    /// The relationship's listed properties: what was written to it (a memory field written as a
    /// property reads the field).
    pub fn rel_props(&self, c: ClaimId) -> BTreeMap<Arc<str>, Val> {
        let mut out = BTreeMap::new();
        self.for_each_rel_prop(c, |k, v| {
            out.insert(k.to_arc(), v.to_val());
        });
        out
    }

    /// Calls `f` with each listed property of relationship `c`, each key once: what was written
    /// to it (a memory field written as a property reads the field), and its `text`,
    /// `confidence` and `state` fields where nothing of that name was (a relationship the
    /// language wrote has only what was written). Strings borrowed, as `for_each_node_prop`.
    pub fn for_each_rel_prop(&self, c: ClaimId, mut f: impl FnMut(PropKey<'a>, Prop<'a>)) {
        let v = self.view;
        let stored: Vec<(&'a Arc<str>, &'a Value)> = v.claim_properties(c).collect();
        if !v.claim_bare(c) {
            unwritten_fields(
                &stored,
                [
                    ("text", &|| v.claim_text(c).map(Prop::Str)),
                    ("confidence", &|| v.claim_confidence(c).map(|x| Prop::Val(Val::Float(crate::value::shortest_f64(x))))),
                    ("state", &|| v.claim_state(c).map(|x| Prop::Str(x.as_str()))),
                ],
                &mut f,
            );
        }
        for (k, value) in stored {
            let prop = if mirrors(k, value) { Prop::Val(self.rel_prop(c, k)) } else { Prop::Stored(value) };
            f(PropKey::Stored(k), prop);
        }
    }

    /// An expander over `types` (any type when empty) or type expression `expr` in `direction`;
    /// `None` when no predicate here is one of them (then nothing can match).
    pub fn expander(&self, direction: Direction, types: &[Arc<str>], expr: Option<&Labels>) -> Option<Expander<'a>> {
        match self.type_ids(types, expr) {
            None => Some(self.view.expander(direction, None, &self.vis)),
            Some(ids) if ids.is_empty() => None,
            Some(ids) => Some(self.view.expander(direction, Some(&ids), &self.vis)),
        }
    }

    /// The predicates a hop may follow: any of `types`, or those whose name passes the type
    /// expression (a relationship has one type, so testing each predicate is exact). `None`:
    /// any predicate.
    pub fn type_ids(&self, types: &[Arc<str>], expr: Option<&Labels>) -> Option<Vec<PredicateId>> {
        if let Some(e) = expr {
            return Some(self.view.predicate_ids().filter(|p| self.type_passes(*p, e)).collect());
        }
        if types.is_empty() {
            return None;
        }
        let mut ids: Vec<PredicateId> = types.iter().flat_map(|t| self.view.rel_type_ids(t).into_iter().flatten()).collect();
        ids.sort_unstable();
        ids.dedup();
        Some(ids)
    }

    /// Whether a relationship of predicate `p` passes type expression `e` (`%`: every one has a type).
    pub fn type_passes(&self, p: PredicateId, e: &Labels) -> bool {
        e.matches(&|name| self.view.rel_type_ids(name).contains(&Some(p)), &|| true)
    }

    /// An expander that finds no edge (for types no relationship has).
    pub fn no_edges(&self, direction: Direction) -> Expander<'a> {
        self.view.expander(direction, Some(&[]), &self.vis)
    }
}

/// Calls `f` with each listed memory field over which no property of its name was written
/// (`stored`), reading a field only then; a field that reads `None` is not listed.
fn unwritten_fields<'a>(
    stored: &[(&'a Arc<str>, &'a Value)],
    fields: [(&'static str, &dyn Fn() -> Option<Prop<'a>>); 3],
    f: &mut impl FnMut(PropKey<'a>, Prop<'a>),
) {
    for (key, read) in fields {
        if !stored.iter().any(|(k, _)| &***k == key) {
            if let Some(prop) = read() {
                f(PropKey::Field(key), prop);
            }
        }
    }
}

/// Whether claim property `key` = `v` is a memory field's value (the field follows it, so the
/// field is read): a string `text`, a state name under `state`, a number in `[0, 1]` under
/// `confidence`, a time under `valid_until` (read back as an RFC 3339 string, as every time).
fn mirrors(key: &str, v: &Value) -> bool {
    match (key, v) {
        ("text", Value::Str(_)) | ("valid_until", Value::Int(_)) => true,
        ("state", Value::Str(s)) => crate::model::ClaimState::parse(s).is_some(),
        ("valid_until", Value::Str(s)) => Timestamp::parse(s).is_ok(),
        // An integer keeps its type; a float reads the field (a 32-bit float, shortest decimal).
        ("confidence", Value::Float(f)) => (0.0..=1.0).contains(f),
        _ => false,
    }
}
