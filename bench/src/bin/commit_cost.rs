//! The cost of a one-claim commit in memory, on a large state: `cargo run --release -p
//! engram-bench --bin commit_cost -- [--data DIR] [--commits N]`. With `--data` (workload CSVs from
//! gen.py) the state is that workload's data, bulk-loaded; without it, a seeded random graph of
//! 100k entities and 500k claims. Each commit is a group of its own, so it pays the group's fixed
//! cost: cloning the newest state and, later, dropping the one it replaced. Prints one JSON line.

#[path = "workloads/load.rs"]
#[allow(dead_code)] // Reason: shared with the workloads harness, which uses all of it.
mod load;

/// On mimalloc, like the `engram` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use engram::{AddClaim, Database, EntityId, WriteBatch};
use serde_json::json;
use std::time::Instant;

/// Command-line arguments.
#[derive(Parser, Debug)]
struct Args {
    /// Workload data folder to load first (default: a seeded random graph).
    #[arg(long)]
    data: Option<std::path::PathBuf>,
    /// One-claim commits to time.
    #[arg(long, default_value_t = 20_000)]
    commits: u32,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let db = match &args.data {
        Some(dir) => {
            let db = Database::in_memory();
            db.bulk_load(&load::read_dir(dir).map_err(|e| e.to_string())?)?;
            db
        }
        None => engram_bench::random_graph(100_000, 500_000, 5_000, 42),
    };
    let (entities, claims, _) = db.snapshot().counts();
    let t0 = Instant::now();
    for i in 0..args.commits {
        let mut b = WriteBatch::new("default");
        b.add_claim(AddClaim::new(EntityId(i % 1000), "mentions", EntityId((i * 7 + 1) % 1000)));
        db.write(&b)?;
    }
    let us = t0.elapsed().as_secs_f64() * 1e6 / f64::from(args.commits.max(1));
    println!(
        "{}",
        json!({"measure": "one_claim_commit_in_memory", "entities": entities, "claims": claims, "commits": args.commits, "us_per_commit": (us * 100.0).round() / 100.0})
    );
    Ok(())
}
