//! Criterion benches of the core operations on a seeded random graph (100k entities, 500k claims):
//! batch commit, neighbours, 2-hop expansion, transitive closure.

use criterion::{criterion_main, BatchSize, Criterion};
use engram::{AddClaim, EntityId, KHopQuery, NeighborQuery, Visibility, WriteBatch};
use engram_bench::random_graph;
use std::hint::black_box;

const ENTITIES: usize = 100_000;
const CLAIMS: usize = 500_000;
const CONCEPTS: usize = 5_000;

fn benches(c: &mut Criterion) {
    let db = random_graph(ENTITIES, CLAIMS, CONCEPTS, 42);
    let seeds: Vec<EntityId> = (0..1000).map(|i| EntityId((i * 97 + 13) % ENTITIES as u32)).collect();

    let mut i = 0u64;
    c.bench_function("commit_one_claim", |b| {
        b.iter(|| {
            i += 1;
            let mut batch = WriteBatch::new("default");
            batch.add_claim(AddClaim::new(EntityId((i % 1000) as u32), "mentions", EntityId(((i * 7) % 1000) as u32)));
            black_box(db.write(&batch).expect("valid"));
        });
    });
    c.bench_function("commit_100_claims", |b| {
        b.iter_batched(
            || {
                let mut batch = WriteBatch::new("default");
                for j in 0..100u32 {
                    batch.add_claim(AddClaim::new(EntityId(j), "mentions", EntityId(j + 1)));
                }
                batch
            },
            |batch| black_box(db.write(&batch).expect("valid")),
            BatchSize::SmallInput,
        );
    });
    db.compact();

    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("default exists");
    let mut k = 0;
    c.bench_function("neighbors_both", |b| {
        b.iter(|| {
            k = (k + 1) % seeds.len();
            black_box(ws.neighbors(seeds[k], &NeighborQuery::default()).expect("valid").items.len())
        });
    });
    c.bench_function("khop_2", |b| {
        b.iter(|| {
            k = (k + 1) % seeds.len();
            black_box(ws.khop(&seeds[k..=k], &KHopQuery::depth(2)).expect("valid").entities.len())
        });
    });
    c.bench_function("khop_2_sequential", |b| {
        b.iter(|| {
            k = (k + 1) % seeds.len();
            let q = KHopQuery { parallel: false, ..KHopQuery::depth(2) };
            black_box(ws.khop(&seeds[k..=k], &q).expect("valid").entities.len())
        });
    });
    let leaves: Vec<EntityId> = (0..100).map(|i| EntityId(CONCEPTS as u32 - 1 - i)).collect();
    c.bench_function("ancestors", |b| {
        b.iter(|| {
            k = (k + 1) % leaves.len();
            black_box(ws.ancestors(leaves[k], "subclass_of", &Visibility::default()).expect("transitive").len())
        });
    });
    c.bench_function("descendants_of_root", |b| {
        b.iter(|| black_box(ws.descendants(EntityId(0), "subclass_of", &Visibility::default()).expect("transitive").len()));
    });

    // The same questions in the query language (cached plans; parameters built outside the loop).
    let params_of = |ids: &[EntityId]| -> Vec<engram::Params> {
        ids.iter()
            .map(|e| {
                engram::Params::from([("s".to_owned(), engram::QueryValue::String(ws.entity_ext_id(*e).unwrap_or_default().to_owned()))])
            })
            .collect()
    };
    let seed_params = params_of(&seeds);
    let leaf_params = params_of(&leaves);
    c.bench_function("query_one_hop_count", |b| {
        b.iter(|| {
            k = (k + 1) % seed_params.len();
            black_box(ws.query("MATCH (a {id: $s})-[r]-() RETURN count(r)", &seed_params[k]).expect("runs").rows.len())
        });
    });
    c.bench_function("query_ancestors_count", |b| {
        b.iter(|| {
            k = (k + 1) % leaf_params.len();
            black_box(
                ws.query("MATCH (c {id: $s})-[:SUBCLASS_OF*]->(a) RETURN count(DISTINCT a)", &leaf_params[k]).expect("runs").rows.len(),
            )
        });
    });
    c.bench_function("query_return_constant", |b| {
        b.iter(|| black_box(ws.query("RETURN 1 AS x", &engram::Params::new()).expect("runs").rows.len()));
    });
    c.bench_function("query_parse_plan", |b| {
        b.iter(|| black_box(engram::exec::prepare("MATCH (a {id: $s})-[*1..2]-(b) WHERE b <> a RETURN count(DISTINCT b)").is_ok()));
    });
}

