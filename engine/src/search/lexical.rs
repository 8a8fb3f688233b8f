//! The lexical path: BM25 over claim texts or entity names and aliases, scoped to one workspace
//! and to what the read's visibility lets it see.

use crate::error::{Interrupted, ReadError};
use crate::ids::{ClaimId, EntityId};
use crate::read::scope::ReadContext;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use std::cell::Cell;

impl WorkspaceView<'_> {
    /// The best `k` visible claims for the keywords of `query`, by BM25 over claim texts. Checks
    /// the view's deadline and cancel token every `CHECK_EVERY` documents walked and then fails
    /// with `ReadError::Interrupted`, returning nothing.
    pub fn search_claim_text(&self, query: &str, k: usize, visibility: &Visibility) -> Result<Vec<(ClaimId, f32)>, ReadError> {
        self.search_claim_text_where(query, k, visibility, &|_| true)
    }

    /// `search_claim_text` among the claims `keep` accepts.
    pub fn search_claim_text_where(
        &self,
        query: &str,
        k: usize,
        visibility: &Visibility,
        keep: &dyn Fn(ClaimId) -> bool,
    ) -> Result<Vec<(ClaimId, f32)>, ReadError> {
        let stop = Stop::of(self.cx);
        self.cx.check().map_err(ReadError::Interrupted)?;
        let hits = self.claim_text_hits(query, k, visibility, keep, &stop);
        stop.result()?;
        Ok(hits)
    }

    fn claim_text_hits(
        &self,
        query: &str,
        k: usize,
        visibility: &Visibility,
        keep: &dyn Fn(ClaimId) -> bool,
        stop: &Stop<'_>,
    ) -> Vec<(ClaimId, f32)> {
        let vis = self.vis(visibility);
        let st = self.st;
        let hidden = self.hidden_claims();
        let replaced = self.masked.map_or(&[][..], |m| m.lexical());
        let admit = |c: u32| (c as usize) < st.claims.len() && vis.claim(st, c) && keep(ClaimId(c));
        st.text
            .claims
            .search_replaced(query, self.ws, k, &hidden, replaced, admit, &|| stop.now())
            .into_iter()
            .map(|h| (ClaimId(h.doc), h.score))
            .collect()
    }

    /// The best `k` visible entities for the keywords of `query`, by BM25 over names and aliases,
    /// under the view's deadline and cancel token (as `search_claim_text`).
    pub fn search_entity_text(&self, query: &str, k: usize, visibility: &Visibility) -> Result<Vec<(EntityId, f32)>, ReadError> {
        let stop = Stop::of(self.cx);
        self.cx.check().map_err(ReadError::Interrupted)?;
        let hits = self.entity_text_hits(query, k, visibility, &stop);
        stop.result()?;
        Ok(hits)
    }

    fn entity_text_hits(&self, query: &str, k: usize, visibility: &Visibility, stop: &Stop<'_>) -> Vec<(EntityId, f32)> {
        let vis = self.vis(visibility);
        let st = self.st;
        st.text
            .entities
            .search_until(query, self.ws, k, &self.hidden_entities(), |e| (e as usize) < st.entities.len() && vis.entity(st, e), &|| {
                stop.now()
            })
            .into_iter()
            .map(|h| (EntityId(h.doc), h.score))
            .collect()
    }
}

/// A keyword search's interruption: the index asks it every 1,024 documents walked; it checks the
/// view's context, and `result` says why the search stopped.
struct Stop<'a> {
    cx: Option<&'a ReadContext>,
    failed: Cell<Option<Interrupted>>,
}

impl<'a> Stop<'a> {
    fn never() -> Stop<'a> {
        Stop { cx: None, failed: Cell::new(None) }
    }

    fn of(cx: &'a ReadContext) -> Stop<'a> {
        Stop { cx: cx.interruptible().then_some(cx), ..Stop::never() }
    }

    /// Whether the search must stop now.
    fn now(&self) -> bool {
        let Some(cx) = self.cx else { return false };
        if self.failed.get().is_none() {
            self.failed.set(cx.check().err());
        }
        self.failed.get().is_some()
    }

    fn result(&self) -> Result<(), ReadError> {
        self.failed.get().map_or(Ok(()), |i| Err(ReadError::Interrupted(i)))
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
