//! Retrieval: vector search against a brute force through the public API, the seed scenarios
//! (a superseded fact never comes back; a dependency is reached through the graph although the
//! words differ), fusion and decay on constructed cases, the token budget, and persistence of
//! vectors and keyword indexes across checkpoints and reopen.

use engram::search::context::count_tokens;
use engram::{
    AddClaim, AddEvidence, ClaimState, Config, Database, DeclarePredicate, EntityId, ManualClock, Op, RecallQuery, Timestamp, VectorMode,
    VectorOptions, Visibility, WriteBatch,
};
use rand::{Rng, SeedableRng};
use std::sync::Arc;

const DAY: i64 = 86_400;

fn clock_db() -> (Database, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(Timestamp::from_epoch_seconds(1_700_000_000)));
    let db = Database::with_config(Config { clock: clock.clone(), ..Config::default() });
    (db, clock)
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

#[test]
fn entity_and_claim_vector_search_equal_brute_force_with_filters() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let db = Database::in_memory();
    db.create_workspace("other").unwrap();
    let dim = 8;
    let mut vecs: Vec<(String, u32, Vec<f32>)> = Vec::new();
    for ws in ["default", "other"] {
        let mut b = WriteBatch::new(ws);
        for i in 0..300 {
            let ext = format!("{ws}-e{i}");
            let v: Vec<f32> = (0..dim).map(|_| rng.gen_range(-4i32..5) as f32 / 4.0).collect();
            b.upsert_entity(&ext, "thing", &ext);
            if v.iter().any(|x| *x != 0.0) && i % 5 != 0 {
                b.set_entity_vector(ext.as_str(), v.clone());
                vecs.push((ext.clone(), 0, v));
            }
        }
        for i in 0..200 {
            let id = format!("{ws}-c{i}");
            b.add_claim(AddClaim::new(format!("{ws}-e{i}"), "rel", format!("{ws}-e{}", i + 1)).id(&id).state(ClaimState::Accepted));
            let v: Vec<f32> = (0..dim).map(|_| rng.gen_range(-4i32..5) as f32 / 4.0).collect();
            if v.iter().any(|x| *x != 0.0) {
                b.set_claim_vector(id.as_str(), v);
            }
        }
        db.write(&b).unwrap();
    }
    // Hide some: deleted entities, a deprecated claim.
    let mut b = WriteBatch::new("default");
    for i in (0..300).step_by(7) {
        b.push(Op::DeleteEntity { entity: format!("default-e{i}").as_str().into() });
    }
    b.push(Op::Deprecate { claim: "default-c3".into(), superseded_by: None });
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    for t in 0..20 {
        let q: Vec<f32> = (0..dim).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let k = 1 + t % 15;
        // Reference: every visible entity of the workspace with a vector, scored in f64.
        let mut want: Vec<(f64, u32)> = (0..600u32)
            .filter_map(|e| {
                let ent = ws.entity(EntityId(e))?;
                if ent.deleted {
                    return None;
                }
                let v = db.entity_vector(EntityId(e))?;
                Some((v.iter().zip(&q).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum(), e))
            })
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let want: Vec<u32> = want.into_iter().take(k).map(|x| x.1).collect();
        for mode in [VectorMode::F32, VectorMode::F16, VectorMode::I8] {
            let got = ws.search_entity_vectors(&q, &VectorOptions { k, mode, rescore: 1000, ..VectorOptions::default() }).unwrap();
            let got: Vec<u32> = got.into_iter().map(|(e, _)| e.0).collect();
            assert_eq!(got, want, "entities k={k} {mode:?}");
        }
        let got: Vec<u32> =
            ws.search_claim_vectors(&q, &VectorOptions { k, ..VectorOptions::default() }).unwrap().into_iter().map(|(c, _)| c.0).collect();
        let mut want: Vec<(f64, u32)> = (0..400u32)
            .filter(|c| ws.claim_visible(engram::ClaimId(*c), &Visibility::current()))
            .filter_map(|c| {
                Some((db.claim_vector(engram::ClaimId(c))?.iter().zip(&q).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum(), c))
            })
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        assert_eq!(got, want.into_iter().take(k).map(|x| x.1).collect::<Vec<_>>(), "claims k={k}");
    }
    let _ = vecs;
    // A query of the wrong dimension is a typed error, not a panic.
    let err = ws.search_entity_vectors(&[1.0; 3], &VectorOptions::default()).unwrap_err();
    assert!(err.to_string().contains("3 components"), "{err}");
}

#[test]
fn vector_writes_are_validated_and_change_nothing_on_error() {
    let db = Database::in_memory();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("a", "t", "A").upsert_entity("b", "t", "B").set_entity_vector("a", vec![1.0, 0.0, 0.0]);
    db.write(&b).unwrap();
    let before = db.snapshot().version();
    for (v, what) in [
        (vec![1.0, 0.0], "a vector of 2 components; this database stores 3"),
        (vec![f32::NAN, 0.0, 0.0], "not a finite number"),
        (vec![0.0, 0.0, 0.0], "all-zero"),
    ] {
        let mut b = WriteBatch::new("default");
        b.upsert_entity("c", "t", "C").set_entity_vector("b", v);
        let err = db.write(&b).unwrap_err();
        assert!(err.to_string().contains(what), "{err}");
        assert!(err.to_string().contains("operation 1 (set_vector), field `vector`"), "{err}");
    }
    let mut b = WriteBatch::new("default");
    b.set_entity_vector("a", vec![0.0, 1.0, 0.0]);
    assert!(db.write(&b).unwrap_err().to_string().contains("already has a different vector"));
    // The same vector again is accepted (idempotent).
    let mut b = WriteBatch::new("default");
    b.set_entity_vector("a", vec![1.0, 0.0, 0.0]);
    db.write(&b).unwrap();
    assert_eq!(db.snapshot().version(), before + 1);
    assert!(db.snapshot().workspace("default").unwrap().find_by_name("C").is_empty());
}

