//! The executor's values and Cypher's rules for them: three-valued equality (`null = x` is null),
//! comparison only within a kind (numbers with numbers; otherwise null), the global sort order of
//! `ORDER BY`, and the equivalence `DISTINCT` and grouping use (null equals null, `1` equals `1.0`).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::ids::{ClaimId, EntityId};
use engram_query::types::{BaseType, TypeSpec};

/// A value while a query runs. Nodes and relationships are ids into the snapshot; they are
/// materialized (labels, properties) only in the result.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    List(Arc<Vec<Val>>),
    Map(Arc<BTreeMap<Arc<str>, Val>>),
    Node(EntityId),
    Rel(ClaimId),
    Path(Arc<PathVal>),
    /// Shared: a temporal value is 40 bytes, every other value fits in 24.
    Temporal(Arc<crate::temporal::Temporal>),
    /// Shared, as a point is 32 bytes.
    Point(Arc<crate::spatial::Point>),
}

// Rows are vectors of values: a larger value slows every operator (checked at compile time).
const _: () = assert!(size_of::<Val>() <= 24);

/// A query's parameters bound to values: a handful, so a list searched by name (no tree nodes
/// to allocate and free per query), the first two held inline (no allocation for most queries).
///
/// A string given in the caller's `Params` is borrowed, not copied: an operator that looks it
/// up as it is (a seek by external id) reads the caller's text, and the value is built only if
/// an expression asks for it (once; `OnceLock` because parallel operators share the bindings).
#[derive(Clone, Debug, Default)]
pub(crate) struct Bound<'p> {
    // Not a `SmallVec`: its array parameter would make `Bound` invariant in `'p`.
    first: [Option<Param<'p>>; 2],
    more: Vec<Param<'p>>,
}

/// One bound parameter: its value, or the caller's text it is made of on first use.
#[derive(Clone, Debug)]
pub(crate) struct Param<'p> {
    /// The caller's own key where it lives long enough (no copy, no reference count).
    name: std::borrow::Cow<'p, str>,
    value: std::sync::OnceLock<Val>,
    text: Option<&'p str>,
}

impl Param<'_> {
    fn value(&self) -> &Val {
        self.value.get_or_init(|| Val::str(self.text.unwrap_or_default()))
    }
}

impl<'p> Bound<'p> {
    pub fn get(&self, name: &str) -> Option<&Val> {
        self.find(name).map(Param::value)
    }

    /// The string `name` is bound to, borrowed (never building the value): what a lookup by
    /// text takes. `None` when it is not bound to a string.
    pub fn text(&self, name: &str) -> Option<&str> {
        let p = self.find(name)?;
        match (p.text, p.value.get()) {
            (Some(t), _) => Some(t),
            (None, Some(Val::Str(s))) => Some(s),
            _ => None,
        }
    }

    fn params(&self) -> impl Iterator<Item = &Param<'p>> {
        self.first.iter().flatten().chain(&self.more)
    }

    fn find(&self, name: &str) -> Option<&Param<'p>> {
        self.params().find(|p| *p.name == *name)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    pub fn len(&self) -> usize {
        self.params().count()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Val)> {
        self.params().map(|p| (&*p.name, p.value()))
    }

    /// Binds `name`, replacing an earlier value.
    pub fn insert(&mut self, name: impl Into<std::borrow::Cow<'p, str>>, v: Val) {
        let value = std::sync::OnceLock::from(v);
        self.put(Param { name: name.into(), value, text: None });
    }

    /// Binds `name` to the string `text`, borrowed until a value is asked for.
    pub fn insert_text(&mut self, name: &'p str, text: &'p str) {
        self.put(Param { name: name.into(), value: std::sync::OnceLock::new(), text: Some(text) });
    }

    fn put(&mut self, p: Param<'p>) {
        if let Some(slot) = self.first.iter_mut().flatten().chain(&mut self.more).find(|q| q.name == p.name) {
            *slot = p;
        } else if let Some(free) = self.first.iter_mut().find(|q| q.is_none()) {
            *free = Some(p);
        } else {
            self.more.push(p);
        }
    }

    /// The same bindings owning every value (what outlives the caller's parameters: a write's
    /// commit job).
    pub fn owned(&self) -> Bound<'static> {
        let mut owned = Bound::default();
        for (k, v) in self.iter() {
            owned.insert(k.to_owned(), v.clone());
        }
        owned
    }
}

