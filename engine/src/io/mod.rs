//! Import and export formats above the database: CSV bulk files and the JSON Lines dump.

pub mod copy;
pub mod csv;
pub mod jsonl;
