//! Expression evaluation over one row, with Cypher's three-valued logic: `null AND false` is
//! false, `null OR true` is true, anything else with null is null; a predicate keeps a row only
//! when it is true.

use std::collections::BTreeMap;
use std::sync::Arc;

use engram_query::ast::{BinaryOp, Quantifier};
use engram_query::{Detail, ErrorType, QueryError};

use super::functions;
use super::graph::Graph;
use super::value::Val;
use crate::spatial::Field;
use crate::temporal::Component;
use engram_query::plan::{CExpr, Const, Labels, Op};

/// Runs a pattern's operators on one row (implemented by the operator runner, so expressions
/// can hold patterns without this module depending on it).
pub(crate) trait Matcher {
    fn run(&self, ops: &[Op], row: Vec<Val>) -> Fallible<Vec<Vec<Val>>>;

    /// Whether `run` gives any row (an implementation may stop at the first).
    fn any(&self, ops: &[Op], row: Vec<Val>) -> Fallible<bool> {
        Ok(!self.run(ops, row)?.is_empty())
    }
}

/// The operators of the pattern `e` takes the size of, when it is `size([pattern | …])`.
fn sized_pattern(e: &CExpr) -> Option<&[Op]> {
    match e {
        CExpr::Func(f, args) if &**f == "size" => match args.as_slice() {
            [CExpr::Pattern { ops, .. }] => Some(ops),
            _ => None,
        },
        _ => None,
    }
}

/// What evaluation reads besides the row.
pub(crate) struct Env<'e, 'v, 'a> {
    pub graph: &'e Graph<'v, 'a>,
    pub params: &'e super::value::Bound<'e>,
    pub matcher: &'e dyn Matcher,
}

/// A distance function's argument (`Env::vector_operand`): a stored list borrowed from the
/// snapshot, or a value.
enum Operand<'a> {
    Stored(functions::Items<'a>),
    Val(Val),
}

impl Operand<'_> {
    fn items(&self) -> Option<functions::Items<'_>> {
        match self {
            Operand::Stored(items) => Some(*items),
            Operand::Val(Val::List(items)) => Some(functions::Items::Vals(items)),
            Operand::Val(_) => None,
        }
    }

    fn into_val(self) -> Val {
        match self {
            Operand::Stored(items) => items.to_val(),
            Operand::Val(v) => v,
        }
    }
}

/// An evaluation's result, its error boxed: values move through every expression of every row,
/// and an error is rare (a result as large as `QueryError` was a fifth of a filter's time).
pub(crate) type Fallible<T> = Result<T, Box<QueryError>>;

pub(crate) fn type_error(message: impl Into<String>) -> QueryError {
    QueryError::runtime(ErrorType::TypeError, Detail::InvalidArgumentType, message)
}

pub(crate) fn arg_error(detail: Detail, message: impl Into<String>) -> QueryError {
    QueryError::runtime(ErrorType::ArgumentError, detail, message)
}

/// A failed read as a query error: limits and interruptions as `LimitError`, anything else as
/// `other` (the caller knows what it was doing).
pub(crate) fn read_error(e: &crate::error::ReadError, other: ErrorType) -> QueryError {
    let (kind, detail) = match e {
        crate::error::ReadError::Limit { .. } => (ErrorType::LimitError, Detail::Limit),
        crate::error::ReadError::Interrupted(_) => (ErrorType::LimitError, Detail::Deadline),
        _ => (other, Detail::InvalidArgumentValue),
    };
    QueryError::runtime(kind, detail, e.to_string())
}

fn overflow(op: &str) -> QueryError {
    QueryError::runtime(ErrorType::ArithmeticError, Detail::IntegerOverflow, format!("integer overflow in {op}"))
}

/// The truth of a predicate: true, false or null (`None`).
pub(crate) fn truth(v: &Val) -> Fallible<Option<bool>> {
    match v {
        Val::Bool(b) => Ok(Some(*b)),
        Val::Null => Ok(None),
        other => Err(type_error(format!("expected a boolean, got {}", other.kind())).into()),
    }
}

fn bool_val(b: Option<bool>) -> Val {
    b.map_or(Val::Null, Val::Bool)
}

