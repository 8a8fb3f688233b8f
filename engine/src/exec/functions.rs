//! The scalar functions. Null in, null out, unless the function is about null (`coalesce`,
//! `exists`); a wrong argument type is a `TypeError` naming the function.

use std::fmt::Write as _;
use std::sync::Arc;

use engram_query::{Detail, ErrorType, QueryError};

mod falkordb;
mod spatial;
mod temporal;

pub(crate) use temporal::temporal_error;

use super::eval::{arg_error, as_f64, type_error};
use super::graph::Graph;
use super::value::{PathVal, Val};

/// A float as Cypher prints it: always with a `.` or an exponent.
pub(crate) fn float_text(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        format!("{f:?}")
    }
}

/// `text =~ pattern`: the whole text must match.
pub(crate) fn regex_match(text: &str, pattern: &str) -> Result<bool, QueryError> {
    let re = regex::Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|e| arg_error(Detail::InvalidArgumentValue, format!("invalid regular expression: {e}")))?;
    Ok(re.is_match(text))
}

fn want_int(f: &str, v: &Val) -> Result<i64, QueryError> {
    match v {
        Val::Int(i) => Ok(*i),
        other => Err(type_error(format!("{f}() expects an integer, got {}", other.kind()))),
    }
}

fn want_str<'v>(f: &str, v: &'v Val) -> Result<&'v str, QueryError> {
    match v {
        Val::Str(s) => Ok(s),
        other => Err(type_error(format!("{f}() expects a string, got {}", other.kind()))),
    }
}

/// A list of numbers as a vector (FalkorDB's `vecf32`: each component rounded to f32).
fn vector(name: &str, v: &Val) -> Result<Vec<f64>, QueryError> {
    let Val::List(items) = v else { return Err(type_error(format!("{name}() expects a list of numbers, got {}", v.kind()))) };
    items.iter().map(|x| component(name, x)).collect()
}

/// The items of a list that is a vector, each checked to be a finite number.
fn vector_items<'v>(name: &str, v: &'v Val) -> Result<&'v [Val], QueryError> {
    let Val::List(items) = v else { return Err(type_error(format!("{name}() expects a list of numbers, got {}", v.kind()))) };
    for x in items.iter() {
        component(name, x)?;
    }
    Ok(items)
}

/// One component of a vector, rounded to f32.
fn component(name: &str, x: &Val) -> Result<f64, QueryError> {
    match x {
        Val::Int(i) => Ok(f64::from(*i as f32)),
        Val::Float(f) if f.is_finite() => Ok(f64::from(*f as f32)),
        other => Err(type_error(format!("{name}() expects a list of finite numbers, got {} in it", other.kind()))),
    }
}

/// An item of a vector, as `vecf32` reads it: a finite number rounded to f32.
trait Component {
    fn as_component(&self) -> Option<f64>;
}

impl Component for Val {
    fn as_component(&self) -> Option<f64> {
        component("", self).ok()
    }
}

impl Component for crate::value::Value {
    fn as_component(&self) -> Option<f64> {
        match self {
            crate::value::Value::Int(i) => Some(f64::from(*i as f32)),
            crate::value::Value::Float(f) if f.is_finite() => Some(f64::from(*f as f32)),
            _ => None,
        }
    }
}

