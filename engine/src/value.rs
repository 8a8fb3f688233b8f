//! Typed property values: a small closed set instead of raw JSON text, so properties can be
//! compared, indexed and persisted without re-parsing.

use std::collections::BTreeMap;
use std::sync::Arc;

/// A property value.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// Absent / cleared. Setting a property to `Null` removes it.
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// A finite float (NaN and infinities are rejected at the write boundary).
    Float(f64),
    /// A string.
    Str(Arc<str>),
    /// An ordered list.
    List(Vec<Value>),
    /// A map with ordered keys.
    Map(BTreeMap<Arc<str>, Value>),
}

impl Value {
    /// True when any float inside is NaN or infinite.
    pub fn has_non_finite(&self) -> bool {
        match self {
            Value::Float(f) => !f.is_finite(),
            Value::List(items) => items.iter().any(Value::has_non_finite),
            Value::Map(map) => map.values().any(Value::has_non_finite),
            _ => false,
        }
    }

    /// Approximate encoded size in bytes, for the size limit on properties.
    pub fn approx_bytes(&self) -> usize {
        match self {
            Value::Null | Value::Bool(_) => 1,
            Value::Int(_) | Value::Float(_) => 8,
            Value::Str(s) => s.len(),
            Value::List(items) => items.iter().map(Value::approx_bytes).sum::<usize>() + 4,
            Value::Map(map) => map.iter().map(|(k, v)| k.len() + v.approx_bytes()).sum::<usize>() + 4,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(Arc::from(s))
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

/// The properties of an entity: ordered so iteration and persistence are deterministic.
pub type Properties = BTreeMap<Arc<str>, Value>;

/// The f64 whose shortest decimal is the f32's (`0.9f32` reads as `0.9`, not `0.899999976`):
/// how every interface prints a stored confidence.
pub fn shortest_f64(f: f32) -> f64 {
    let text = f.to_string();
    text.parse().unwrap_or(f64::from(f))
}

/// Serializes an `f32` as the shortest decimal that reads back as it (`0.9`, not
/// `0.8999999761581421`), whichever way the serializer writes numbers.
#[allow(clippy::trivially_copy_pass_by_ref)] // Reason: serde hands `serialize_with` a reference.
pub(crate) fn serialize_shortest<S: serde::Serializer>(f: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(shortest_f64(*f))
}
