//! Criterion benches of retrieval on a seeded memory (100k entities with 384-dimension name
//! vectors, 100k claims with texts and text vectors): exact vector top-10 in each scan mode beside
//! a scalar brute force of the same rows (the ratio is the figure), BM25, recency, hybrid recall.

use criterion::{criterion_main, Criterion};
use engram::{RecallQuery, Timestamp, VectorMode, VectorOptions, Visibility};
use engram_bench::random_memory;
use std::hint::black_box;

const ENTITIES: usize = 100_000;
const CLAIMS: usize = 100_000;
const DIM: usize = 384;

fn benches(c: &mut Criterion) {
    let (db, query) = random_memory(ENTITIES, CLAIMS, DIM, 7);
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("default exists");
    let rows: Vec<Vec<f32>> = (0..ENTITIES as u32).map(|e| db.entity_vector(engram::EntityId(e)).expect("every entity has one")).collect();
    c.bench_function("vector_top10_scalar_reference", |b| {
        b.iter(|| {
            let mut best = (f32::MIN, 0usize);
            for (i, r) in rows.iter().enumerate() {
                let s: f32 = r.iter().zip(&query).map(|(a, b)| a * b).sum();
                if s > best.0 {
                    best = (s, i);
                }
            }
            black_box(best)
        });
    });
    for mode in [VectorMode::F32, VectorMode::F16, VectorMode::I8] {
        let opts = VectorOptions { k: 10, mode, ..VectorOptions::default() };
        ws.search_entity_vectors(&query, &opts).expect("valid");
        c.bench_function(&format!("vector_top10_{}", mode.as_str()), |b| {
            b.iter(|| black_box(ws.search_entity_vectors(&query, &opts).expect("valid")));
        });
    }
    let v = Visibility::current();
    ws.search_claim_text("warm", 1, &v).expect("an unscoped view never stops");
    c.bench_function("bm25_claims_top50", |b| {
        b.iter(|| black_box(ws.search_claim_text("w3x3 w50x50 w7x1000", 50, &v).expect("an unscoped view never stops")));
    });
    c.bench_function("bm25_entities_top5", |b| {
        b.iter(|| black_box(ws.search_entity_text("w3x3 w12x4862", 5, &v).expect("an unscoped view never stops")));
    });
    let now = Timestamp::from_epoch_seconds(1_735_689_600);
    c.bench_function("recency_100", |b| b.iter(|| black_box(ws.recent_claims(now.plus_seconds(-7 * 86_400), now, 100, &v))));
    let q = RecallQuery { vector: Some(query.clone()), mode: VectorMode::I8, ..RecallQuery::new("w3x3 w50x50 outage") };
    ws.recall(&q).expect("valid");
    eprintln!("recall stages (µs, one warm call): {:?}", ws.recall(&q).expect("valid").timings_us);
    c.bench_function("recall_hybrid_800_tokens", |b| b.iter(|| black_box(ws.recall(&q).expect("valid").packed.tokens_used)));
}

/// What ingest's entity resolution asks for a mention with a vector: the best entity of one type
/// (10k of 100k, 64 dimensions) by cosine, i8 scan with exact rescoring.
fn resolution(c: &mut Criterion) {
    use rand::{Rng, SeedableRng};
    let dim = 64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let db = engram::Database::in_memory();
    let mut b = engram::WriteBatch::new("default");
    for i in 0..ENTITIES {
        b.upsert_entity(&format!("e{i}"), &format!("type{}", i % 10), &format!("entity {i}"));
    }
    db.write(&b).expect("generated batch is valid");
    let rows: Vec<f32> = (0..ENTITIES * dim).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    db.set_entity_vectors(dim, rows).expect("one row per entity");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("default exists");
    let query: Vec<f32> = (0..dim).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let opts = VectorOptions {
        k: 1,
        metric: engram::Metric::Cosine,
        mode: VectorMode::I8,
        rescore: 8,
        entity_types: vec!["type3".to_owned()],
        ..VectorOptions::default()
    };
    ws.search_entity_vectors(&query, &opts).expect("valid");
    c.bench_function("resolve_by_vector_one_type_10k", |b| b.iter(|| black_box(ws.search_entity_vectors(&query, &opts).expect("valid"))));
}

#[allow(missing_docs)] // Reason: criterion_group! generates an undocumented public fn.
mod group {
    criterion::criterion_group! {
        name = retrieval;
        config = criterion::Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
        targets = super::benches, super::resolution
    }
}
criterion_main!(group::retrieval);