/// A vector's items where they are: a list the query made, or a stored property read in place
/// (a brute-force search scores every node; copying each embedding out of the snapshot cost as
/// much as the distance).
#[derive(Clone, Copy)]
pub(crate) enum Items<'a> {
    Vals(&'a [Val]),
    Stored(&'a [crate::value::Value]),
    Floats(&'a [f64]),
}

impl Items<'_> {
    /// The items as a list value (the copy the in-place reading avoids).
    pub(crate) fn to_val(self) -> Val {
        match self {
            Items::Vals(items) => Val::list(items.to_vec()),
            Items::Stored(items) => Val::list(items.iter().map(super::graph::from_value).collect()),
            Items::Floats(items) => Val::list(items.iter().map(|f| Val::Float(*f)).collect()),
        }
    }
}

impl Component for f64 {
    fn as_component(&self) -> Option<f64> {
        self.is_finite().then(|| f64::from(*self as f32))
    }
}

/// `vec.cosineDistance` / `vec.euclideanDistance` of two vectors read in place; `None` when they
/// are not two lists of finite numbers of one length (the caller then calls the function on the
/// values, which says what is wrong).
pub(crate) fn distance_in_place(name: &str, x: &Items<'_>, y: &Items<'_>) -> Option<f64> {
    fn with<X: Component>(x: &[X], y: &Items<'_>) -> Option<(f64, f64, f64, f64)> {
        match y {
            Items::Vals(y) => distance_sums(x, y),
            Items::Stored(y) => distance_sums(x, y),
            Items::Floats(y) => distance_sums(x, y),
        }
    }
    let sums = match x {
        Items::Vals(x) => with(x, y),
        Items::Stored(x) => with(x, y),
        Items::Floats(x) => with(x, y),
    };
    let (dot, nx, ny, squares) = sums?;
    Some(if name == "vec.euclideandistance" { squares.sqrt() } else { cosine_from(dot, nx, ny) })
}

/// The dot product, the two squared norms and the squared difference of two lists of one
/// length, in one pass; `None` when an item is not a finite number or the lengths differ.
fn distance_sums<X: Component, Y: Component>(x: &[X], y: &[Y]) -> Option<(f64, f64, f64, f64)> {
    if x.len() != y.len() {
        return None;
    }
    let (mut dot, mut nx, mut ny, mut squares) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for (p, q) in x.iter().zip(y) {
        let (p, q) = (p.as_component()?, q.as_component()?);
        dot += p * q;
        nx += p * p;
        ny += q * q;
        squares += (p - q).powi(2);
    }
    Some((dot, nx, ny, squares))
}

/// The longest list `vecf32` keeps per thread (a vector held past its query costs its memory).
const VECF32_KEPT_MAX: usize = 16_384;

/// `vecf32(list)`: the list with each item rounded to f32. A brute-force search passes the
/// same parameter on every row: the last list given (held, so its address cannot be reused)
/// and its vector are kept per thread and handed back for it.
fn vecf32(a: &Val) -> Result<Val, QueryError> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(Arc<Vec<Val>>, Val)>> = const { std::cell::RefCell::new(None) };
    }
    let Val::List(items) = a else { return Err(type_error(format!("vecf32() expects a list of numbers, got {}", a.kind()))) };
    let hit = LAST.with(|l| l.try_borrow().ok()?.as_ref().filter(|(k, _)| Arc::ptr_eq(k, items)).map(|(_, v)| v.clone()));
    if let Some(v) = hit {
        return Ok(v);
    }
    let v = Val::list(vector("vecf32", a)?.into_iter().map(Val::Float).collect());
    if items.len() > VECF32_KEPT_MAX {
        return Ok(v);
    }
    LAST.with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            *l = Some((items.clone(), v.clone()));
        }
    });
    Ok(v)
}

/// `vec.cosineDistance` / `vec.euclideanDistance` of two lists, read in place (a brute-force
/// search calls it once per node: no vector is copied out of the lists), with the same sums in
/// the same order as `cosine_distance` / `euclidean_distance`.
fn list_distance(name: &str, a: &Val, b: &Val) -> Result<f64, QueryError> {
    if let (Val::List(x), Val::List(y)) = (a, b) {
        if let Some(d) = distance_in_place(name, &Items::Vals(x), &Items::Vals(y)) {
            return Ok(d);
        }
    }
    // Something is wrong: the checks in their order say what.
    let (x, y) = (vector_items(name, a)?, vector_items(name, b)?);
    Err(arg_error(Detail::InvalidArgumentValue, format!("{name}() takes two vectors of one length, got {} and {}", x.len(), y.len())))
}

/// 1 − the cosine similarity (0 for the same direction, 2 for opposite ones; 1 when either is
/// all zeros). Also the vector index procedures' distance.
pub(super) fn cosine_distance(x: &[f64], y: &[f64]) -> f64 {
    let (mut dot, mut nx, mut ny) = (0.0f64, 0.0f64, 0.0f64);
    for (&a, &b) in x.iter().zip(y) {
        dot += a * b;
        nx += a * a;
        ny += b * b;
    }
    cosine_from(dot, nx, ny)
}