/// "We use Kafka" then "we switched to Kinesis": recall about event streaming returns Kinesis and
/// nothing of the superseded Kafka claim; asking for history brings it back.
#[test]
fn a_superseded_fact_never_comes_back() {
    let (db, clock) = clock_db();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("team", "team", "Platform team").upsert_entity("kafka", "tool", "Kafka").upsert_entity("kinesis", "tool", "Kinesis");
    b.push(Op::DeclarePredicate(DeclarePredicate { half_life_days: Some(90.0), ..DeclarePredicate::new("streams_events_with") }));
    b.add_claim(
        AddClaim::new("team", "streams_events_with", "kafka")
            .id("c-kafka")
            .text("We use Kafka for event streaming")
            .state(ClaimState::Accepted)
            .confidence(0.9),
    );
    b.push(Op::AddEvidence(AddEvidence {
        ext_id: Some("msg-1".into()),
        claim: Some("c-kafka".into()),
        snippet: Some("we use Kafka".into()),
        ..AddEvidence::default()
    }));
    db.write(&b).unwrap();
    clock.advance_seconds(30 * DAY);
    let mut b = WriteBatch::new("default");
    b.add_claim(
        AddClaim::new("team", "streams_events_with", "kinesis")
            .id("c-kinesis")
            .text("We switched to Kinesis for event streaming")
            .state(ClaimState::Accepted)
            .confidence(0.9),
    );
    b.push(Op::AddEvidence(AddEvidence { ext_id: Some("msg-2".into()), claim: Some("c-kinesis".into()), ..AddEvidence::default() }));
    b.push(Op::Deprecate { claim: "c-kafka".into(), superseded_by: Some("c-kinesis".into()) });
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let r = ws.recall(&RecallQuery::new("what do we use for event streaming?")).unwrap();
    let json = serde_json::to_string(&r).unwrap();
    assert!(r.packed.facts.iter().any(|f| f.claim_id == "c-kinesis"), "{json}");
    assert!(!json.contains("Kafka") && !json.contains("kafka"), "{json}");
    assert!(r.packed.context.contains("msg-2"));
    assert_eq!(r.paths_run, vec!["lexical", "graph", "recency"]);
    assert_eq!(r.skipped[0].path, "semantic");
    // History: the deprecated claim is back, flagged as such.
    let r = ws.recall(&RecallQuery { visibility: Visibility::all_versions(), ..RecallQuery::new("event streaming") }).unwrap();
    let kafka = r.packed.facts.iter().find(|f| f.claim_id == "c-kafka").expect("history shows the old claim");
    assert_eq!(kafka.state, "DEPRECATED");
    // Time travel: as believed before the switch, Kafka was the fact and Kinesis did not exist.
    let before = Timestamp::from_epoch_seconds(1_700_000_000 + 10 * DAY);
    let then = Visibility { as_of: Some(before), known_as_of: Some(before), ..Visibility::current() };
    let r = ws.recall(&RecallQuery { visibility: then, ..RecallQuery::new("event streaming") }).unwrap();
    let ids: Vec<&str> = r.packed.facts.iter().map(|f| f.claim_id.as_str()).collect();
    assert_eq!(ids, vec!["c-kafka"]);
}

/// "Why is `AuthService` failing?" reaches the upstream incident through `DEPENDS_ON` although the
/// incident's words share nothing with the question.
#[test]
fn a_dependency_is_reached_through_the_graph() {
    let (db, _) = clock_db();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth", "service", "AuthService")
        .upsert_entity("up", "service", "UpstreamService")
        .upsert_entity("inc", "incident", "INC-42");
    b.upsert_entity("billing", "service", "BillingService");
    b.add_claim(
        AddClaim::new("auth", "DEPENDS_ON", "up")
            .id("dep")
            .text("AuthService calls UpstreamService to validate tokens")
            .state(ClaimState::Accepted),
    );
    b.add_claim(
        AddClaim::new("up", "HAS_INCIDENT", "inc")
            .id("incident")
            .text("Upstream latency spike, p99 above 4 s since 09:12")
            .state(ClaimState::Accepted),
    );
    b.add_claim(AddClaim::new("billing", "HAS_INCIDENT", "inc").id("noise").text("Billing retries doubled").state(ClaimState::Accepted));
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let r = ws.recall(&RecallQuery { hops: 2, ..RecallQuery::new("Why is AuthService failing?") }).unwrap();
    let inc = r.packed.facts.iter().find(|f| f.claim_id == "incident").expect("the incident is reached");
    assert!(inc.ranks.graph.is_some() && inc.ranks.lexical.is_none(), "{:?}", inc.ranks);
    assert!(r.graph_seeds.contains(&ws.entity_id("auth").unwrap().0));
    let dep = r.packed.facts.iter().position(|f| f.claim_id == "dep").unwrap();
    assert_eq!(dep, 0, "the claim found by words and graph ranks first");
}

