//! A principal's scope over one snapshot of the database: the views it opens hide what the
//! principal may not see and carry its read limits, deadline and cancel token; its writes need
//! the principal's grants.

use crate::error::{Error, ReadError};
use crate::model::WorkspaceInfo;
use crate::read::policy::{self, Hidden, RowRule, Rules};
use crate::read::scope::{Access, CancelToken, Principal, ReadContext, ReadLimits};
use crate::read::view::{Snapshot, WorkspaceView};
use crate::time::{Clock, Timestamp};
use std::sync::{Arc, OnceLock};

/// A principal's scope over one snapshot: the views and writes it opens see and change only what
/// its grants allow.
#[derive(Debug)]
pub struct Scope {
    db: super::Database,
    snapshot: Snapshot,
    principal: Arc<Principal>,
    cx: ReadContext,
    /// The row policies that apply to the principal, per workspace, compiled once.
    filters: Vec<PolicyFilter>,
    /// The interface its requests are recorded under in the access history (`None`: not
    /// recorded here, by default for the embedded root, or because the caller records them).
    audit_as: Option<&'static str>,
}

/// What `Scope::note_access` records of one request.
pub(crate) struct AccessNote<'a> {
    pub at: Timestamp,
    pub started: std::time::Instant,
    pub op: &'a str,
    pub workspace: Option<&'a str>,
    pub text: &'a str,
    pub params_sha256: Option<String>,
    pub rows: u64,
    pub claims: Vec<u64>,
    pub outcome: String,
}

impl AccessNote<'_> {
    /// The record of this request by `user` through `interface`.
    pub fn record(self, user: &str, roles: Vec<String>, interface: &str) -> super::audit::AccessRecord {
        super::audit::AccessRecord {
            at: self.at,
            user: user.to_owned(),
            roles,
            interface: interface.to_owned(),
            workspace: self.workspace.map(str::to_owned),
            op: self.op.to_owned(),
            text: self.text.to_owned(),
            params_sha256: self.params_sha256,
            rows: self.rows,
            claims: self.claims,
            duration_us: u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX),
            outcome: self.outcome,
        }
    }
}

impl super::Database {
    /// Records a request of the embedded full-access principal (the caller checked `audit_root`).
    pub(crate) fn note_root_access(&self, note: AccessNote<'_>, durable: bool) -> Result<(), Error> {
        self.record_access(note.record("root", Vec::new(), "embedded"), durable)
    }
}

/// The row policies of one workspace that apply to a scope's principal, and the rows they hide
/// (computed by the first view that needs them).
#[derive(Debug)]
struct PolicyFilter {
    workspace: String,
    rules: Rules,
    /// On the scope's own snapshot (shared with other scopes through the database's cache).
    own: OnceLock<Arc<Hidden>>,
    /// On the one derived snapshot an export reads.
    derived: OnceLock<Arc<Hidden>>,
}

/// Hidden rows computed for a state version, a workspace and a set of rules.
pub(crate) struct CachedHidden {
    version: u64,
    ws: crate::ids::WorkspaceId,
    rules: Rules,
    hidden: Arc<Hidden>,
}

/// The rules of a workspace no policy applies to.
static NO_RULES: Rules = Rules::NONE;

/// States × rule sets `hidden_for` remembers (a few principals over the newest states).
const HIDDEN_CACHE_MAX: usize = 16;

impl super::Database {
    /// The rows `rules` hide in workspace `ws` of `st`, computed once per state version, workspace
    /// and rule set: requests between two commits share it (a scope per request is what a server
    /// opens).
    fn hidden_for(&self, st: &crate::state::State, ws: crate::ids::WorkspaceId, rules: &Rules) -> Arc<Hidden> {
        let cache = &self.inner.hidden_cache;
        if let Some(c) = cache.lock().iter().find(|c| c.version == st.version && c.ws == ws && c.rules == *rules) {
            return c.hidden.clone();
        }
        let hidden = Arc::new(Hidden::compute(st, ws, rules));
        let mut c = cache.lock();
        c.retain(|c| c.version + 1 >= st.version);
        if c.len() >= HIDDEN_CACHE_MAX {
            c.remove(0);
        }
        c.push(CachedHidden { version: st.version, ws, rules: rules.clone(), hidden: hidden.clone() });
        hidden
    }
}

