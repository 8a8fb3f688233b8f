//! The side-by-side workloads harness (`../shared/workloads/README.md`): loads the generated CSV
//! files through engram's public bulk-load API and runs W1 (one hop), W2 (two hops), W3 (ancestors
//! and descendants), W4 (recency), W5 (vectors, per scan mode) and W6 (load), printing one JSON
//! line per workload.
//!
//! `cargo run --release -p engram-bench --bin workloads -- --data DIR [--workloads W1,W2,W3,W4,W5,W6]`

mod load;
mod vectors;

/// The harness runs on mimalloc: it keeps freed memory for reuse, where glibc's allocator hands
/// large blocks back to the kernel and the next allocation pays for zeroed pages again. The engine
/// itself imposes no allocator; embedding programs choose theirs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use engram::{Database, Direction, EntityId, Expander, KHopQuery, NeighborQuery, Timestamp, VectorMode, VectorOptions, Visibility};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Instant;

/// Command-line arguments.
#[derive(Parser, Debug)]
#[command(about = "Run the reference workloads against engram")]
struct Args {
    /// Folder written by `gen.py` (entities.csv, claims.csv, queries.json, ...).
    #[arg(long)]
    data: PathBuf,
    /// Comma-separated workloads to run: W1, W2, W3, W4, W5, W6, RECALL (hybrid recall, not
    /// one of the reference workloads) and QUERY (W1–W3 written in the query language, beside
    /// the direct calls, and the cost of parsing and planning) (default: all of them).
    #[arg(long, value_delimiter = ',', default_value = "W1,W2,W3,W4,W5,W6,RECALL,QUERY")]
    workloads: Vec<String>,
    /// W5: how many of the queries get a scalar brute-force answer to measure recall@10 against.
    #[arg(long, default_value_t = 100)]
    recall_queries: usize,
}

/// Linear-interpolated percentile, the floor's definition.
fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = p * (sorted.len() - 1) as f64;
    let lo = i.floor() as usize;
    let f = i - lo as f64;
    if lo + 1 < sorted.len() {
        sorted[lo] * (1.0 - f) + sorted[lo + 1] * f
    } else {
        sorted[lo]
    }
}

/// Runs `query` once per input, timing each call, and prints the workload's JSON line.
/// W2 written on the expand iterator, as a query executor would run it: a visited bitset and two
/// buffers kept across queries, cleared by the entities touched.
struct TwoHop {
    seen: Vec<u64>,
    touched: Vec<u32>,
    frontier: Vec<EntityId>,
}

impl TwoHop {
    fn mark(&mut self, e: EntityId) -> bool {
        let (w, bit) = ((e.0 >> 6) as usize, 1u64 << (e.0 & 63));
        let new = self.seen[w] & bit == 0;
        if new {
            self.seen[w] |= bit;
            self.touched.push(e.0);
        }
        new
    }

    /// Distinct entities within two hops of `seed`, the seed left out.
    fn count(&mut self, ex: &Expander<'_>, seed: EntityId) -> usize {
        self.mark(seed);
        ex.edges(seed).for_each(|edge| {
            if self.mark(edge.neighbor) {
                self.frontier.push(edge.neighbor);
            }
        });
        for i in 0..self.frontier.len() {
            ex.edges(self.frontier[i]).for_each(|edge| {
                self.mark(edge.neighbor);
            });
        }
        let n = self.touched.len() - 1;
        for &e in &self.touched {
            self.seen[(e >> 6) as usize] = 0;
        }
        self.touched.clear();
        self.frontier.clear();
        n
    }
}

fn run(scale: &str, workload: &str, inputs: &[u32], query: impl FnMut(u32) -> usize) {
    println!("{}", measure(scale, workload, inputs, query));
}

/// How many times (at least) `run_rounds` times each line.
const ROUNDS: usize = 5;

/// A call to time: its workload's name, its inputs, the call.
type Timed<'a> = (&'a str, &'a [u32], &'a mut dyn FnMut(u32) -> usize);

