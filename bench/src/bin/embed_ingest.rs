//! End-to-end writes of claims that carry text and no vector, per embedder: each batch is
//! embedded in the write path and committed. `cargo run --release -p engram-bench --bin
//! embed_ingest [-- --claims 10000 --batch 500 --embedders hash,static,minilm]`. One JSON line per
//! embedder: claims per second, with the embedding share of the time.

/// On mimalloc, like the workloads harness.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use engram::embed::select;
use engram::{AddClaim, Database, WriteBatch};
use engram_bench::sentences::sentences;
use serde_json::json;
use std::time::Instant;

/// Command-line arguments.
#[derive(Parser, Debug)]
struct Args {
    /// Claims to write.
    #[arg(long, default_value_t = 10_000)]
    claims: usize,
    /// Claims per batch (one commit each).
    #[arg(long, default_value_t = 500)]
    batch: usize,
    /// Embedders to measure.
    #[arg(long, default_value = "hash,static,minilm")]
    embedders: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let texts = sentences(args.claims, 20, 7);
    for name in args.embedders.split(',') {
        let (embedder, why) = match select(Some(name), None, 384) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{name} skipped: {e}");
                continue;
            }
        };
        eprintln!("{why}");
        let db = Database::in_memory();
        db.set_embedder(embedder.clone())?;
        let mut setup = WriteBatch::new("default");
        for i in 0..100 {
            setup.upsert_entity(&format!("e{i}"), "thing", &format!("Entity number {i}"));
        }
        db.write(&setup)?;
        let t = Instant::now();
        for (b, chunk) in texts.chunks(args.batch.max(1)).enumerate() {
            let mut batch = WriteBatch::new("default");
            for (j, text) in chunk.iter().enumerate() {
                let n = b * args.batch + j;
                batch.add_claim(
                    AddClaim::new(format!("e{}", n % 100).as_str(), "mentions", format!("e{}", (n * 7 + 3) % 100).as_str()).text(text),
                );
            }
            db.write(&batch)?;
        }
        let total = t.elapsed().as_secs_f64();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        for chunk in refs.chunks(args.batch.max(1)) {
            embedder.embed(chunk)?;
        }
        let embed_only = t.elapsed().as_secs_f64();
        println!(
            "{}",
            json!({"measure": "ingest_text_claims", "embedder": embedder.id(), "claims": args.claims, "batch": args.batch,
                   "seconds": total, "claims_per_second": args.claims as f64 / total, "embedding_alone_seconds": embed_only})
        );
    }
    Ok(())
}
