//! Retrieval: vector search, keyword search, recency, graph paths, fusion and context assembly.

pub mod bm25;
pub mod context;
pub mod kernels;
pub mod lexical;
pub mod recall;
pub mod recency;
pub mod semantic;
pub mod text;
pub mod vectors;
