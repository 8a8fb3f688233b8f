//! An indexable property value, as both halves of the property index (`propindex`, `order`)
//! read it.

use crate::temporal::Temporal;
use crate::value::Value;

/// An indexable property value.
#[derive(Clone, Copy, Debug)]
pub enum Scalar<'a> {
    /// An integer, or a float with an integral value in the integers' range.
    Int(i64),
    /// Any other float but NaN (its bits, `-0.0` being `0`).
    Float(u64),
    Bool(bool),
    Str(&'a str),
    Temporal(&'a Temporal),
}

impl<'a> Scalar<'a> {
    /// The number `f` as the language compares it with integers.
    pub fn float(f: f64) -> Option<Scalar<'a>> {
        if f.is_nan() {
            return None;
        }
        // The integers' range, exactly: -2^63 ≤ f < 2^63.
        if f.fract() == 0.0 && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
            #[allow(clippy::cast_possible_truncation)] // Reason: integral and in range, checked above.
            return Some(Scalar::Int(f as i64));
        }
        Some(Scalar::Float(f.to_bits()))
    }

    /// A stored value's scalar; `None` for what is not indexed.
    pub fn of_value(v: &'a Value) -> Option<Scalar<'a>> {
        match v {
            Value::Int(i) => Some(Scalar::Int(*i)),
            Value::Float(f) => Scalar::float(*f),
            Value::Bool(b) => Some(Scalar::Bool(*b)),
            Value::Str(s) => Some(Scalar::Str(s)),
            Value::Temporal(t) => Some(Scalar::Temporal(t)),
            // Points are found by a scan: equality is their only comparison, and rare.
            Value::Null | Value::List(_) | Value::Floats(_) | Value::Map(_) | Value::Point(_) => None,
        }
    }
}