/// A claim found by every path outranks one found first by a single path; an old fact decays
/// below a fresh one of equal rank.
#[test]
fn fusion_rewards_agreement_and_decay_orders_by_age() {
    let (db, clock) = clock_db();
    let now = engram::Clock::now(clock.as_ref());
    let mut b = WriteBatch::new("default");
    b.upsert_entity("seed", "t", "Seed").upsert_entity("x", "t", "X").upsert_entity("far1", "t", "Far1").upsert_entity("far2", "t", "Far2");
    b.upsert_entity("far3", "t", "Far3");
    // A: near the seed, fresh, on-topic vector, second by BM25 (longer text).
    b.add_claim(AddClaim::new("seed", "rel", "x").id("A").text("alpha beta gamma delta").state(ClaimState::Accepted));
    // B: first by BM25 only (short text), far from the seed, old, orthogonal vector.
    b.add_claim(
        AddClaim::new("far1", "rel", "far2")
            .id("B")
            .text("alpha beta")
            .state(ClaimState::Accepted)
            .valid(Some(now.plus_seconds(-400 * DAY)), None),
    );
    b.set_claim_vector("A", vec![1.0, 0.0]).set_claim_vector("B", vec![0.0, 1.0]);
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let seed = ws.entity_id("seed").unwrap();
    let r = ws.recall(&RecallQuery { vector: Some(vec![1.0, 0.0]), seeds: vec![seed], ..RecallQuery::new("alpha beta") }).unwrap();
    let order: Vec<&str> = r.packed.facts.iter().map(|f| f.claim_id.as_str()).collect();
    assert_eq!(order, vec!["A", "B"], "{:?}", r.packed.facts.iter().map(|f| (&f.claim_id, f.ranks)).collect::<Vec<_>>());
    let b_fact = &r.packed.facts[1];
    assert_eq!(b_fact.ranks.lexical, Some(1));
    assert_eq!(r.paths_run, vec!["semantic", "lexical", "graph", "recency"]);

    // Decay: X and Y tie on fusion (1st and 2nd on two paths, crosswise); Y is fresh, X old.
    let (db, _) = clock_db();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("far3", "t", "Far3").upsert_entity("x", "t", "X");
    b.push(Op::DeclarePredicate(DeclarePredicate { half_life_days: Some(30.0), ..DeclarePredicate::new("decays") }));
    b.add_claim(AddClaim::new("far3", "decays", "x").id("X").text("omega omega sigma").valid(Some(now.plus_seconds(-90 * DAY)), None));
    b.add_claim(AddClaim::new("far3", "decays", "x").id("Y").text("omega sigma sigma").valid(Some(now.plus_seconds(-DAY)), None));
    b.set_claim_vector("X", vec![0.6, 0.8]).set_claim_vector("Y", vec![0.8, 0.6]);
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let q = RecallQuery {
        vector: Some(vec![1.0, 0.0]),
        weights: engram::PathWeights { graph: 0.0, recency: 0.0, ..engram::PathWeights::default() },
        ..RecallQuery::new("omega")
    };
    let r = ws.recall(&q).unwrap();
    let pos = |id: &str| r.packed.facts.iter().position(|f| f.claim_id == id).unwrap();
    let (x, y) = (&r.packed.facts[pos("X")], &r.packed.facts[pos("Y")]);
    assert_eq!((x.ranks.lexical, x.ranks.semantic), (Some(1), Some(2)), "{:?}", x.ranks);
    assert_eq!((y.ranks.lexical, y.ranks.semantic), (Some(2), Some(1)), "{:?}", y.ranks);
    assert!(pos("Y") < pos("X"), "the fresh fact ranks first");
    assert!((x.decay - 0.125).abs() < 1e-9 && y.decay > 0.97);
}

/// The context never exceeds the budget, counted exactly, and every fact is either in or cut.
#[test]
fn the_budget_is_never_exceeded() {
    let (db, _) = clock_db();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let words = ["deploy", "rollback", "latency", "kafka", "queue", "customer", "refund", "invoice", "outage", "東京", "naïve"];
    let mut b = WriteBatch::new("default");
    for i in 0..40 {
        b.upsert_entity(&format!("e{i}"), "t", &format!("Entity {i}"));
    }
    for i in 0..300 {
        let text: Vec<&str> = (0..rng.gen_range(1..30)).map(|_| words[rng.gen_range(0..words.len())]).collect();
        b.add_claim(
            AddClaim::new(format!("e{}", i % 40), "rel", format!("e{}", (i * 7) % 40)).text(&text.join(" ")).state(ClaimState::Accepted),
        );
    }
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    for budget in [0, 1, 15, 40, 100, 333, 800, 5000, 100_000] {
        let r = ws.recall(&RecallQuery { budget, ..RecallQuery::new("kafka latency outage refund") }).unwrap();
        assert!(r.packed.tokens_used <= budget, "budget {budget}: {}", r.packed.tokens_used);
        assert_eq!(r.packed.tokens_used, count_tokens(&r.packed.context));
        // Each fact has its line; every other line is the head of a group of two or more facts.
        let lines: Vec<&str> = r.packed.context.lines().collect();
        assert!(r.packed.facts.iter().all(|f| lines.contains(&f.line.as_str())), "{}", r.packed.context);
        for (i, head) in lines.iter().enumerate().filter(|(_, l)| !l.starts_with('[')) {
            assert!(head.ends_with("):"), "{}", r.packed.context);
            let members = lines[i + 1..].iter().take_while(|l| l.starts_with('[')).count();
            assert!(members >= 2, "a head over {members} fact(s): {}", r.packed.context);
        }
        let facts_lines = lines.iter().filter(|l| l.starts_with('[')).count();
        assert_eq!(facts_lines, r.packed.facts.len(), "{}", r.packed.context);
        assert!(r.packed.facts.windows(2).all(|w| w[0].score >= w[1].score));
        if budget == 100_000 {
            assert_eq!(r.packed.cut, 0);
        }
        if budget < 15 {
            assert!(r.packed.facts.is_empty() && r.packed.cut > 0);
        }
    }
}

