//! The lexical path: BM25 over claim texts or entity names and aliases, scoped to one workspace
//! and to what the read's visibility lets it see.

use crate::ids::{ClaimId, EntityId};
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;

impl WorkspaceView<'_> {
    /// The best `k` visible claims for the keywords of `query`, by BM25 over claim texts.
    pub fn search_claim_text(&self, query: &str, k: usize, visibility: &Visibility) -> Vec<(ClaimId, f32)> {
        let vis = self.vis(visibility);
        let st = self.st;
        let hidden = self.hidden_claims();
        st.text
            .claims
            .search(query, self.ws, k, &hidden, |c| (c as usize) < st.claims.len() && vis.claim(st, c))
            .into_iter()
            .map(|h| (ClaimId(h.doc), h.score))
            .collect()
    }

    /// The best `k` visible entities for the keywords of `query`, by BM25 over names and aliases.
    pub fn search_entity_text(&self, query: &str, k: usize, visibility: &Visibility) -> Vec<(EntityId, f32)> {
        let vis = self.vis(visibility);
        let st = self.st;
        st.text
            .entities
            .search(query, self.ws, k, &[], |e| (e as usize) < st.entities.len() && vis.entity(st, e))
            .into_iter()
            .map(|h| (EntityId(h.doc), h.score))
            .collect()
    }
}

impl WorkspaceView<'_> {
    /// Up to `limit` visible claims of this workspace with `after < valid_from <= until`, newest
    /// first (ties: higher id first).
    pub fn recent_claims(
        &self,
        after: crate::time::Timestamp,
        until: crate::time::Timestamp,
        limit: usize,
        visibility: &Visibility,
    ) -> Vec<(ClaimId, crate::time::Timestamp)> {
        let vis = self.vis(visibility);
        let st = self.st;
        let ws = self.ws;
        // When this workspace holds every claim, the per-claim workspace test is skipped.
        let whole = st.bitmaps.claims_by_ws.get(&ws).is_some_and(|s| s.len() == st.claims.len() as u64);
        st.text
            .recency
            .newest(after, until, limit, |c| (whole || st.claim_ws(c) == ws) && vis.claim(st, c))
            .into_iter()
            .map(|(c, t)| (ClaimId(c), t))
            .collect()
    }
}