impl<'a> Env<'_, '_, 'a> {
    /// Evaluates `e` on `row`; `locals` holds the variables of enclosing comprehensions.
    #[allow(clippy::too_many_lines)] // Reason: one arm per expression kind.
    pub fn eval(&self, e: &CExpr, row: &[Val], locals: &mut Vec<Val>) -> Fallible<Val> {
        Ok(match e {
            CExpr::Const(c) => match c {
                Const::Null => Val::Null,
                Const::Bool(b) => Val::Bool(*b),
                Const::Int(i) => Val::Int(*i),
                Const::Float(f) => Val::Float(*f),
                Const::Str(s) => Val::Str(s.clone()),
            },
            CExpr::Param(p) => self.params.get(p).cloned().ok_or_else(|| {
                QueryError::runtime(ErrorType::ParameterMissing, Detail::MissingParameter, format!("parameter ${p} was not given"))
            })?,
            CExpr::Slot(s) => row.get(*s).cloned().unwrap_or(Val::Null),
            CExpr::Local(d) => locals.get(*d).cloned().unwrap_or(Val::Null),
            CExpr::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.eval(i, row, locals)?);
                }
                Val::list(out)
            }
            CExpr::Map(items) => {
                let mut out = BTreeMap::new();
                for (k, v) in items {
                    out.insert(k.clone(), self.eval(v, row, locals)?);
                }
                Val::map(out)
            }
            CExpr::Prop(t, k) => self.property(&self.eval(t, row, locals)?, k)?,
            CExpr::Index(t, i) => {
                let t = self.eval(t, row, locals)?;
                let i = self.eval(i, row, locals)?;
                self.index(&t, &i)?
            }
            CExpr::Slice(t, a, b) => {
                let t = self.eval(t, row, locals)?;
                let a = a.as_ref().map(|a| self.eval(a, row, locals)).transpose()?;
                let b = b.as_ref().map(|b| self.eval(b, row, locals)).transpose()?;
                slice(&t, a.as_ref(), b.as_ref())?
            }
            CExpr::HasLabels(t, labels) => match self.eval(t, row, locals)? {
                Val::Null => Val::Null,
                Val::Node(n) => Val::Bool(labels.iter().all(|l| self.graph.has_label(n, l))),
                // A relationship has one type: `r:A` tests it, `r:A:B` holds only when A and B name it.
                Val::Rel(c) => Val::Bool(labels.iter().all(|l| self.graph.rel_type_matches(c, &Labels::Name(l.clone())))),
                other => return Err(type_error(format!("a label test needs a node or a relationship, got {}", other.kind())).into()),
            },
            CExpr::HasLabelExpr(t, e) => match self.eval(t, row, locals)? {
                Val::Null => Val::Null,
                Val::Node(n) => Val::Bool(self.graph.labels_match(n, e)),
                Val::Rel(c) => Val::Bool(self.graph.rel_type_matches(c, e)),
                other => return Err(type_error(format!("a label test needs a node or a relationship, got {}", other.kind())).into()),
            },
            CExpr::Not(inner) => bool_val(truth(&self.eval(inner, row, locals)?)?.map(|b| !b)),
            CExpr::Neg(inner) => match self.eval(inner, row, locals)? {
                Val::Int(i) => Val::Int(i.checked_neg().ok_or_else(|| overflow("negation"))?),
                Val::Float(f) => Val::Float(-f),
                Val::Null => Val::Null,
                other => return Err(type_error(format!("cannot negate {}", other.kind())).into()),
            },
            CExpr::Bin(BinaryOp::Gt, a, b) if matches!(**b, CExpr::Const(Const::Int(0))) && sized_pattern(a).is_some() => {
                let ops = sized_pattern(a).unwrap_or_default();
                Val::Bool(self.matcher.any(ops, row.to_vec())?)
            }
            CExpr::Bin(op, a, b) => self.binary(*op, a, b, row, locals)?,
            CExpr::IsNull(inner, not) => Val::Bool(self.eval(inner, row, locals)?.is_null() != *not),
            CExpr::IsType(inner, t, not) => Val::Bool(self.eval(inner, row, locals)?.is_type(t) != *not),
            CExpr::Case { subject, whens, otherwise } => {
                let subject = subject.as_ref().map(|s| self.eval(s, row, locals)).transpose()?;
                for (w, t) in whens {
                    let w = self.eval(w, row, locals)?;
                    let hit = match &subject {
                        Some(s) => s.equals(&w) == Some(true),
                        None => truth(&w)? == Some(true),
                    };
                    if hit {
                        return self.eval(t, row, locals);
                    }
                }
                match otherwise {
                    Some(o) => self.eval(o, row, locals)?,
                    None => Val::Null,
                }
            }
            CExpr::Func(name, args) if args.len() == 2 && matches!(&**name, "vec.cosinedistance" | "vec.euclideandistance") => {
                let x = self.vector_operand(&args[0], row, locals)?;
                let y = self.vector_operand(&args[1], row, locals)?;
                match x.items().zip(y.items()).and_then(|(a, b)| functions::distance_in_place(name, &a, &b)) {
                    Some(d) => Val::Float(d),
                    None => functions::call(self.graph, name, vec![x.into_val(), y.into_val()])?,
                }
            }
            // `exists(pattern)` and `EXISTS { pattern }` (`size([pattern | 1]) > 0`): whether the
            // pattern matches at all, without listing every match.
            CExpr::Func(name, args) if &**name == "exists" && matches!(args.as_slice(), [CExpr::Pattern { .. }]) => {
                let [CExpr::Pattern { ops, .. }] = args.as_slice() else { return Ok(Val::Null) };
                Val::Bool(self.matcher.any(ops, row.to_vec())?)
            }
            CExpr::Func(name, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, row, locals)?);
                }
                functions::call(self.graph, name, vals)?
            }
            CExpr::ListComp { list, predicate, map } => {
                let list = self.eval(list, row, locals)?;
                let items = match list {
                    Val::Null => return Ok(Val::Null),
                    Val::List(items) => items,
                    other => return Err(type_error(format!("a list comprehension needs a list, got {}", other.kind())).into()),
                };
                let mut out = Vec::new();
                for item in items.iter() {
                    locals.push(item.clone());
                    let keep = match predicate {
                        Some(p) => truth(&self.eval(p, row, locals)?) == Ok(Some(true)),
                        None => true,
                    };
                    let value = if keep {
                        Some(match map {
                            Some(m) => self.eval(m, row, locals),
                            None => Ok(item.clone()),
                        })
                    } else {
                        None
                    };
                    locals.pop();
                    if let Some(v) = value {
                        out.push(v?);
                    }
                }
                Val::list(out)
            }
            CExpr::Reduce { init, list, step } => {
                let mut acc = self.eval(init, row, locals)?;
                let items = match self.eval(list, row, locals)? {
                    Val::Null => return Ok(Val::Null),
                    Val::List(items) => items,
                    other => return Err(type_error(format!("reduce needs a list, got {}", other.kind())).into()),
                };
                for item in items.iter() {
                    // The accumulator is alive until the step is done, so a new list or map
                    // cannot take its address: the same address is the same value.
                    let before = container_address(&acc);
                    locals.push(acc);
                    locals.push(item.clone());
                    let next = self.eval(step, row, locals);
                    locals.truncate(locals.len() - 2);
                    acc = next?;
                    // A step may wrap the accumulator (`[acc]`): bound its nesting, skipping the
                    // walk when the step handed the same list or map back.
                    let same = before.is_some() && before == container_address(&acc);
                    if !same && deeper_than(&acc, engram_query::limits::MAX_VALUE_DEPTH) {
                        return Err(QueryError::runtime(
                            ErrorType::LimitError,
                            Detail::Limit,
                            format!(
                                "reduce built a value nested deeper than query.max_value_depth ({})",
                                engram_query::limits::MAX_VALUE_DEPTH
                            ),
                        )
                        .into());
                    }
                }
                acc
            }
            CExpr::Quant { quantifier, list, predicate } => {
                let items = match self.eval(list, row, locals)? {
                    Val::Null => return Ok(Val::Null),
                    Val::List(items) => items,
                    other => return Err(type_error(format!("a quantifier needs a list, got {}", other.kind())).into()),
                };
                let (mut trues, mut nulls) = (0usize, 0usize);
                for item in items.iter() {
                    locals.push(item.clone());
                    let t = self.eval(predicate, row, locals).and_then(|v| truth(&v));
                    locals.pop();
                    match t? {
                        Some(true) => trues += 1,
                        None => nulls += 1,
                        Some(false) => {}
                    }
                }
                let n = items.len();
                let falses = n - trues - nulls;
                // What the definite answers settle; otherwise null when any answer was null.
                let settled = match quantifier {
                    Quantifier::Any => (trues > 0).then_some(true),
                    Quantifier::All => (falses > 0).then_some(false),
                    Quantifier::None => (trues > 0).then_some(false),
                    Quantifier::Single => (trues > 1).then_some(false),
                };
                match settled {
                    Some(b) => Val::Bool(b),
                    None if nulls > 0 => Val::Null,
                    None => Val::Bool(match quantifier {
                        Quantifier::Any => false,
                        Quantifier::All | Quantifier::None => true,
                        Quantifier::Single => trues == 1,
                    }),
                }
            }
            CExpr::Pattern { ops, map, path } => {
                let rows = self.matcher.run(ops, row.to_vec())?;
                let mut out = Vec::with_capacity(rows.len());
                for r in &rows {
                    out.push(match map {
                        Some(m) => self.eval(m, r, locals)?,
                        None => r.get(*path).cloned().unwrap_or(Val::Null),
                    });
                }
                Val::list(out)
            }
            CExpr::MapProjection { base, all, items } => {
                let base = self.eval(base, row, locals)?;
                if base.is_null() {
                    return Ok(Val::Null);
                }
                let mut out = if *all { self.properties(&base)? } else { BTreeMap::new() };
                for (k, v) in items {
                    out.insert(k.clone(), self.eval(v, row, locals)?);
                }
                Val::map(out)
            }
        })
    }

    /// A distance function's argument: a stored list property read in place, else its value.
    fn vector_operand(&self, e: &CExpr, row: &[Val], locals: &mut Vec<Val>) -> Fallible<Operand<'a>> {
        if let CExpr::Prop(t, k) = e {
            let target = self.eval(t, row, locals)?;
            self.graph.check_not_deleted(&target)?;
            return Ok(match self.graph.stored_list(&target, k) {
                Some(items) => Operand::Stored(items),
                None => Operand::Val(self.property(&target, k)?),
            });
        }
        Ok(Operand::Val(self.eval(e, row, locals)?))
    }

    /// `v.key`.
    pub fn property(&self, v: &Val, key: &str) -> Fallible<Val> {
        self.graph.check_not_deleted(v)?;
        Ok(match v {
            Val::Null => Val::Null,
            Val::Node(n) => self.graph.node_prop(*n, key),
            Val::Rel(r) => self.graph.rel_prop(*r, key),
            Val::Map(m) => m.get(key).cloned().unwrap_or(Val::Null),
            Val::Temporal(t) => match t.component(key) {
                Some(Component::Int(i)) => Val::Int(i),
                Some(Component::Str(s)) => Val::str(&s),
                _ => return Err(arg_error(Detail::InvalidArgumentValue, format!("{} has no component `{key}`", t.kind_text())).into()),
            },
            Val::Point(p) => match p.field(key) {
                Some(Field::Float(f)) => Val::Float(f),
                Some(Field::Int(i)) => Val::Int(i),
                Some(Field::Str(s)) => Val::str(s),
                None => {
                    let why = format!("a {} point has no field `{key}` (its fields: {})", p.crs().name(), p.field_names());
                    return Err(arg_error(Detail::InvalidArgumentValue, why).into());
                }
            },
            other => return Err(type_error(format!("cannot read property `{key}` of {}", other.kind())).into()),
        })
    }

    /// Every property of a node, relationship or map.
    pub fn properties(&self, v: &Val) -> Result<BTreeMap<Arc<str>, Val>, QueryError> {
        self.graph.check_not_deleted(v)?;
        Ok(match v {
            Val::Node(n) => self.graph.node_props(*n),
            Val::Rel(r) => self.graph.rel_props(*r),
            Val::Map(m) => (**m).clone(),
            other => return Err(type_error(format!("{} has no properties", other.kind()))),
        })
    }

    fn index(&self, t: &Val, i: &Val) -> Fallible<Val> {
        Ok(match (t, i) {
            (Val::Null, _) | (_, Val::Null) => Val::Null,
            (Val::List(items), Val::Int(i)) => {
                let len = items.len() as i64;
                let at = if *i < 0 { len + i } else { *i };
                if at < 0 || at >= len {
                    Val::Null
                } else {
                    items[at as usize].clone()
                }
            }
            (Val::Map(_) | Val::Node(_) | Val::Rel(_), Val::Str(k)) => self.property(t, k)?,
            (Val::List(_), other) => return Err(type_error(format!("a list index must be an integer, got {}", other.kind())).into()),
            (Val::Map(_) | Val::Node(_) | Val::Rel(_), other) => {
                return Err(type_error(format!("a map key must be a string, got {}", other.kind())).into())
            }
            (other, _) => return Err(type_error(format!("cannot index {}", other.kind())).into()),
        })
    }

    fn binary(&self, op: BinaryOp, a: &CExpr, b: &CExpr, row: &[Val], locals: &mut Vec<Val>) -> Fallible<Val> {
        // AND / OR short-circuit only where the answer is settled without the other side.
        match op {
            BinaryOp::And => {
                let l = truth(&self.eval(a, row, locals)?)?;
                if l == Some(false) {
                    return Ok(Val::Bool(false));
                }
                let r = truth(&self.eval(b, row, locals)?)?;
                return Ok(match (l, r) {
                    (_, Some(false)) => Val::Bool(false),
                    (Some(true), Some(true)) => Val::Bool(true),
                    _ => Val::Null,
                });
            }
            BinaryOp::Or => {
                let l = truth(&self.eval(a, row, locals)?)?;
                if l == Some(true) {
                    return Ok(Val::Bool(true));
                }
                let r = truth(&self.eval(b, row, locals)?)?;
                return Ok(match (l, r) {
                    (_, Some(true)) => Val::Bool(true),
                    (Some(false), Some(false)) => Val::Bool(false),
                    _ => Val::Null,
                });
            }
            _ => {}
        }
        let l = self.eval(a, row, locals)?;
        let r = self.eval(b, row, locals)?;
        binary_values(op, &l, &r)
    }
}