/// Writes in the language against the same writes as one batch, each on its own fresh in-memory
/// database: 1,000 labelled nodes with a property.
fn write_benches(c: &mut Criterion) {
    let fresh = || engram::Database::in_memory();
    c.bench_function("write_batch_1k_nodes", |b| {
        b.iter_batched(
            fresh,
            |db| {
                let mut batch = WriteBatch::new("default");
                for i in 0..1000i64 {
                    let properties = engram::Properties::from([(std::sync::Arc::from("i"), engram::Value::Int(i))]);
                    batch.push(engram::Op::CreateNode(engram::CreateNode { ext_id: None, labels: vec!["N".to_owned()], properties }));
                }
                black_box(db.write(&batch).expect("valid"))
            },
            BatchSize::LargeInput,
        );
    });
    c.bench_function("query_create_1k_nodes", |b| {
        b.iter_batched(
            fresh,
            |db| black_box(db.query("default", "UNWIND range(0, 999) AS i CREATE (:N {i: i})", &engram::Params::new()).expect("runs")),
            BatchSize::LargeInput,
        );
    });
    // The same under `UNIQUE (:N {i})` and `(:N {i}) NOT NULL`: each new node checked when the
    // query ends (one property-index lookup for the uniqueness).
    let constrained = || {
        let db = engram::Database::in_memory();
        for c in ["CREATE CONSTRAINT FOR (n:N) REQUIRE n.i IS UNIQUE", "CREATE CONSTRAINT FOR (n:N) REQUIRE n.i IS NOT NULL"] {
            db.query("default", c, &engram::Params::new()).expect("declares");
        }
        db
    };
    c.bench_function("query_create_1k_nodes_constrained", |b| {
        b.iter_batched(
            constrained,
            |db| black_box(db.query("default", "UNWIND range(0, 999) AS i CREATE (:N {i: i})", &engram::Params::new()).expect("runs")),
            BatchSize::LargeInput,
        );
    });
}

/// Each of `items` in turn, round and round (the inputs of a bench's iterations).
fn cycle<'a, T>(items: &'a [T]) -> impl FnMut() -> &'a T {
    let mut at = 0;
    move || {
        at = (at + 1) % items.len();
        &items[at]
    }
}