/// Times each line `ROUNDS` times, taking turns (a round runs every line once), and prints each
/// from its round with the lowest p50. Each round starts one line further on, so no line always
/// runs right after the same other: on W1 a line measured up to 0.15 µs slower there than last.
fn run_rounds(scale: &str, lines: &mut [Timed<'_>]) {
    let mut best: Vec<Option<Value>> = vec![None; lines.len()];
    let n = lines.len().max(1);
    // A whole number of turns of the starting line: each line starts equally often.
    for round in 0..ROUNDS.div_ceil(n) * n {
        for at in 0..n {
            let i = (round + at) % n;
            let (name, inputs, call) = &mut lines[i];
            let best = &mut best[i];
            let m = measure(scale, name, inputs, call);
            if best.as_ref().is_none_or(|b| b["p50_us"].as_f64() > m["p50_us"].as_f64()) {
                *best = Some(m);
            }
        }
    }
    for line in best.into_iter().flatten() {
        println!("{line}");
    }
}

/// Runs `query` once per input, timing each call: the workload's JSON line.
fn measure(scale: &str, workload: &str, inputs: &[u32], mut query: impl FnMut(u32) -> usize) -> Value {
    measure_after(scale, workload, inputs, |_| (), |x, ()| query(x))
}

/// `measure` with `before(x)` run ahead of each call, untimed (what puts the caches in the
/// state the timed call should find).
fn measure_after<B>(
    scale: &str,
    workload: &str,
    inputs: &[u32],
    mut before: impl FnMut(u32) -> B,
    mut query: impl FnMut(u32, B) -> usize,
) -> Value {
    let mut lat = Vec::with_capacity(inputs.len());
    let mut rows = Vec::with_capacity(inputs.len());
    let t0 = Instant::now();
    for &x in inputs {
        let b = before(x);
        let t = Instant::now();
        let r = query(x, b);
        lat.push(t.elapsed().as_secs_f64() * 1e6);
        rows.push(r as f64);
    }
    let total = t0.elapsed().as_secs_f64();
    lat.sort_by(f64::total_cmp);
    let result_rows: f64 = rows.iter().sum();
    rows.sort_by(f64::total_cmp);
    json!({
        "peer": "engram", "scale": scale, "workload": workload, "n": inputs.len(), "of": inputs.len(),
        "p50_us": (pct(&lat, 0.5) * 100.0).round() / 100.0, "p95_us": (pct(&lat, 0.95) * 100.0).round() / 100.0,
        "p99_us": (pct(&lat, 0.99) * 100.0).round() / 100.0, "total_s": (total * 1e4).round() / 1e4,
        "result_rows": result_rows as u64, "rows_p50": pct(&rows, 0.5), "rows_p95": pct(&rows, 0.95),
        "rows_max": rows.last().copied().unwrap_or(0.0) as u64,
    })
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

fn ids(q: &Value, key: &str) -> Result<Vec<u32>, String> {
    q[key]
        .as_array()
        .ok_or_else(|| format!("queries.json: `{key}` is missing or not an array"))?
        .iter()
        .map(|v| v.as_u64().and_then(|x| u32::try_from(x).ok()).ok_or_else(|| format!("queries.json: `{key}` holds a non-id")))
        .collect()
}

/// The language's texts for W1–W3: totals equal the reference workloads' (W1 counts claims).
const Q_W1: &str = "MATCH (a {id: $s})-[r]-() RETURN count(r)";
const Q_W2: &str = "MATCH (a {id: $s})-[*1..2]-(b) WHERE b <> a RETURN count(DISTINCT b)";
const Q_W3_UP: &str = "MATCH (c {id: $s})-[:SUBCLASS_OF*]->(a) RETURN count(DISTINCT a)";
/// W1 and W3 ancestors given the internal id (`id(n)`), as the plain direct calls are.
const Q_W1_ID: &str = "MATCH (a)-[r]-() WHERE id(a) = $i RETURN count(r)";
const Q_W3_UP_ID: &str = "MATCH (c)-[:SUBCLASS_OF*]->(a) WHERE id(c) = $i RETURN count(DISTINCT a)";
const Q_W3_DOWN: &str = "MATCH (c {id: $s})<-[:SUBCLASS_OF*]-(d) RETURN count(DISTINCT d)";
/// W1 returning what it found, each claim and the entity at its other end, as a result shows them
/// (type, ends and properties; labels and properties).
const Q_W1_ROWS: &str = "MATCH (a {id: $s})-[r]-(b) RETURN r, b";

/// W1 with its rows materialized: each claim's and its neighbour's record through the direct
/// API (given the external id, as the query is), against the query returning them.
fn w1_rows(ws: &engram::WorkspaceView<'_>, scale: &str, seed_params: &[engram::Params]) {
    let nq = NeighborQuery::default();
    let records = |p: &engram::Params| {
        let Some(engram::QueryValue::String(s)) = p.get("s") else { return 0 };
        ws.entity_id(s)
            .and_then(|e| ws.neighbors(e, &nq).ok())
            .map_or(0, |page| page.items.iter().filter(|n| ws.claim(n.claim).is_some() && ws.entity(n.neighbor).is_some()).count())
    };
    let rows = |p: &engram::Params| ws.query(Q_W1_ROWS, p).map_or(0, |r| r.rows.len());
    let index: Vec<u32> = (0..seed_params.len() as u32).collect();
    run_rounds(
        scale,
        &mut [
            ("W1_one_hop_records", &index, &mut |i| records(&seed_params[i as usize])),
            ("W1_one_hop_query_rows", &index, &mut |i| rows(&seed_params[i as usize])),
        ],
    );
}

/// The external-id lookup W2's query starts with, as it finds the caches: right after another
/// seed's two-hop walk (untimed), which evicts what the last lookup loaded. The best of
/// `ROUNDS` rounds, as `run_rounds` reports.
fn cold_lookups(ws: &engram::WorkspaceView<'_>, scale: &str, seeds: &[u32], first: u32, seed_params: &[engram::Params]) {
    let kq = KHopQuery::depth(2);
    let index: Vec<u32> = (0..seeds.len() as u32).collect();
    let walk = |i: u32| {
        let other = seeds[(i as usize + seeds.len() / 2) % seeds.len()];
        std::hint::black_box(ws.khop(&[EntityId(first + other)], &kq).map_or(0, |r| r.entities.len()));
    };
    let lookup = |i: u32, ()| match seed_params[i as usize].get("s") {
        Some(engram::QueryValue::String(s)) => usize::from(ws.entity_id(s).is_some()),
        _ => 0,
    };
    let best = (0..ROUNDS)
        .map(|_| measure_after(scale, "LOOKUP_ext_id_after_walk", &index, walk, lookup))
        .min_by(|a, b| a["p50_us"].as_f64().partial_cmp(&b["p50_us"].as_f64()).unwrap_or(std::cmp::Ordering::Equal));
    if let Some(line) = best {
        println!("{line}");
    }
}

/// A label scan with a WHERE equality and no index (`MATCH (n:concept) WHERE n.name = $n`, 50,000
/// concepts at M), against the direct API doing the same: the type's entities, each name compared.
fn scan_where(ws: &engram::WorkspaceView<'_>, scale: &str, concepts: &[u32], first: u32) {
    let names: Vec<String> =
        concepts.iter().take(100).map(|&s| ws.entity_name(EntityId(first + s)).unwrap_or_default().to_owned()).collect();
    let params: Vec<engram::Params> =
        names.iter().map(|n| engram::Params::from([("n".to_owned(), engram::QueryValue::String(n.clone()))])).collect();
    let index: Vec<u32> = (0..names.len() as u32).collect();
    let direct = |name: &str| ws.entities_of_type("concept").into_iter().filter(|&e| ws.entity_name(e) == Some(name)).count();
    let query = |p: &engram::Params| match ws.query("MATCH (n:concept) WHERE n.name = $n RETURN count(n)", p) {
        Ok(r) => match r.rows.first().and_then(|row| row.first()) {
            Some(engram::QueryValue::Int(n)) => usize::try_from(*n).unwrap_or(0),
            _ => 0,
        },
        Err(_) => 0,
    };
    run_rounds(
        scale,
        &mut [
            ("SCAN_where_name_direct", &index, &mut |i| direct(&names[i as usize])),
            ("SCAN_where_name_query", &index, &mut |i| query(&params[i as usize])),
        ],
    );
}

/// Shortest paths between pairs of seeds (seed i to seed i + 1, undirected, at most 6 hops):
/// `shortestPath` in the language against the engine's own `shortest_path`, both given the
/// dense ids (lengths must agree), `allShortestPaths` (the paths counted) and `algo.SPpaths`
/// without weights (lengths must agree again).
fn shortest_paths(ws: &engram::WorkspaceView<'_>, scale: &str, seeds: &[u32], first: u32) {
    let pairs: Vec<(u32, u32)> = seeds.windows(2).take(30).map(|w| (first + w[0], first + w[1])).collect();
    let params: Vec<engram::Params> = pairs
        .iter()
        .map(|(a, b)| {
            engram::Params::from([
                ("a".to_owned(), engram::QueryValue::Int(i64::from(*a))),
                ("b".to_owned(), engram::QueryValue::Int(i64::from(*b))),
            ])
        })
        .collect();
    let v = Visibility::default();
    let filter = engram::EdgeFilter::new(Direction::Both);
    let direct = |i: usize| {
        let (a, b) = pairs[i];
        ws.shortest_path(EntityId(a), EntityId(b), &filter, &v).ok().flatten().map_or(0, |p| p.len())
    };
    let text = "MATCH (a), (b) WHERE id(a) = $a AND id(b) = $b MATCH p = shortestPath((a)-[*..6]-(b)) RETURN length(p)";
    let query = |i: usize| match ws.query(text, &params[i]) {
        Ok(r) => match r.rows.first().and_then(|row| row.first()) {
            Some(engram::QueryValue::Int(n)) => usize::try_from(*n).unwrap_or(0) + 1,
            _ => 0,
        },
        Err(_) => 0,
    };
    // Every shortest path of each pair (the total counts the paths).
    let all_text = "MATCH (a), (b) WHERE id(a) = $a AND id(b) = $b MATCH p = allShortestPaths((a)-[*..6]-(b)) RETURN count(p)";
    let all = |i: usize| match ws.query(all_text, &params[i]) {
        Ok(r) => match r.rows.first().and_then(|row| row.first()) {
            Some(engram::QueryValue::Int(n)) => usize::try_from(*n).unwrap_or(0),
            _ => 0,
        },
        Err(_) => 0,
    };
    // The lightest path by `algo.SPpaths` with no weight (each relationship weighs 1): the
    // same lengths as `shortestPath`.
    let sp_text = "MATCH (a), (b) WHERE id(a) = $a AND id(b) = $b \
                   CALL algo.SPpaths({sourceNode: a, targetNode: b, relDirection: 'both', maxLen: 6}) YIELD path RETURN length(path)";
    let lightest = |i: usize| match ws.query(sp_text, &params[i]) {
        Ok(r) => match r.rows.first().and_then(|row| row.first()) {
            Some(engram::QueryValue::Int(n)) => usize::try_from(*n).unwrap_or(0) + 1,
            _ => 0,
        },
        Err(_) => 0,
    };
    let index: Vec<u32> = (0..pairs.len() as u32).collect();
    run_rounds(
        scale,
        &mut [
            ("SHORTEST_path_direct", &index, &mut |i| direct(i as usize)),
            ("SHORTEST_path_query", &index, &mut |i| query(i as usize)),
            ("SHORTEST_all_paths_query", &index, &mut |i| all(i as usize)),
            ("SHORTEST_sppaths_query", &index, &mut |i| lightest(i as usize)),
        ],
    );
}

/// W1–W3 in the query language, each right after its direct call on the same inputs, and the
/// cost of an uncached parse + plan and of a plan-cache hit.
fn query_workloads(ws: &engram::WorkspaceView<'_>, scale: &str, first: u32, q: &Value) -> Result<(), String> {
    let params_of = |inputs: &[u32]| -> Vec<engram::Params> {
        inputs
            .iter()
            .map(|&i| {
                let ext = ws.entity_ext_id(EntityId(first + i)).unwrap_or_default().to_owned();
                engram::Params::from([("s".to_owned(), engram::QueryValue::String(ext))])
            })
            .collect()
    };
    // The count a query returns in its one cell (0 on an error).
    let counted = |r: Option<engram::QueryResult>| -> usize {
        match r.as_ref().and_then(|r| r.rows.first()).and_then(|row| row.first()) {
            Some(engram::QueryValue::Int(n)) => usize::try_from(*n).unwrap_or(0),
            _ => 0,
        }
    };
    let count = |text: &str, p: &engram::Params| counted(ws.query(text, p).ok());
    // The same with the parameters bound ahead in the engine's own values (`Bindings`).
    let bound_of = |params: &[engram::Params]| -> Vec<engram::Bindings> {
        params
            .iter()
            .map(|p| {
                let mut b = engram::Bindings::new();
                if let Some(engram::QueryValue::String(s)) = p.get("s") {
                    b.set_str("s", s);
                }
                b
            })
            .collect()
    };
    let count_bound = |text: &str, b: &engram::Bindings| counted(ws.query_bound(text, b).ok());
    // The internal ids, as `id(n)` gives them.
    let internal_of = |inputs: &[u32]| -> Vec<engram::Params> {
        inputs.iter().map(|&i| engram::Params::from([("i".to_owned(), engram::QueryValue::Int(i64::from(first + i)))])).collect()
    };
    let seeds = ids(q, "seeds")?;
    let seed_params = params_of(&seeds);
    let seed_internal = internal_of(&seeds);
    let seed_bound = bound_of(&seed_params);
    let index: Vec<u32> = (0..seeds.len() as u32).collect();
    // The direct call given what the query is given (the external id): resolving it is part of
    // both, so this is the like-for-like reference; the plain direct lines take the internal id.
    let ext = |p: &engram::Params| match p.get("s") {
        Some(engram::QueryValue::String(s)) => ws.entity_id(s),
        _ => None,
    };
    let nq = NeighborQuery::default();
    run_rounds(
        scale,
        &mut [
            ("W1_one_hop", &seeds, &mut |s| ws.neighbors(EntityId(first + s), &nq).map_or(0, |p| p.items.len())),
            ("W1_one_hop_query", &index, &mut |i| count(Q_W1, &seed_params[i as usize])),
            ("W1_one_hop_query_bound", &index, &mut |i| count_bound(Q_W1, &seed_bound[i as usize])),
            ("W1_one_hop_query_by_internal_id", &index, &mut |i| count(Q_W1_ID, &seed_internal[i as usize])),
            ("W1_one_hop_by_ext_id", &index, &mut |i| {
                ext(&seed_params[i as usize]).map_or(0, |e| ws.neighbors(e, &nq).map_or(0, |p| p.items.len()))
            }),
        ],
    );
    w1_rows(ws, scale, &seed_params);
    cold_lookups(ws, scale, &seeds, first, &seed_params);
    shortest_paths(ws, scale, &seeds, first);
    let kq = KHopQuery::depth(2);
    run_rounds(
        scale,
        &mut [
            ("W2_two_hop", &seeds, &mut |s| ws.khop(&[EntityId(first + s)], &kq).map_or(0, |r| r.entities.len() - 1)),
            ("W2_two_hop_query", &index, &mut |i| count(Q_W2, &seed_params[i as usize])),
        ],
    );
    let v = Visibility::default();
    let concepts = ids(q, "w3_concepts")?;
    let concept_params = params_of(&concepts);
    let concept_bound = bound_of(&concept_params);
    let concept_internal = internal_of(&concepts);
    scan_where(ws, scale, &concepts, first);
    let index: Vec<u32> = (0..concepts.len() as u32).collect();
    run_rounds(
        scale,
        &mut [
            ("W3_ancestors", &concepts, &mut |c| ws.ancestors(EntityId(first + c), "SUBCLASS_OF", &v).map_or(0, |r| r.len())),
            ("W3_ancestors_query", &index, &mut |i| count(Q_W3_UP, &concept_params[i as usize])),
            ("W3_ancestors_query_bound", &index, &mut |i| count_bound(Q_W3_UP, &concept_bound[i as usize])),
            ("W3_ancestors_query_by_internal_id", &index, &mut |i| count(Q_W3_UP_ID, &concept_internal[i as usize])),
            ("W3_ancestors_by_ext_id", &index, &mut |i| {
                ext(&concept_params[i as usize]).map_or(0, |e| ws.ancestors(e, "SUBCLASS_OF", &v).map_or(0, |r| r.len()))
            }),
        ],
    );
    let upper = ids(q, "w3_upper")?;
    let upper_params = params_of(&upper);
    let index: Vec<u32> = (0..upper.len() as u32).collect();
    run_rounds(
        scale,
        &mut [
            ("W3_descendants", &upper, &mut |c| ws.descendants(EntityId(first + c), "SUBCLASS_OF", &v).map_or(0, |r| r.len())),
            ("W3_descendants_query", &index, &mut |i| count(Q_W3_DOWN, &upper_params[i as usize])),
        ],
    );
    // Parse + check + plan without the cache, and a cache hit, over the four texts.
    let texts = [Q_W1, Q_W2, Q_W3_UP, Q_W3_DOWN];
    let rounds: Vec<u32> = (0..1000).collect();
    run(scale, "QUERY_parse_plan_uncached", &rounds, |i| usize::from(engram::exec::prepare(texts[i as usize % 4]).is_ok()));
    run(scale, "QUERY_plan_cache_hit", &rounds, |i| usize::from(engram::exec::cached_plan(texts[i as usize % 4]).is_ok()));
    Ok(())
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let wanted = |w: &str| args.workloads.iter().any(|x| x.eq_ignore_ascii_case(w));
    for w in &args.workloads {
        if !["W1", "W2", "W3", "W4", "W5", "W6", "RECALL", "QUERY"].iter().any(|k| k.eq_ignore_ascii_case(w)) {
            return Err(format!("unknown workload `{w}` (this harness runs W1, W2, W3, W4, W5, W6, RECALL, QUERY)"));
        }
    }
    let qtext = std::fs::read_to_string(args.data.join("queries.json"))
        .map_err(|e| format!("{}: {e}", args.data.join("queries.json").display()))?;
    let q: Value = serde_json::from_str(&qtext).map_err(|e| format!("queries.json: {e}"))?;
    let scale = q["scale"].as_str().unwrap_or("?").to_owned();

    let rss0 = rss_mb();
    let t0 = Instant::now();
    let bulk = load::read_dir(&args.data).map_err(|e| e.to_string())?;
    let parse_s = t0.elapsed().as_secs_f64();
    let db = Database::in_memory();
    let info = db.bulk_load_owned(bulk).map_err(|e| e.to_string())?;
    let total_s = t0.elapsed().as_secs_f64();
    // Let the allocator purge what the parse buffers freed (mimalloc decommits freed pages after a
    // short delay, on its next calls), so RSS shows what the database holds.
    for _ in 0..20 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        drop(std::hint::black_box(vec![0u8; 1 << 16]));
    }
    let snap = db.snapshot();
    let mem = snap.memory();
    if wanted("W6") {
        let line = json!({
            "peer": "engram", "scale": scale, "workload": "W6_bulk_load", "n": 1, "of": 1,
            "total_s": (total_s * 1000.0).round() / 1000.0, "parse_csv_s": (parse_s * 1000.0).round() / 1000.0,
            "build_s": ((total_s - parse_s) * 1000.0).round() / 1000.0, "rss_mb": (rss_mb() - rss0).round(),
            "entities": info.entities, "claims": info.claims,
            "bytes_per_claim": (mem.bytes_per_claim() * 10.0).round() / 10.0,
            "bytes_per_entity": (mem.bytes_per_entity() * 10.0).round() / 10.0,
            "text_mb": (mem.text_bytes as f64 / 1_048_576.0).round(),
        });
        println!("{line}");
    }
    let ws = snap.workspace("default").map_err(|e| e.to_string())?;
    let first = info.first_entity.0;
    let seeds = ids(&q, "seeds")?;
    if wanted("W1") {
        let nq = NeighborQuery::default();
        run(&scale, "W1_one_hop", &seeds, |s| ws.neighbors(EntityId(first + s), &nq).map_or(0, |p| p.items.len()));
        // The same on the executor's expand iterator: no page, no sort, no per-edge allocation.
        let ex = ws.expander(Direction::Both, None, &Visibility::default());
        run(&scale, "W1_one_hop_expand", &seeds, |s| ex.edges(EntityId(first + s)).count());
    }
    if wanted("W2") {
        let kq = KHopQuery::depth(2);
        run(&scale, "W2_two_hop", &seeds, |s| ws.khop(&[EntityId(first + s)], &kq).map_or(0, |r| r.entities.len() - 1));
        let ex = ws.expander(Direction::Both, None, &Visibility::default());
        let mut walk = TwoHop { seen: vec![0; snap.counts().0.div_ceil(64)], touched: Vec::new(), frontier: Vec::new() };
        run(&scale, "W2_two_hop_expand", &seeds, |s| walk.count(&ex, EntityId(first + s)));
    }
    if wanted("W3") {
        let v = Visibility::default();
        let concepts = ids(&q, "w3_concepts")?;
        run(&scale, "W3_ancestors", &concepts, |c| ws.ancestors(EntityId(first + c), "SUBCLASS_OF", &v).map_or(0, |r| r.len()));
        let upper = ids(&q, "w3_upper")?;
        run(&scale, "W3_descendants", &upper, |c| ws.descendants(EntityId(first + c), "SUBCLASS_OF", &v).map_or(0, |r| r.len()));
    }
    if wanted("QUERY") {
        query_workloads(&ws, &scale, first, &q)?;
    }
    if wanted("W4") {
        let now = q["now"].as_i64().ok_or("queries.json: `now` is missing")?;
        let days: Vec<u32> = (0..100).collect();
        // The index is built on first use (like a page cache warming); that query is timed apart.
        let t = Instant::now();
        ws.recent_claims(Timestamp::MIN, Timestamp::MAX, 1, &Visibility::default());
        let prepare_s = t.elapsed().as_secs_f64();
        let mut line = measure(&scale, "W4_recency", &days, |i| {
            let until = Timestamp::from_epoch_seconds(now - i64::from(i) * 86_400);
            ws.recent_claims(until.plus_seconds(-7 * 86_400), until, 100, &Visibility::as_of(until)).len()
        });
        line["first_query_s"] = json!((prepare_s * 1000.0).round() / 1000.0);
        println!("{line}");
    }
    drop(snap);
    if wanted("W5") || wanted("RECALL") {
        w5(&db, &args, &q, &scale)?;
    }
    Ok(())
}

fn modes_wanted(args: &Args) -> bool {
    args.workloads.iter().any(|w| w.eq_ignore_ascii_case("W5"))
}

/// W5: one line per scan mode; recall@10 against a scalar brute force on the first queries.
fn w5(db: &Database, args: &Args, q: &Value, scale: &str) -> Result<(), String> {
    let dim = q["dim"].as_u64().unwrap_or(384) as usize;
    let rows = vectors::read_f32(&args.data.join("vectors.f32"), dim)?;
    let queries = vectors::read_f32(&args.data.join("queries.f32"), dim)?;
    let t = Instant::now();
    let want = vectors::reference(&rows, dim, &queries, if modes_wanted(args) { args.recall_queries } else { 0 });
    eprintln!("W5: scalar brute force for {} queries in {:.1} s", want.len(), t.elapsed().as_secs_f64());
    db.set_entity_vectors(dim, rows).map_err(|e| e.to_string())?;
    let snap = db.snapshot();
    let ws = snap.workspace("default").map_err(|e| e.to_string())?;
    let inputs: Vec<u32> = (0..(queries.len() / dim) as u32).collect();
    let modes: &[VectorMode] = if modes_wanted(args) { &[VectorMode::F32, VectorMode::F16, VectorMode::I8] } else { &[] };
    for &mode in modes {
        let opts = VectorOptions { k: 10, mode, ..VectorOptions::default() };
        // The first query builds the mode's quantized copy; it is timed separately.
        let t = Instant::now();
        ws.search_entity_vectors(&queries[..dim], &opts).map_err(|e| e.to_string())?;
        let prepare_s = t.elapsed().as_secs_f64();
        let mut got = Vec::new();
        let mut line = measure(scale, "W5_exact", &inputs, |i| {
            let at = i as usize * dim;
            let hits = ws.search_entity_vectors(&queries[at..at + dim], &opts).unwrap_or_default();
            if (i as usize) < want.len() {
                got.push(hits.iter().map(|(e, _)| e.0).collect::<Vec<u32>>());
            }
            hits.len()
        });
        line["mode"] = json!(mode.as_str());
        line["recall10"] = json!((vectors::recall(&got, &want) * 1e4).round() / 1e4);
        line["recall_queries"] = json!(want.len());
        line["first_query_s"] = json!((prepare_s * 1000.0).round() / 1000.0);
        println!("{line}");
    }
    if args.workloads.iter().any(|w| w.eq_ignore_ascii_case("RECALL")) {
        // Hybrid recall: all four paths, client vectors (i8 scan), budget 800 tokens; the text is
        // the name of one of the seeds, the vector one of the query vectors.
        let seeds = ids(q, "seeds")?;
        let inputs: Vec<u32> = (0..seeds.len().min(queries.len() / dim) as u32).collect();
        let mut tokens = 0usize;
        let mut stages: std::collections::BTreeMap<&'static str, u64> = std::collections::BTreeMap::new();
        let warm =
            engram::RecallQuery { vector: Some(queries[..dim].to_vec()), mode: VectorMode::I8, ..engram::RecallQuery::new("warm up") };
        let t = Instant::now();
        ws.recall(&warm).map_err(|e| e.to_string())?;
        let first_s = t.elapsed().as_secs_f64();
        let line = measure(scale, "hybrid_recall", &inputs, |i| {
            let at = i as usize * dim;
            let name = ws.entity(EntityId(seeds[i as usize])).map(|e| e.name.to_string()).unwrap_or_default();
            let rq = engram::RecallQuery {
                vector: Some(queries[at..at + dim].to_vec()),
                mode: VectorMode::I8,
                ..engram::RecallQuery::new(&name)
            };
            let Ok(r) = ws.recall(&rq) else { return 0 };
            for (k, us) in &r.timings_us {
                *stages.entry(k).or_default() += us;
            }
            let r = r.packed;
            tokens += r.tokens_used;
            r.facts.len()
        });
        let mut line = line;
        line["mode"] = json!("i8");
        line["budget"] = json!(800);
        line["first_query_s"] = json!((first_s * 1000.0).round() / 1000.0);
        line["tokens_mean"] = json!(tokens / inputs.len().max(1));
        let n = inputs.len().max(1) as u64;
        line["stage_mean_us"] =
            json!(stages.iter().map(|(k, v)| (k.to_string(), v / n)).collect::<std::collections::BTreeMap<String, u64>>());
        println!("{line}");
    }
    Ok(())
}