/// Vectors written one by one and the keyword index survive a checkpoint and a reopen; rows the
/// checkpoint wrote to the vector files are not written twice.
#[test]
fn vectors_and_keyword_search_survive_checkpoint_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let answers = |db: &Database| {
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        let v = ws.search_claim_vectors(&[1.0, 0.5, 0.0], &VectorOptions { k: 5, ..VectorOptions::default() }).unwrap();
        let e = ws.search_entity_vectors(&[0.0, 1.0, 0.0], &VectorOptions { k: 5, ..VectorOptions::default() }).unwrap();
        let t = ws.search_claim_text("renewal contract", 5, &Visibility::current()).unwrap();
        let n = ws.search_entity_text("acme", 5, &Visibility::current()).unwrap();
        (v, e, t, n)
    };
    let write = |db: &Database, from: usize, to: usize| {
        let mut b = WriteBatch::new("default");
        for i in from..to {
            b.upsert_entity(&format!("e{i}"), "org", &format!("Acme {i}"));
            b.set_entity_vector(format!("e{i}").as_str(), unit(vec![i as f32, 1.0, 0.5]));
            b.add_claim(
                AddClaim::new(format!("e{i}"), "has", format!("e{i}")).id(&format!("c{i}")).text(&format!("contract renewal number {i}")),
            );
            b.set_claim_vector(format!("c{i}").as_str(), unit(vec![1.0, i as f32 / 10.0, 0.1]));
        }
        db.write(&b).unwrap();
    };
    let before = {
        let db = Database::open(dir.path()).unwrap();
        write(&db, 0, 10);
        db.checkpoint().unwrap();
        write(&db, 10, 15);
        db.checkpoint().unwrap();
        write(&db, 15, 20); // only in the WAL
        answers(&db)
    };
    assert_eq!(before.0.len(), 5);
    assert_eq!(before.2.len(), 5);
    assert_eq!(before.3.len(), 5);
    assert!(dir.path().join(engram::CLAIM_VECTOR_FILE).exists());
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(answers(&db), before);
    for i in [0u32, 12, 19] {
        assert_eq!(db.entity_vector(EntityId(i)).unwrap(), unit(vec![i as f32, 1.0, 0.5]));
    }
    // A backup carries the vectors too.
    let bdir = dir.path().join("backup");
    db.backup(&bdir).unwrap();
    drop(db);
    let copy = Database::open(&bdir).unwrap();
    assert_eq!(answers(&copy), before);
}

/// The keyword index is written beside each snapshot and loaded as built; a rename in the WAL
/// tail re-indexes its entity; a damaged index file is reported by `check` and rebuilt by open.
#[test]
fn the_keyword_index_is_persisted_beside_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let find = |db: &Database, q: &str| -> Vec<String> {
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        ws.search_entity_text(q, 10, &Visibility::current())
            .unwrap()
            .into_iter()
            .map(|(e, _)| ws.entity(e).unwrap().ext_id.to_string())
            .collect()
    };
    {
        let db = Database::open(dir.path()).unwrap();
        let mut b = WriteBatch::new("default");
        b.upsert_entity("a", "org", "Acme Rockets").upsert_entity("b", "org", "Globex Rockets").upsert_entity("c", "org", "Initech");
        db.write(&b).unwrap();
        db.checkpoint().unwrap();
        let mut b = WriteBatch::new("default");
        b.push(Op::RenameEntity { entity: "c".into(), name: "Initech Rockets".into() });
        b.push(Op::RenameEntity { entity: "a".into(), name: "Acme Anvils".into() });
        db.write(&b).unwrap();
    }
    let texts: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| std::path::Path::new(n).extension().is_some_and(|e| e == "text"))
        .collect();
    assert_eq!(texts.len(), 1, "{texts:?}");
    let db = Database::open(dir.path()).unwrap();
    assert!(db.snapshot().keyword_index_ready(), "loaded with the snapshot, not rebuilt");
    // "Acme Rockets" stays an alias of a after the rename, so a still matches "rockets".
    assert_eq!(find(&db, "rockets"), vec!["b", "c", "a"]);
    assert_eq!(find(&db, "anvils"), vec!["a"]);
    drop(db);
    let report = engram::check(&engram::OsVfs, dir.path()).unwrap();
    assert_eq!(report.records, 1);
    // Flip a byte inside the index file: check names it, open rebuilds the index from columns.
    let path = dir.path().join(&texts[0]);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let err = engram::check(&engram::OsVfs, dir.path()).unwrap_err();
    assert!(err.to_string().contains(".text"), "{err}");
    let db = Database::open(dir.path()).unwrap();
    assert!(!db.snapshot().keyword_index_ready());
    assert_eq!(find(&db, "rockets"), vec!["b", "c", "a"]);
    // An index file of another tokenizer (here, the name before stop words: `<version>.text`)
    // is not read, even when it verifies: the index is rebuilt with this tokenizer.
    let snap = db.checkpoint().unwrap().unwrap();
    drop(db);
    let fresh = snap.with_extension("t2.text");
    assert!(fresh.exists(), "{}", fresh.display());
    std::fs::rename(&fresh, snap.with_extension("text")).unwrap();
    let db = Database::open(dir.path()).unwrap();
    assert!(!db.snapshot().keyword_index_ready(), "an older tokenizer's index was read");
    drop(db);
    assert!(engram::check(&engram::OsVfs, dir.path()).is_ok());
    let db = Database::open(dir.path()).unwrap();
    assert!(!db.snapshot().keyword_index_ready());
    assert_eq!(find(&db, "rockets"), vec!["b", "c", "a"]);
}