/// A path: the start node and each hop's relationship and the node it reaches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PathVal {
    pub start: EntityId,
    pub steps: Vec<(ClaimId, EntityId)>,
}

/// A row of `width` nulls (each written as it is, not cloned from a first one).
pub(crate) fn nulls(width: usize) -> Vec<Val> {
    std::iter::repeat_with(|| Val::Null).take(width).collect()
}

impl Val {
    pub fn str(s: &str) -> Val {
        Val::Str(Arc::from(s))
    }

    pub fn list(items: Vec<Val>) -> Val {
        Val::List(Arc::new(items))
    }

    pub fn temporal(t: crate::temporal::Temporal) -> Val {
        Val::Temporal(Arc::new(t))
    }

    pub fn point(p: crate::spatial::Point) -> Val {
        Val::Point(Arc::new(p))
    }

    pub fn map(items: BTreeMap<Arc<str>, Val>) -> Val {
        Val::Map(Arc::new(items))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Val::Null)
    }

    /// The type's name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "a boolean",
            Val::Int(_) => "an integer",
            Val::Float(_) => "a float",
            Val::Str(_) => "a string",
            Val::List(_) => "a list",
            Val::Map(_) => "a map",
            Val::Node(_) => "a node",
            Val::Rel(_) => "a relationship",
            Val::Path(_) => "a path",
            Val::Temporal(t) => t.kind_text(),
            Val::Point(_) => "a point",
        }
    }

    /// Whether the value is of type `t` (a type predicate, `v IS :: t`): null is of every type
    /// that holds null; a list is of `LIST<t>` when each item is of `t`.
    pub fn is_type(&self, t: &TypeSpec) -> bool {
        use crate::temporal::Kind as K;
        if self.is_null() {
            return t.nullable && t.base != BaseType::Nothing;
        }
        if t.base == BaseType::Any {
            return true;
        }
        match (&t.base, self) {
            (BaseType::Union(items), v) => items.iter().any(|i| v.is_type(i)),
            (BaseType::List(inner), Val::List(items)) => items.iter().all(|i| i.is_type(inner)),
            (BaseType::PropertyValue, Val::List(items)) => items.iter().all(|i| !i.is_null() && i.is_property_scalar()),
            (BaseType::PropertyValue, v) => v.is_property_scalar(),
            (base, Val::Temporal(tv)) => matches!(
                (base, tv.kind()),
                (BaseType::Date, K::Date)
                    | (BaseType::LocalTime, K::LocalTime)
                    | (BaseType::ZonedTime, K::Time)
                    | (BaseType::LocalDateTime, K::LocalDateTime)
                    | (BaseType::ZonedDateTime, K::DateTime)
                    | (BaseType::Duration, K::Duration)
            ),
            (BaseType::Boolean, Val::Bool(_))
            | (BaseType::String, Val::Str(_))
            | (BaseType::Integer, Val::Int(_))
            | (BaseType::Float, Val::Float(_))
            | (BaseType::Node, Val::Node(_))
            | (BaseType::Relationship, Val::Rel(_))
            | (BaseType::Map, Val::Map(_))
            | (BaseType::Path, Val::Path(_))
            | (BaseType::Point, Val::Point(_)) => true,
            _ => false,
        }
    }

    fn is_property_scalar(&self) -> bool {
        matches!(self, Val::Bool(_) | Val::Str(_) | Val::Int(_) | Val::Float(_) | Val::Temporal(_) | Val::Point(_))
    }

    /// The value's most precise type, as `valueType()` names it (`INTEGER NOT NULL`,
    /// `LIST<INTEGER | STRING> NOT NULL`, `NULL`).
    pub fn value_type(&self) -> TypeSpec {
        use crate::temporal::Kind as K;
        let base = match self {
            Val::Null => return TypeSpec::nullable(BaseType::Null),
            Val::Bool(_) => BaseType::Boolean,
            Val::Int(_) => BaseType::Integer,
            Val::Float(_) => BaseType::Float,
            Val::Str(_) => BaseType::String,
            Val::Map(_) => BaseType::Map,
            Val::Node(_) => BaseType::Node,
            Val::Rel(_) => BaseType::Relationship,
            Val::Path(_) => BaseType::Path,
            Val::Point(_) => BaseType::Point,
            Val::Temporal(t) => match t.kind() {
                K::Date => BaseType::Date,
                K::LocalTime => BaseType::LocalTime,
                K::Time => BaseType::ZonedTime,
                K::LocalDateTime => BaseType::LocalDateTime,
                K::DateTime => BaseType::ZonedDateTime,
                K::Duration => BaseType::Duration,
            },
            Val::List(items) => {
                let has_null = items.iter().any(Val::is_null);
                let mut kinds: Vec<TypeSpec> = items.iter().filter(|i| !i.is_null()).map(Val::value_type).collect();
                kinds.sort();
                kinds.dedup();
                for k in &mut kinds {
                    k.nullable = has_null;
                }
                let inner = match kinds.len() {
                    0 if has_null => TypeSpec::nullable(BaseType::Null),
                    0 => TypeSpec { base: BaseType::Nothing, nullable: false },
                    1 => kinds.remove(0),
                    _ => TypeSpec { base: BaseType::Union(kinds), nullable: has_null },
                };
                BaseType::List(Box::new(inner))
            }
        };
        TypeSpec { base, nullable: false }
    }

    /// `a = b` with null propagation: `None` is null.
    pub fn equals(&self, other: &Val) -> Option<bool> {
        match (self, other) {
            (Val::Null, _) | (_, Val::Null) => None,
            (Val::Int(a), Val::Int(b)) => Some(a == b),
            #[allow(clippy::float_cmp)] // Reason: Cypher's `=` on floats is exact equality.
            (Val::Float(a), Val::Float(b)) => Some(a == b),
            (Val::Int(a), Val::Float(b)) | (Val::Float(b), Val::Int(a)) => Some(int_float_cmp(*a, *b) == Some(Ordering::Equal)),
            (Val::Bool(a), Val::Bool(b)) => Some(a == b),
            (Val::Str(a), Val::Str(b)) => Some(a == b),
            (Val::Node(a), Val::Node(b)) => Some(a == b),
            (Val::Rel(a), Val::Rel(b)) => Some(a == b),
            (Val::Path(a), Val::Path(b)) => Some(a == b),
            (Val::Temporal(a), Val::Temporal(b)) => Some(a == b),
            (Val::Point(a), Val::Point(b)) => Some(a == b),
            (Val::List(a), Val::List(b)) => {
                if a.len() != b.len() {
                    return Some(false);
                }
                all_equal(a.iter().zip(b.iter()))
            }
            (Val::Map(a), Val::Map(b)) => {
                if a.len() != b.len() || !a.keys().eq(b.keys()) {
                    return Some(false);
                }
                all_equal(a.values().zip(b.values()))
            }
            _ => Some(false),
        }
    }

    /// `a < b` and friends: `None` (null) across kinds or with null; NaN compares false. Points
    /// do not compare (null, as Neo4j); `ORDER BY` still orders them.
    pub fn compare(&self, other: &Val) -> Option<Ordering> {
        match (self, other) {
            (Val::Int(a), Val::Int(b)) => Some(a.cmp(b)),
            (Val::Float(a), Val::Float(b)) => a.partial_cmp(b),
            (Val::Int(a), Val::Float(b)) => int_float_cmp(*a, *b),
            (Val::Float(a), Val::Int(b)) => int_float_cmp(*b, *a).map(Ordering::reverse),
            (Val::Str(a), Val::Str(b)) => Some(a.cmp(b)),
            (Val::Bool(a), Val::Bool(b)) => Some(a.cmp(b)),
            (Val::Temporal(a), Val::Temporal(b)) => a.compare(b),
            (Val::List(a), Val::List(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    match x.compare(y)? {
                        Ordering::Equal => {}
                        o => return Some(o),
                    }
                }
                Some(a.len().cmp(&b.len()))
            }
            _ => None,
        }
    }

    /// Whether a comparison involves a NaN (then every ordering comparison is false, not null).
    pub fn is_nan(&self) -> bool {
        matches!(self, Val::Float(f) if f.is_nan())
    }

    fn order_rank(&self) -> u8 {
        match self {
            Val::Map(_) => 0,
            Val::Node(_) => 1,
            Val::Rel(_) => 2,
            Val::List(_) => 3,
            Val::Path(_) => 4,
            Val::Point(_) => 5,
            Val::Temporal(_) => 6,
            Val::Str(_) => 7,
            Val::Bool(_) => 8,
            Val::Int(_) | Val::Float(_) => 9,
            Val::Null => 10,
        }
    }

    /// The total order of `ORDER BY` (ascending): maps, nodes, relationships, lists, paths, points,
    /// temporal values, strings, booleans, numbers (NaN last among them), then null.
    pub fn order(&self, other: &Val) -> Ordering {
        let (ra, rb) = (self.order_rank(), other.order_rank());
        if ra != rb {
            return ra.cmp(&rb);
        }
        match (self, other) {
            (Val::Int(_) | Val::Float(_), Val::Int(_) | Val::Float(_)) => match (self.is_nan(), other.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.compare(other).unwrap_or(Ordering::Equal),
            },
            (Val::Str(a), Val::Str(b)) => a.cmp(b),
            (Val::Bool(a), Val::Bool(b)) => a.cmp(b),
            (Val::Temporal(a), Val::Temporal(b)) => a.order(b),
            (Val::Point(a), Val::Point(b)) => a.order(b),
            (Val::Node(a), Val::Node(b)) => a.0.cmp(&b.0),
            (Val::Rel(a), Val::Rel(b)) => a.0.cmp(&b.0),
            (Val::List(a), Val::List(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    match x.order(y) {
                        Ordering::Equal => {}
                        o => return o,
                    }
                }
                a.len().cmp(&b.len())
            }
            (Val::Map(a), Val::Map(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
                    match ka.cmp(kb).then_with(|| va.order(vb)) {
                        Ordering::Equal => {}
                        o => return o,
                    }
                }
                a.len().cmp(&b.len())
            }
            (Val::Path(a), Val::Path(b)) => a.start.0.cmp(&b.start.0).then_with(|| {
                let ka: Vec<(u32, u32)> = a.steps.iter().map(|(c, e)| (c.0, e.0)).collect();
                let kb: Vec<(u32, u32)> = b.steps.iter().map(|(c, e)| (c.0, e.0)).collect();
                ka.cmp(&kb)
            }),
            _ => Ordering::Equal,
        }
    }

    /// Equivalence for DISTINCT and grouping: null equals null, NaN equals NaN, `1` equals `1.0`.
    pub fn equivalent(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Null, Val::Null) => true,
            (Val::Float(a), Val::Float(b)) if a.is_nan() && b.is_nan() => true,
            (Val::List(a), Val::List(b)) => a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.equivalent(y)),
            (Val::Map(a), Val::Map(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|((ka, va), (kb, vb))| ka == kb && va.equivalent(vb))
            }
            _ => self.equals(other) == Some(true),
        }
    }
}

