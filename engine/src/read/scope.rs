//! Who is asking and what they may see: principals with grants per workspace, and what a scoped
//! read carries: its read limits, a deadline and a cancel token (the `Scope` itself, which opens
//! views and batches for a principal, is the database's: `db/scope.rs`).
//!
//! A `Principal` holds grants per workspace name (or `*` for every workspace): `Read` ⊂ `Write` ⊂
//! `Admin`, each with its own `see_sensitive` flag. A `Scope` pins one snapshot for a principal;
//! its workspace views hide what the principal may not see (sensitive claims without
//! `see_sensitive`) and stop with `ReadError::Interrupted` once the deadline passes or the token is
//! tripped, checked at least every `CHECK_EVERY` units of work. Embedded use keeps full access
//! through `Principal::root()`, and `Snapshot::workspace` is its shorthand.

use crate::error::{Interrupted, ReadError};
use crate::time::{Clock, Timestamp};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

pub use crate::model::Access;

/// One grant: an access level and whether sensitive claims are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// The level.
    pub access: Access,
    /// Sensitive claims exist for this grant (without it they do not: not returned, counted,
    /// ranked or used as a hop).
    pub see_sensitive: bool,
}

/// The workspace name a grant for every workspace is filed under.
pub const ALL_WORKSPACES: &str = "*";

/// Who is asking: a name and grants per workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    name: Arc<str>,
    grants: BTreeMap<String, Grant>,
    /// The roles it holds (for row policies; their grants are already merged into `grants`).
    roles: Vec<Arc<str>>,
    /// The embedded full-access principal (`root()`), whose reads are not audited by default.
    root: bool,
}

impl Principal {
    /// Full access to everything, sensitive included: embedded use.
    pub fn root() -> Principal {
        Principal { root: true, ..Principal::named("root").grant(ALL_WORKSPACES, Access::Admin, true) }
    }

    /// A principal with no grants yet.
    pub fn named(name: &str) -> Principal {
        Principal { name: Arc::from(name), grants: BTreeMap::new(), roles: Vec::new(), root: false }
    }

    /// Whether this is the embedded full-access principal (`Principal::root()`).
    pub fn is_root(&self) -> bool {
        self.root
    }

    /// This principal holding role `role` (the row policies naming it apply to it).
    #[must_use]
    pub fn with_role(mut self, role: &str) -> Principal {
        if !self.roles.iter().any(|r| &**r == role) {
            self.roles.push(Arc::from(role));
        }
        self
    }

    /// The roles it holds.
    pub fn roles(&self) -> impl Iterator<Item = &str> {
        self.roles.iter().map(|r| &**r)
    }

    /// Whether a policy naming `role` applies to this principal: it holds the role, or the
    /// name is its own (a user's own role).
    pub fn holds(&self, role: &str) -> bool {
        *self.name == *role || self.roles.iter().any(|r| &**r == role)
    }

    /// This principal with `access` on `workspace` (or `*`), replacing an earlier grant there.
    #[must_use]
    pub fn grant(mut self, workspace: &str, access: Access, see_sensitive: bool) -> Principal {
        self.grants.insert(workspace.to_owned(), Grant { access, see_sensitive });
        self
    }