/// A node by a stored property among 100,000 of its label (Graphiti's `{uuid: $uuid}`): the
/// property index's lookup, the scan it replaces (a form the index does not answer), a MERGE
/// that finds the node, and ten nodes by a list of values or a range.
fn property_benches(c: &mut Criterion) {
    let db = engram::Database::in_memory();
    db.query(
        "default",
        "UNWIND range(0, 99999) AS i CREATE (:Entity {uuid: 'u' + toString(i), i: i, group_id: 'g' + toString(i % 10)})",
        &engram::Params::new(),
    )
    .expect("load");
    let params: Vec<engram::Params> =
        (0..1000).map(|i| engram::Params::from([("u".to_owned(), engram::QueryValue::String(format!("u{}", i * 97 % 100_000)))])).collect();
    let mut next = cycle(&params);
    c.bench_function("query_lookup_by_property", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Entity {uuid: $u}) RETURN n.i", next()).expect("runs")));
    });
    c.bench_function("query_scan_by_property", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Entity) WHERE coalesce(n.uuid, 0) = $u RETURN n.i", next()).expect("runs")));
    });
    c.bench_function("query_merge_existing_by_property", |b| {
        b.iter(|| black_box(db.query("default", "MERGE (n:Entity {uuid: $u}) RETURN n.i", next()).expect("runs")));
    });
    // Ten values at once (Graphiti's `WHERE n.uuid IN $uuids`).
    let lists: Vec<engram::Params> = (0..100)
        .map(|i| {
            let us = (0..10).map(|j| engram::QueryValue::String(format!("u{}", (i * 10 + j) * 97 % 100_000))).collect();
            engram::Params::from([("us".to_owned(), engram::QueryValue::List(us))])
        })
        .collect();
    let mut next = cycle(&lists);
    c.bench_function("query_lookup_in_by_property", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Entity) WHERE n.uuid IN $us RETURN n.i", next()).expect("runs")));
    });
    c.bench_function("query_scan_in_by_property", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Entity) WHERE coalesce(n.uuid, 0) IN $us RETURN n.i", next()).expect("runs")));
    });
    // Ten nodes by a range of values (`WHERE n.valid_at >= $from AND n.valid_at < $to`).
    let ranges: Vec<engram::Params> = (0..100i64)
        .map(|i| {
            let lo = i * 997 % 99_990;
            engram::Params::from([("lo".to_owned(), engram::QueryValue::Int(lo)), ("hi".to_owned(), engram::QueryValue::Int(lo + 10))])
        })
        .collect();
    let mut next = cycle(&ranges);
    c.bench_function("query_range_by_property", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Entity) WHERE n.i >= $lo AND n.i < $hi RETURN n.i", next()).expect("runs")));
    });
    c.bench_function("query_scan_range_by_property", |b| {
        let q = "MATCH (n:Entity) WHERE coalesce(n.i, 0) >= $lo AND coalesce(n.i, 0) < $hi RETURN n.i";
        b.iter(|| black_box(db.query("default", q, next()).expect("runs")));
    });
    ordered_benches(c, &db);
    choice_benches(c, &db);
}

/// Reads in the property index's order (`property_benches`' nodes).
fn ordered_benches(c: &mut Criterion, db: &engram::Database) {
    // The ten latest of a group before a cursor (Graphiti's previous episodes, keyset paging):
    // read in the index's order until ten pass; sorted by `n.i + 0`, the same rows come from
    // every node of the range, then a top-10 (what it cost before).
    let cursors: Vec<engram::Params> = (0..100i64)
        .map(|i| {
            let before = 50_000 + i * 4_999 % 50_000;
            engram::Params::from([
                ("before".to_owned(), engram::QueryValue::Int(before)),
                ("g".to_owned(), engram::QueryValue::String(format!("g{}", i % 10))),
            ])
        })
        .collect();
    let mut next = cycle(&cursors);
    c.bench_function("query_order_by_range_limit", |b| {
        let q = "MATCH (n:Entity) WHERE n.i < $before AND n.group_id = $g RETURN n.uuid ORDER BY n.i DESC LIMIT 10";
        b.iter(|| black_box(db.query("default", q, next()).expect("runs")));
    });
    c.bench_function("query_order_by_range_limit_sorted", |b| {
        let q = "MATCH (n:Entity) WHERE n.i < $before AND n.group_id = $g RETURN n.uuid ORDER BY n.i + 0 DESC LIMIT 10";
        b.iter(|| black_box(db.query("default", q, next()).expect("runs")));
    });
    // Graphiti's own form, the group by `IN`: its lookup (10,000 nodes) gave way to the range in
    // order; sorted by `n.i + 0`, the lookup and a top-10 (what it cost before).
    let in_groups: Vec<engram::Params> = cursors
        .iter()
        .map(|p| {
            let mut p = p.clone();
            let g = p.remove("g").unwrap_or(engram::QueryValue::Null);
            p.insert("gs".to_owned(), engram::QueryValue::List(vec![g]));
            p
        })
        .collect();
    let mut next = cycle(&in_groups);
    c.bench_function("query_order_by_range_limit_in_group", |b| {
        let q = "MATCH (n:Entity) WHERE n.i < $before AND n.group_id IN $gs RETURN n.uuid ORDER BY n.i DESC LIMIT 10";
        b.iter(|| black_box(db.query("default", q, next()).expect("runs")));
    });
    c.bench_function("query_order_by_range_limit_in_group_sorted", |b| {
        let q = "MATCH (n:Entity) WHERE n.i < $before AND n.group_id IN $gs RETURN n.uuid ORDER BY n.i + 0 DESC LIMIT 10";
        b.iter(|| black_box(db.query("default", q, next()).expect("runs")));
    });
}

