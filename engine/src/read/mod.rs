//! The read API: snapshots, workspace views, visibility, neighbours, k-hop, closure and paths;
//! and the executor's surface: the catalog with counts, id scans, the expand iterator and column
//! accessors.

pub mod catalog;
pub mod closure;
pub mod columns;
pub mod expand;
pub mod filter;
pub mod khop;
pub mod mask;
pub mod neighbors;
pub mod pathview;
pub mod policy;
pub mod scan;
pub mod scope;
pub(crate) mod shortest;
pub mod view;
pub mod visibility;