/// A binary operator on two evaluated values (not AND/OR, which short-circuit).
pub(crate) fn binary_values(op: BinaryOp, l: &Val, r: &Val) -> Fallible<Val> {
    use std::cmp::Ordering::{Greater, Less};
    Ok(match op {
        BinaryOp::Xor => match (truth(l)?, truth(r)?) {
            (Some(x), Some(y)) => Val::Bool(x != y),
            _ => Val::Null,
        },
        BinaryOp::Eq => bool_val(l.equals(r)),
        BinaryOp::Neq => bool_val(l.equals(r).map(|b| !b)),
        BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge => {
            if l.is_null() || r.is_null() {
                return Ok(Val::Null);
            }
            if (l.is_nan() || r.is_nan()) && matches!((l, r), (Val::Int(_) | Val::Float(_), Val::Int(_) | Val::Float(_))) {
                return Ok(Val::Bool(false));
            }
            match l.compare(r) {
                None => Val::Null,
                Some(o) => Val::Bool(match op {
                    BinaryOp::Lt => o == Less,
                    BinaryOp::Gt => o == Greater,
                    BinaryOp::Le => o != Greater,
                    _ => o != Less,
                }),
            }
        }
        BinaryOp::In => match r {
            Val::Null => Val::Null,
            Val::List(items) => {
                let mut unknown = false;
                for item in items.iter() {
                    match l.equals(item) {
                        Some(true) => return Ok(Val::Bool(true)),
                        None => unknown = true,
                        Some(false) => {}
                    }
                }
                if unknown {
                    Val::Null
                } else {
                    Val::Bool(false)
                }
            }
            other => return Err(type_error(format!("IN needs a list on its right, got {}", other.kind())).into()),
        },
        BinaryOp::StartsWith | BinaryOp::EndsWith | BinaryOp::Contains => match (l, r) {
            (Val::Str(a), Val::Str(b)) => Val::Bool(match op {
                BinaryOp::StartsWith => a.starts_with(&**b),
                BinaryOp::EndsWith => a.ends_with(&**b),
                _ => a.contains(&**b),
            }),
            _ => Val::Null,
        },
        BinaryOp::Regex => match (l, r) {
            (Val::Str(a), Val::Str(pattern)) => Val::Bool(functions::regex_match(a, pattern)?),
            _ => Val::Null,
        },
        BinaryOp::Add => add(l, r)?,
        BinaryOp::Concat => match (l, r) {
            (Val::Null, _) | (_, Val::Null) => Val::Null,
            (Val::Str(a), Val::Str(b)) => Val::Str(Arc::from(format!("{a}{b}"))),
            (Val::List(a), Val::List(b)) => Val::list(a.iter().chain(b.iter()).cloned().collect()),
            _ => return Err(type_error(format!("|| concatenates two strings or two lists, got {} and {}", l.kind(), r.kind())).into()),
        },
        BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod | BinaryOp::Pow => arithmetic(op, l, r)?,
        BinaryOp::And | BinaryOp::Or => unreachable!("AND and OR are evaluated with short-circuit"),
    })
}