/// Which index a seek reads (`property_benches`' nodes).
fn choice_benches(c: &mut Criterion, db: &engram::Database) {
    // A label's nodes counted: without a row each; with a filter that keeps every node, a row
    // each (what it cost before).
    let none = engram::Params::new();
    c.bench_function("query_count_label", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Entity) RETURN count(n)", &none).expect("runs")));
    });
    c.bench_function("query_count_label_rows", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Entity) WHERE n IS NOT NULL RETURN count(n)", &none).expect("runs")));
    });
    // A node by its group and uuid, the group first in the pattern: the uuid's index counts one
    // candidate, the group's 10,000; read by the group (the uuid compared by `coalesce`), what it
    // cost when a seek took the first equality.
    let pairs: Vec<engram::Params> = (0..100i64)
        .map(|i| {
            let u = i * 997 % 100_000;
            engram::Params::from([
                ("g".to_owned(), engram::QueryValue::String(format!("g{}", u % 10))),
                ("u".to_owned(), engram::QueryValue::String(format!("u{u}"))),
            ])
        })
        .collect();
    let mut next = cycle(&pairs);
    c.bench_function("query_equalities_fewest_first", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Entity {group_id: $g, uuid: $u}) RETURN n.i", next()).expect("runs")));
    });
    c.bench_function("query_equalities_first_listed", |b| {
        let q = "MATCH (n:Entity {group_id: $g}) WHERE coalesce(n.uuid, 0) = $u RETURN n.i";
        b.iter(|| black_box(db.query("default", q, next()).expect("runs")));
    });
    // A group's nodes past a low bound (90,000 of the range, 9,000 of them the group's): read by
    // the group; by the range (the group compared by `coalesce`), what a range seek read before.
    let since: Vec<engram::Params> = (0..100i64)
        .map(|i| {
            engram::Params::from([
                ("lo".to_owned(), engram::QueryValue::Int(10_000 + i)),
                ("g".to_owned(), engram::QueryValue::String(format!("g{}", i % 10))),
            ])
        })
        .collect();
    let mut next = cycle(&since);
    c.bench_function("query_equality_beside_range", |b| {
        b.iter(|| {
            black_box(db.query("default", "MATCH (n:Entity) WHERE n.group_id = $g AND n.i >= $lo RETURN count(n)", next()).expect("runs"))
        });
    });
    c.bench_function("query_equality_beside_range_read_by_range", |b| {
        let q = "MATCH (n:Entity) WHERE coalesce(n.group_id, 0) = $g AND n.i >= $lo RETURN count(n)";
        b.iter(|| black_box(db.query("default", q, next()).expect("runs")));
    });
}

/// A pattern predicate on a node with 100,000 relationships: `WHERE (n)-->()` stops at the first
/// match; `COUNT { … } >= 1` (the same answer) lists them all, what the predicate cost before.
fn predicate_benches(c: &mut Criterion) {
    let db = engram::Database::in_memory();
    db.query("default", "CREATE (h:Hub) WITH h UNWIND range(1, 100000) AS i CREATE (h)-[:R]->(:Leaf {i: i})", &engram::Params::new())
        .expect("load");
    let none = engram::Params::new();
    c.bench_function("query_pattern_predicate_on_a_hub", |b| {
        b.iter(|| black_box(db.query("default", "MATCH (n:Hub) WHERE (n)-[:R]->(:Leaf) RETURN count(n)", &none).expect("runs")));
    });
    c.bench_function("query_pattern_count_on_a_hub", |b| {
        b.iter(|| {
            black_box(db.query("default", "MATCH (n:Hub) WHERE COUNT { (n)-[:R]->(:Leaf) } >= 1 RETURN count(n)", &none).expect("runs"))
        });
    });
}

#[allow(missing_docs)] // Reason: criterion_group! generates an undocumented public fn.
mod group {
    criterion::criterion_group!(core, super::benches, super::write_benches, super::property_benches, super::predicate_benches);
}
criterion_main!(group::core);
