//! engram's black-box tests, one module per subject, in one test binary: each test binary links
//! the whole engine (~110 MB in the dev profile), so ~40 of them cost minutes of linking and
//! gigabytes of disk. Run one subject with `cargo test -p engram-tests --test it differential::`.
//! The openCypher TCK runners (`tck`, `tck_resp`) have their own harness and stay separate.
#![allow(clippy::unwrap_used)] // Reason: a failed unwrap is a failed test, with its location.

mod bulk;
mod concurrency;
mod constraints;
mod conversation;
mod copy;
mod differential;
mod durability;
mod embedders;
mod graph_analytics;
mod in_transactions;
mod ingest;
mod label_expressions;
mod load_csv;
mod masking;
mod merge;
mod model;
mod neo4j5_forms;
mod ontology;
mod policies;
mod process_kill;
mod publication;
mod quantified_groups;
mod query;
mod recall_ranking;
mod retrieval;
mod schema_procedures;
mod scopes;
mod spatial;
mod tags;
mod temporal;
mod tidy;
mod time_zones;
mod validation;
mod weighted_paths;
