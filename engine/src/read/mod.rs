//! The read API: snapshots, workspace views, visibility, neighbours, k-hop, closure and paths.

pub mod closure;
pub mod filter;
pub mod khop;
pub mod neighbors;
pub mod pathview;
pub mod view;
pub mod visibility;
