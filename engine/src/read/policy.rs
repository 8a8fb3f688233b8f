//! Row policies: which claims and entities of a workspace a principal sees.
//!
//! A policy is stored text (`settings::StoredPolicy`): a target (claims or entities), the roles it
//! applies to, and a predicate written as a Cypher expression over the row — `c` (the claim), `s`
//! and `o` (its subject and object) for claims, `e` for entities — with `$user` the asking
//! principal's name. A principal holding any of a policy's roles sees only the rows for which the
//! predicate is true (null counts as false); every policy that applies must pass (they are
//! restrictive, like `PostgreSQL`'s). An entity hidden by a policy hides every claim it is an end of:
//! a hidden row is not a hop.
//!
//! Enforcement: a scope compiles the policies that apply to its principal once, and the first view
//! of the workspace computes the hidden claim and entity sets (`Hidden`) on its snapshot. The view
//! then treats a hidden row as one that does not exist (`WorkspaceView::hidden`, `check_entity`,
//! the scans and the visibility test consult them), so every reader above inherits it.
//!
//! The fields (anything else is refused when the policy is stored, with its line and column):
//! claims — `c.state`, `type(c)` / `c.predicate`, `c.confidence`, `c.text`, `c.sensitive`,
//! `c.conversation_id`, `c.message_id` and `c.model` (of its first evidence row), `c.KEY` (a typed
//! property, such as a sub-scope key `c.user_id`), `c.tags.KEY` (its tags, its evidence's
//! messages' included: `crate::tags`); entities (`e`, `s`, `o`) — `e.type`, `e.name`, `e.id`,
//! `e.KEY`, `e.tags.KEY`.
//! Operators: `AND OR XOR NOT`, `= <> < <= > >=`, `IN [..]`, `IS [NOT] NULL`, `STARTS WITH`,
//! `ENDS WITH`, `CONTAINS`; literals, lists of literals, `$user`.

pub use crate::error::PolicyError;
use crate::ids::WorkspaceId;
use crate::index::bitmap::IdSet;
use crate::model::ClaimState;
use crate::normalize::vocabulary_key;
use crate::state::State;
use crate::value::Value;
use engram_query::ast::{BinaryOp, Expr, ExprKind, Literal, UnaryOp};
use engram_query::{Position, QueryError};
use std::sync::Arc;

/// What a policy filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Claims (`c`, with `s` and `o`).
    Claims,
    /// Entities (`e`).
    Entities,
}

impl Target {
    /// From its stored name (`claims` / `entities`).
    pub fn parse(text: &str) -> Option<Target> {
        match text.to_ascii_lowercase().as_str() {
            "claims" | "claim" => Some(Target::Claims),
            "entities" | "entity" => Some(Target::Entities),
            _ => None,
        }
    }

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            Target::Claims => "claims",
            Target::Entities => "entities",
        }
    }
}

impl PolicyError {
    fn at(text: &str, offset: usize, message: impl Into<String>) -> PolicyError {
        let p = Position::of(text, offset);
        PolicyError { message: message.into(), line: p.line, column: p.column }
    }

    fn of_query(e: &QueryError) -> PolicyError {
        let (line, column) = e.at.map_or((1, 1), |p| (p.line, p.column));
        PolicyError { message: e.message.clone(), line, column }
    }
}

/// Which entity a field reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// The row itself (an entity policy's `e`).
    Itself,
    Subject,
    Object,
}

#[derive(Clone, Debug, PartialEq)]
enum Field {
    State,
    Predicate,
    Confidence,
    Text,
    Sensitive,
    Conversation,
    Message,
    Model,
    ClaimProp(Arc<str>),
    ClaimTag(Arc<str>),
    EntityTag(End, Arc<str>),
    EntityType(End),
    EntityName(End),
    EntityId(End),
    EntityProp(End, Arc<str>),
}

/// A literal, or what a field reads.
#[derive(Clone, Debug, PartialEq)]
enum Lit {
    Null,
    Bool(bool),
    Num(f64),
    Str(Arc<str>),
}

#[derive(Clone, Debug, PartialEq)]
enum Operand {
    Field(Field),
    Lit(Lit),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Eq,
    Neq,
    Lt,
    Le,
    Gt,
    Ge,
    StartsWith,
    EndsWith,
    Contains,
}