    /// This principal without its grant on `workspace` (or `*`).
    #[must_use]
    pub fn revoke(mut self, workspace: &str) -> Principal {
        self.grants.remove(workspace);
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The grants, by workspace name (`*` for all).
    pub fn grants(&self) -> impl Iterator<Item = (&str, Grant)> {
        self.grants.iter().map(|(w, g)| (w.as_str(), *g))
    }

    /// What this principal holds on `workspace`: the stronger of its grant there and its grant
    /// on `*` (levels and `see_sensitive` each take the wider of the two).
    pub fn grant_on(&self, workspace: &str) -> Option<Grant> {
        let own = self.grants.get(workspace).copied();
        let all = self.grants.get(ALL_WORKSPACES).copied();
        match (own, all) {
            (Some(a), Some(b)) => Some(Grant { access: a.access.max(b.access), see_sensitive: a.see_sensitive || b.see_sensitive }),
            (a, b) => a.or(b),
        }
    }

    /// Whether this principal holds at least `access` on `workspace`.
    pub fn may(&self, workspace: &str, access: Access) -> bool {
        self.grant_on(workspace).is_some_and(|g| g.access >= access)
    }

    /// Whether this principal sees everything everywhere: admin with `see_sensitive` on `*`,
    /// which database-wide totals need.
    pub fn sees_all(&self) -> bool {
        self.grants.get(ALL_WORKSPACES).is_some_and(|g| g.access == Access::Admin && g.see_sensitive)
    }
}

/// Limits on what one read may return or visit. Each has a name (its field) and a default; going
/// past one gives `ReadError::Limit` naming it, or, for traversals, a result marked `truncated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Entities a traversal may visit before it stops and reports `truncated` (default 10M).
    pub visited_max: usize,
    /// Rows one read may return (default 1M).
    pub rows_max: usize,
    /// Nearest neighbours one vector search may ask for (default 10,000).
    pub vector_k_max: usize,
    /// Token budget of one recall (default 32,768).
    pub recall_budget_max: usize,
    /// Candidates each recall path may contribute (default 1,000).
    pub recall_per_path_max: usize,
    /// Hops of recall's graph path (default 4).
    pub recall_hops_max: u32,
    /// Facts one recall may return (default 1,000).
    pub facts_max: usize,
}

impl ReadLimits {
    /// The defaults.
    pub const DEFAULT: ReadLimits = ReadLimits {
        visited_max: 10_000_000,
        rows_max: 1_000_000,
        vector_k_max: 10_000,
        recall_budget_max: 32_768,
        recall_per_path_max: 1_000,
        recall_hops_max: 4,
        facts_max: 1_000,
    };

    /// The limits of the embedded shorthand (`Snapshot::workspace`): the program is trusted with
    /// the sizes it asks for (they are clamped to what exists, never an error), and only a
    /// traversal's visited set keeps its bound, which truncates rather than fails.
    pub const ROOT: ReadLimits = ReadLimits {
        visited_max: ReadLimits::DEFAULT.visited_max,
        rows_max: usize::MAX,
        vector_k_max: usize::MAX,
        recall_budget_max: usize::MAX,
        recall_per_path_max: usize::MAX,
        recall_hops_max: u32::MAX,
        facts_max: usize::MAX,
    };

    /// `Err(ReadError::Limit)` naming `name` when `value` is above `limit`.
    pub fn check(name: &'static str, limit: usize, value: usize, what: &'static str) -> Result<(), ReadError> {
        if value > limit {
            return Err(ReadError::Limit { name, limit: limit as u64, what });
        }
        Ok(())
    }
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits::DEFAULT
    }
}

/// A cancel token: cheap to clone; tripping it stops the work of every scope holding it.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token not yet tripped.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Trips it: work checking it stops at its next check.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether it was tripped.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Loops check the deadline and the token at least this often, in units of work (an entity
/// expanded, an edge or a row examined).
pub const CHECK_EVERY: u32 = 1024;

// Scans in `index/` (below this layer) count their own units; the two counts agree.
const _: () = assert!(crate::index::STOP_EVERY == CHECK_EVERY as usize);

/// What a read carries besides its snapshot: limits, and when to stop.
#[derive(Debug)]
pub struct ReadContext {
    pub(crate) limits: ReadLimits,
    pub(crate) deadline: Option<(Timestamp, Arc<dyn Clock>)>,
    pub(crate) cancel: Option<CancelToken>,
    /// Checks made so far (tests: how far work went after a trip).
    checks: AtomicU64,
}

/// The context of unscoped (root) reads: `ReadLimits::ROOT`, no deadline.
pub(crate) static ROOT_CONTEXT: ReadContext = ReadContext::unbounded();