/// The cosine distance from the dot product and the two squared norms.
fn cosine_from(dot: f64, nx: f64, ny: f64) -> f64 {
    if nx == 0.0 || ny == 0.0 {
        return 1.0;
    }
    1.0 - dot / (nx.sqrt() * ny.sqrt())
}

/// The straight-line distance.
pub(super) fn euclidean_distance(x: &[f64], y: &[f64]) -> f64 {
    // A fold from +0.0 (`sum` starts at -0.0: two empty vectors would be -0.0 apart).
    x.iter().zip(y).fold(0.0f64, |acc, (a, b)| acc + (a - b).powi(2)).sqrt()
}

fn path_nodes(p: &PathVal) -> Vec<Val> {
    std::iter::once(Val::Node(p.start)).chain(p.steps.iter().map(|(_, n)| Val::Node(*n))).collect()
}

/// Calls the scalar function `name` (lower case).
#[allow(clippy::too_many_lines)] // Reason: one arm per function reads best as one table.
pub(crate) fn call(g: &Graph<'_, '_>, name: &str, args: Vec<Val>) -> Result<Val, QueryError> {
    if let Some(done) = falkordb::call_extension(g, name, &args) {
        return done;
    }
    if let Some(done) = temporal::call_temporal(name, &args, &|| g.now()) {
        return done;
    }
    if let Some(done) = spatial::call_spatial(name, &args) {
        return done;
    }
    let mut args = args.into_iter();
    let a = args.next().unwrap_or(Val::Null);
    let b = args.next();
    let c = args.next();
    // Functions that look at null themselves.
    match name {
        "coalesce" => {
            return Ok(std::iter::once(a).chain(b).chain(c).chain(args).find(|v| !v.is_null()).unwrap_or(Val::Null));
        }
        "exists" => {
            return Ok(match a {
                Val::Null => Val::Bool(false),
                Val::List(l) => Val::Bool(!l.is_empty()),
                _ => Val::Bool(true),
            })
        }
        // Neo4j's: null when the two are equal, else the first.
        "nullif" => return Ok(if b.as_ref().and_then(|b| a.equals(b)) == Some(true) { Val::Null } else { a }),
        "rand" => return Ok(Val::Float(rand_unit())),
        "randomuuid" => return Ok(Val::str(&random_uuid())),
        "pi" => return Ok(Val::Float(std::f64::consts::PI)),
        "valuetype" => return Ok(Val::str(&a.value_type().to_string())),
        "e" => return Ok(Val::Float(std::f64::consts::E)),
        // The plain conversion, with null where it refuses the argument.
        "tostringornull" | "tointegerornull" | "tofloatornull" | "tobooleanornull" => {
            return Ok(call(g, name.trim_end_matches("ornull"), vec![a]).unwrap_or(Val::Null));
        }
        // Milliseconds on the statement's clock, as `datetime()` reads it.
        "timestamp" => return Ok(Val::Int(i64::try_from(g.now().div_euclid(1_000_000)).unwrap_or(i64::MAX))),
        "range" => {
            let (Some(b), start) = (b, &a) else { return Ok(Val::Null) };
            let (start, end) = (want_int(name, start)?, want_int(name, &b)?);
            let step = match c {
                Some(c) => want_int(name, &c)?,
                None => 1,
            };
            if step == 0 {
                return Err(arg_error(Detail::InvalidArgumentValue, "range() step cannot be 0"));
            }
            let mut out = Vec::new();
            let mut i = start;
            while (step > 0 && i <= end) || (step < 0 && i >= end) {
                out.push(Val::Int(i));
                if out.len() > 10_000_000 {
                    return Err(arg_error(Detail::InvalidArgumentValue, "range() would hold more than 10,000,000 items"));
                }
                match i.checked_add(step) {
                    Some(n) => i = n,
                    None => break,
                }
            }
            return Ok(Val::list(out));
        }
        _ => {}
    }
    if a.is_null() {
        return Ok(Val::Null);
    }
    if matches!(
        name,
        "split"
            | "left"
            | "right"
            | "replace"
            | "substring"
            | "ltrim"
            | "rtrim"
            | "btrim"
            | "normalize"
            | "vec.cosinedistance"
            | "vec.euclideandistance"
            | "atan2"
            | "round"
    ) && b.as_ref().is_some_and(Val::is_null)
    {
        return Ok(Val::Null);
    }
    match name {
        "vecf32" => return vecf32(&a),
        "vec.cosinedistance" | "vec.euclideandistance" => return list_distance(name, &a, b.as_ref().unwrap_or(&Val::Null)).map(Val::Float),
        _ => {}
    }
    Ok(match (name, &a) {
        // Already of the wanted kind.
        ("properties", Val::Map(_))
        | ("tointeger", Val::Int(_))
        | ("tofloat", Val::Float(_))
        | ("tostring", Val::Str(_))
        | ("toboolean", Val::Bool(_)) => a.clone(),
        ("id", Val::Node(n)) => Val::Int(i64::from(n.0)),
        ("id", Val::Rel(r)) => Val::Int(i64::from(r.0)),
        ("labels", Val::Node(n)) if g.check_not_deleted(&a).is_ok() => Val::list(g.labels(*n).into_iter().map(Val::Str).collect()),
        ("type", Val::Rel(r)) => g.rel_type(*r).map_or(Val::Null, Val::Str),
        ("keys", Val::Node(n)) => Val::list(g.node_props(*n).into_keys().map(Val::Str).collect()),
        ("keys", Val::Rel(r)) => Val::list(g.rel_props(*r).into_keys().map(Val::Str).collect()),
        ("keys", Val::Map(m)) => Val::list(m.keys().cloned().map(Val::Str).collect()),
        ("properties", Val::Node(n)) => Val::map(g.node_props(*n)),
        ("properties", Val::Rel(r)) => Val::map(g.rel_props(*r)),
        ("startnode", Val::Rel(r)) => g.endpoints(*r).map_or(Val::Null, |(s, _)| Val::Node(s)),
        ("endnode", Val::Rel(r)) => g.endpoints(*r).map_or(Val::Null, |(_, o)| Val::Node(o)),
        ("nodes", Val::Path(p)) => Val::list(path_nodes(p)),
        ("relationships", Val::Path(p)) => Val::list(p.steps.iter().map(|(r, _)| Val::Rel(*r)).collect()),
        ("length", Val::Path(p)) => Val::Int(p.steps.len() as i64),
        ("length" | "size" | "char_length" | "character_length", Val::Str(s)) => Val::Int(s.chars().count() as i64),
        ("size" | "length", Val::List(l)) => Val::Int(l.len() as i64),
        ("head", Val::List(l)) => l.first().cloned().unwrap_or(Val::Null),
        ("last", Val::List(l)) => l.last().cloned().unwrap_or(Val::Null),
        ("tail", Val::List(l)) => Val::list(l.iter().skip(1).cloned().collect()),
        ("reverse", Val::List(l)) => Val::list(l.iter().rev().cloned().collect()),
        ("reverse", Val::Str(s)) => Val::str(&s.chars().rev().collect::<String>()),
        ("tointeger", Val::Float(f)) => {
            if f.is_finite() && f.abs() < 9.2e18 {
                Val::Int(f.trunc() as i64)
            } else {
                Val::Null
            }
        }
        ("tointeger", Val::Str(s)) => match s.trim().parse::<i64>() {
            Ok(i) => Val::Int(i),
            Err(_) => match s.trim().parse::<f64>() {
                Ok(f) if f.is_finite() && f.abs() < 9.2e18 => Val::Int(f.trunc() as i64),
                _ => Val::Null,
            },
        },
        ("tointeger", Val::Bool(b)) => Val::Int(i64::from(*b)),
        ("tofloat", Val::Int(i)) => Val::Float(*i as f64),
        ("tofloat", Val::Str(s)) => s.trim().parse::<f64>().map_or(Val::Null, Val::Float),
        ("tostring", Val::Int(i)) => Val::str(&i.to_string()),
        ("tostring", Val::Float(f)) => Val::str(&float_text(*f)),
        ("tostring", Val::Bool(b)) => Val::str(if *b { "true" } else { "false" }),
        ("tostring", Val::Temporal(t)) => Val::str(&t.to_string()),
        ("tostring", Val::Point(p)) => Val::str(&p.to_string()),
        ("toboolean", Val::Str(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            _ => Val::Null,
        },
        ("toboolean", Val::Int(i)) => Val::Bool(*i != 0),
        ("abs", Val::Int(i)) => Val::Int(i.checked_abs().ok_or_else(|| type_error("abs() overflows"))?),
        ("abs", Val::Float(f)) => Val::Float(f.abs()),
        ("sign", Val::Int(i)) => Val::Int(i.signum()),
        ("sign", Val::Float(f)) => Val::Int(if *f > 0.0 {
            1
        } else if *f < 0.0 {
            -1
        } else {
            0
        }),
        ("round", Val::Int(_) | Val::Float(_)) if b.is_none() => Val::Float(round_half_up(as_f64(&a))),
        ("round", Val::Int(_) | Val::Float(_)) => {
            let places = want_int(name, b.as_ref().unwrap_or(&Val::Null))?;
            let mode = match &c {
                None => Rounding::HalfUp,
                Some(Val::Null) => return Ok(Val::Null),
                Some(m) => Rounding::named(want_str(name, m)?)?,
            };
            Val::Float(round_places(as_f64(&a), places, mode))
        }
        ("isempty", Val::List(l)) => Val::Bool(l.is_empty()),
        ("isempty", Val::Str(s)) => Val::Bool(s.is_empty()),
        ("isempty", Val::Map(m)) => Val::Bool(m.is_empty()),
        ("elementid", Val::Node(n)) => Val::str(&n.0.to_string()),
        ("elementid", Val::Rel(r)) => Val::str(&r.0.to_string()),
        ("sin" | "cos" | "tan" | "cot" | "asin" | "acos" | "atan" | "degrees" | "radians" | "haversin", Val::Int(_) | Val::Float(_)) => {
            let x = as_f64(&a);
            Val::Float(match name {
                "sin" => x.sin(),
                "cos" => x.cos(),
                "tan" => x.tan(),
                "cot" => 1.0 / x.tan(),
                "asin" => x.asin(),
                "acos" => x.acos(),
                "atan" => x.atan(),
                "degrees" => x.to_degrees(),
                "radians" => x.to_radians(),
                _ => (1.0 - x.cos()) / 2.0,
            })
        }
        ("atan2", Val::Int(_) | Val::Float(_)) => match b.as_ref() {
            Some(x @ (Val::Int(_) | Val::Float(_))) => Val::Float(as_f64(&a).atan2(as_f64(x))),
            other => return Err(type_error(format!("atan2() expects two numbers, got {}", other.map_or("nothing", Val::kind)))),
        },
        ("floor", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).floor()),
        ("ceil", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).ceil()),
        ("sqrt", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).sqrt()),
        ("exp", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).exp()),
        ("log", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).ln()),
        ("log10", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).log10()),
        ("tolower" | "lower", Val::Str(s)) => Val::str(&s.to_lowercase()),
        ("toupper" | "upper", Val::Str(s)) => Val::str(&s.to_uppercase()),
        ("isnan", Val::Float(f)) => Val::Bool(f.is_nan()),
        ("isnan", Val::Int(_)) => Val::Bool(false),
        ("trim", Val::Str(s)) => Val::str(s.trim()),
        // With a second argument, the characters it holds are trimmed instead of whitespace.
        ("ltrim" | "rtrim" | "btrim", Val::Str(s)) => {
            let chars: Option<Vec<char>> = b.as_ref().map(|c| want_str(name, c).map(|c| c.chars().collect())).transpose()?;
            let trim = |c: char| chars.as_ref().map_or(c.is_whitespace(), |set| set.contains(&c));
            Val::str(match name {
                "ltrim" => s.trim_start_matches(trim),
                "rtrim" => s.trim_end_matches(trim),
                _ => s.trim_matches(trim),
            })
        }
        ("normalize", Val::Str(s)) => {
            use unicode_normalization::UnicodeNormalization as _;
            let form = b.as_ref().map(|f| want_str(name, f)).transpose()?.unwrap_or("NFC");
            Val::str(&match form.to_ascii_uppercase().as_str() {
                "NFC" => s.nfc().collect::<String>(),
                "NFD" => s.nfd().collect(),
                "NFKC" => s.nfkc().collect(),
                "NFKD" => s.nfkd().collect(),
                other => {
                    return Err(arg_error(Detail::InvalidArgumentValue, format!("normalize() takes NFC, NFD, NFKC or NFKD, not {other}")))
                }
            })
        }
        ("split", Val::Str(s)) => {
            let sep = want_str(name, b.as_ref().unwrap_or(&Val::Null))?;
            Val::list(s.split(sep).map(Val::str).collect())
        }
        ("substring", Val::Str(s)) => {
            let start = want_int(name, b.as_ref().unwrap_or(&Val::Null))?;
            let len = c.as_ref().map(|c| want_int(name, c)).transpose()?;
            if start < 0 || len.is_some_and(|l| l < 0) {
                return Err(arg_error(Detail::NegativeIntegerArgument, "substring() takes no negative start or length"));
            }
            let chars = s.chars().skip(start as usize);
            Val::str(&match len {
                Some(l) => chars.take(l as usize).collect::<String>(),
                None => chars.collect::<String>(),
            })
        }
        ("left" | "right", Val::Str(s)) => {
            let n = want_int(name, b.as_ref().unwrap_or(&Val::Null))?;
            if n < 0 {
                return Err(arg_error(Detail::NegativeIntegerArgument, format!("{name}() takes no negative length")));
            }
            let count = s.chars().count();
            let n = (n as usize).min(count);
            Val::str(&if name == "left" { s.chars().take(n).collect::<String>() } else { s.chars().skip(count - n).collect() })
        }
        ("replace", Val::Str(s)) => {
            let from = want_str(name, b.as_ref().unwrap_or(&Val::Null))?;
            let to = match &c {
                Some(Val::Null) | None => return Ok(Val::Null),
                Some(v) => want_str(name, v)?,
            };
            Val::Str(Arc::from(s.replace(from, to)))
        }
        ("labels", Val::Node(_)) => return Err(g.check_not_deleted(&a).err().unwrap_or_else(|| type_error("labels()".to_owned()))),
        // The TCK names a non-node argument of labels() an invalid value, not an invalid type.
        ("labels", other) => {
            return Err(QueryError::runtime(
                ErrorType::TypeError,
                Detail::InvalidArgumentValue,
                format!("labels() takes a node, got {}", other.kind()),
            ))
        }
        _ => return Err(type_error(format!("{name}() cannot take {}", a.kind()))),
    })
}