#[derive(Clone, Debug, PartialEq)]
enum Pred {
    Const(Option<bool>),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
    Xor(Box<Pred>, Box<Pred>),
    Not(Box<Pred>),
    Cmp(Cmp, Operand, Operand),
    In(Operand, Vec<Lit>),
    IsNull(Operand, bool),
    Truth(Operand),
}

/// One compiled policy.
#[derive(Clone, Debug, PartialEq)]
pub struct RowRule {
    target: Target,
    pred: Pred,
}

/// Longest policy predicate, in bytes.
pub const POLICY_TEXT_MAX: usize = 4096;

/// Compiles `text` for `target`, with `$user` bound to `user`.
pub fn compile(target: Target, text: &str, user: &str) -> Result<RowRule, PolicyError> {
    if text.len() > POLICY_TEXT_MAX {
        return Err(PolicyError::at(text, 0, format!("longer than POLICY_TEXT_MAX = {POLICY_TEXT_MAX}")));
    }
    let expr = engram_query::parse_expression(text).map_err(|e| PolicyError::of_query(&e))?;
    let c = Compiler { text, target, user };
    Ok(RowRule { target, pred: c.pred(&expr, 0)? })
}

struct Compiler<'t> {
    text: &'t str,
    target: Target,
    user: &'t str,
}

/// Nesting past this is refused (the predicate is evaluated per row).
const DEPTH_MAX: usize = 64;

