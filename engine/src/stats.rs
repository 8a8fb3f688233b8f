//! Memory accounting: what each structure of a snapshot holds, so footprint claims are measured,
//! not guessed. Figures are heap bytes of the structures themselves (allocator overhead aside).

use crate::index::bitmap::IdSet;
use crate::read::view::Snapshot;

/// Heap bytes by structure. "Text" is the string payload (names, ids, claim text), kept apart
/// because it is the caller's data; everything else is engram's own overhead.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// Entities held.
    pub entities: usize,
    /// Claims held.
    pub claims: usize,
    /// Entity columns (including string offsets), CSR offsets, entity key indexes and bitmaps.
    pub entity_bytes: usize,
    /// Claim columns (including string offsets), both CSR edge arrays, the claim key index and
    /// claim bitmaps.
    pub claim_bytes: usize,
    /// String payload of entities and claims.
    pub text_bytes: usize,
    /// Evidence rows and lifecycle history.
    pub other_bytes: usize,
}

impl MemoryReport {
    /// Engram's bytes per claim, text aside.
    pub fn bytes_per_claim(&self) -> f64 {
        self.claim_bytes as f64 / self.claims.max(1) as f64
    }

    /// Engram's bytes per entity, text aside.
    pub fn bytes_per_entity(&self) -> f64 {
        self.entity_bytes as f64 / self.entities.max(1) as f64
    }
}

/// Rough size of a persistent map entry (HAMT node share + key + value).
const SPARSE_ENTRY_BYTES: usize = 48;

impl Snapshot {
    /// Heap bytes held by this snapshot's structures.
    pub fn memory(&self) -> MemoryReport {
        let st = &self.state;
        let (e, c) = (&st.entities, &st.claims);
        let (e_ext_off, e_ext_text) = e.ext_id.heap_bytes();
        let (e_name_off, e_name_text) = e.name.heap_bytes();
        let (e_alias_off, e_alias_text) = e.aliases.heap_bytes();
        let (c_ext_off, c_ext_text) = c.ext_id.heap_bytes();
        let (claim_text_offsets, claim_text_bytes) = c.text.heap_bytes();
        let (entity_bitmaps, claim_bitmaps) = bitmap_bytes(&st.bitmaps);
        // A CSR not built yet (a small database before its first merge) has no offsets at all.
        let csr_offsets: usize = st.graph.base.iter().map(|g| if g.entity_count() == 0 { 0 } else { (g.entity_count() + 1) * 4 }).sum();
        let csr_edges = st.graph.base_heap_bytes().saturating_sub(csr_offsets);
        let entity_bytes = e.ws.heap_bytes()
            + e.ty.heap_bytes()
            + e.flags.heap_bytes()
            + e_ext_off
            + e_name_off
            + e_alias_off
            + (e.updated_at.len() + e.last_event.len()) * SPARSE_ENTRY_BYTES
            + e.props.heap_bytes()
            + e.by_ext.heap_bytes()
            + e.by_name.heap_bytes()
            + e.by_prop.heap_bytes()
            + entity_bitmaps
            + csr_offsets
            + st.graph.dirty.len().div_ceil(8);
        let claim_bytes = c.subject.heap_bytes()
            + c.object.heap_bytes()
            + c.pred.heap_bytes()
            + c.confidence.heap_bytes()
            + c.state.heap_bytes()
            + c.flags.heap_bytes()
            + c.len().div_ceil(8)
            + c.valid_from.heap_bytes()
            + c.valid_until.heap_bytes()
            + c_ext_off
            + claim_text_offsets
            + c.evidence_head.heap_bytes()
            + (c.updated_at.len() + c.expires_at.len() + c.superseded_by.len() + c.last_event.len()) * SPARSE_ENTRY_BYTES
            + c.by_ext.heap_bytes()
            + c.by_prop.heap_bytes()
            + c.props.heap_bytes()
            + claim_bitmaps
            + csr_edges
            + st.graph.hier.iter().map(|(_, adj)| adj[0].heap_bytes() + adj[1].heap_bytes()).sum::<usize>()
            + c.len().div_ceil(8)
            + st.graph.delta_len() * 16;
        MemoryReport {
            entities: e.len(),
            claims: c.len(),
            entity_bytes,
            claim_bytes,
            text_bytes: e_ext_text + e_name_text + e_alias_text + c_ext_text + claim_text_bytes,
            other_bytes: st.evidence.rows.heap_bytes() + c.events.heap_bytes() + e.events.heap_bytes(),
        }
    }
}

/// One workspace's share of the heap, in the components FalkorDB's `GRAPH.MEMORY USAGE` names.
/// The workspace's own strings and properties are counted exactly; the columns, bitmaps, adjacency
/// and indexes every workspace shares are its share by rows (FalkorDB's figures are amortized too).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkspaceMemory {
    /// The entity bitmaps (by type, deleted): FalkorDB's label matrices.
    pub label_bytes: usize,
    /// The adjacency (CSR offsets and edges, the delta, hierarchies) and claim bitmaps:
    /// FalkorDB's relation matrices.
    pub relation_bytes: usize,
    /// Entity columns and history, and the workspace's entities' names, ids, aliases and
    /// properties.
    pub node_bytes: usize,
    /// Claim columns, evidence and history, and the workspace's claims' texts, ids and properties.
    pub edge_bytes: usize,
    /// The key and property indexes.
    pub index_bytes: usize,
}

impl WorkspaceMemory {
    /// Every component added.
    pub fn total(&self) -> usize {
        self.label_bytes + self.relation_bytes + self.node_bytes + self.edge_bytes + self.index_bytes
    }
}

