//! Typed property values: a small closed set instead of raw JSON text, so properties can be
//! compared, indexed and persisted without re-parsing.

use std::collections::BTreeMap;
use std::sync::Arc;

/// A property value.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
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
    /// A date, time, date-time or duration (appended last: older records decode unchanged; boxed,
    /// so the other values stay 32 bytes).
    Temporal(Box<crate::temporal::Temporal>),
    /// A list of floats only, packed (8 bytes a number where `List` spends a 32-byte value on
    /// each): what the query language stores for one, an embedding above all. Equal to the same
    /// numbers as a `List`; appended last like `Temporal`.
    Floats(Arc<[f64]>),
    /// A spatial point (appended last like `Floats`; boxed, as a point is 32 bytes).
    Point(Box<crate::spatial::Point>),
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            #[allow(clippy::float_cmp)] // Reason: a stored value equals only the same number.
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            (Value::Temporal(a), Value::Temporal(b)) => a == b,
            (Value::Floats(a), Value::Floats(b)) => a == b,
            (Value::Point(a), Value::Point(b)) => a == b,
            (Value::List(l), Value::Floats(f)) | (Value::Floats(f), Value::List(l)) => {
                #[allow(clippy::float_cmp)] // Reason: the same numbers, exactly.
                let same = l.len() == f.len() && l.iter().zip(f.iter()).all(|(x, y)| matches!(x, Value::Float(x) if x == y));
                same
            }
            _ => false,
        }
    }
}

// A stored list of numbers holds one per item: kept at 32 bytes (checked at compile time).
const _: () = assert!(size_of::<Value>() <= 32);

impl Value {
    /// True when any float inside is NaN or infinite.
    pub fn has_non_finite(&self) -> bool {
        match self {
            Value::Float(f) => !f.is_finite(),
            Value::List(items) => items.iter().any(Value::has_non_finite),
            Value::Floats(items) => items.iter().any(|f| !f.is_finite()),
            Value::Map(map) => map.values().any(Value::has_non_finite),
            _ => false,
        }
    }

    /// Approximate encoded size in bytes, for the size limit on properties.
    pub fn approx_bytes(&self) -> usize {
        match self {
            Value::Null | Value::Bool(_) => 1,
            Value::Int(_) | Value::Float(_) => 8,
            Value::Temporal(_) | Value::Point(_) => 24,
            Value::Str(s) => s.len(),
            Value::List(items) => items.iter().map(Value::approx_bytes).sum::<usize>() + 4,
            Value::Floats(items) => items.len() * 8 + 4,
            Value::Map(map) => map.iter().map(|(k, v)| k.len() + v.approx_bytes()).sum::<usize>() + 4,
        }
    }
}

impl Value {
    /// A list, packed when it holds floats only (and at least one).
    pub fn list(items: Vec<Value>) -> Value {
        if !items.is_empty() && items.iter().all(|v| matches!(v, Value::Float(_))) {
            return Value::Floats(items.iter().map(|v| if let Value::Float(f) = v { *f } else { 0.0 }).collect());
        }
        Value::List(items)
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
    use std::fmt::Write as _;
    // Every confidence a result or an export shows comes through here: the digits go to the
    // stack, not the heap (`Display`'s digits; Ryu's differ on ties, such as 0.0400390625).
    let mut text = StackText::default();
    if write!(text, "{f}").is_err() {
        return f64::from(f);
    }
    text.as_str().parse().unwrap_or(f64::from(f))
}

/// A short text written on the stack (`Display` of any `f32` takes fewer than 64 bytes).
struct StackText {
    bytes: [u8; 64],
    len: usize,
}

impl Default for StackText {
    fn default() -> StackText {
        StackText { bytes: [0; 64], len: 0 }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Serializes an `f32` as the shortest decimal that reads back as it (`0.9`, not
/// `0.8999999761581421`), whichever way the serializer writes numbers.
#[allow(clippy::trivially_copy_pass_by_ref)] // Reason: serde hands `serialize_with` a reference.
pub(crate) fn serialize_shortest<S: serde::Serializer>(f: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(shortest_f64(*f))
}

#[cfg(test)]
mod tests {
    use super::{shortest_f64, Value};
    use proptest::prelude::*;

    #[test]
    fn a_list_of_floats_is_packed_and_equals_its_list() {
        let floats = Value::list(vec![Value::Float(0.5), Value::Float(-2.0)]);
        assert!(matches!(&floats, Value::Floats(f) if **f == [0.5, -2.0]));
        assert_eq!(floats, Value::List(vec![Value::Float(0.5), Value::Float(-2.0)]));
        assert_eq!(Value::List(vec![Value::Float(0.5), Value::Float(-2.0)]), floats);
        assert_ne!(floats, Value::List(vec![Value::Float(0.5), Value::Int(-2)]));
        assert_ne!(floats, Value::List(vec![Value::Float(0.5)]));
        assert!(matches!(Value::list(vec![Value::Float(1.0), Value::Int(1)]), Value::List(_)));
        assert!(matches!(Value::list(Vec::new()), Value::List(_)));
        // Postcard round trip: the packed form persists as itself.
        let bytes = postcard::to_allocvec(&floats).expect("encodes");
        assert!(matches!(postcard::from_bytes::<Value>(&bytes), Ok(Value::Floats(f)) if *f == [0.5, -2.0]));
    }

    /// What `shortest_f64` must equal: the f64 read back from the f32's `Display` digits.
    fn through_display(f: f32) -> f64 {
        f.to_string().parse().unwrap_or(f64::from(f))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn shortest_equals_display_for_any_bit_pattern(bits in any::<u32>()) {
            let f = f32::from_bits(bits);
            let (got, want) = (shortest_f64(f), through_display(f));
            prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{f:e}: {got} against {want}");
        }

        #[test]
        fn shortest_equals_display_for_confidences(f in 0.0f32..=1.0) {
            prop_assert_eq!(shortest_f64(f).to_bits(), through_display(f).to_bits());
        }
    }

    #[test]
    fn a_confidence_reads_as_written() {
        let bits = |f: f32| shortest_f64(f).to_bits();
        assert_eq!(bits(0.9), 0.9f64.to_bits());
        assert_eq!(bits(1e-7), 1e-7f64.to_bits());
        // 41/1024 lies exactly between two shortest decimals: `Display` takes the upper one.
        assert_eq!(bits(41.0 / 1024.0), 0.040_039_063f64.to_bits());
        // The longest `Display`s of an f32 fit the stack buffer.
        for f in [-f32::MIN_POSITIVE / 3.0, -f32::from_bits(1), f32::MAX, f32::MIN] {
            assert_eq!(bits(f), through_display(f).to_bits(), "{f:e}");
        }
        assert_eq!(bits(-0.0), (-0.0f64).to_bits());
        assert_eq!(bits(f32::INFINITY), f64::INFINITY.to_bits());
        assert!(shortest_f64(f32::NAN).is_nan());
    }
}