/// Entity context: the CX case — who is calling and what is open — filtered by predicate and
/// neighbour type, nearest first, capped, within the budget; neighbourhood RAG ranks the
/// neighbourhood by similarity, by vector when it can and by keywords otherwise.
#[test]
fn entity_context_and_neighbourhood_rag() {
    use engram::ContextQuery;
    let (db, _) = clock_db();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("cust", "customer", "Dana Reyes").upsert_entity("acct", "account", "ACME-42").upsert_entity("t1", "ticket", "T-1");
    b.upsert_entity("t2", "ticket", "T-2").upsert_entity("plan", "plan", "Enterprise").upsert_entity("agent", "person", "Sam");
    b.add_claim(
        AddClaim::new("cust", "owns", "acct").id("owns").text("Dana owns account ACME-42").state(ClaimState::Accepted).confidence(1.0),
    );
    b.add_claim(
        AddClaim::new("cust", "opened", "t1")
            .id("open1")
            .text("refund request for a double charge")
            .state(ClaimState::Accepted)
            .confidence(0.9),
    );
    b.add_claim(
        AddClaim::new("cust", "opened", "t2").id("open2").text("password reset loop on mobile").state(ClaimState::Accepted).confidence(0.8),
    );
    b.add_claim(AddClaim::new("acct", "on_plan", "plan").id("plan").text("ACME-42 is on the Enterprise plan").state(ClaimState::Accepted));
    b.add_claim(AddClaim::new("t1", "assigned_to", "agent").id("assign").text("T-1 is assigned to Sam").state(ClaimState::Accepted));
    b.add_claim(AddClaim::new("cust", "opened", "t2").id("old").text("stale duplicate").state(ClaimState::Deprecated));
    b.set_claim_vector("open1", vec![1.0, 0.0]).set_claim_vector("open2", vec![0.0, 1.0]).set_claim_vector("plan", vec![0.7, 0.7]);
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let cust = ws.entity_id("cust").unwrap();
    let ids = |r: &engram::Recall| r.packed.facts.iter().map(|f| f.claim_id.clone()).collect::<Vec<_>>();

    // Everything within two hops, nearest first, then by confidence; the deprecated claim never.
    let r = ws.entity_context(cust, &ContextQuery::default()).unwrap();
    assert_eq!(ids(&r), vec!["owns", "open1", "open2", "plan", "assign"]);
    // Only what is open: tickets, one hop.
    let q = ContextQuery { depth: 1, types: vec!["ticket".into()], ..ContextQuery::default() };
    assert_eq!(ids(&ws.entity_context(cust, &q).unwrap()), vec!["open1", "open2"]);
    let q = ContextQuery { predicates: vec!["OPENED".into(), "assigned_to".into()], ..ContextQuery::default() };
    assert_eq!(ids(&ws.entity_context(cust, &q).unwrap()), vec!["open1", "open2", "assign"]);
    let q = ContextQuery { max_facts: 2, ..ContextQuery::default() };
    assert_eq!(ids(&ws.entity_context(cust, &q).unwrap()), vec!["owns", "open1"]);
    let q = ContextQuery { budget: 30, ..ContextQuery::default() };
    let r = ws.entity_context(cust, &q).unwrap();
    assert!(r.packed.tokens_used <= 30 && r.packed.cut > 0);

    // Neighbourhood RAG: by vector among the claims with one, else by keywords.
    let q = ContextQuery::default();
    let r = ws.neighborhood(cust, "", Some(&[0.1, 0.9]), &q).unwrap();
    assert_eq!(ids(&r), vec!["open2", "plan", "open1"]);
    assert_eq!(r.paths_run, vec!["graph", "semantic"]);
    let r = ws.neighborhood(cust, "refund double charge", None, &q).unwrap();
    assert_eq!(ids(&r)[0], "open1");
    assert_eq!(r.paths_run, vec!["graph", "lexical"]);
    let r = ws.neighborhood(cust, "refund", Some(&[1.0, 0.0, 0.0]), &q).unwrap();
    assert_eq!(r.skipped[0].path, "semantic");
    assert_eq!(ids(&r), vec!["open1"]);

    // The same through the query language: `engram.context` yields `engram.recall`'s rows.
    let texts = |q: &str| -> Vec<String> {
        let rows = ws.query(q, &engram::Params::new()).unwrap().rows;
        rows.into_iter().map(|r| if let engram::QueryValue::String(s) = &r[0] { s.clone() } else { panic!("{r:?}") }).collect()
    };
    let text_of = |ids: &[&str]| -> Vec<String> {
        ids.iter().map(|i| ws.claim(ws.claim_id(i).unwrap()).unwrap().text.unwrap().to_string()).collect()
    };
    assert_eq!(texts("CALL engram.context('cust') YIELD text RETURN text"), text_of(&["owns", "open1", "open2", "plan", "assign"]));
    let tickets = "MATCH (c {id: 'cust'}) CALL engram.context(c, {depth: 1, types: ['ticket']}) YIELD rank, text RETURN text ORDER BY rank";
    assert_eq!(texts(tickets), text_of(&["open1", "open2"]));
    let opened = "CALL engram.context('cust', {predicates: ['OPENED', 'assigned_to'], max_facts: 2}) YIELD text RETURN text";
    assert_eq!(texts(opened), text_of(&["open1", "open2"]));
    // With `text`, the neighbourhood ranked by it (here by keywords: a bare view has no embedder).
    assert_eq!(texts("CALL engram.context('cust', {text: 'refund double charge'}) YIELD text RETURN text")[0], text_of(&["open1"])[0]);
    assert_eq!(texts("CALL engram.context('cust', {as_of: 0}) YIELD text RETURN text"), Vec::<String>::new());
    assert_eq!(texts("CALL engram.context('nobody') YIELD text RETURN text"), Vec::<String>::new());
    let block =
        ws.query("CALL engram.context('cust', {budget: 30}) YIELD context RETURN DISTINCT context", &engram::Params::new()).unwrap();
    assert_eq!(block.rows.len(), 1);
    for (bad, what) in [
        ("CALL engram.context('cust', {types: 'ticket'}) YIELD text RETURN text", "types must be a list of strings"),
        ("CALL engram.context('cust', {text: 3}) YIELD text RETURN text", "text must be a string"),
        ("CALL engram.context('cust', {depth: -1}) YIELD text RETURN text", "non-negative integer"),
        ("CALL engram.context('cust', {as_of: 'noon'}) YIELD text RETURN text", "as_of"),
    ] {
        let err = ws.query(bad, &engram::Params::new()).unwrap_err();
        assert!(err.message.contains(what), "{bad}: {}", err.message);
    }
    assert!(ws.entity_context(EntityId(999), &q).is_err());
    // Caller-sized parameters never panic, however large.
    assert_eq!(ws.search_claim_text("refund", usize::MAX, &Visibility::current()).unwrap().len(), 1);
    let huge = VectorOptions { k: 100_000, rescore: usize::MAX, mode: VectorMode::I8, ..VectorOptions::default() };
    assert_eq!(ws.search_claim_vectors(&[1.0, 0.0], &huge).unwrap().len(), 3);
    assert!(ws.search_claim_vectors(&[1.0, 0.0], &VectorOptions { k: usize::MAX, ..VectorOptions::default() }).is_err());
    let q = ContextQuery { max_facts: usize::MAX, depth: u32::MAX, budget: usize::MAX, ..ContextQuery::default() };
    assert_eq!(ws.entity_context(cust, &q).unwrap().packed.facts.len(), 5);
    let wild = RecallQuery {
        budget: usize::MAX,
        hops: u32::MAX,
        recency_days: u32::MAX,
        graph_visited_max: usize::MAX,
        seeds: vec![cust],
        ..RecallQuery::new("refund")
    };
    assert_eq!(ws.recall(&wild).unwrap().packed.facts.len(), 5);
    let wild = RecallQuery { per_path: usize::MAX, entity_seeds: usize::MAX, vector: Some(vec![1.0, 0.0]), ..RecallQuery::new("refund") };
    assert!(ws.recall(&wild).is_err(), "a k above the vector limit is a typed error");
}

