//! Observability of a workspace's memory: extraction quality by model version, confidence
//! calibration, graph density, freshness. Computed through the executor's read surface (catalog,
//! scans, column accessors), so it counts only what the view may see; the
//! attribution trace of a claim is `WorkspaceView::evidence_of`.

use crate::ids::{ClaimId, EntityId};
use crate::model::ClaimState;
use crate::read::view::WorkspaceView;
use crate::time::Timestamp;
use serde::Serialize;
use std::collections::BTreeMap;

/// Days within which a deprecation counts against the extraction that produced the claim.
pub const EARLY_DEPRECATION_DAYS: i64 = 30;
/// A current claim whose `confidence × decay` is below this counts as faded.
pub const FADED_WEIGHT: f64 = 0.1;

/// Claims produced by one extractor version.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelQuality {
    /// Claims whose first evidence came from this model version.
    pub claims: u64,
    /// Of those, deprecated within 30 days of being recorded.
    pub deprecated_within_30_days: u64,
    /// The share (0 when no claims).
    pub early_deprecation_rate: f64,
}

/// One raw-confidence bucket.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CalibrationBucket {
    /// Lower bound of the bucket (`[lo, lo + 0.1)`, the last one closed).
    pub raw_confidence_from: f64,
    /// Claims whose first evidence had a raw confidence in the bucket.
    pub claims: u64,
    /// Of those, ever ACCEPTED.
    pub ever_accepted: u64,
}

/// The workspace report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    /// Entities (not deleted) per type.
    pub entities_per_type: BTreeMap<String, u64>,
    /// Claims (all states, not deleted) per predicate.
    pub claims_per_predicate: BTreeMap<String, u64>,
    /// Claims per entity (as subject or object): p50, p90, p99, max.
    pub degree: [u64; 4],
    /// Extraction quality by `model@version`.
    pub models: BTreeMap<String, ModelQuality>,
    /// Confidence calibration: ten buckets of raw extractor confidence.
    pub calibration: Vec<CalibrationBucket>,
    /// Age in days of the newest `valid_from` among current claims (`None` without any).
    pub newest_fact_age_days: Option<f64>,
    /// Share of current claims whose `confidence × decay` is below 0.1.
    pub faded_share: f64,
    /// Current claims.
    pub current_claims: u64,
}

/// When claim `c` became DEPRECATED (from its lifecycle history), if it did.
fn deprecated_at(ws: &WorkspaceView<'_>, c: ClaimId) -> Option<Timestamp> {
    let mut after = ws.claim_state(c)?;
    let mut when = None;
    for change in ws.claim_history(c) {
        if after == ClaimState::Deprecated && change.state_before != ClaimState::Deprecated {
            when = Some(change.at);
        }
        after = change.state_before;
    }
    when
}

/// Whether claim `c` was ever ACCEPTED.
fn ever_accepted(ws: &WorkspaceView<'_>, c: ClaimId) -> bool {
    ws.claim_state(c) == Some(ClaimState::Accepted) || ws.claim_history(c).any(|h| h.state_before == ClaimState::Accepted)
}

impl WorkspaceView<'_> {
    /// The observability report of this workspace, at this view's time.
    pub fn report(&self) -> Report {
        let mut r = Report {
            calibration: (0..10).map(|i| CalibrationBucket { raw_confidence_from: f64::from(i) / 10.0, ..Default::default() }).collect(),
            ..Report::default()
        };
        let cat = self.catalog();
        r.entities_per_type = cat.types.iter().map(|t| (t.name.to_string(), t.entities)).collect();
        r.claims_per_predicate = cat.predicates.iter().map(|p| (p.name.to_string(), p.claims)).collect();
        let mut degree: BTreeMap<EntityId, u64> = self.entity_set().iter().map(|e| (e, 0)).collect();
        let current = crate::read::visibility::Visibility::current();
        let mut newest: Option<Timestamp> = None;
        let mut faded = 0u64;
        for c in self.claim_set().iter() {
            let Some((subject, _, object)) = self.claim_triple(c) else { continue };
            for e in [subject, object] {
                *degree.entry(e).or_default() += 1;
            }
            if let Some(row) = self.first_evidence(c).and_then(|v| self.evidence(v)) {
                let model = format!("{}@{}", row.model.as_deref().unwrap_or("-"), row.model_version.as_deref().unwrap_or("-"));
                let q = r.models.entry(model).or_default();
                q.claims += 1;
                let recorded = self.claim_recorded_at(c).unwrap_or(Timestamp::MAX);
                if deprecated_at(self, c).is_some_and(|t| t.0 - recorded.0 <= EARLY_DEPRECATION_DAYS * 86_400_000_000) {
                    q.deprecated_within_30_days += 1;
                }
                if let Some(raw) = row.raw_confidence {
                    let b = &mut r.calibration[((f64::from(raw) * 10.0) as usize).min(9)];
                    b.claims += 1;
                    b.ever_accepted += u64::from(ever_accepted(self, c));
                }
            }
            if self.claim_visible(c, &current) {
                r.current_claims += 1;
                let from = self.claim_valid(c).map_or(self.now, |v| v.0);
                newest = Some(newest.map_or(from, |n| n.max(from)));
                let decay = self.claim_decay(c, self.now).unwrap_or(1.0);
                if f64::from(self.claim_confidence(c).unwrap_or(0.0)) * decay < FADED_WEIGHT {
                    faded += 1;
                }
            }
        }
        for q in r.models.values_mut() {
            q.early_deprecation_rate = if q.claims == 0 { 0.0 } else { q.deprecated_within_30_days as f64 / q.claims as f64 };
        }
        let mut d: Vec<u64> = degree.into_values().collect();
        d.sort_unstable();
        let pct = |p: f64| d.get(((d.len().saturating_sub(1)) as f64 * p).round() as usize).copied().unwrap_or(0);
        r.degree = [pct(0.5), pct(0.9), pct(0.99), d.last().copied().unwrap_or(0)];
        r.newest_fact_age_days = newest.map(|t| ((self.now.0 - t.0).max(0) as f64) / 86_400e6);
        r.faded_share = if r.current_claims == 0 { 0.0 } else { faded as f64 / r.current_claims as f64 };
        r
    }
}
