//! The scalar functions. Null in, null out, unless the function is about null (`coalesce`,
//! `exists`); a wrong argument type is a `TypeError` naming the function.

use std::sync::Arc;

use engram_query::{Detail, ErrorType, QueryError};

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
    items
        .iter()
        .map(|x| match x {
            Val::Int(i) => Ok(f64::from(*i as f32)),
            Val::Float(f) if f.is_finite() => Ok(f64::from(*f as f32)),
            other => Err(type_error(format!("{name}() expects a list of finite numbers, got {} in it", other.kind()))),
        })
        .collect()
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
    if nx == 0.0 || ny == 0.0 {
        return 1.0;
    }
    1.0 - dot / (nx.sqrt() * ny.sqrt())
}

/// The straight-line distance.
pub(super) fn euclidean_distance(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt()
}

fn path_nodes(p: &PathVal) -> Vec<Val> {
    std::iter::once(Val::Node(p.start)).chain(p.steps.iter().map(|(_, n)| Val::Node(*n))).collect()
}

/// Calls the scalar function `name` (lower case).
#[allow(clippy::too_many_lines)] // Reason: one arm per function reads best as one table.
pub(crate) fn call(g: &Graph<'_, '_>, name: &str, args: Vec<Val>) -> Result<Val, QueryError> {
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
        "rand" => return Ok(Val::Float(rand_unit())),
        "timestamp" => {
            let micros = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            return Ok(Val::Int(micros));
        }
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
    if matches!(name, "split" | "left" | "right" | "replace" | "substring" | "vec.cosinedistance" | "vec.euclideandistance")
        && b.as_ref().is_some_and(Val::is_null)
    {
        return Ok(Val::Null);
    }
    match name {
        "vecf32" => return Ok(Val::list(vector(name, &a)?.into_iter().map(Val::Float).collect())),
        "vec.cosinedistance" | "vec.euclideandistance" => {
            let (x, y) = (vector(name, &a)?, vector(name, b.as_ref().unwrap_or(&Val::Null))?);
            if x.len() != y.len() {
                return Err(arg_error(
                    Detail::InvalidArgumentValue,
                    format!("{name}() takes two vectors of one length, got {} and {}", x.len(), y.len()),
                ));
            }
            return Ok(Val::Float(if name == "vec.cosinedistance" { cosine_distance(&x, &y) } else { euclidean_distance(&x, &y) }));
        }
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
        ("length" | "size", Val::Str(s)) => Val::Int(s.chars().count() as i64),
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
        ("round", Val::Int(_) | Val::Float(_)) => Val::Float(round_half_up(as_f64(&a))),
        ("floor", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).floor()),
        ("ceil", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).ceil()),
        ("sqrt", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).sqrt()),
        ("exp", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).exp()),
        ("log", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).ln()),
        ("log10", Val::Int(_) | Val::Float(_)) => Val::Float(as_f64(&a).log10()),
        ("tolower", Val::Str(s)) => Val::str(&s.to_lowercase()),
        ("toupper", Val::Str(s)) => Val::str(&s.to_uppercase()),
        ("trim", Val::Str(s)) => Val::str(s.trim()),
        ("ltrim", Val::Str(s)) => Val::str(s.trim_start()),
        ("rtrim", Val::Str(s)) => Val::str(s.trim_end()),
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

/// A uniform number in [0, 1) from the process's random state.
fn rand_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos().into()));
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}