/// A batch large enough to rebuild the keyword indexes from the columns answers exactly as the
/// same rows written in small batches (whose indexes grow by delta).
#[test]
fn a_large_batch_rebuilding_the_keyword_indexes_answers_like_small_batches() {
    let words = ["kafka", "kinesis", "auth", "billing", "ledger", "stream", "cache", "queue", "shard", "replica"];
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut ops = vec![Op::DeclarePredicate(DeclarePredicate::new("uses"))];
    let n = 6_000;
    for i in 0..n {
        let name = format!("{} {} {i}", words[rng.gen_range(0..10)], words[rng.gen_range(0..10)]);
        ops.push(Op::UpsertEntity(engram::UpsertEntity {
            ext_id: format!("e{i}"),
            entity_type: "service".into(),
            name,
            aliases: vec![words[rng.gen_range(0..10)].to_owned()],
            properties: engram::Properties::new(),
        }));
    }
    for i in 0..n * 2 {
        let text = format!("{} talks to {} via {}", words[rng.gen_range(0..10)], words[rng.gen_range(0..10)], words[rng.gen_range(0..10)]);
        let from = Timestamp::from_epoch_seconds(1_600_000_000 + rng.gen_range(0..1_000_000));
        let claim = AddClaim::new(format!("e{}", rng.gen_range(0..n)).as_str(), "uses", format!("e{}", rng.gen_range(0..n)).as_str())
            .id(&format!("c{i}"))
            .text(&text)
            .valid(Some(from), None);
        ops.push(Op::AddClaim(claim));
    }
    assert!(ops.len() >= engram::apply::REBASE_TEXT_OPS_MIN);
    let (big, _) = clock_db();
    big.write(&WriteBatch { workspace: "default".into(), ops: ops.clone() }).unwrap();
    let (small, _) = clock_db();
    for chunk in ops.chunks(500) {
        small.write(&WriteBatch { workspace: "default".into(), ops: chunk.to_vec() }).unwrap();
    }
    let (a, b) = (big.snapshot(), small.snapshot());
    let (a, b) = (a.workspace("default").unwrap(), b.workspace("default").unwrap());
    let v = Visibility::default();
    let ext_c = |ws: &engram::WorkspaceView<'_>, hits: Vec<(engram::ClaimId, f32)>| -> Vec<(String, u32)> {
        hits.into_iter().map(|(c, s)| (ws.claim(c).unwrap().ext_id.to_string(), (s * 1000.0).round() as u32)).collect()
    };
    let ext_e = |ws: &engram::WorkspaceView<'_>, hits: Vec<(EntityId, f32)>| -> Vec<(String, u32)> {
        hits.into_iter().map(|(e, s)| (ws.entity(e).unwrap().ext_id.to_string(), (s * 1000.0).round() as u32)).collect()
    };
    for q in ["kafka ledger", "auth", "queue shard replica", "billing 17"] {
        assert_eq!(ext_c(&a, a.search_claim_text(q, 20, &v).unwrap()), ext_c(&b, b.search_claim_text(q, 20, &v).unwrap()), "{q}");
        assert_eq!(ext_e(&a, a.search_entity_text(q, 20, &v).unwrap()), ext_e(&b, b.search_entity_text(q, 20, &v).unwrap()), "{q}");
    }
    let recent = |ws: &engram::WorkspaceView<'_>| -> Vec<String> {
        ws.recent_claims(Timestamp::MIN, Timestamp::MAX, 50, &v).into_iter().map(|(c, _)| ws.claim(c).unwrap().ext_id.to_string()).collect()
    };
    assert_eq!(recent(&a), recent(&b));
}