impl Compiler<'_> {
    fn err(&self, e: &Expr, message: impl Into<String>) -> PolicyError {
        PolicyError::at(self.text, e.span.start, message)
    }

    fn pred(&self, e: &Expr, depth: usize) -> Result<Pred, PolicyError> {
        if depth > DEPTH_MAX {
            return Err(self.err(e, "nested too deeply"));
        }
        let sub = |x: &Expr| self.pred(x, depth + 1).map(Box::new);
        Ok(match &e.kind {
            ExprKind::Lit(Literal::Bool(b)) => Pred::Const(Some(*b)),
            ExprKind::Lit(Literal::Null) => Pred::Const(None),
            ExprKind::Unary(UnaryOp::Not, x) => Pred::Not(sub(x)?),
            ExprKind::Binary(BinaryOp::And, a, b) => Pred::And(sub(a)?, sub(b)?),
            ExprKind::Binary(BinaryOp::Or, a, b) => Pred::Or(sub(a)?, sub(b)?),
            ExprKind::Binary(BinaryOp::Xor, a, b) => Pred::Xor(sub(a)?, sub(b)?),
            ExprKind::Binary(op, a, b) => {
                let cmp = match op {
                    BinaryOp::Eq => Cmp::Eq,
                    BinaryOp::Neq => Cmp::Neq,
                    BinaryOp::Lt => Cmp::Lt,
                    BinaryOp::Le => Cmp::Le,
                    BinaryOp::Gt => Cmp::Gt,
                    BinaryOp::Ge => Cmp::Ge,
                    BinaryOp::StartsWith => Cmp::StartsWith,
                    BinaryOp::EndsWith => Cmp::EndsWith,
                    BinaryOp::Contains => Cmp::Contains,
                    BinaryOp::In => {
                        let left = self.operand(a)?;
                        let ExprKind::List(items) = &b.kind else { return Err(self.err(b, "IN takes a list of literals")) };
                        let items = items.iter().map(|i| self.lit(i)).collect::<Result<Vec<_>, _>>()?;
                        let items = items.into_iter().map(|l| normalize_for(&left, l)).collect();
                        return Ok(Pred::In(left, items));
                    }
                    other => return Err(self.err(e, format!("`{}` is not offered in a policy", other.text()))),
                };
                let (a, b) = (self.operand(a)?, self.operand(b)?);
                let (a, b) = match (a, b) {
                    (Operand::Lit(l), r @ Operand::Field(_)) => {
                        let l = normalize_for(&r, l);
                        (Operand::Lit(l), r)
                    }
                    (l @ Operand::Field(_), Operand::Lit(r)) => {
                        let r = normalize_for(&l, r);
                        (l, Operand::Lit(r))
                    }
                    other => other,
                };
                Pred::Cmp(cmp, a, b)
            }
            ExprKind::IsNull(x, not) => Pred::IsNull(self.operand(x)?, *not),
            ExprKind::Prop(..) | ExprKind::Call { .. } | ExprKind::Var(_) => Pred::Truth(self.operand(e)?),
            _ => return Err(self.err(e, "expected a condition on the row's fields")),
        })
    }

    fn lit(&self, e: &Expr) -> Result<Lit, PolicyError> {
        Ok(match &e.kind {
            ExprKind::Lit(Literal::Null) => Lit::Null,
            ExprKind::Lit(Literal::Bool(b)) => Lit::Bool(*b),
            ExprKind::Lit(Literal::Int(i)) => Lit::Num(*i as f64),
            ExprKind::Lit(Literal::Float(f)) => Lit::Num(*f),
            ExprKind::Lit(Literal::Str(s)) => Lit::Str(Arc::from(s.as_str())),
            ExprKind::Unary(UnaryOp::Neg, x) => match self.lit(x)? {
                Lit::Num(n) => Lit::Num(-n),
                _ => return Err(self.err(e, "`-` takes a number")),
            },
            ExprKind::Param(p) if p == "user" => Lit::Str(Arc::from(self.user)),
            ExprKind::Param(p) => return Err(self.err(e, format!("unknown parameter `${p}`; a policy knows `$user`"))),
            _ => return Err(self.err(e, "expected a literal or `$user`")),
        })
    }

    fn operand(&self, e: &Expr) -> Result<Operand, PolicyError> {
        match &e.kind {
            ExprKind::Prop(base, key) => {
                if let ExprKind::Prop(inner, tags) = &base.kind {
                    if let (ExprKind::Var(v), "tags") = (&inner.kind, tags.name.as_str()) {
                        let tag = Arc::from(key.name.as_str());
                        return Ok(Operand::Field(match self.field(e, v, "tags")? {
                            Field::ClaimProp(_) => Field::ClaimTag(tag),
                            Field::EntityProp(end, _) => Field::EntityTag(end, tag),
                            _ => return Err(self.err(e, "expected a tag, such as `c.tags.sensitivity`")),
                        }));
                    }
                }
                let ExprKind::Var(v) = &base.kind else { return Err(self.err(e, "expected a field of the row, such as `c.state`")) };
                Ok(Operand::Field(self.field(e, v, &key.name)?))
            }
            ExprKind::Call { name, args, distinct: false } if name.name.eq_ignore_ascii_case("type") && args.len() == 1 => {
                match (&args[0].kind, self.target) {
                    (ExprKind::Var(v), Target::Claims) if v == "c" => Ok(Operand::Field(Field::Predicate)),
                    _ => Err(self.err(e, "`type()` takes the claim `c`")),
                }
            }
            ExprKind::Var(v) => Err(self.err(e, format!("`{v}` alone is not a value; name a field, such as `{v}.name`"))),
            ExprKind::Binary(op, ..) => Err(self.err(e, format!("`{}` is not offered in a policy", op.text()))),
            _ => self.lit(e).map(Operand::Lit),
        }
    }

    fn field(&self, e: &Expr, var: &str, key: &str) -> Result<Field, PolicyError> {
        let end = match (self.target, var) {
            (Target::Claims, "c") => None,
            (Target::Claims, "s") => Some(End::Subject),
            (Target::Claims, "o") => Some(End::Object),
            (Target::Entities, "e") => Some(End::Itself),
            (Target::Claims, _) => return Err(self.err(e, format!("unknown variable `{var}`; a claims policy knows `c`, `s` and `o`"))),
            (Target::Entities, _) => return Err(self.err(e, format!("unknown variable `{var}`; an entities policy knows `e`"))),
        };
        Ok(match (end, key) {
            (None, "state") => Field::State,
            (None, "predicate") => Field::Predicate,
            (None, "confidence") => Field::Confidence,
            (None, "text") => Field::Text,
            (None, "sensitive") => Field::Sensitive,
            (None, "conversation_id") => Field::Conversation,
            (None, "message_id") => Field::Message,
            (None, "model") => Field::Model,
            (None, k) => Field::ClaimProp(Arc::from(k)),
            (Some(end), "type") => Field::EntityType(end),
            (Some(end), "name") => Field::EntityName(end),
            (Some(end), "id") => Field::EntityId(end),
            (Some(end), k) => Field::EntityProp(end, Arc::from(k)),
        })
    }
}

