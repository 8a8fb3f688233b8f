//! Seeded dataset generators shared by engram's benchmarks: graphs built through the public API
//! so the benches measure what users get.

pub mod floor;
pub mod sentences;

use engram::{AddClaim, ClaimState, Database, DeclarePredicate, EntityId, Op, WriteBatch};
use rand::{Rng, SeedableRng};

/// A seeded random graph: `entities` entities, `claims` claims with skewed (hub-heavy) degrees
/// over 8 predicates, 10% deprecated, and a `concepts`-node `SUBCLASS_OF` tree over the first ids.
/// The base CSR is compacted, as after a bulk load.
pub fn random_graph(entities: usize, claims: usize, concepts: usize, seed: u64) -> Database {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.push(Op::DeclarePredicate(DeclarePredicate::new("subclass_of").transitive()));
    for i in 0..entities {
        b.upsert_entity(&format!("e{i}"), if i < concepts { "concept" } else { "thing" }, &format!("Entity {i}"));
    }
    for i in 1..concepts {
        let parent = rng.gen_range(0..i);
        b.add_claim(AddClaim::new(EntityId(i as u32), "subclass_of", EntityId(parent as u32)).state(ClaimState::Accepted));
    }
    let hubs = (entities / 1000).max(1);
    for _ in 0..claims {
        let pick = |rng: &mut rand::rngs::StdRng| if rng.gen_bool(0.1) { rng.gen_range(0..hubs) } else { rng.gen_range(0..entities) };
        let s = pick(&mut rng);
        let o = pick(&mut rng);
        let state = if rng.gen_bool(0.1) { ClaimState::Deprecated } else { ClaimState::Accepted };
        let p = ["depends_on", "owns", "mentions", "uses", "part_of", "related_to", "blocked_by", "decided_by"][rng.gen_range(0..8)];
        b.add_claim(AddClaim::new(EntityId(s as u32), p, EntityId(o as u32)).state(state).confidence(rng.gen_range(0.1..1.0)));
    }
    db.write(&b).expect("generated batch is valid");
    db.compact();
    db
}

/// A seeded memory for retrieval benches: `entities` entities with unit name vectors of `dim`
/// (set whole, as an import does), `claims` claims with texts drawn from a skewed vocabulary and
/// unit text vectors, valid over the last year. Returns the database and one query vector.
pub fn random_memory(entities: usize, claims: usize, dim: usize, seed: u64) -> (Database, Vec<f32>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let unit = |rng: &mut rand::rngs::StdRng| {
        let v: Vec<f32> = (0..dim).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
    };
    let words: Vec<String> = (0..5000).map(|i| format!("w{}x{}", i % 97, i)).collect();
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    for i in 0..entities {
        b.upsert_entity(&format!("e{i}"), "thing", &format!("{} {}", words[i % 5000], words[(i * 7) % 5000]));
    }
    let now = engram::Timestamp::from_epoch_seconds(1_735_689_600);
    for i in 0..claims {
        // Zipf-like word choice: squaring a uniform draw favours the first words.
        let text: Vec<&str> = (0..rng.gen_range(4..16)).map(|_| words[(rng.gen::<f64>().powi(2) * 5000.0) as usize].as_str()).collect();
        let from = now.plus_seconds(-rng.gen_range(0..365 * 86_400));
        b.add_claim(
            AddClaim::new(EntityId(rng.gen_range(0..entities) as u32), "mentions", EntityId(rng.gen_range(0..entities) as u32))
                .id(&format!("c{i}"))
                .text(&text.join(" "))
                .state(ClaimState::Accepted)
                .confidence(rng.gen_range(0.3..1.0))
                .valid(Some(from), None),
        );
        b.set_claim_vector(format!("c{i}").as_str(), unit(&mut rng));
    }
    db.write(&b).expect("generated batch is valid");
    let rows: Vec<f32> = (0..entities).flat_map(|_| unit(&mut rng)).collect();
    db.set_entity_vectors(dim, rows).expect("one row per entity");
    db.compact();
    (db, unit(&mut rng))
}

/// CPU seconds this process has used so far, all threads (user + system, from `/proc/self/stat`;
/// `None` off Linux). On a shared VM, wall time swings with the neighbours; CPU time per unit of
/// work is the steadier figure for comparing two builds.
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at state, field 3; utime and
    // stime are fields 14 and 15, in clock ticks (100 per second on Linux).
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}