/// `n` design notes that describe `about`, written after it: a hub of facts no question names.
fn design_notes(b: &mut WriteBatch, about: &str, n: usize) {
    for i in 0..n {
        b.upsert_entity(&format!("doc{i}"), "document", &format!("Design note {i}"));
        b.add_claim(AddClaim::new(about, "described_in", format!("doc{i}").as_str()).id(&format!("doc{i}")));
    }
}

/// The id of the first fact recall packs for `question`, and the packed context.
fn first_fact(ws: &engram::WorkspaceView<'_>, question: &str) -> (String, String) {
    let r = ws.recall(&RecallQuery::new(question)).unwrap();
    (r.packed.facts.first().map(|f| f.claim_id.clone()).unwrap_or_default(), r.packed.context)
}

/// Each question's first fact is the claim its pair names.
fn ranks_first(ws: &engram::WorkspaceView<'_>, cases: &[(&str, &str)]) {
    for (question, want) in cases {
        let (got, context) = first_fact(ws, question);
        assert_eq!(got, *want, "{question}\n{context}");
    }
}

/// A fact's relation is part of what it says: among the facts near the question's entities, the
/// one whose predicate the question names ranks first, though it has no text and is the last
/// written of a hub's 60 facts (the graph path keeps 50), before a more trusted one of an entity
/// whose name the question only resembles, and also when it links two of the question's
/// entities; a question that names no relation ranks the more trusted facts first, as before.
#[test]
fn a_question_naming_a_relation_ranks_its_fact_first() {
    let (db, _) = clock_db();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth", "service", "AuthService")
        .upsert_entity("up", "service", "UpstreamService")
        .upsert_entity("team", "team", "Platform Team")
        .upsert_entity("kinesis", "technology", "Kinesis")
        .upsert_entity("eu", "region", "eu-west-1")
        .upsert_entity("rust", "language", "Rust")
        .upsert_entity("priya", "person", "Priya")
        .upsert_entity("legacy", "service", "AuthService Legacy")
        .upsert_entity("ops", "team", "Ops Team");

    design_notes(&mut b, "auth", 60);
    let facts = [
        ("auth", "DEPENDS_ON", "up", "depends"),
        ("auth", "STREAMS_EVENTS_WITH", "kinesis", "streams"),
        ("auth", "DEPLOYED_IN", "eu", "deployed"),
        ("auth", "WRITTEN_IN", "rust", "written"),
        ("priya", "MAINTAINS", "auth", "maintains"),
        ("team", "OWNS", "auth", "owns"),
    ];
    for (s, p, o, id) in facts {
        b.add_claim(AddClaim::new(s, p, o).id(id).confidence(0.9));
    }
    // A namesake the entity search also finds, with a more trusted (and newer) answer of its own.
    b.add_claim(AddClaim::new("ops", "OWNS", "legacy").id("owns-legacy"));
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let first = |question: &str| first_fact(&ws, question);
    ranks_first(
        &ws,
        &[
            ("Who owns AuthService?", "owns"),
            ("What does AuthService depend on?", "depends"),
            ("Where is AuthService deployed?", "deployed"),
            ("Which language is AuthService written in?", "written"),
            ("Who maintains AuthService?", "maintains"),
            ("What does AuthService use for event streaming?", "streams"),
        ],
    );
    // The fact between two of the question's entities is the nearest of all, though it reaches
    // no entity the others do not.
    let both = [ws.entity_id("auth").unwrap(), ws.entity_id("team").unwrap()];
    let r = ws.recall(&RecallQuery { seeds: both.to_vec(), ..RecallQuery::new("who owns it") }).unwrap();
    let owns = r.packed.facts.first().filter(|f| f.claim_id == "owns");
    assert!(owns.is_some_and(|f| f.ranks.graph == Some(1)), "{}", r.packed.context);
    // No relation named: the more trusted facts (1.0 against 0.9) first, as before.
    let (got, context) = first("Tell me about AuthService");
    assert!(got.starts_with("doc"), "{got}\n{context}");
}

/// A question that names the kind of thing it asks for ("which database") ranks first the fact
/// that reaches one, among facts of the relation it names alike: `USES` to a database, a cache,
/// a queue and a secret store, text-less, beside a hub of 60 documents. The kind of the entity the
/// question is about counts for nothing ("the `AuthService` service"), and a kind named with no
/// relation still finds its fact.
#[test]
fn a_question_naming_a_kind_ranks_the_fact_reaching_one_first() {
    let (db, _) = clock_db();
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth", "service", "AuthService")
        .upsert_entity("pg", "database", "Postgres")
        .upsert_entity("redis", "cache", "Redis")
        .upsert_entity("kafka", "queue", "Kafka")
        .upsert_entity("vault", "secret_store", "Vault")
        .upsert_entity("billing", "service", "BillingService");
    design_notes(&mut b, "auth", 60);
    for (o, id) in [("pg", "pg"), ("redis", "redis"), ("kafka", "kafka"), ("vault", "vault")] {
        b.add_claim(AddClaim::new("auth", "USES", o).id(id).confidence(0.9));
    }
    // A more trusted fact of another relation, from another service.
    b.add_claim(AddClaim::new("billing", "CALLS", "auth").id("calls"));
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let first = |question: &str| first_fact(&ws, question);
    ranks_first(
        &ws,
        &[
            ("Which database does AuthService use?", "pg"),
            ("Which cache does AuthService use?", "redis"),
            ("What queue does AuthService use?", "kafka"),
            ("Which secret store does AuthService use?", "vault"),
            ("Which cache does the AuthService service use?", "redis"),
            ("Which other service calls AuthService?", "calls"),
            ("Which queue is behind AuthService?", "kafka"),
        ],
    );
    // No kind named: the relation alone, its facts before the more trusted documents.
    let (got, context) = first("What does AuthService use?");
    assert!(["pg", "redis", "kafka", "vault"].contains(&got.as_str()), "{got}\n{context}");
}

