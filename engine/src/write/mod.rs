//! The write path below the database face: batches and their WAL records, applying a batch or a
//! bulk load to a state, workspace changes, and ingest of extraction documents (parse, resolve,
//! classify, plan).

pub mod apply;
pub mod batch;
pub mod bulk;
pub mod classifier;
pub(crate) mod constraints;
mod elements;
pub mod ingest;
pub mod mutation;
pub(crate) mod workspace;
