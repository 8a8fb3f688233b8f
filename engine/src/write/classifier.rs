//! A pluggable claim classifier: what the seed's LLM classifier does (does this new claim
//! corroborate, contradict or refine one we hold?), supplied by an embedded user.
//!
//! It runs before planning, outside the writer lock, on a snapshot: for each claim of a document
//! that carries no `relation`, it is shown the current claims whose subject has the claim's
//! subject name, and its verdict is written into the document as if the client had sent it. So
//! planning stays deterministic (a slow or non-deterministic classifier never runs under the
//! lock, and a commit group can re-run a plan), and a verdict is checked and applied exactly like
//! a client's (an unknown claim id is refused with its JSON path).

use crate::index::graph::Direction;
use crate::model::ClaimState;
use crate::read::filter::EdgeFilter;
use crate::read::neighbors::NeighborQuery;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use crate::write::ingest::{IngestDoc, Relation};

/// An existing claim shown to the classifier.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Its external id (what a verdict names).
    pub claim: String,
    /// Subject name.
    pub subject: String,
    /// Predicate name.
    pub predicate: String,
    /// Object name.
    pub object: String,
    /// Its text, if any.
    pub text: Option<String>,
    /// Lifecycle state.
    pub state: ClaimState,
    /// Confidence.
    pub confidence: f32,
}

/// Decides how a new claim relates to the current claims about its subject.
pub trait ClaimClassifier: Send + Sync {
    /// The verdict for `claim` (of the document `doc`) given `candidates` (never empty), or
    /// `None` to let engram's own rules decide (identical claims corroborate, single-valued
    /// predicates supersede).
    fn classify(&self, doc: &IngestDoc, claim: usize, candidates: &[Candidate]) -> Option<Relation>;
}

/// Most candidates shown per claim (newest claims of the subject first).
pub const CANDIDATES_MAX: usize = 64;

/// Fills in the classifier's verdicts for the claims of `doc` that carry none.
pub fn classify_doc(view: &WorkspaceView<'_>, doc: &mut IngestDoc, classifier: &dyn ClaimClassifier) {
    let mut verdicts = Vec::new();
    for (i, c) in doc.claims.iter().enumerate() {
        if c.relation.is_some() {
            continue;
        }
        let candidates = candidates(view, &c.subject);
        if candidates.is_empty() {
            continue;
        }
        if let Some(verdict) = classifier.classify(doc, i, &candidates) {
            verdicts.push((i, verdict));
        }
    }
    for (i, verdict) in verdicts {
        doc.claims[i].relation = Some(verdict);
    }
}

/// The current claims whose subject is named `subject` (name or alias), newest first.
fn candidates(view: &WorkspaceView<'_>, subject: &str) -> Vec<Candidate> {
    let name = |e| view.entity(e).map(|x| x.name.to_string()).unwrap_or_default();
    let q = NeighborQuery { filter: EdgeFilter::new(Direction::Out), visibility: Visibility::default(), limit: None, cursor: None };
    let mut claims = Vec::new();
    for e in view.find_by_name(subject) {
        if let Ok(page) = view.neighbors(e, &q) {
            claims.extend(page.items.iter().map(|n| n.claim));
        }
    }
    claims.sort_unstable_by(|a, b| b.cmp(a));
    claims.dedup();
    claims
        .into_iter()
        .take(CANDIDATES_MAX)
        .filter_map(|c| view.claim(c))
        .map(|c| Candidate {
            claim: c.ext_id.to_string(),
            subject: name(c.subject),
            predicate: c.predicate.to_string(),
            object: name(c.object),
            text: c.text.as_deref().map(str::to_owned),
            state: c.state,
            confidence: c.confidence,
        })
        .collect()
}
