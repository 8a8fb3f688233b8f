//! Embedder throughput: `MiniLM` at batch 1 and 64, the static table and hashing, on seeded
//! 20-word sentences. `cargo bench -p engram-bench --bench embed` (needs `scripts/fetch-model.sh`
//! for `minilm` and `static`; those groups are skipped with a note when the files are absent).

use criterion::{criterion_main, BatchSize, Criterion, Throughput};
use engram::embed::{default_model_dir, Embedder, HashEmbedder, MiniLm, StaticModel};
use engram_bench::sentences::sentences;
use std::hint::black_box;

fn embedders(c: &mut Criterion) {
    let texts = sentences(1024, 20, 42);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let dir = default_model_dir();

    let hash = HashEmbedder::new(384);
    let mut g = c.benchmark_group("hash");
    g.throughput(Throughput::Elements(refs.len() as u64));
    g.bench_function("1024_sentences", |b| b.iter(|| black_box(hash.embed(&refs))));
    g.finish();

    match StaticModel::load(&dir) {
        Ok(table) => {
            let mut g = c.benchmark_group("static");
            g.throughput(Throughput::Elements(refs.len() as u64));
            g.bench_function("1024_sentences", |b| b.iter(|| black_box(table.embed(&refs))));
            g.finish();
        }
        Err(e) => eprintln!("static skipped: {e}"),
    }

    match MiniLm::load(&dir) {
        Ok(m) => {
            let mut g = c.benchmark_group("minilm");
            g.sample_size(10);
            g.throughput(Throughput::Elements(1));
            let mut i = 0;
            g.bench_function("batch_1", |b| {
                b.iter_batched(
                    || {
                        i = (i + 1) % refs.len();
                        refs[i]
                    },
                    |t| black_box(m.embed(&[t])),
                    BatchSize::SmallInput,
                );
            });
            g.throughput(Throughput::Elements(64));
            g.bench_function("batch_64", |b| b.iter(|| black_box(m.embed(&refs[..64]))));
            g.finish();
        }
        Err(e) => eprintln!("minilm skipped: {e}"),
    }
}

#[allow(missing_docs)] // Reason: criterion_group! generates an undocumented public fn.
mod group {
    criterion::criterion_group! {
        name = embed;
        config = criterion::Criterion::default().measurement_time(std::time::Duration::from_secs(3));
        targets = super::embedders
    }
}
criterion_main!(group::embed);