/// Rounds half away from zero for positives and towards positive infinity at .5 for negatives,
/// as Cypher's `round` does (`round(-1.5)` is `-1.0`).
fn round_half_up(f: f64) -> f64 {
    (f + 0.5).floor()
}

/// `round(x, places, mode)`'s rounding modes (Java's names, as Neo4j takes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rounding {
    Up,
    Down,
    Ceiling,
    Floor,
    HalfUp,
    HalfDown,
    HalfEven,
}

impl Rounding {
    fn named(name: &str) -> Result<Rounding, QueryError> {
        Ok(match name.to_ascii_uppercase().as_str() {
            "UP" => Rounding::Up,
            "DOWN" => Rounding::Down,
            "CEILING" => Rounding::Ceiling,
            "FLOOR" => Rounding::Floor,
            "HALF_UP" => Rounding::HalfUp,
            "HALF_DOWN" => Rounding::HalfDown,
            "HALF_EVEN" => Rounding::HalfEven,
            other => {
                return Err(arg_error(
                    Detail::InvalidArgumentValue,
                    format!("round() takes the mode UP, DOWN, CEILING, FLOOR, HALF_UP, HALF_DOWN or HALF_EVEN, not {other:?}"),
                ))
            }
        })
    }
}

/// `x` rounded to `places` decimal places (negative: to tens, hundreds, …) by `mode`, on the
/// shortest decimal that reads back as `x` (so `round(2.675, 2)` is 2.68, as the number is
/// written, not 2.67 as its binary value lies).
fn round_places(x: f64, places: i64, mode: Rounding) -> f64 {
    if !x.is_finite() {
        return x;
    }
    // The shortest digits and the power of ten of the first one: x = 0.d1d2… × 10^exp.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).map(|d| d - b'0').collect();
    let exp = exp.parse::<i64>().unwrap_or(0) + 1;
    // How many of the digits are kept.
    let keep = exp.saturating_add(places.clamp(-400, 400));
    let negative = x < 0.0;
    if keep < 0 {
        let away = matches!((mode, negative), (Rounding::Up, _) | (Rounding::Ceiling, false) | (Rounding::Floor, true));
        return if away && x != 0.0 { signed(10f64.powi(-(places.clamp(-308, 308) as i32)), negative) } else { 0.0 };
    }
    let keep = keep as usize;
    let mut kept: Vec<u8> = digits.iter().copied().take(keep).collect();
    kept.resize(keep, 0);
    let rest = digits.get(keep..).unwrap_or(&[]);
    let rest_zero = rest.iter().all(|d| *d == 0);
    let half = match rest.first() {
        Some(5) if rest[1..].iter().all(|d| *d == 0) => std::cmp::Ordering::Equal,
        Some(d) if *d >= 5 => std::cmp::Ordering::Greater,
        _ => std::cmp::Ordering::Less,
    };
    let last_odd = kept.last().is_some_and(|d| d % 2 == 1);
    let up = !rest_zero
        && match mode {
            Rounding::Up => true,
            Rounding::Down => false,
            Rounding::Ceiling => !negative,
            Rounding::Floor => negative,
            Rounding::HalfUp => half != std::cmp::Ordering::Less,
            Rounding::HalfDown => half == std::cmp::Ordering::Greater,
            Rounding::HalfEven => half == std::cmp::Ordering::Greater || (half == std::cmp::Ordering::Equal && last_odd),
        };
    // The kept digits as an integer count of units of 10^-places, plus one when rounding up.
    let mut text: String = kept.iter().map(|d| char::from(b'0' + d)).collect();
    if text.is_empty() {
        text.push('0');
    }
    let mut units: f64 = text.parse().unwrap_or(0.0);
    if up {
        units += 1.0;
    }
    let value: f64 = format!("{units}e{}", -places.clamp(-400, 400)).parse().unwrap_or(f64::NAN);
    signed(value, negative)
}

