//! Index structures below the state: bitmaps and bit columns, copy-on-write columns, key and
//! string indexes, the graph's CSR + delta + hierarchy adjacency, and the retrieval indexes
//! (keyword, recency, vectors with their SIMD kernels). They know ids and values, never a
//! `State`, a view or a scope.

/// Units of work (rows scanned, documents walked) between two checks of a scan's stop callback:
/// a deadline or cancel token stops a scan at most this far past its trip.
pub const STOP_EVERY: usize = 1024;

pub mod bitcol;
pub mod bitmap;
pub mod bm25;
pub mod cow;
pub mod graph;
pub mod kernels;
pub mod keyindex;
pub mod order;
pub mod propindex;
pub mod recency;
pub mod rowmap;
pub mod runs;
pub mod scalar;
pub mod strvec;
pub mod text;
pub mod timelog;
pub mod vectors;