/// The policies of `settings` that apply to `principal`, compiled with `$user` bound to its
/// name. A stored policy was compiled when it was stored; one that no longer compiles (a bug)
/// hides every row of its target: a policy fails closed.
fn filters_for(settings: &crate::settings::Settings, principal: &Principal) -> Vec<PolicyFilter> {
    let mut out = Vec::new();
    let names: std::collections::BTreeSet<&String> = settings.policies.keys().chain(settings.masks.keys()).collect();
    for ws in names {
        let rows: Vec<RowRule> = settings
            .policies
            .get(ws)
            .into_iter()
            .flat_map(|p| p.values())
            .filter(|p| p.roles.iter().any(|r| principal.holds(r)))
            .map(|p| {
                let target = policy::Target::parse(&p.target).unwrap_or(policy::Target::Claims);
                policy::compile(target, &p.predicate, principal.name()).unwrap_or_else(|_| RowRule::deny_all(target))
            })
            .collect();
        // A stored mask that no longer compiles (it was checked when stored) hides every PII
        // span: it fails closed too.
        let masks: Vec<crate::read::mask::MaskRule> = settings
            .masks
            .get(ws)
            .into_iter()
            .flat_map(|m| m.values())
            .filter(|m| m.roles.iter().any(|r| principal.holds(r)))
            .map(|m| crate::read::mask::compile(&m.on, &m.mode).unwrap_or_else(|_| crate::read::mask::MaskRule::hide_all()))
            .collect();
        let masks = (!masks.is_empty())
            .then(|| crate::read::mask::Masker::new(masks, settings.mask_secret.as_deref()).with_property_tags(settings.property_tags(ws)));
        let rules = Rules { rows, masks };
        if !rules.is_empty() {
            out.push(PolicyFilter { workspace: ws.clone(), rules, own: OnceLock::new(), derived: OnceLock::new() });
        }
    }
    out
}

impl Scope {
    pub(crate) fn new(db: super::Database, snapshot: Snapshot, principal: Arc<Principal>) -> Scope {
        let limits = ReadLimits { visited_max: db.config().limits.traversal_visited_max, ..ReadLimits::DEFAULT };
        let filters = filters_for(&snapshot.state.settings, &principal);
        let audit_as = (!principal.is_root() || snapshot.state.settings.audit_root_on()).then_some("embedded");
        Scope { db, snapshot, principal, cx: ReadContext::with_limits(limits), filters, audit_as }
    }

    /// This scope with its requests left out of the access history: the caller (a server
    /// recording each command) records them itself.
    #[must_use]
    pub fn audited_by_caller(mut self) -> Scope {
        self.audit_as = None;
        self
    }

