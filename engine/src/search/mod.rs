//! Retrieval: vector search, keyword search, recency, graph paths, fusion and context assembly.

pub mod kernels;
pub mod vectors;
pub mod semantic;
pub mod bm25;
pub mod text;
pub mod lexical;
pub mod recency;
pub mod context;
pub mod recall;
