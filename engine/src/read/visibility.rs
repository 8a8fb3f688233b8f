//! Which claims a read sees.
//!
//! By default a read sees the claims an agent should act on now: not deleted (nor their endpoints),
//! not deprecated, not expired, and valid now. `as_of` moves valid time ("what was true on day T",
//! whatever is known now: a claim superseded since was true then, and is seen with the state it had
//! before it was deprecated), `known_as_of` moves transaction time ("what did we believe on day
//! T"), and `all_versions` switches every filter off for audits. The default is answered from the per-claim `LIVE` flag materialized at commit, so a
//! traversal tests one byte per edge; the other settings take the general path.

use crate::model::{ClaimState, StateSet};
use crate::read::policy::Hidden;
use crate::state::{FlatFilter, State, DELETED, ERASED, SENSITIVE};
use crate::time::Timestamp;

/// Visibility settings of a read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Visibility {
    /// Valid time to evaluate at; `None` = now.
    pub as_of: Option<Timestamp>,
    /// Transaction time: see the database as it had recorded by then; `None` = latest.
    pub known_as_of: Option<Timestamp>,
    /// Claim states to include (default: proposed and accepted).
    pub states: StateSet,
    /// Include soft-deleted claims and claims of soft-deleted entities.
    pub include_deleted: bool,
    /// Every claim ever recorded, whatever its state, deletion or validity (audits).
    pub all_versions: bool,
}

impl Visibility {
    /// The default: current, valid-now claims.
    pub fn current() -> Visibility {
        Visibility::default()
    }

    /// Everything, for audits.
    pub fn all_versions() -> Visibility {
        Visibility { all_versions: true, ..Visibility::default() }
    }

    /// The default, evaluated at valid time `t`.
    pub fn as_of(t: Timestamp) -> Visibility {
        Visibility { as_of: Some(t), ..Visibility::default() }
    }
}

/// `Visibility` bound to a state and a "now": the per-claim test used by every read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vis<'a> {
    /// The snapshot's materialized `LIVE && !TIMED` bits when the settings are the default.
    fast: Option<&'a FlatFilter>,
    /// The same bits when only the valid time moved (`as_of`): a set bit then needs only
    /// `valid_from <= t`, since an untimed claim has no end and no expiry.
    fast_as_of: Option<&'a FlatFilter>,
    all: bool,
    valid_at: Timestamp,
    known: Option<Timestamp>,
    states: StateSet,
    include_deleted: bool,
    /// Sensitive claims do not exist (a principal without `see_sensitive`).
    hide_sensitive: bool,
    /// Rows the principal's row policies hide.
    policy: Option<&'a Hidden>,
    /// The moved valid time (`as_of`): a claim superseded since (deprecated, its validity ended)
    /// was true then, and counts with the state it had before its deprecation.
    as_of: Option<Timestamp>,
}

impl<'a> Vis<'a> {
    /// `v` on `st` at `now`; with `hide_sensitive`, sensitive claims are never visible, and the
    /// rows in `policy` never are. The materialized filters know neither, so a hiding read takes
    /// the general path.
    pub fn new(v: &Visibility, st: &'a State, now: Timestamp, hide_sensitive: bool, policy: Option<&'a Hidden>) -> Vis<'a> {
        let lifecycle_default = v.known_as_of.is_none()
            && v.states == StateSet::CURRENT
            && !v.include_deleted
            && !v.all_versions
            && !hide_sensitive
            && policy.is_none();
        let fast = v.as_of.is_none() && lifecycle_default && now >= st.committed_at;
        Vis {
            fast: fast.then(|| st.flat_filter()),
            fast_as_of: (v.as_of.is_some() && lifecycle_default).then(|| st.flat_filter()),
            all: v.all_versions,
            valid_at: v.as_of.unwrap_or(now),
            known: v.known_as_of,
            states: v.states,
            include_deleted: v.include_deleted,
            hide_sensitive,
            policy,
            as_of: v.as_of,
        }
    }

    /// The materialized filter, when this visibility is the default.
    #[inline]
    pub fn flat(&self) -> Option<&'a FlatFilter> {
        self.fast
    }

    /// The valid time checked.
    #[inline]
    pub fn valid_at(&self) -> Timestamp {
        self.valid_at
    }

    /// Whether claim `c` is visible.
    #[inline]
    pub fn claim(&self, st: &State, c: u32) -> bool {
        if let Some(flat) = self.fast {
            // Live but time-bounded claims still need their clock check.
            return flat.visible(st, c, self.valid_at);
        }
        if let Some(flat) = self.fast_as_of {
            let live = if FlatFilter::bit(&flat.fast, c) {
                *st.claims.valid_from.get(c as usize) <= self.valid_at
            } else {
                flat.timed.as_ref().is_some_and(|timed| FlatFilter::bit(timed, c) && st.claim_valid_at(c, self.valid_at))
            };
            // Not live now, but perhaps superseded since: the general test knows.
            return live
                || (*st.claims.valid_until.get(c as usize) != Timestamp::MAX
                    && self.claim_general(st, c, *st.claims.flags.get(c as usize)));
        }
        self.claim_general(st, c, *st.claims.flags.get(c as usize))
    }

    #[inline(never)]
    fn claim_general(&self, st: &State, c: u32, f: u8) -> bool {
        if f & ERASED != 0 || (self.hide_sensitive && f & SENSITIVE != 0) || self.policy.is_some_and(|h| h.claims.contains(c)) {
            return false;
        }
        if self.all {
            return true;
        }
        let i = c as usize;
        let (state, deleted) = match self.known {
            Some(k) => {
                if st.claims.recorded.at(c) > k {
                    return false;
                }
                st.claim_lifecycle_at(c, k)
            }
            None => (*st.claims.state.get(i), f & DELETED != 0),
        };
        let state = if self.as_of.is_some() && state == ClaimState::Deprecated && *st.claims.valid_until.get(i) != Timestamp::MAX {
            st.claim_state_before_deprecation(c)
        } else {
            state
        };
        if !self.states.contains(state) {
            return false;
        }
        if !self.include_deleted {
            if deleted {
                return false;
            }
            let s = *st.claims.subject.get(i);
            let o = *st.claims.object.get(i);
            if self.entity_deleted(st, s) || self.entity_deleted(st, o) {
                return false;
            }
        }
        st.claim_valid_at(c, self.valid_at)
    }

    fn entity_deleted(&self, st: &State, e: u32) -> bool {
        match self.known {
            Some(k) => st.entity_deleted_at(e, k),
            None => *st.entities.flags.get(e as usize) & DELETED != 0,
        }
    }

    /// Whether entity `e` is visible (exists at the known time, not erased, not deleted unless asked).
    pub fn entity(&self, st: &State, e: u32) -> bool {
        let f = *st.entities.flags.get(e as usize);
        if f & ERASED != 0 || self.policy.is_some_and(|h| h.entities.contains(e)) {
            return false;
        }
        if self.all {
            return true;
        }
        if let Some(k) = self.known {
            if st.entities.created.at(e) > k {
                return false;
            }
        }
        self.include_deleted || !self.entity_deleted(st, e)
    }
}