/// Element-wise `=` of paired values: false if any pair is unequal, else null if any is null.
fn all_equal<'v>(pairs: impl Iterator<Item = (&'v Val, &'v Val)>) -> Option<bool> {
    let mut unknown = false;
    for (x, y) in pairs {
        match x.equals(y) {
            Some(false) => return Some(false),
            None => unknown = true,
            Some(true) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(true)
    }
}

/// Compares an integer with a float exactly (no rounding of large integers through f64).
fn int_float_cmp(a: i64, b: f64) -> Option<Ordering> {
    if b.is_nan() {
        return None;
    }
    // 2^63: the first float above every i64.
    if b >= 9_223_372_036_854_775_808.0_f64 {
        return Some(Ordering::Less);
    }
    if b < -9_223_372_036_854_775_808.0_f64 {
        return Some(Ordering::Greater);
    }
    let t = b.trunc();
    // `t` is within i64's range here; equal integer parts are split by the fraction's sign.
    let ti = t as i64;
    Some(a.cmp(&ti).then_with(|| 0.0f64.partial_cmp(&(b - t)).unwrap_or(Ordering::Equal)))
}

/// A row's values as a grouping or DISTINCT key: hashing and equality follow `equivalent`.
#[derive(Clone, Debug)]
pub(crate) struct Key(pub Vec<Val>);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.equivalent(b))
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for v in &self.0 {
            hash_val(v, state);
        }
    }
}

