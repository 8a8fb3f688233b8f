//! Retrieval over a view: vector search, keyword search, graph paths, fusion and context
//! assembly. The indexes they query live in `index/`.

pub mod context;
pub mod lexical;
pub mod recall;
pub mod semantic;
pub mod when;