fn add(l: &Val, r: &Val) -> Fallible<Val> {
    Ok(match (l, r) {
        (Val::Null, _) | (_, Val::Null) => Val::Null,
        (Val::List(a), Val::List(b)) => Val::list(a.iter().chain(b.iter()).cloned().collect()),
        (Val::List(a), x) => Val::list(a.iter().cloned().chain(std::iter::once(x.clone())).collect()),
        (x, Val::List(b)) => Val::list(std::iter::once(x.clone()).chain(b.iter().cloned()).collect()),
        (Val::Str(a), Val::Str(b)) => Val::Str(Arc::from(format!("{a}{b}"))),
        (Val::Str(a), Val::Int(i)) => Val::Str(Arc::from(format!("{a}{i}"))),
        (Val::Int(i), Val::Str(b)) => Val::Str(Arc::from(format!("{i}{b}"))),
        (Val::Str(a), Val::Float(f)) => Val::Str(Arc::from(format!("{a}{}", functions::float_text(*f)))),
        (Val::Float(f), Val::Str(b)) => Val::Str(Arc::from(format!("{}{b}", functions::float_text(*f)))),
        _ => arithmetic(BinaryOp::Add, l, r)?,
    })
}

fn arithmetic(op: BinaryOp, l: &Val, r: &Val) -> Fallible<Val> {
    let name = op.text();
    Ok(match (l, r) {
        (Val::Null, _) | (_, Val::Null) => Val::Null,
        (Val::Int(a), Val::Int(b)) => match op {
            BinaryOp::Add => Val::Int(a.checked_add(*b).ok_or_else(|| overflow(name))?),
            BinaryOp::Sub => Val::Int(a.checked_sub(*b).ok_or_else(|| overflow(name))?),
            BinaryOp::Mul => Val::Int(a.checked_mul(*b).ok_or_else(|| overflow(name))?),
            BinaryOp::Div | BinaryOp::Mod if *b == 0 => {
                return Err(QueryError::runtime(ErrorType::ArithmeticError, Detail::DivisionByZero, "division by zero").into())
            }
            BinaryOp::Div => Val::Int(a.checked_div(*b).ok_or_else(|| overflow(name))?),
            BinaryOp::Mod => Val::Int(a.checked_rem(*b).ok_or_else(|| overflow(name))?),
            _ => Val::Float((*a as f64).powf(*b as f64)),
        },
        (Val::Int(_) | Val::Float(_), Val::Int(_) | Val::Float(_)) => {
            let (a, b) = (as_f64(l), as_f64(r));
            Val::Float(match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => a / b,
                BinaryOp::Mod => a % b,
                _ => a.powf(b),
            })
        }
        (Val::Temporal(_), _) | (_, Val::Temporal(_)) => temporal_arithmetic(op, l, r)?,
        _ => return Err(type_error(format!("cannot apply {name} to {} and {}", l.kind(), r.kind())).into()),
    })
}

