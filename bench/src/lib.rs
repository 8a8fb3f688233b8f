//! Seeded dataset generators shared by engram's benchmarks: graphs built through the public API
//! so the benches measure what users get.

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
