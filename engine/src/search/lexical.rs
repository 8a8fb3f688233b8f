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
        st.text.claims.search(query, self.ws, k, |c| (c as usize) < st.claims.len() && vis.claim(st, c)).into_iter().map(|h| (ClaimId(h.doc), h.score)).collect()
    }

    /// The best `k` visible entities for the keywords of `query`, by BM25 over names and aliases.
    pub fn search_entity_text(&self, query: &str, k: usize, visibility: &Visibility) -> Vec<(EntityId, f32)> {
        let vis = self.vis(visibility);
        let st = self.st;
        st.text.entities.search(query, self.ws, k, |e| (e as usize) < st.entities.len() && vis.entity(st, e)).into_iter().map(|h| (EntityId(h.doc), h.score)).collect()
    }
}