fn signed(v: f64, negative: bool) -> f64 {
    if negative && v != 0.0 {
        -v
    } else {
        v
    }
}

/// A random (version 4) UUID, as text.
fn random_uuid() -> String {
    let mut b = [0u8; 16];
    if getrandom::getrandom(&mut b).is_err() {
        // No system randomness: the process's hash seeds, twice.
        let (x, y) = ((rand_unit() * (1u64 << 53) as f64) as u64, (rand_unit() * (1u64 << 53) as f64) as u64);
        b[..8].copy_from_slice(&x.to_le_bytes());
        b[8..].copy_from_slice(&y.to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex = b.iter().fold(String::with_capacity(32), |mut h, x| {
        let _ = write!(h, "{x:02x}");
        h
    });
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// A uniform number in [0, 1) from the process's random state.
fn rand_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos().into()));
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The distances read from two lists in place equal the slice functions the vector
        /// procedures use, bit for bit, on random vectors (zeros included).
        #[test]
        fn list_distances_equal_the_slice_functions(pairs in proptest::collection::vec((-3i32..4, -1e3f64..1e3), 0..40)) {
            let x: Vec<Val> = pairs.iter().map(|(i, _)| Val::Int(i64::from(*i))).collect();
            let y: Vec<Val> = pairs.iter().map(|(_, f)| Val::Float(*f)).collect();
            let (xs, ys) = (Val::list(x), Val::list(y));
            let (vx, vy) = (vector("v", &xs).expect("numbers"), vector("v", &ys).expect("numbers"));
            let cos = list_distance("vec.cosinedistance", &xs, &ys).expect("numbers");
            let euc = list_distance("vec.euclideandistance", &xs, &ys).expect("numbers");
            prop_assert_eq!(cos.to_bits(), cosine_distance(&vx, &vy).to_bits());
            prop_assert_eq!(euc.to_bits(), euclidean_distance(&vx, &vy).to_bits());
        }

        /// `vecf32` gives each list's own rounding, whether it is computed or handed back for the
        /// same list again, as lists alternate.
        #[test]
        fn vecf32_kept_per_thread_equals_computing_it(lists in proptest::collection::vec(proptest::collection::vec(-1e3f64..1e3, 0..6), 1..6), order in proptest::collection::vec(0usize..6, 1..20)) {
            let vals: Vec<Val> = lists.iter().map(|l| Val::list(l.iter().map(|f| Val::Float(*f)).collect())).collect();
            for i in order {
                let v = &vals[i % vals.len()];
                let want: Vec<u64> = lists[i % vals.len()].iter().map(|f| f64::from(*f as f32).to_bits()).collect();
                let Val::List(got) = vecf32(v).expect("numbers") else { panic!("a list") };
                prop_assert_eq!(got.iter().map(|x| if let Val::Float(f) = x { f.to_bits() } else { 0 }).collect::<Vec<_>>(), want);
            }
        }
    }

    /// Values as Java's `BigDecimal.valueOf(x).setScale(places, mode)` gives them (Neo4j's
    /// `round(x, places, mode)`).
    #[test]
    fn round_places_matches_the_decimal_modes() {
        use Rounding::*;
        for (x, places, mode, want) in [
            (2.675, 2, HalfUp, 2.68),
            (-2.5, 0, HalfUp, -3.0),
            (2.5, 0, HalfDown, 2.0),
            (2.5, 0, HalfEven, 2.0),
            (3.5, 0, HalfEven, 4.0),
            (-1.25, 1, HalfDown, -1.2),
            (-1.25, 1, HalfEven, -1.2),
            (-1.35, 1, HalfEven, -1.4),
            (1234.5, -2, HalfUp, 1200.0),
            (1250.0, -2, HalfEven, 1200.0),
            (0.004, 1, Up, 0.1),
            (0.004, 1, Down, 0.0),
            (-0.004, 1, Ceiling, 0.0),
            (-0.004, 1, Floor, -0.1),
            (1.0 / 3.0, 3, HalfUp, 0.333),
            (7.0, 1, HalfUp, 7.0),
            (0.0, 2, Up, 0.0),
            (9.995, 2, HalfUp, 10.0),
            (1e-320, 2, HalfUp, 0.0),
        ] {
            let got = round_places(x, places, mode);
            assert!(got.to_bits() == f64::to_bits(want), "round({x}, {places}, {mode:?}) = {got}, want {want}");
        }
        assert!(round_places(f64::NAN, 2, HalfUp).is_nan());
        assert_eq!(round_places(f64::INFINITY, 2, HalfUp).to_bits(), f64::INFINITY.to_bits());
    }

    proptest! {
        /// On random numbers and places: DOWN is at most and UP at least the number's size,
        /// one unit apart unless exact; CEILING and FLOOR bracket it; the half modes agree
        /// away from a tie and pick one of DOWN and UP.
        #[test]
        fn round_places_brackets_the_number(x in -1e6f64..1e6, places in -3i64..6) {
            use Rounding::*;
            let (down, up) = (round_places(x, places, Down), round_places(x, places, Up));
            let unit = 10f64.powi(-(places as i32));
            // Float noise at this magnitude.
            let eps = (x.abs() + unit) * 8.0 * f64::EPSILON;
            prop_assert!(down.abs() <= x.abs() + eps && up.abs() + eps >= x.abs(), "{} {} {}", x, down, up);
            prop_assert!((up - down).abs() <= unit + eps);
            let (ceil, floor) = (round_places(x, places, Ceiling), round_places(x, places, Floor));
            prop_assert!(floor <= x + eps && ceil + eps >= x);
            for mode in [HalfUp, HalfDown, HalfEven] {
                let r = round_places(x, places, mode);
                prop_assert!(r.to_bits() == down.to_bits() || r.to_bits() == up.to_bits(), "{:?} {} {} {} {}", mode, x, r, down, up);
            }
        }
    }
}