/// A question that names a time ("on March 2", "in February", "yesterday", "last week", "on
/// 2026-01-15") ranks first what began or was heard then, among facts its words match alike:
/// five decisions about one deploy, each about as relevant to "what did we decide about the
/// deploy". A standing fact heard in the window (its evidence observed then) counts as said then;
/// relative times count from `AS OF`; a time no fact falls in changes nothing; and in a busy
/// memory the fact said then is found though older, better matches fill the lexical path.
#[test]
fn a_question_naming_a_time_ranks_what_was_said_then_first() {
    let at = |t: &str| Timestamp::parse(t).unwrap();
    let clock = Arc::new(ManualClock::new(at("2026-03-21T12:00:00Z")));
    let db = Database::with_config(Config { clock: clock.clone(), ..Config::default() });
    let mut b = WriteBatch::new("default");
    b.upsert_entity("team", "team", "Platform team").upsert_entity("deploy", "project", "Checkout deploy");
    b.upsert_entity("vendor", "company", "Acme Cloud");
    let decisions = [
        ("jan15", "2026-01-15T10:00:00Z", "We decided the deploy waits for the load tests"),
        ("feb", "2026-02-11T10:00:00Z", "We decided the deploy goes out behind a flag"),
        ("mar2", "2026-03-02T10:00:00Z", "We decided the deploy rolls back on any alarm"),
        ("wk11", "2026-03-12T10:00:00Z", "We decided the deploy ships on Thursdays only"),
        ("yday", "2026-03-20T10:00:00Z", "We decided the deploy needs two approvals now"),
    ];
    for (id, when, text) in decisions {
        b.add_claim(AddClaim::new("team", "decided", "deploy").id(id).text(text).valid(Some(at(when)), None));
    }
    // A standing contract since 2025, heard again on March 10.
    b.add_claim(
        AddClaim::new("vendor", "hosts", "deploy")
            .id("hosting")
            .text("Acme Cloud hosts the deploy under contract")
            .valid(Some(at("2025-06-01T00:00:00Z")), None),
    );
    b.push(Op::AddEvidence(AddEvidence {
        claim: Some("hosting".into()),
        observed_at: Some(at("2026-03-10T09:00:00Z")),
        ..AddEvidence::default()
    }));
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    ranks_first(
        &ws,
        &[
            ("What did we decide about the deploy on March 2?", "mar2"),
            ("What did we decide about the deploy in February?", "feb"),
            ("What did we decide about the deploy yesterday?", "yday"),
            ("What did we decide about the deploy last week?", "wk11"),
            ("What did we decide about the deploy on 2026-01-15?", "jan15"),
            ("What did we decide about the deploy on 15 January 2026?", "jan15"),
            ("What did we hear about the deploy on March 10?", "hosting"),
            // Spans: before, since, between, the last days, a unit counted from a day.
            ("What did we decide about the deploy before February?", "jan15"),
            ("What did we decide about the deploy since March 15?", "yday"),
            ("What did we decide about the deploy between February 1 and February 20?", "feb"),
            ("What did we decide about the deploy in the last 3 days?", "yday"),
            ("What did we decide about the deploy the week before March 3?", "mar2"),
        ],
    );
    // Relative times count from the query's valid time: on February 20, "five weeks ago" is the
    // week of January 15 (from March 21 it would be February's decision, visible then too).
    let then =
        RecallQuery { visibility: Visibility::as_of(at("2026-02-20T12:00:00Z")), ..RecallQuery::new("What did we decide five weeks ago?") };
    let r = ws.recall(&then).unwrap();
    assert_eq!(r.packed.facts.first().map(|f| f.claim_id.as_str()), Some("jan15"), "{}", r.packed.context);
    // A time nothing was said in ranks as no time does.
    let order =
        |question: &str| ws.recall(&RecallQuery::new(question)).unwrap().packed.facts.into_iter().map(|f| f.claim_id).collect::<Vec<_>>();
    assert_eq!(order("What did we decide about the deploy in 2019?"), order("What did we decide about the deploy?"));
    // A busy memory: sixty older notes match the words better and fill the lexical path's 50; the
    // one said on the day named is still found, and first.
    let db = Database::with_config(Config { clock: clock.clone(), ..Config::default() });
    let mut b = WriteBatch::new("default");
    for i in 0..60 {
        b.upsert_entity(&format!("n{i}"), "note", &format!("Note {i}"));
        let when = at("2025-06-01T00:00:00Z").plus_seconds(i * DAY);
        let note = AddClaim::new(format!("n{i}").as_str(), "records", format!("n{i}").as_str());
        b.add_claim(note.id(&format!("old{i}")).text("the rollout was decided, the rollout").valid(Some(when), None));
    }
    b.upsert_entity("x", "note", "Note x");
    let then = AddClaim::new("x", "records", "x").id("then").text("the rollout was decided");
    b.add_claim(then.valid(Some(at("2026-03-05T09:00:00Z")), None));
    db.write(&b).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    ranks_first(&ws, &[("What was decided about the rollout on March 5?", "then")]);
}