/// Heap bytes of the entity bitmaps and of the claim bitmaps.
fn bitmap_bytes(bm: &crate::state::Bitmaps) -> (usize, usize) {
    let entities = bm.entities_by_ws.values().chain(bm.entities_by_type.values()).map(IdSet::heap_bytes).sum::<usize>()
        + bm.entities_deleted.heap_bytes();
    let claims =
        bm.claims_by_ws.values().chain(bm.claims_by_pred.values()).chain(bm.claims_by_state.iter()).map(IdSet::heap_bytes).sum::<usize>()
            + bm.claims_deleted.heap_bytes()
            + bm.claims_sensitive.heap_bytes()
            + bm.claims_live.heap_bytes();
    (entities, claims)
}

fn props_bytes(p: &crate::value::Properties) -> usize {
    p.iter().map(|(k, v)| k.len() + v.approx_bytes() + SPARSE_ENTRY_BYTES).sum()
}

impl Snapshot {
    /// `ws`'s share of the heap (see `WorkspaceMemory`); all zero for a workspace with no rows.
    pub fn workspace_memory(&self, ws: crate::ids::WorkspaceId) -> WorkspaceMemory {
        let st = &self.state;
        let (e, c, bm) = (&st.entities, &st.claims, &st.bitmaps);
        let ents = bm.entities_by_ws.get(&ws);
        let claims = bm.claims_by_ws.get(&ws);
        let (ne, nc) = (ents.map_or(0, IdSet::len) as usize, claims.map_or(0, IdSet::len) as usize);
        let share_e = |bytes: usize| if e.len() == 0 { 0 } else { (bytes as u128 * ne as u128 / e.len() as u128) as usize };
        let share_c = |bytes: usize| if c.len() == 0 { 0 } else { (bytes as u128 * nc as u128 / c.len() as u128) as usize };
        let mut own_nodes = 0;
        for row in ents.into_iter().flat_map(IdSet::iter) {
            let i = row as usize;
            own_nodes += e.name.get(i).len() + e.ext_id.get(i).len() + e.aliases.get(i).len();
            own_nodes += e.props.get(row).map_or(0, |p| props_bytes(p));
        }
        let mut own_edges = 0;
        for row in claims.into_iter().flat_map(IdSet::iter) {
            let i = row as usize;
            own_edges += c.text.get(i).len() + c.ext_id.get(i).len();
            own_edges += c.props.get(row).map_or(0, |p| props_bytes(p));
        }
        let (entity_bitmaps, claim_bitmaps) = bitmap_bytes(bm);
        let adjacency = st.graph.base_heap_bytes()
            + st.graph.hier.iter().map(|(_, adj)| adj[0].heap_bytes() + adj[1].heap_bytes()).sum::<usize>()
            + st.graph.delta_len() * 16;
        let offsets = |v: &crate::index::strvec::StrVec| v.heap_bytes().0;
        let entity_columns = e.ws.heap_bytes()
            + e.ty.heap_bytes()
            + e.flags.heap_bytes()
            + offsets(&e.ext_id)
            + offsets(&e.name)
            + offsets(&e.aliases)
            + (e.updated_at.len() + e.last_event.len()) * SPARSE_ENTRY_BYTES
            + e.props.heap_bytes()
            + e.events.heap_bytes();
        let claim_columns = c.subject.heap_bytes()
            + c.object.heap_bytes()
            + c.pred.heap_bytes()
            + c.confidence.heap_bytes()
            + c.state.heap_bytes()
            + c.flags.heap_bytes()
            + c.valid_from.heap_bytes()
            + c.valid_until.heap_bytes()
            + offsets(&c.ext_id)
            + offsets(&c.text)
            + c.evidence_head.heap_bytes()
            + (c.updated_at.len() + c.expires_at.len() + c.superseded_by.len() + c.last_event.len()) * SPARSE_ENTRY_BYTES
            + c.props.heap_bytes()
            + c.events.heap_bytes()
            + st.evidence.rows.heap_bytes();
        WorkspaceMemory {
            label_bytes: share_e(entity_bitmaps),
            relation_bytes: share_c(adjacency + claim_bitmaps),
            node_bytes: share_e(entity_columns) + own_nodes,
            edge_bytes: share_c(claim_columns) + own_edges,
            index_bytes: share_e(e.by_ext.heap_bytes() + e.by_name.heap_bytes() + e.by_prop.heap_bytes())
                + share_c(c.by_ext.heap_bytes() + c.by_prop.heap_bytes()),
        }
    }
}

/// Row counts, for `engram stats`: nothing that depends on the clock or on file sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Entities in live workspaces (deleted included, erased excluded).
    pub entities: u64,
    /// Claims in live workspaces, all lifecycle states (deleted included).
    pub claims: u64,
    /// Claims per state: proposed, accepted, deprecated.
    pub by_state: [u64; 3],
    /// Per workspace: name, entities, claims (by name).
    pub workspaces: Vec<(String, u64, u64)>,
}

impl Snapshot {
    /// Row counts from the bitmaps.
    pub fn row_counts(&self) -> Counts {
        let bm = &self.state.bitmaps;
        let mut out = Counts { by_state: bm.claims_by_state.each_ref().map(IdSet::len), ..Counts::default() };
        for w in self.workspaces() {
            let e = bm.entities_by_ws.get(&w.id).map_or(0, IdSet::len);
            let c = bm.claims_by_ws.get(&w.id).map_or(0, IdSet::len);
            out.entities += e;
            out.claims += c;
            out.workspaces.push((w.name.to_string(), e, c));
        }
        out
    }
}