/// A temporal value plus or minus a duration, durations added, subtracted, multiplied or
/// divided by a number.
fn temporal_arithmetic(op: BinaryOp, l: &Val, r: &Val) -> Fallible<Val> {
    use crate::temporal::Temporal as T;
    let fail = |e| -> Box<QueryError> { Box::new(functions::temporal_error(e)) };
    let duration = |v: &Val| match v {
        Val::Temporal(t) => t.as_duration(),
        _ => None,
    };
    let made = match (op, l, r, duration(l), duration(r)) {
        (BinaryOp::Add, Val::Temporal(t), _, _, Some(d)) | (BinaryOp::Add, _, Val::Temporal(t), Some(d), _) => t.plus(&d),
        (BinaryOp::Sub, Val::Temporal(t), _, _, Some(d)) => d.negated().and_then(|n| t.plus(&n)),
        (BinaryOp::Mul, _, n @ (Val::Int(_) | Val::Float(_)), Some(d), _)
        | (BinaryOp::Mul, n @ (Val::Int(_) | Val::Float(_)), _, _, Some(d)) => d.times(as_f64(n)).map(T::Duration),
        (BinaryOp::Div, _, n @ (Val::Int(_) | Val::Float(_)), Some(d), _) => {
            if as_f64(n) == 0.0 {
                return Err(QueryError::runtime(ErrorType::ArithmeticError, Detail::DivisionByZero, "division by zero").into());
            }
            d.times(1.0 / as_f64(n)).map(T::Duration)
        }
        _ => return Err(type_error(format!("cannot apply {} to {} and {}", op.text(), l.kind(), r.kind())).into()),
    };
    made.map(Val::temporal).map_err(fail)
}