    /// The interface this scope's requests are recorded as (`None`: its caller records them).
    pub(crate) fn audit_interface(&self) -> Option<&'static str> {
        self.audit_as
    }

    /// Whether this scope records its requests (see `audit_as`).
    pub(crate) fn audited(&self) -> bool {
        self.audit_as.is_some()
    }

    /// Records one request made through this scope (see `audit_as`); with `durable` (a write),
    /// once on disk. A failure to record fails the request: an answered write is in the log.
    pub(crate) fn note_access(&self, note: AccessNote<'_>, durable: bool) -> Result<(), Error> {
        match self.access_record(note) {
            Some(record) => self.db.record_access(record, durable),
            None => Ok(()),
        }
    }

    /// The access record of `note` for this scope's principal (`None`: its caller records).
    pub(crate) fn access_record(&self, note: AccessNote<'_>) -> Option<crate::db::audit::AccessRecord> {
        let interface = self.audit_as?;
        Some(note.record(self.principal.name(), self.principal.roles().map(str::to_owned).collect(), interface))
    }

    /// The compiled row policies that apply to the principal on `workspace` (empty: none).
    pub(crate) fn policy_rules(&self, workspace: &str) -> &Rules {
        self.filters.iter().find(|f| f.workspace == workspace).map_or(&NO_RULES, |f| &f.rules)
    }

    /// This scope with other read limits.
    #[must_use]
    pub fn with_limits(mut self, limits: ReadLimits) -> Scope {
        self.cx.limits = limits;
        self
    }

    /// This scope stopping its reads once `clock` reaches `at`.
    #[must_use]
    pub fn with_deadline(mut self, at: Timestamp, clock: Arc<dyn Clock>) -> Scope {
        self.cx.deadline = Some((at, clock));
        self
    }

    /// This scope stopping its reads once `token` is tripped.
    #[must_use]
    pub fn with_cancel(mut self, token: CancelToken) -> Scope {
        self.cx.cancel = Some(token);
        self
    }

    /// The database this scope reads (for the query executor's embedder).
    pub(crate) fn database(&self) -> &super::Database {
        &self.db
    }

    /// Who is asking.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// The snapshot this scope reads (unscoped: reading through it bypasses the grants; the
    /// views of `workspace` do not).
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The read context: limits and interruption, and how many checks were made.
    pub fn context(&self) -> &ReadContext {
        &self.cx
    }

    /// The workspaces this principal may read, by name.
    pub fn workspaces(&self) -> Vec<WorkspaceInfo> {
        self.snapshot.workspaces().into_iter().filter(|w| self.principal.may(&w.name, Access::Read)).collect()
    }

    /// A view of workspace `name`, as this principal sees it. A workspace it may not read is
    /// refused as unknown: its existence is not revealed.
    pub fn workspace(&self, name: &str) -> Result<WorkspaceView<'_>, ReadError> {
        self.view_on(&self.snapshot, name)
    }

    /// `workspace` on `snapshot`, a state derived from this scope's (an export's copy with the
    /// merges undone): the same grants, hiding, limits and deadline.
    pub(crate) fn view_on<'s>(&'s self, snapshot: &'s Snapshot, name: &str) -> Result<WorkspaceView<'s>, ReadError> {
        let grant = self.principal.grant_on(name).ok_or_else(|| ReadError::UnknownWorkspace(name.to_owned()))?;
        let mut view = snapshot.workspace(name)?;
        // A workspace without sensitive claims has nothing to hide, and keeps the fast filters.
        let st = &snapshot.state;
        view.hide_sensitive = !grant.see_sensitive && st.bitmaps.claims_sensitive.iter().any(|c| st.claim_ws(c) == view.ws);
        if !grant.see_sensitive {
            view.hidden_keys = st.settings.sensitive_properties(name);
        }
        view.cx = &self.cx;
        view.sees_sensitive = grant.see_sensitive;
        if let Some(f) = self.filters.iter().find(|f| f.workspace == name) {
            let hidden = if std::ptr::eq(snapshot, &raw const self.snapshot) {
                f.own.get_or_init(|| self.db.hidden_for(st, view.ws, &f.rules))
            } else {
                f.derived.get_or_init(|| Arc::new(Hidden::compute(st, view.ws, &f.rules)))
            };
            view.policy = hidden.hides_rows().then_some(&**hidden);
            view.masked = hidden.masked.as_ref().filter(|m| !m.is_empty());
        }
        Ok(view)
    }

    /// Database-wide totals (entities, claims, evidence rows, deleted and every workspace
    /// included). Only for a principal that sees everything (admin with `see_sensitive` on `*`):
    /// totals count other workspaces and hidden claims. Others count through `catalog()`.
    pub fn counts(&self) -> Result<(usize, usize, usize), Error> {
        self.require_all()?;
        Ok(self.snapshot.counts())
    }

    /// Row counts in total, per state and per workspace, under the same rule as `counts`.
    pub fn row_counts(&self) -> Result<crate::stats::Counts, Error> {
        self.require_all()?;
        Ok(self.snapshot.row_counts())
    }

    /// The database's memory report, under the same rule as `counts`.
    pub fn memory(&self) -> Result<crate::stats::MemoryReport, Error> {
        self.require_all()?;
        Ok(self.snapshot.memory())
    }

    /// `workspace`'s share of the heap (`GRAPH.MEMORY USAGE`), for its admins: a size says how
    /// much is there, rows a row policy hides included. `None` when there is no such workspace.
    pub fn workspace_memory(&self, workspace: &str) -> Result<Option<crate::stats::WorkspaceMemory>, Error> {
        self.require(workspace, Access::Admin)?;
        Ok(self.snapshot.state.workspace_id(workspace).map(|ws| self.snapshot.workspace_memory(ws)))
    }

    fn require_all(&self) -> Result<(), Error> {
        if self.principal.sees_all() {
            return Ok(());
        }
        Err(Error::Denied { principal: self.principal.name().to_owned(), workspace: "*".to_owned(), needed: Access::Admin })
    }

    /// Refuses with `Error::Denied` unless the principal holds `access` on `workspace`.
    pub fn require(&self, workspace: &str, access: Access) -> Result<(), Error> {
        if self.principal.may(workspace, access) {
            Ok(())
        } else {
            Err(Error::Denied { principal: self.principal.name().to_owned(), workspace: workspace.to_owned(), needed: access })
        }
    }

    /// Commits `batch` if the principal may write its workspace (see `Database::write`).
    pub fn write(&self, batch: &crate::write::batch::WriteBatch) -> Result<super::CommitInfo, Error> {
        let (at, started) = (self.db.config().clock.now(), std::time::Instant::now());
        let result = self.require(&batch.workspace, Access::Write).and_then(|()| self.db.write(batch));
        let text = format!("{} operations", batch.ops.len());
        self.note_write("write", Some(&batch.workspace), &text, (at, started), &result, batch.ops.len() as u64)?;
        result
    }

    /// Ingests a document if the principal may write its workspace (see `Database::ingest`).
    pub fn ingest(&self, doc: &str, opts: &crate::write::ingest::IngestOptions) -> Result<crate::write::ingest::IngestReport, Error> {
        let (at, started) = (self.db.config().clock.now(), std::time::Instant::now());
        let parsed = crate::write::ingest::parse(doc);
        let workspace = parsed.as_ref().ok().map(|p| p.workspace.clone());
        let result = parsed.map_err(Error::from).and_then(|parsed| {
            self.require(&parsed.workspace, Access::Write)?;
            self.db.ingest_doc(&parsed, opts)
        });
        let text = format!("a document of {} bytes", doc.len());
        let rows = result.as_ref().map_or(0, |r| (r.claims.len() + r.entities.len()) as u64);
        self.note_write("ingest", workspace.as_deref(), &text, (at, started), &result, rows)?;
        result
    }

    /// Records a write made through this scope, durably.
    fn note_write<T>(
        &self,
        op: &str,
        workspace: Option<&str>,
        text: &str,
        (at, started): (Timestamp, std::time::Instant),
        result: &Result<T, Error>,
        rows: u64,
    ) -> Result<(), Error> {
        let outcome = match result {
            Ok(_) => "ok".to_owned(),
            Err(e) => format!("error: {}: {e}", e.class().name()),
        };
        let note = AccessNote {
            at,
            started,
            op,
            workspace,
            text,
            params_sha256: None,
            rows: if result.is_ok() { rows } else { 0 },
            claims: Vec::new(),
            outcome,
        };
        self.note_access(note, true)
    }
}

impl super::Database {
    /// A scope for `principal` over the newest snapshot: what it opens sees only what the
    /// principal may see, and writes need its grants.
    pub fn scope(&self, principal: Arc<Principal>) -> Scope {
        Scope::new(self.clone(), self.snapshot(), principal)
    }
}
