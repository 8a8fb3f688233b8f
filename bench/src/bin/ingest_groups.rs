//! One writer ingesting a file of documents, durably (fsync before each acknowledgement): one
//! document per commit (`Database::ingest`, what `engram ingest` did) against groups of them
//! (`Database::ingest_docs`, what it does now: one WAL write and one fsync per group), each into a
//! fresh folder, in the same run.
//!
//! `cargo run --release -p engram-bench --bin ingest_groups -- [--docs 5000] [--group 256] [--rounds 3]`

use clap::Parser;
use engram::ingest::IngestOptions;
use engram::Database;
use std::time::Instant;

#[derive(Parser, Debug)]
struct Args {
    #[arg(long, default_value_t = 5000)]
    docs: usize,
    #[arg(long, default_value_t = 256)]
    group: usize,
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

fn main() {
    let a = Args::parse();
    let texts: Vec<String> = (0..a.docs)
        .map(|i| {
            format!(
                r#"{{"source": {{"conversation_id": "c{}", "message_id": "m{i}"}}, "entities": [{{"name": "E{i}", "type": "t"}}, {{"name": "E{}", "type": "t"}}],
                    "claims": [{{"subject": "E{i}", "predicate": "next", "object": "E{}", "confidence": 0.7, "text": "E{i} comes before E{}"}}]}}"#,
                i % 50,
                i + 1,
                i + 1,
                i + 1
            )
        })
        .collect();
    let docs: Vec<_> = texts.iter().map(|t| engram::ingest::parse(t).expect("generated documents parse")).collect();
    let opts = IngestOptions::default();
    for round in 0..a.rounds {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let db = Database::open(dir.path().join("one")).expect("opens");
        let t = Instant::now();
        for d in &docs {
            db.ingest_doc(d, &opts).expect("ingests");
        }
        let one = t.elapsed().as_secs_f64();
        let db = Database::open(dir.path().join("grouped")).expect("opens");
        let t = Instant::now();
        for chunk in docs.chunks(a.group) {
            for r in db.ingest_docs(chunk.to_vec(), &opts).expect("ingests") {
                r.expect("each document commits");
            }
        }
        let grouped = t.elapsed().as_secs_f64();
        println!(
            "round {round}: {} documents, one per commit {one:.2} s ({:.0}/s), groups of {} {grouped:.2} s ({:.0}/s): {:.1}x",
            a.docs,
            a.docs as f64 / one,
            a.group,
            a.docs as f64 / grouped,
            one / grouped
        );
    }
}