/// The address of a list's or map's shared items (`None` for anything else).
fn container_address(v: &Val) -> Option<usize> {
    match v {
        Val::List(items) => Some(Arc::as_ptr(items).cast::<u8>() as usize),
        Val::Map(m) => Some(Arc::as_ptr(m).cast::<u8>() as usize),
        _ => None,
    }
}

/// Whether `v` holds lists or maps nested more than `max` deep (a walk at most `max` calls
/// deep, whatever `v` holds).
pub(crate) fn deeper_than(v: &Val, max: usize) -> bool {
    match v {
        Val::List(items) => max == 0 || items.iter().any(|x| deeper_than(x, max - 1)),
        Val::Map(m) => max == 0 || m.values().any(|x| deeper_than(x, max - 1)),
        _ => false,
    }
}

pub(crate) fn as_f64(v: &Val) -> f64 {
    match v {
        Val::Int(i) => *i as f64,
        Val::Float(f) => *f,
        _ => f64::NAN,
    }
}

fn slice(t: &Val, a: Option<&Val>, b: Option<&Val>) -> Fallible<Val> {
    let items = match t {
        Val::Null => return Ok(Val::Null),
        Val::List(items) => items,
        other => return Err(type_error(format!("cannot slice {}", other.kind())).into()),
    };
    let len = items.len() as i64;
    let bound = |v: Option<&Val>, default: i64| -> Result<Option<i64>, QueryError> {
        match v {
            None => Ok(Some(default)),
            Some(Val::Null) => Ok(None),
            Some(Val::Int(i)) => Ok(Some(if *i < 0 { (len + i).max(0) } else { (*i).min(len) })),
            Some(other) => Err(type_error(format!("a slice bound must be an integer, got {}", other.kind()))),
        }
    };
    let (Some(from), Some(to)) = (bound(a, 0)?, bound(b, len)?) else { return Ok(Val::Null) };
    if from >= to {
        return Ok(Val::list(Vec::new()));
    }
    Ok(Val::list(items[from as usize..to as usize].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_valued_logic_and_comparisons() {
        let t = |op, l: Val, r: Val| binary_values(op, &l, &r).expect("evaluates");
        assert!(matches!(t(BinaryOp::Xor, Val::Bool(true), Val::Null), Val::Null));
        assert!(matches!(t(BinaryOp::Lt, Val::Int(1), Val::Float(1.5)), Val::Bool(true)));
        assert!(matches!(t(BinaryOp::Le, Val::Int(2), Val::Int(2)), Val::Bool(true)));
        assert!(matches!(t(BinaryOp::Lt, Val::Int(1), Val::str("a")), Val::Null));
        assert!(matches!(t(BinaryOp::Gt, Val::Float(f64::NAN), Val::Int(1)), Val::Bool(false)));
        assert!(matches!(t(BinaryOp::In, Val::Int(3), Val::list(vec![Val::Int(1), Val::Null])), Val::Null));
        assert!(matches!(t(BinaryOp::In, Val::Int(1), Val::list(vec![Val::Int(1), Val::Null])), Val::Bool(true)));
        assert!(matches!(t(BinaryOp::Add, Val::str("a"), Val::Int(1)), Val::Str(s) if &*s == "a1"));
        assert!(matches!(t(BinaryOp::Div, Val::Int(7), Val::Int(2)), Val::Int(3)));
        assert!(binary_values(BinaryOp::Div, &Val::Int(1), &Val::Int(0)).is_err());
        assert!(binary_values(BinaryOp::Add, &Val::Int(i64::MAX), &Val::Int(1)).is_err());
    }
}
