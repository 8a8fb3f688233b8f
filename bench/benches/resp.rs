//! Criterion benches of the RESP request decoder: what one read of a pipelining client holds
//! (16 `PING`s as arrays of bulk strings, as inline lines) and one `GRAPH.QUERY` with a header.

use criterion::{criterion_main, Criterion, Throughput};
use engram_server::resp::Decoder;
use engram_server::Limits;
use std::hint::black_box;

/// Decodes every command in `input` as one read, as the connection loop does.
fn decode_all(input: &[u8], limits: &Limits) -> usize {
    let mut decoder = Decoder::default();
    let mut buf = input.to_vec();
    let mut n = 0;
    while let Ok(Some(args)) = decoder.next(&mut buf, limits, true) {
        n += args.len();
    }
    n
}

fn benches(c: &mut Criterion) {
    let limits = Limits::default();
    let mut g = c.benchmark_group("resp_decode");
    g.throughput(Throughput::Elements(16));
    let multibulk = b"*1\r\n$4\r\nPING\r\n".repeat(16);
    g.bench_function("ping_multibulk_x16", |b| b.iter(|| black_box(decode_all(black_box(&multibulk), &limits))));
    let inline = b"PING\r\n".repeat(16);
    g.bench_function("ping_inline_x16", |b| b.iter(|| black_box(decode_all(black_box(&inline), &limits))));
    g.throughput(Throughput::Elements(1));
    let query = b"*4\r\n$11\r\nGRAPH.QUERY\r\n$6\r\nsocial\r\n$72\r\nCYPHER s=\"e42\" MATCH (a {id: $s})-[:KNOWS]->(b) RETURN count(DISTINCT b)\r\n$9\r\n--compact\r\n";
    g.bench_function("graph_query", |b| b.iter(|| black_box(decode_all(black_box(query), &limits))));
    g.finish();
}

#[allow(missing_docs)] // Reason: criterion_group! generates an undocumented public fn.
mod group {
    criterion::criterion_group!(resp, super::benches);
}
criterion_main!(group::resp);