/// Names are compared as interned: a literal compared with a type, a predicate or a state is
/// normalised the same way.
fn normalize_for(field: &Operand, lit: Lit) -> Lit {
    match (field, lit) {
        (Operand::Field(Field::Predicate | Field::EntityType(_)), Lit::Str(s)) => Lit::Str(Arc::from(vocabulary_key(&s))),
        (Operand::Field(Field::State), Lit::Str(s)) => Lit::Str(Arc::from(s.to_ascii_lowercase())),
        (_, l) => l,
    }
}

fn of_value(v: Option<&Value>) -> Lit {
    match v {
        Some(Value::Bool(b)) => Lit::Bool(*b),
        Some(Value::Int(i)) => Lit::Num(*i as f64),
        Some(Value::Float(f)) => Lit::Num(*f),
        Some(Value::Str(s)) => Lit::Str(s.clone()),
        // Lists and maps compare with nothing a policy can write.
        _ => Lit::Null,
    }
}

/// A type or predicate name as compared: its vocabulary key (the language keeps names as
/// written, ingest as keys).
fn name_lit(name: &Arc<str>) -> Lit {
    match crate::normalize::vocabulary_key_of(name) {
        std::borrow::Cow::Borrowed(_) => Lit::Str(name.clone()),
        std::borrow::Cow::Owned(k) => Lit::Str(Arc::from(k)),
    }
}

fn opt_str(s: Option<&Arc<str>>) -> Lit {
    s.map_or(Lit::Null, |s| Lit::Str(s.clone()))
}

/// The row a predicate is evaluated on.
#[derive(Clone, Copy)]
enum Row {
    Claim(u32),
    Entity(u32),
}

impl Row {
    fn entity(self, st: &State, end: End) -> Option<u32> {
        match (self, end) {
            (Row::Entity(e), End::Itself) => Some(e),
            (Row::Claim(c), End::Subject) => Some(*st.claims.subject.get(c as usize)),
            (Row::Claim(c), End::Object) => Some(*st.claims.object.get(c as usize)),
            _ => None,
        }
    }
}

fn read(st: &State, row: Row, f: &Field) -> Lit {
    let claim = |row: Row| match row {
        Row::Claim(c) => Some(c as usize),
        Row::Entity(_) => None,
    };
    let first_evidence = |c: usize| {
        let mut i = *st.claims.evidence_head.get(c);
        let mut last = None;
        while let Some(row) = st.evidence.rows.try_get(i as usize) {
            last = Some(row);
            i = row.next;
        }
        last
    };
    match f {
        Field::State => claim(row).map_or(Lit::Null, |c| {
            Lit::Str(Arc::from(match *st.claims.state.get(c) {
                ClaimState::Proposed => "proposed",
                ClaimState::Accepted => "accepted",
                ClaimState::Deprecated => "deprecated",
            }))
        }),
        Field::Predicate => claim(row).map_or(Lit::Null, |c| name_lit(st.catalog.predicates.name(*st.claims.pred.get(c)))),
        Field::Confidence => claim(row).map_or(Lit::Null, |c| Lit::Num(f64::from(*st.claims.confidence.get(c)))),
        Field::Text => claim(row).map_or(Lit::Null, |c| {
            let t = st.claims.text.get(c);
            if t.is_empty() {
                Lit::Null
            } else {
                Lit::Str(Arc::from(t))
            }
        }),
        Field::Sensitive => claim(row).map_or(Lit::Null, |c| Lit::Bool(*st.claims.flags.get(c) & crate::state::SENSITIVE != 0)),
        Field::Conversation => claim(row).and_then(first_evidence).map_or(Lit::Null, |r| opt_str(r.conversation_id.as_ref())),
        Field::Message => claim(row).and_then(first_evidence).map_or(Lit::Null, |r| opt_str(r.message_id.as_ref())),
        Field::Model => claim(row).and_then(first_evidence).map_or(Lit::Null, |r| opt_str(r.model.as_ref())),
        Field::ClaimProp(k) => claim(row).map_or(Lit::Null, |c| of_value(st.claims.props.get(c as u32).and_then(|p| p.get(k.as_ref())))),
        Field::ClaimTag(k) => claim(row).map_or(Lit::Null, |c| opt_str(st.claim_tags(c as u32).get(k.as_ref()))),
        Field::EntityTag(end, k) => {
            row.entity(st, *end).map_or(Lit::Null, |e| opt_str(st.entities.tags.get(&e).and_then(|t| t.get(k.as_ref()))))
        }
        Field::EntityType(end) => {
            row.entity(st, *end).map_or(Lit::Null, |e| name_lit(st.catalog.types.name(st.entities.ty.get(e as usize).0)))
        }
        Field::EntityName(end) => row.entity(st, *end).map_or(Lit::Null, |e| Lit::Str(Arc::from(st.entities.name.get(e as usize)))),
        Field::EntityId(end) => row.entity(st, *end).map_or(Lit::Null, |e| Lit::Str(Arc::from(st.entities.ext_id.get(e as usize)))),
        Field::EntityProp(end, k) => {
            row.entity(st, *end).map_or(Lit::Null, |e| of_value(st.entities.props.get(e).and_then(|p| p.get(k.as_ref()))))
        }
    }
}