fn hash_val<H: Hasher>(v: &Val, state: &mut H) {
    match v {
        Val::Null => 0u8.hash(state),
        Val::Bool(b) => (1u8, b).hash(state),
        // Integers and integral floats hash alike, so `1` and `1.0` group together.
        Val::Int(i) => (2u8, *i).hash(state),
        Val::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => (2u8, *f as i64).hash(state),
        Val::Float(f) if f.is_nan() => 3u8.hash(state),
        Val::Float(f) => (4u8, f.to_bits()).hash(state),
        Val::Str(s) => (5u8, s).hash(state),
        Val::List(items) => {
            (6u8, items.len()).hash(state);
            for i in items.iter() {
                hash_val(i, state);
            }
        }
        Val::Map(m) => {
            (7u8, m.len()).hash(state);
            for (k, v) in m.iter() {
                k.hash(state);
                hash_val(v, state);
            }
        }
        Val::Node(e) => (8u8, e.0).hash(state),
        Val::Rel(c) => (9u8, c.0).hash(state),
        Val::Path(p) => (10u8, p).hash(state),
        Val::Temporal(t) => (11u8, t).hash(state),
        Val::Point(p) => (12u8, p.hash_key()).hash(state),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_propagates_and_kinds_do_not_mix() {
        assert_eq!(Val::Int(1).equals(&Val::Null), None);
        assert_eq!(Val::Int(1).equals(&Val::Float(1.0)), Some(true));
        assert_eq!(Val::Int(1).equals(&Val::str("1")), Some(false));
        assert_eq!(Val::list(vec![Val::Int(1), Val::Null]).equals(&Val::list(vec![Val::Int(1), Val::Null])), None);
        assert_eq!(Val::list(vec![Val::Int(2), Val::Null]).equals(&Val::list(vec![Val::Int(1), Val::Null])), Some(false));
        assert_eq!(Val::Int(1).compare(&Val::str("a")), None);
        assert_eq!(Val::Int(3).compare(&Val::Float(2.5)), Some(Ordering::Greater));
        assert_eq!(Val::Int(2).compare(&Val::Float(2.5)), Some(Ordering::Less));
        assert_eq!(Val::Int(i64::MAX).compare(&Val::Float(9.3e18)), Some(Ordering::Less));
        assert_eq!(Val::Float(f64::NAN).compare(&Val::Int(1)), None);
    }

    #[test]
    fn the_sort_order_is_total() {
        let mut vals = [Val::Null, Val::Int(2), Val::Float(f64::NAN), Val::Float(1.5), Val::str("b"), Val::Bool(false), Val::list(vec![])];
        vals.sort_by(Val::order);
        let kinds: Vec<&str> = vals.iter().map(Val::kind).collect();
        assert_eq!(kinds, ["a list", "a string", "a boolean", "a float", "an integer", "a float", "null"]);
        assert!(vals[5].is_nan());
    }

    #[test]
    fn grouping_keys_treat_one_and_one_point_zero_alike() {
        use std::collections::HashSet;
        let mut set = HashSet::new();
        set.insert(Key(vec![Val::Int(1)]));
        assert!(set.contains(&Key(vec![Val::Float(1.0)])));
        assert!(!set.contains(&Key(vec![Val::Float(1.5)])));
        set.insert(Key(vec![Val::Null]));
        assert!(set.contains(&Key(vec![Val::Null])));
    }
}
