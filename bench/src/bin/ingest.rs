//! Ingest throughput: extraction batches (10 entity mentions, 20 claims, client vectors) into a
//! workspace that already holds `--entities` entities of 10 types; 80% of mentions are exact
//! name hits, the rest new surface forms resolved by name-vector similarity within their type.
//!
//! `cargo run --release -p engram-bench --bin ingest -- [--entities 100000] [--batches 2000]
//! [--writers 1] [--fsync batch|always|never] [--dim 64]`

/// On mimalloc, like the `engram` binary (ingest allocates and frees many small rows).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use engram::ingest::{IngestOptions, ResolvedBy};
use engram::{Config, Database, FsyncPolicy, WriteBatch};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
struct Args {
    #[arg(long, default_value_t = 100_000)]
    entities: usize,
    #[arg(long, default_value_t = 2000)]
    batches: usize,
    #[arg(long, default_value_t = 1)]
    writers: usize,
    /// `always` (fsync before each acknowledgement), `batch` (at most every 10 ms) or `never`.
    #[arg(long, default_value = "batch")]
    fsync: String,
    #[arg(long, default_value_t = 64)]
    dim: usize,
    /// Mentions per batch (of 10) that are new surface forms, resolved by vector similarity.
    #[arg(long, default_value_t = 2)]
    novel: usize,
}

const TYPES: [&str; 10] = ["service", "person", "team", "project", "decision", "incident", "document", "repo", "ticket", "customer"];

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn main() -> Result<(), String> {
    let a = Args::parse();
    let fsync = match a.fsync.as_str() {
        "always" => FsyncPolicy::Always,
        "batch" => FsyncPolicy::Batch(Duration::from_millis(10)),
        "never" => FsyncPolicy::Never,
        other => return Err(format!("--fsync `{other}`: expected always, batch or never")),
    };
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let db = Database::open_with(dir.path(), Config { fsync, ..Config::default() }, std::sync::Arc::new(engram::OsVfs))
        .map_err(|e| e.to_string())?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let vectors: Vec<Vec<f32>> = (0..a.entities).map(|_| unit((0..a.dim).map(|_| rng.gen_range(-1.0f32..1.0)).collect())).collect();
    let t = Instant::now();
    for chunk in (0..a.entities).collect::<Vec<_>>().chunks(10_000) {
        let mut b = WriteBatch::new("default");
        for &i in chunk {
            let ext = format!("e{i}");
            b.upsert_entity(&ext, TYPES[i % 10], &format!("{}-{i:06}", TYPES[i % 10]));
            b.set_entity_vector(ext.as_str(), vectors[i].clone());
        }
        db.write(&b).map_err(|e| e.to_string())?;
    }
    db.checkpoint().map_err(|e| e.to_string())?;
    eprintln!("setup: {} entities in {:.1} s", a.entities, t.elapsed().as_secs_f64());

    // Documents, generated before the clock starts.
    let docs: Vec<String> = (0..a.batches)
        .map(|bi| {
            let mut entities = Vec::new();
            for m in 0..10 {
                let i = rng.gen_range(0..a.entities);
                let ty = TYPES[i % 10];
                if m < 10 - a.novel.min(10) {
                    entities.push(json!({"name": format!("{ty}-{i:06}"), "type": ty}));
                } else {
                    let v: Vec<f32> = unit(vectors[i].iter().map(|x| x + rng.gen_range(-0.02f32..0.02)).collect());
                    entities.push(json!({"name": format!("{ty} number {i} (b{bi})"), "type": ty, "vector": v}));
                }
            }
            let claims: Vec<serde_json::Value> = (0..20)
                .map(|_| {
                    let (s, o) = (rng.gen_range(0..10), rng.gen_range(0..10));
                    let predicate = ["mentions", "depends_on", "owns", "blocked_by", "related_to"][rng.gen_range(0..5)];
                    json!({"subject": entities[s]["name"], "predicate": predicate,
                           "object": entities[o]["name"], "confidence": rng.gen_range(0.3f32..1.0), "text": format!("claim {bi}")})
                })
                .collect();
            json!({"source": {"conversation_id": format!("conv-{bi}"), "message_id": "m1", "model": "bench", "model_version": "1"},
                   "entities": entities, "claims": claims})
            .to_string()
        })
        .collect();

    let opts = IngestOptions::default();
    let cpu0 = engram_bench::process_cpu_seconds();
    let t = Instant::now();
    let per = docs.len().div_ceil(a.writers.max(1));
    let (claims, by_vector) = std::thread::scope(|s| {
        let handles: Vec<_> = docs
            .chunks(per.max(1))
            .map(|part| {
                let db = db.clone();
                s.spawn(move || {
                    let (mut claims, mut by_vector) = (0usize, 0usize);
                    for d in part {
                        let r = db.ingest(d, &opts).expect("generated documents are valid");
                        claims += r.claims.len();
                        by_vector += r.entities.iter().filter(|e| matches!(e.how, ResolvedBy::Vector { .. })).count();
                    }
                    (claims, by_vector)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("writer thread")).fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1))
    });
    let secs = t.elapsed().as_secs_f64();
    let cpu = engram_bench::process_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    println!(
        "{}",
        json!({"bench": "ingest", "entities": a.entities, "batches": a.batches, "writers": a.writers, "fsync": a.fsync, "dim": a.dim, "novel_per_batch": a.novel,
               "claims": claims, "seconds": (secs * 1000.0).round() / 1000.0, "claims_per_s": (claims as f64 / secs).round(),
               "mentions_resolved_by_vector": by_vector, "mentions": a.batches * 10,
               "cpu_seconds": cpu, "claims_per_cpu_s": cpu.map(|c| (claims as f64 / c).round())})
    );
    Ok(())
}