fn value(st: &State, row: Row, o: &Operand) -> Lit {
    match o {
        Operand::Field(f) => read(st, row, f),
        Operand::Lit(l) => l.clone(),
    }
}

/// `a op b` in Cypher's three-valued logic: null when either side is null or the kinds differ
/// for an ordering.
fn compare(op: Cmp, a: &Lit, b: &Lit) -> Option<bool> {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (a, b) {
        (Lit::Null, _) | (_, Lit::Null) => return None,
        (Lit::Num(x), Lit::Num(y)) => x.partial_cmp(y),
        (Lit::Str(x), Lit::Str(y)) => Some(x.cmp(y)),
        (Lit::Bool(x), Lit::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    };
    let strings = |f: fn(&str, &str) -> bool| match (a, b) {
        (Lit::Str(x), Lit::Str(y)) => Some(f(x, y)),
        _ => None,
    };
    match op {
        Cmp::Eq => Some(ord == Some(Ordering::Equal)),
        Cmp::Neq => Some(ord != Some(Ordering::Equal)),
        Cmp::Lt => ord.map(|o| o == Ordering::Less),
        Cmp::Le => ord.map(|o| o != Ordering::Greater),
        Cmp::Gt => ord.map(|o| o == Ordering::Greater),
        Cmp::Ge => ord.map(|o| o != Ordering::Less),
        Cmp::StartsWith => strings(|x, y| x.starts_with(y)),
        Cmp::EndsWith => strings(|x, y| x.ends_with(y)),
        Cmp::Contains => strings(|x, y| x.contains(y)),
    }
}

fn eval(p: &Pred, st: &State, row: Row) -> Option<bool> {
    match p {
        Pred::Const(b) => *b,
        Pred::And(a, b) => match (eval(a, st, row), eval(b, st, row)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        Pred::Or(a, b) => match (eval(a, st, row), eval(b, st, row)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
        Pred::Xor(a, b) => Some(eval(a, st, row)? ^ eval(b, st, row)?),
        Pred::Not(a) => eval(a, st, row).map(|b| !b),
        Pred::Cmp(op, a, b) => compare(*op, &value(st, row, a), &value(st, row, b)),
        Pred::In(a, items) => {
            let v = value(st, row, a);
            if v == Lit::Null {
                return None;
            }
            let mut unknown = false;
            for i in items {
                match compare(Cmp::Eq, &v, i) {
                    Some(true) => return Some(true),
                    None => unknown = true,
                    Some(false) => {}
                }
            }
            if unknown {
                None
            } else {
                Some(false)
            }
        }
        Pred::IsNull(a, not) => Some((value(st, row, a) == Lit::Null) != *not),
        Pred::Truth(a) => match value(st, row, a) {
            Lit::Bool(b) => Some(b),
            _ => None,
        },
    }
}

impl RowRule {
    /// A rule no row passes (a policy that fails closed).
    pub fn deny_all(target: Target) -> RowRule {
        RowRule { target, pred: Pred::Const(Some(false)) }
    }

    /// What this rule filters.
    pub fn target(&self) -> Target {
        self.target
    }
}

/// The policies of one workspace that apply to one principal, compiled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rules {
    /// Its row policies.
    pub rows: Vec<RowRule>,
    /// Its masking policies (`None`: none).
    pub masks: Option<crate::read::mask::Masker>,
}

impl Rules {
    /// No policy.
    pub const NONE: Rules = Rules { rows: Vec::new(), masks: None };

    /// Whether no policy applies.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.masks.is_none()
    }
}

/// The rows of one workspace hidden from one principal by its policies, and the values masked,
/// on one snapshot.
#[derive(Clone, Debug, Default)]
pub(crate) struct Hidden {
    /// Claims hidden: failing a claims policy, or with an end hidden.
    pub claims: IdSet,
    /// Entities hidden: failing an entities policy.
    pub entities: IdSet,
    /// The values masked (`None`: no masking policy applies).
    pub masked: Option<crate::read::mask::Masked>,
}

impl Hidden {
    /// The rows of workspace `ws` of `st` that fail `rules` (all rules must pass). Costs one
    /// evaluation per entity and claim of the workspace (erased and deleted ones included: a
    /// restore must not reveal a row).
    pub fn compute(st: &State, ws: WorkspaceId, rules: &Rules) -> Hidden {
        let mut h = Hidden::rows(st, ws, &rules.rows);
        h.masked = rules.masks.as_ref().map(|m| crate::read::mask::Masked::compute(st, ws, m));
        h
    }

    fn rows(st: &State, ws: WorkspaceId, rules: &[RowRule]) -> Hidden {
        let bm = &st.bitmaps;
        let entity_rules: Vec<&RowRule> = rules.iter().filter(|r| r.target == Target::Entities).collect();
        let claim_rules: Vec<&RowRule> = rules.iter().filter(|r| r.target == Target::Claims).collect();
        let passes = |rules: &[&RowRule], row: Row| rules.iter().all(|r| eval(&r.pred, st, row) == Some(true));
        let mut entities = Vec::new();
        if !entity_rules.is_empty() {
            if let Some(set) = bm.entities_by_ws.get(&ws) {
                entities.extend(set.iter().filter(|&e| !passes(&entity_rules, Row::Entity(e))));
            }
        }
        let entities = IdSet::from_sorted(&entities);
        let mut claims = Vec::new();
        if let Some(set) = bm.claims_by_ws.get(&ws) {
            claims.extend(set.iter().filter(|&c| {
                let i = c as usize;
                entities.contains(*st.claims.subject.get(i))
                    || entities.contains(*st.claims.object.get(i))
                    || !passes(&claim_rules, Row::Claim(c))
            }));
        }
        Hidden { claims: IdSet::from_sorted(&claims), entities, masked: None }
    }

    /// Whether some row is hidden.
    pub fn hides_rows(&self) -> bool {
        !(self.claims.is_empty() && self.entities.is_empty())
    }

    /// Whether nothing is hidden or masked.
    pub fn is_empty(&self) -> bool {
        !self.hides_rows() && self.masked.as_ref().is_none_or(crate::read::mask::Masked::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(target: Target, text: &str) -> PolicyError {
        compile(target, text, "ann").unwrap_err()
    }

    #[test]
    fn refuses_what_it_cannot_evaluate_with_a_place() {
        let e = err(Target::Claims, "c.state = 'accepted' AND x.name = 'a'");
        assert_eq!((e.line, e.column), (1, 26), "{e}");
        assert!(e.message.contains("unknown variable `x`"), "{e}");
        let e = err(Target::Entities, "c.state = 'accepted'");
        assert!(e.message.contains("an entities policy knows `e`"), "{e}");
        let e = err(Target::Claims, "c.user_id = $tenant");
        assert!(e.message.contains("`$tenant`") && e.column == 13, "{e}");
        let e = err(Target::Claims, "c.confidence + 1 > 2");
        assert!(e.message.contains("`+`"), "{e}");
        let e = err(Target::Claims, "c.state = ");
        assert_eq!(e.line, 1, "{e}");
        let e = err(Target::Claims, "c");
        assert!(e.message.contains("alone"), "{e}");
    }

    #[test]
    fn tags_are_fields() {
        assert!(compile(Target::Claims, "c.tags.sensitivity <> 'confidential' AND s.tags.team = 'ops'", "ann").is_ok());
        assert!(compile(Target::Entities, "e.tags.team = 'ops'", "ann").is_ok());
    }

    #[test]
    fn three_valued_logic() {
        let t = |a: Lit, b: Lit| compare(Cmp::Eq, &a, &b);
        assert_eq!(t(Lit::Null, Lit::Null), None);
        assert_eq!(t(Lit::Num(1.0), Lit::Str(Arc::from("1"))), Some(false));
        assert_eq!(compare(Cmp::Lt, &Lit::Num(1.0), &Lit::Str(Arc::from("1"))), None);
        assert_eq!(compare(Cmp::StartsWith, &Lit::Str(Arc::from("ann-1")), &Lit::Str(Arc::from("ann"))), Some(true));
    }
}