impl ReadContext {
    const fn unbounded() -> ReadContext {
        ReadContext::with_limits(ReadLimits::ROOT)
    }

    pub(crate) const fn with_limits(limits: ReadLimits) -> ReadContext {
        ReadContext { limits, deadline: None, cancel: None, checks: AtomicU64::new(0) }
    }

    /// The same limits, deadline and token, with its own check count: for work that runs on
    /// another thread than its caller (a write query's job in a commit group).
    pub(crate) fn fork(&self) -> ReadContext {
        ReadContext { limits: self.limits, deadline: self.deadline.clone(), cancel: self.cancel.clone(), checks: AtomicU64::new(0) }
    }

    /// Whether anything can interrupt this read (else loops skip their checks).
    #[inline]
    pub(crate) fn interruptible(&self) -> bool {
        self.deadline.is_some() || self.cancel.is_some()
    }

    /// `Err` once the deadline passed or the token was tripped.
    pub(crate) fn check(&self) -> Result<(), Interrupted> {
        if !self.interruptible() {
            return Ok(());
        }
        self.checks.fetch_add(1, Ordering::Relaxed);
        if self.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            return Err(Interrupted::Cancelled);
        }
        if let Some((at, clock)) = &self.deadline {
            if clock.now() >= *at {
                return Err(Interrupted::Deadline);
            }
        }
        Ok(())
    }

    /// The read limits.
    pub fn limits(&self) -> &ReadLimits {
        &self.limits
    }

    /// Deadline and token checks made so far.
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }
}

/// Counts the units of work of one loop and checks its context every `CHECK_EVERY` of them (and
/// on the first). Local to one thread: parallel loops keep one each.
pub(crate) struct Ticker<'a> {
    cx: &'a ReadContext,
    left: u32,
}

impl<'a> Ticker<'a> {
    pub(crate) fn new(cx: &'a ReadContext) -> Ticker<'a> {
        Ticker { cx, left: 0 }
    }

    /// Counts `units` of work; `Err` when a check finds the read interrupted.
    #[inline]
    pub(crate) fn tick(&mut self, units: u32) -> Result<(), Interrupted> {
        if let Some(left) = self.left.checked_sub(units) {
            self.left = left;
            return Ok(());
        }
        if !self.cx.interruptible() {
            self.left = u32::MAX;
            return Ok(());
        }
        self.left = CHECK_EVERY.saturating_sub(units);
        self.cx.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_combine_the_workspace_and_star() {
        let p = Principal::named("ann").grant("*", Access::Read, false).grant("ops", Access::Write, true);
        assert!(p.may("ops", Access::Write) && p.may("other", Access::Read) && !p.may("other", Access::Write));
        assert_eq!(p.grant_on("ops"), Some(Grant { access: Access::Write, see_sensitive: true }));
        assert_eq!(p.grant_on("other"), Some(Grant { access: Access::Read, see_sensitive: false }));
        assert!(!p.sees_all());
        assert!(Principal::root().sees_all());
        let none = Principal::named("bob");
        assert!(!none.may("ops", Access::Read));
        assert!(!p.clone().revoke("*").may("other", Access::Read));
    }

    #[test]
    fn a_ticker_checks_on_the_first_unit_and_then_every_check_every_units() {
        let cx = ReadContext { cancel: Some(CancelToken::new()), ..ReadContext::unbounded() };
        let mut t = Ticker::new(&cx);
        for _ in 0..CHECK_EVERY * 3 {
            t.tick(1).unwrap();
        }
        assert_eq!(cx.checks(), 3);
        cx.cancel.as_ref().unwrap().cancel();
        // At most CHECK_EVERY units run after the trip before a check sees it.
        let mut ran = 0;
        while t.tick(1).is_ok() {
            ran += 1;
            assert!(ran <= CHECK_EVERY, "ran {ran} units after the trip");
        }
        assert!(ROOT_CONTEXT.check().is_ok());
    }
}
