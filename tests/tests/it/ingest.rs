//! The memory write path: the extraction document as given in the issue, idempotency, strict
//! errors with JSON paths that change nothing, entity resolution (names, aliases, types,
//! vectors), corroboration, contradiction (in and out of order), client verdicts, and the
//! lifecycle's independence from arrival order.

use engram::ingest::{IngestOptions, Outcome, ResolvedBy};
use engram::{ClaimState, Config, Database, ManualClock, RecallQuery, Timestamp, Visibility};
use proptest::prelude::*;
use std::sync::Arc;

fn db() -> Database {
    let clock = Arc::new(ManualClock::new(Timestamp::from_epoch_seconds(1_780_000_000)));
    Database::with_config(Config { clock, ..Config::default() })
}

const ISSUE_DOC: &str = r#"{"workspace": "default",
 "source": {"conversation_id": "conv-23", "message_id": "m-4", "model": "extractor",
            "model_version": "1.2", "extracted_at": "2026-03-01T10:00:00Z", "snippet": "..."},
 "predicates": [{"name": "streams_events_with", "cardinality": "one", "half_life_days": 180}],
 "entities": [{"name": "AuthService", "type": "service", "aliases": ["auth-svc"]},
              {"name": "Kinesis", "type": "technology"}],
 "claims": [{"subject": "AuthService", "predicate": "streams_events_with", "object": "Kinesis",
             "confidence": 0.9, "reasoning": "stated by the architect",
             "text": "AuthService streams events with Kinesis", "valid_from": "2026-03-01T00:00:00Z"}]}"#;

fn msg(conv: &str, m: &str, at: &str, body: &str) -> String {
    format!(
        r#"{{"source": {{"conversation_id": "{conv}", "message_id": "{m}", "model": "x", "model_version": "1", "extracted_at": "{at}"}}, {body}}}"#
    )
}

#[test]
fn the_issue_document_is_accepted_as_is_and_ingesting_it_again_writes_nothing() {
    let db = db();
    let r = db.ingest(ISSUE_DOC, &IngestOptions::default()).unwrap();
    assert!(!r.duplicate);
    assert_eq!(
        r.entities.iter().map(|e| (e.entity.as_str(), &e.how)).collect::<Vec<_>>(),
        vec![("service:authservice", &ResolvedBy::Created), ("technology:kinesis", &ResolvedBy::Created)]
    );
    assert_eq!(r.claims[0].claim, "conv-23/m-4/0");
    assert_eq!(r.claims[0].outcome, Outcome::Created { state: ClaimState::Accepted });
    assert_eq!(r.claims[0].reasoning.as_deref(), Some("stated by the architect"));
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let c = ws.claim(ws.claim_id("conv-23/m-4/0").unwrap()).unwrap();
    assert_eq!(c.valid_from, Timestamp::parse("2026-03-01T00:00:00Z").unwrap());
    let ev = ws.evidence_of(c.id).unwrap();
    assert_eq!(
        (ev[0].conversation_id.as_deref(), ev[0].message_id.as_deref(), ev[0].model_version.as_deref()),
        (Some("conv-23"), Some("m-4"), Some("1.2"))
    );
    assert_eq!(ev[0].observed_at, Timestamp::parse("2026-03-01T10:00:00Z").unwrap());
    assert_eq!(ws.find_by_name("auth svc"), vec![c.subject]);
    let version = snap.version();
    let again = db.ingest(ISSUE_DOC, &IngestOptions::default()).unwrap();
    assert!(again.duplicate);
    assert_eq!(db.snapshot().version(), version);
}

#[test]
fn bad_documents_name_the_json_path_and_change_nothing() {
    let db = db();
    db.ingest(ISSUE_DOC, &IngestOptions::default()).unwrap();
    let version = db.snapshot().version();
    for (doc, path, what) in [
        (r#"{"entities": [], "claim": []}"#, "claim", "unknown field `claim`"),
        (r#"{"entities": [{"name": "A", "type": "t", "colour": "red"}]}"#, "entities[0].colour", "unknown field `colour`"),
        (
            r#"{"claims": [{"subject": "AuthService", "predicate": "p", "object": "Kinesis", "confidence": 1.5}]}"#,
            "claims[0].confidence",
            "outside 0..=1",
        ),
        (
            r#"{"claims": [{"subject": "AuthService", "predicate": "p", "object": "Kinesis", "confidence": "high"}]}"#,
            "claims[0].confidence",
            "invalid type",
        ),
        (
            r#"{"entities": [{"name": "A", "type": "t"}], "claims": [{"subject": "A", "predicate": "p", "object": "Nobody", "confidence": 0.5}]}"#,
            "claims[0].object",
            "names no entity",
        ),
        (
            r#"{"claims": [{"subject": "AuthService", "predicate": "p", "object": "Kinesis", "confidence": 0.5, "valid_from": "soon"}]}"#,
            "claims[0].valid_from",
            "",
        ),
        (r#"{"predicates": [{"name": "p", "cardinality": "two"}]}"#, "predicates[0].cardinality", "`two`"),
        (r#"{"workspace": "nope", "entities": [{"name": "A", "type": "t"}]}"#, "workspace", "unknown workspace"),
        (
            r#"{"claims": [{"subject": "AuthService", "predicate": "p", "object": "Kinesis", "confidence": 0.5, "relation": {"refines": "c-404"}}]}"#,
            "claims[0].relation",
            "no claim `c-404`",
        ),
        (r#"{"entities": [{"name": "A", "type": "t"}"#, "entities", "EOF while parsing a list at line 1 column 40"),
        // The idempotency key: both parts, neither empty (else different messages would be
        // "duplicates" of each other).
        (r#"{"source": {"conversation_id": "", "message_id": ""}, "claims": []}"#, "source.conversation_id", "must not be empty"),
        (r#"{"source": {"conversation_id": "c", "message_id": " "}, "claims": []}"#, "source.message_id", "must not be empty"),
        (r#"{"source": {"conversation_id": "c"}, "claims": []}"#, "source.message_id", "come together"),
        (r#"{"source": {"message_id": "m"}, "claims": []}"#, "source.conversation_id", "come together"),
    ] {
        let e = db.ingest(doc, &IngestOptions::default()).unwrap_err();
        let engram::Error::Ingest(e) = e else { panic!("{e}") };
        assert_eq!(e.path, path, "{doc}: {e}");
        assert!(e.message.contains(what), "{doc}: {e}");
        assert_eq!(db.snapshot().version(), version, "{doc} changed the database");
    }
    assert!(db.snapshot().workspace("default").unwrap().find_by_name("A").is_empty());
}

#[test]
fn names_resolve_by_normalised_key_and_alias_within_a_type() {
    let db = db();
    let o = IngestOptions::default();
    db.ingest(
        r#"{"entities": [{"name": "AuthService", "type": "service"}, {"name": "Apple", "type": "company"},
                                 {"name": "PostgreSQL", "type": "database", "aliases": ["PG"]}]}"#,
        &o,
    )
    .unwrap();
    let r = db
        .ingest(
            r#"{"entities": [{"name": "Auth Service", "type": "service"}, {"name": "auth-service", "type": "Service"},
                                   {"name": "apple", "type": "fruit"}, {"name": "pg", "type": "database"}]}"#,
            &o,
        )
        .unwrap();
    assert_eq!(r.entities[0].entity, "service:authservice");
    assert_eq!(r.entities[0].how, ResolvedBy::Name);
    assert_eq!(r.entities[1].how, ResolvedBy::Document, "same key as the mention before it");
    assert_eq!(r.entities[2].entity, "fruit:apple");
    assert_eq!(r.entities[2].how, ResolvedBy::Created, "the fruit is not the company");
    assert_eq!((r.entities[3].entity.as_str(), &r.entities[3].how), ("database:postgresql", &ResolvedBy::Alias));
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert_eq!(ws.find_by_name("AuthService").len(), 1);
    assert_eq!(ws.find_by_name("apple").len(), 2);
    // Surface forms with the same normalised key need no alias; a new one would have become one.
    let auth = ws.entity(ws.entity_id("service:authservice").unwrap()).unwrap();
    assert!(auth.aliases.is_empty());
}

#[test]
fn names_resolve_by_vector_similarity_within_a_type() {
    let db = db();
    let o = IngestOptions { resolve_similarity: Some(0.95), ..IngestOptions::default() };
    db.ingest(
        r#"{"entities": [{"name": "PostgreSQL", "type": "database", "vector": [1.0, 0.0, 0.0]},
                                 {"name": "Redis", "type": "database", "vector": [0.0, 1.0, 0.0]},
                                 {"name": "Postgres Team", "type": "team", "vector": [1.0, 0.01, 0.0]}]}"#,
        &o,
    )
    .unwrap();
    let r = db
        .ingest(
            r#"{"entities": [{"name": "the main Postgres", "type": "database", "vector": [0.99, 0.05, 0.0]},
                                   {"name": "Memcached", "type": "database", "vector": [0.6, 0.6, 0.5]}]}"#,
            &o,
        )
        .unwrap();
    assert_eq!(r.entities[0].entity, "database:postgresql");
    assert!(matches!(r.entities[0].how, ResolvedBy::Vector { similarity } if similarity > 0.99));
    assert_eq!(r.entities[1].how, ResolvedBy::Created);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    assert_eq!(ws.find_by_name("the main postgres"), vec![ws.entity_id("database:postgresql").unwrap()]);
}

/// Kafka then Kinesis: the old value is deprecated, linked, its valid time ended at the switch;
/// an older value arriving late is kept as history; recall serves only the current value.
#[test]
fn a_single_valued_predicate_keeps_one_current_value_whatever_the_arrival_order() {
    let db = db();
    let o = IngestOptions::default();
    let pred = r#""predicates": [{"name": "streams_events_with", "cardinality": "one"}],
        "entities": [{"name": "AuthService", "type": "service"}, {"name": "Kafka", "type": "technology"},
                     {"name": "Kinesis", "type": "technology"}, {"name": "RabbitMQ", "type": "technology"}]"#;
    let kafka = msg(
        "c1",
        "m1",
        "2026-01-10T00:00:00Z",
        &format!(
            r#"{pred}, "claims": [{{"subject": "AuthService", "predicate": "streams_events_with", "object": "Kafka", "confidence": 0.95, "text": "we use Kafka for event streaming"}}]"#
        ),
    );
    let kinesis = msg(
        "c2",
        "m1",
        "2026-03-01T00:00:00Z",
        &format!(
            r#"{pred}, "claims": [{{"subject": "AuthService", "predicate": "streams_events_with", "object": "Kinesis", "confidence": 0.95, "text": "we switched to Kinesis for event streaming"}}]"#
        ),
    );
    let rabbit = msg(
        "c3",
        "m1",
        "2025-06-01T00:00:00Z",
        &format!(
            r#"{pred}, "claims": [{{"subject": "AuthService", "predicate": "streams_events_with", "object": "RabbitMQ", "confidence": 0.95}}]"#
        ),
    );
    db.ingest(&kafka, &o).unwrap();
    let r = db.ingest(&kinesis, &o).unwrap();
    assert_eq!(r.claims[0].outcome, Outcome::Superseded { old: vec!["c1/m1/0".into()] });
    let r = db.ingest(&rabbit, &o).unwrap();
    // RabbitMQ (June 2025) arrives last: history, superseded by the next value (Kafka, January).
    assert_eq!(r.claims[0].outcome, Outcome::History { newer: "c1/m1/0".into() });
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let get = |id: &str| ws.claim(ws.claim_id(id).unwrap()).unwrap();
    let (old, new, late) = (get("c1/m1/0"), get("c2/m1/0"), get("c3/m1/0"));
    assert_eq!((old.state, old.superseded_by, old.valid_until), (ClaimState::Deprecated, Some(new.id), new.valid_from));
    assert_eq!(new.state, ClaimState::Accepted);
    assert_eq!((late.state, late.superseded_by, late.valid_until), (ClaimState::Deprecated, Some(old.id), old.valid_from));
    let r = ws.recall(&RecallQuery::new("event streaming")).unwrap();
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("Kinesis") && !json.contains("Kafka") && !json.contains("RabbitMQ"), "{json}");
    // As valid on 2026-02-01 (and as believed then), Kafka was the value.
    let t = Timestamp::parse("2026-02-01T00:00:00Z").unwrap();
    let v = Visibility { as_of: Some(t), states: engram::StateSet::ALL, ..Visibility::default() };
    let auth = ws.entity_id("service:authservice").unwrap();
    let then = ws.neighbors(auth, &engram::NeighborQuery { visibility: v, ..Default::default() }).unwrap();
    assert_eq!(then.items.iter().map(|n| n.claim).collect::<Vec<_>>(), vec![old.id]);
}

#[test]
fn corroboration_combines_independent_sources_and_accepts() {
    let db = db();
    let o = IngestOptions::default();
    let doc = |conv: &str, m: &str, conf: f32| {
        msg(
            conv,
            m,
            "2026-01-01T00:00:00Z",
            &format!(
                r#""entities": [{{"name": "OAuth2", "type": "decision"}}, {{"name": "Architect", "type": "person"}}],
            "claims": [{{"subject": "OAuth2", "predicate": "decided_by", "object": "Architect", "confidence": {conf}}}]"#
            ),
        )
    };
    let r = db.ingest(&doc("c1", "m1", 0.5), &o).unwrap();
    assert_eq!(r.claims[0].outcome, Outcome::Created { state: ClaimState::Proposed });
    // The same conversation again: not independent, the larger confidence stays.
    let r = db.ingest(&doc("c1", "m2", 0.6), &o).unwrap();
    assert_eq!(r.claims[0].outcome, Outcome::Corroborated { confidence: 0.6, accepted: false });
    // Another conversation: noisy-OR, and a second conversation accepts it.
    let r = db.ingest(&doc("c2", "m1", 0.5), &o).unwrap();
    assert!(matches!(r.claims[0].outcome, Outcome::Corroborated { confidence, accepted: true } if (confidence - 0.8).abs() < 1e-6));
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let c = ws.claim(ws.claim_id("c1/m1/0").unwrap()).unwrap();
    assert_eq!(c.state, ClaimState::Accepted);
    assert_eq!(ws.evidence_of(c.id).unwrap().len(), 3, "every mention is evidence");
}

/// The `OAuth2` story: SAML first, then `OAuth2` chosen over it (decided by the architect), then
/// refined to `OAuth2` with PKCE, then corroborated; each verdict is the client classifier's.
#[test]
fn client_verdicts_corroborate_contradict_and_refine() {
    let db = db();
    let o = IngestOptions::default();
    db.ingest(&msg("c1", "m1", "2026-01-01T00:00:00Z", r#""entities": [{"name": "Auth", "type": "project"}, {"name": "SAML", "type": "protocol"}, {"name": "OAuth2", "type": "protocol"}, {"name": "OAuth2 PKCE", "type": "protocol"}],
        "claims": [{"id": "uses-saml", "subject": "Auth", "predicate": "uses", "object": "SAML", "confidence": 0.7}]"#), &o).unwrap();
    let r = db.ingest(&msg("c2", "m1", "2026-02-01T00:00:00Z", r#""entities": [{"name": "Priya", "type": "person"}],
        "claims": [{"id": "uses-oauth", "subject": "Auth", "predicate": "uses", "object": "OAuth2", "confidence": 0.95, "relation": {"contradicts": "uses-saml"}},
                   {"id": "decided", "subject": "OAuth2", "predicate": "decided_by", "object": "Priya", "confidence": 0.9, "reasoning": "Priya is the architect"}]"#), &o).unwrap();
    assert_eq!(r.claims[0].outcome, Outcome::Superseded { old: vec!["uses-saml".into()] });
    let r = db.ingest(&msg("c3", "m1", "2026-03-01T00:00:00Z", r#""claims": [{"id": "uses-pkce", "subject": "Auth", "predicate": "uses", "object": "OAuth2 PKCE", "confidence": 0.95, "relation": {"refines": "uses-oauth"}}]"#), &o).unwrap();
    assert_eq!(r.claims[0].outcome, Outcome::Superseded { old: vec!["uses-oauth".into()] });
    let r = db.ingest(&msg("c4", "m1", "2026-03-02T00:00:00Z", r#""claims": [{"subject": "Auth", "predicate": "uses", "object": "OAuth2 PKCE", "confidence": 0.5, "relation": {"corroborates": "uses-pkce"}}]"#), &o).unwrap();
    assert!(matches!(r.claims[0].outcome, Outcome::Corroborated { .. }));
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let state = |id: &str| ws.claim(ws.claim_id(id).unwrap()).unwrap();
    assert_eq!(state("uses-saml").state, ClaimState::Deprecated);
    assert_eq!(state("uses-oauth").superseded_by, Some(state("uses-pkce").id));
    assert_eq!(state("uses-pkce").state, ClaimState::Accepted);
    assert_eq!(state("uses-saml").valid_until, state("uses-oauth").valid_from, "SAML stopped being true when OAuth2 was chosen");
    assert_eq!(state("decided").state, ClaimState::Accepted);
    // What is current about Auth: PKCE, and who decided OAuth2 stays citable.
    let r = ws
        .recall(&RecallQuery { seeds: vec![ws.entity_id("project:auth").unwrap()], ..RecallQuery::new("which auth protocol do we use") })
        .unwrap();
    let ids: Vec<&str> = r.packed.facts.iter().map(|f| f.claim_id.as_str()).collect();
    assert!(ids.contains(&"uses-pkce") && !ids.contains(&"uses-saml") && !ids.contains(&"uses-oauth"), "{ids:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Whatever order the messages arrive in, the final states and valid-time intervals are those
    /// of applying them in `valid_from` order: the newest value current and open-ended, every
    /// other one deprecated and valid until the next one began.
    #[test]
    fn arrival_order_does_not_change_the_final_lifecycle(days in prop::collection::btree_set(1u32..300, 1..7), seed in any::<u64>()) {
        let days: Vec<u32> = days.into_iter().collect();
        let docs: Vec<(u32, String)> = days.iter().enumerate().map(|(i, d)| {
            let at = Timestamp::from_epoch_seconds(1_700_000_000 + i64::from(*d) * 86_400).to_rfc3339();
            (*d, msg(&format!("c{i}"), "m", &at, &format!(r#""predicates": [{{"name": "located_in", "cardinality": "one"}}],
                "entities": [{{"name": "Dana", "type": "person"}}, {{"name": "City {i}", "type": "city"}}],
                "claims": [{{"subject": "Dana", "predicate": "located_in", "object": "City {i}", "confidence": 0.95}}]"#)))
        }).collect();
        let states = |order: &[usize]| {
            let db = db();
            for &k in order {
                db.ingest(&docs[k].1, &IngestOptions::default()).unwrap();
                // Idempotent: a repeat changes nothing.
                prop_assert!(db.ingest(&docs[k].1, &IngestOptions::default()).unwrap().duplicate);
            }
            let snap = db.snapshot();
            let ws = snap.workspace("default").unwrap();
            Ok((0..docs.len())
                .map(|i| {
                    let c = ws.claim(ws.claim_id(&format!("c{i}/m/0")).unwrap()).unwrap();
                    (c.state, c.valid_until)
                })
                .collect::<Vec<_>>())
        };
        let mut sorted: Vec<usize> = (0..docs.len()).collect();
        sorted.sort_by_key(|k| docs[*k].0);
        let mut shuffled = sorted.clone();
        let mut x = seed;
        for i in (1..shuffled.len()).rev() {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            shuffled.swap(i, (x >> 33) as usize % (i + 1));
        }
        let want = states(&sorted)?;
        prop_assert_eq!(states(&shuffled)?, want.clone());
        let newest = sorted[sorted.len() - 1];
        for (i, (s, until)) in want.iter().enumerate() {
            prop_assert_eq!(*s == ClaimState::Accepted, i == newest);
            prop_assert_eq!(*until == Timestamp::MAX, i == newest, "only the current value is open-ended");
        }
    }
}

/// The report: quality by model version, calibration, density, freshness, from known ingests.
#[test]
fn the_report_measures_extraction_quality_calibration_density_and_freshness() {
    let db = db();
    let o = IngestOptions::default();
    let doc = |msg_id: &str, version: &str, object: &str, conf: f32, at: &str| {
        format!(
            r#"{{"source": {{"conversation_id": "c-{msg_id}", "message_id": "{msg_id}", "model": "ex", "model_version": "{version}", "extracted_at": "{at}"}},
               "predicates": [{{"name": "located_in", "cardinality": "one"}}],
               "entities": [{{"name": "Dana", "type": "person"}}, {{"name": "{object}", "type": "city"}}],
               "claims": [{{"subject": "Dana", "predicate": "located_in", "object": "{object}", "confidence": {conf}}}]}}"#
        )
    };
    db.ingest(&doc("m1", "1", "Lyon", 0.95, "2026-05-01T00:00:00Z"), &o).unwrap();
    db.ingest(&doc("m2", "2", "Paris", 0.55, "2026-05-02T00:00:00Z"), &o).unwrap();
    let snap = db.snapshot();
    let r = snap.workspace("default").unwrap().report();
    // Lyon (v1) was superseded by Paris (v2) in the same commit window: deprecated within 30 days.
    assert_eq!(r.models["ex@1"].claims, 1);
    assert_eq!(r.models["ex@1"].deprecated_within_30_days, 1);
    assert!((r.models["ex@1"].early_deprecation_rate - 1.0).abs() < 1e-9);
    assert_eq!(r.models["ex@2"].deprecated_within_30_days, 0);
    assert_eq!((r.calibration[9].claims, r.calibration[9].ever_accepted), (1, 1), "0.95: accepted, then deprecated");
    assert_eq!((r.calibration[5].claims, r.calibration[5].ever_accepted), (1, 0));
    assert_eq!(r.entities_per_type["city"], 2);
    assert_eq!(r.claims_per_predicate["located_in"], 2);
    assert_eq!(r.degree[3], 2, "Dana is in both claims");
    assert_eq!(r.current_claims, 1);
    assert!(r.newest_fact_age_days.is_some_and(|d| d > 0.0));
}

/// `forget` erases for good: after it (and a checkpoint), no index, no file holds the entity's
/// name, text, vector or the conversation's provenance; soft delete would have kept them.
#[test]
fn forget_leaves_no_trace_in_any_index_or_file() {
    use engram::{ForgetTarget, Op, VectorOptions, WriteBatch};
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let o = IngestOptions::default();
    db.ingest(&msg("c1", "m1", "2026-01-01T00:00:00Z", r#""entities": [{"name": "Dana Zyxwerth", "type": "person", "vector": [0.0, 0.0, 1.0]}, {"name": "Lyon", "type": "city", "vector": [1.0, 0.0, 0.0]}],
        "claims": [{"subject": "Dana Zyxwerth", "predicate": "lives_in", "object": "Lyon", "confidence": 0.95, "text": "Zyxwerth moved to Lyon", "vector": [0.0, 0.6, 0.8]},
                   {"subject": "Lyon", "predicate": "twinned_with", "object": "Lyon", "confidence": 0.95, "text": "a quiet qwvbnm fact"},
                   {"subject": "Lyon", "predicate": "located_in", "object": "Lyon", "confidence": 0.95}]"#), &o).unwrap();
    db.ingest(
        &msg(
            "c2",
            "m1",
            "2026-01-02T00:00:00Z",
            r#""entities": [{"name": "Lyon", "type": "city"}, {"name": "France", "type": "country"}],
        "claims": [{"subject": "Lyon", "predicate": "located_in", "object": "Lyon", "confidence": 0.9},
                   {"subject": "Lyon", "predicate": "in_country", "object": "France", "confidence": 0.9, "text": "Lyon is in France"}]"#,
        ),
        &o,
    )
    .unwrap();
    db.checkpoint().unwrap();
    let dana = db.snapshot().workspace("default").unwrap().entity_id("person:danazyxwerth").unwrap();
    let mut b = WriteBatch::new("default");
    b.push(Op::Forget(ForgetTarget::Entity("person:danazyxwerth".into())));
    b.push(Op::Forget(ForgetTarget::Conversation("c1".into())));
    db.write(&b).unwrap();

    let check = |db: &Database| {
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        let v = Visibility::all_versions();
        assert!(ws.find_by_name("Dana Zyxwerth").is_empty());
        assert!(ws.entity(dana).is_none());
        assert!(ws.search_entity_text("zyxwerth", 10, &v).unwrap().is_empty());
        assert!(ws.search_claim_text("zyxwerth", 10, &v).unwrap().is_empty());
        assert!(db.entity_vector(dana).is_none());
        let near =
            ws.search_entity_vectors(&[0.0, 0.0, 1.0], &VectorOptions { visibility: v.clone(), ..VectorOptions::default() }).unwrap();
        assert!(near.iter().all(|(e, _)| *e != dana));
        assert!(ws
            .search_claim_vectors(&[0.0, 0.6, 0.8], &VectorOptions { visibility: v.clone(), ..VectorOptions::default() })
            .unwrap()
            .is_empty());
        // The claim only c1 supported is gone; the one c2 also supports stays, without c1's evidence.
        assert!(ws.search_claim_text("qwvbnm", 10, &v).unwrap().is_empty());
        assert!(ws.claim_id("c1/m1/1").is_none());
        let shared = ws.claim_id("c1/m1/2").unwrap_or_else(|| panic!("kept: c2 supports it"));
        let ev = ws.evidence_of(shared).unwrap();
        assert!(ev.iter().all(|e| e.conversation_id.as_deref() != Some("c1")), "{ev:?}");
        let counts = snap.row_counts();
        assert_eq!((counts.entities, counts.claims), (2, 2));
        let r = ws.recall(&RecallQuery { visibility: v, ..RecallQuery::new("where does Zyxwerth live") }).unwrap();
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.to_lowercase().contains("zyxwerth") && !json.contains("\"c1\""), "{json}");
    };
    check(&db);
    db.checkpoint().unwrap();
    check(&db);
    drop(db);
    // Every file: snapshot, keyword index, vector files, WAL, access history.
    let files = std::fs::read_dir(dir.path()).unwrap().chain(std::fs::read_dir(dir.path().join("audit")).unwrap());
    for entry in files {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let lower = String::from_utf8_lossy(&bytes).to_lowercase();
        assert!(!lower.contains("zyxwerth") && !lower.contains("qwvbnm"), "{} still holds erased text", path.display());
    }
    let v = std::fs::read(dir.path().join(engram::VECTOR_FILE)).unwrap();
    let row = &v[64 + dana.0 as usize * 12..64 + dana.0 as usize * 12 + 12];
    assert!(row.iter().all(|b| *b == 0), "the erased vector row is zeroed in the file");
    let db = Database::open(dir.path()).unwrap();
    check(&db);
}

/// The CX refund follow-up (cx-context-graphs): a customer, orders, an open refund issue and its
/// escalation over three conversations; the customer's entity context lists the open refund
/// first, and an expired promise is not served.
#[test]
fn the_cx_refund_follow_up_puts_the_open_refund_first() {
    let clock = Arc::new(ManualClock::new(Timestamp::parse("2026-04-10T12:00:00Z").unwrap()));
    let db = Database::with_config(Config { clock: clock.clone(), ..Config::default() });
    let o = IngestOptions::default();
    let people = r#""entities": [{"name": "Maya Chen", "type": "customer", "aliases": ["maya.chen@example.com"]},
        {"name": "Order 1042", "type": "order"}, {"name": "Order 977", "type": "order"},
        {"name": "Refund for order 1042", "type": "issue"}, {"name": "Tier 2 support", "type": "team"}]"#;
    db.ingest(&msg("call-1", "t1", "2026-04-01T09:00:00Z", &format!(r#"{people}, "claims": [
        {{"subject": "Maya Chen", "predicate": "placed", "object": "Order 977", "confidence": 1.0, "text": "Maya placed order 977 in February, delivered"}},
        {{"subject": "Maya Chen", "predicate": "placed", "object": "Order 1042", "confidence": 1.0, "text": "Maya placed order 1042; it arrived damaged"}},
        {{"subject": "Maya Chen", "predicate": "opened", "object": "Refund for order 1042", "confidence": 0.95, "text": "Maya asked for a refund of order 1042 (damaged)"}},
        {{"subject": "Refund for order 1042", "predicate": "promised_by", "object": "Tier 2 support", "confidence": 0.9, "text": "agent promised a callback within 48 hours", "expires_at": "2026-04-03T09:00:00Z"}}]"#)), &o).unwrap();
    db.ingest(&msg("chat-2", "t1", "2026-04-05T15:00:00Z", r#""claims": [
        {"subject": "maya.chen@example.com", "predicate": "opened", "object": "Refund for order 1042", "confidence": 0.9, "text": "Maya followed up: refund still not received"}]"#), &o).unwrap();
    db.ingest(&msg("email-3", "t1", "2026-04-08T10:00:00Z", r#""claims": [
        {"subject": "Refund for order 1042", "predicate": "escalated_to", "object": "Tier 2 support", "confidence": 0.95, "text": "refund escalated to tier 2 after the second contact"}]"#), &o).unwrap();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let maya = ws.find_by_name("maya.chen@example.com")[0];
    assert_eq!(ws.find_by_name("Maya Chen"), vec![maya], "the email alias is the same customer");
    let q = engram::ContextQuery {
        predicates: vec!["opened".into(), "placed".into(), "escalated_to".into(), "promised_by".into()],
        ..Default::default()
    };
    let ctx = ws.entity_context(maya, &q).unwrap();
    let first = &ctx.packed.facts[0];
    assert_eq!((first.predicate.as_str(), first.object.name.as_str()), ("opened", "Refund for order 1042"), "{}", ctx.packed.context);
    assert_eq!(first.evidence.len(), 2, "two conversations about the refund");
    assert!(ctx.packed.context.contains("escalated to tier 2"), "{}", ctx.packed.context);
    assert!(!ctx.packed.context.contains("48 hours"), "the expired promise is not served: {}", ctx.packed.context);
}

/// The write path's thresholds are workspace settings: stored in the database (surviving a
/// reopen, from the WAL and from a checkpoint), applied when an ingest gives none, overridden by
/// one that does. Bad keys, values and workspaces are refused and change nothing.
#[test]
fn thresholds_are_stored_workspace_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let doc = |m: &str, conf: f32| {
        msg(
            "c1",
            m,
            "2026-03-01T10:00:00Z",
            &format!(
                r#""entities": [{{"name": "A{m}", "type": "t"}}, {{"name": "B{m}", "type": "t"}}],
                   "claims": [{{"subject": "A{m}", "predicate": "p", "object": "B{m}", "confidence": {conf}}}]"#
            ),
        )
    };
    let outcome = |db: &Database, m: &str, opts: &IngestOptions| db.ingest(&doc(m, 0.6), opts).unwrap().claims[0].outcome.clone();
    {
        let db = Database::open(&path).unwrap();
        assert_eq!(outcome(&db, "1", &IngestOptions::default()), Outcome::Created { state: ClaimState::Proposed });
        db.set_workspace_setting("default", "accept_confidence", "0.5").unwrap();
        assert_eq!(outcome(&db, "2", &IngestOptions::default()), Outcome::Created { state: ClaimState::Accepted });
        let strict = IngestOptions { accept_confidence: Some(0.95), ..IngestOptions::default() };
        assert_eq!(outcome(&db, "3", &strict), Outcome::Created { state: ClaimState::Proposed });
        let before = db.settings();
        assert!(db.set_workspace_setting("default", "accept_confidence", "1.5").is_err());
        assert!(db.set_workspace_setting("default", "no_such_key", "1").unwrap_err().to_string().contains("retention_days"));
        assert!(db.set_workspace_setting("nowhere", "accept_confidence", "0.5").unwrap_err().to_string().contains("nowhere"));
        assert_eq!(db.settings(), before, "refused settings change nothing");
    }
    for checkpoint in [false, true] {
        let db = Database::open(&path).unwrap();
        assert_eq!(db.settings().get_for("default", "accept_confidence").unwrap().as_deref(), Some("0.5"));
        let m = if checkpoint { "5" } else { "4" };
        assert_eq!(outcome(&db, m, &IngestOptions::default()), Outcome::Created { state: ClaimState::Accepted });
        if !checkpoint {
            db.checkpoint().unwrap();
        }
        db.wait_for_merge();
    }
    let db = Database::open(&path).unwrap();
    db.set_workspace_setting("default", "accept_confidence", "-").unwrap();
    assert_eq!(outcome(&db, "6", &IngestOptions::default()), Outcome::Created { state: ClaimState::Proposed });
    db.create_workspace("other").unwrap();
    db.set_workspace_setting("other", "retention_days", "7").unwrap();
    db.drop_workspace("other").unwrap();
    assert!(db.settings().workspaces.is_empty(), "a dropped workspace's settings go with it");
}

/// Retention: with `retention_days` set, claims deleted or expired longer ago than that are
/// erased from every index; newer history and live claims stay. Unset, nothing is written.
#[test]
fn retention_erases_old_deleted_and_expired_history() {
    use engram::{AddClaim, Op, WriteBatch};
    let clock = Arc::new(ManualClock::new(Timestamp::from_epoch_seconds(1_780_000_000)));
    let db = Database::with_config(Config { clock: clock.clone(), ..Config::default() });
    let day = 86_400;
    let mut b = WriteBatch::new("default");
    b.upsert_entity("a", "t", "A");
    b.upsert_entity("b", "t", "B");
    for (id, text) in [("old-deleted", "zebra stripes"), ("old-expired", "quartz"), ("live", "granite"), ("new-deleted", "basalt")] {
        let mut c = AddClaim::new("a", "p", "b").id(id).text(text);
        if id == "old-expired" {
            c = c.expires(Timestamp::from_epoch_seconds(1_780_000_000 + day));
        }
        b.add_claim(c);
    }
    db.write(&b).unwrap();
    let delete = |id: &str| {
        let mut b = WriteBatch::new("default");
        b.push(Op::DeleteClaim { claim: id.into() });
        db.write(&b).unwrap();
    };
    delete("old-deleted");
    clock.advance_seconds(9 * day);
    delete("new-deleted");
    clock.advance_seconds(day);
    let all = Visibility { all_versions: true, ..Visibility::default() };
    let found = |word: &str| !db.snapshot().workspace("default").unwrap().search_claim_text(word, 10, &all).unwrap().is_empty();
    assert!(found("zebra") && found("quartz"), "history is searchable with all versions before retention");
    let version = db.snapshot().version();
    assert_eq!(db.apply_retention("default").unwrap(), 0);
    assert_eq!(db.snapshot().version(), version, "no setting: nothing written");
    db.set_workspace_setting("default", "retention_days", "5").unwrap();
    assert_eq!(db.apply_retention("default").unwrap(), 2);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    for (id, kept) in [("old-deleted", false), ("old-expired", false), ("live", true), ("new-deleted", true)] {
        assert_eq!(ws.claim_id(id).is_some(), kept, "{id}");
    }
    for word in ["zebra", "quartz"] {
        assert!(!found(word), "erased text `{word}` is still searchable");
    }
    assert!(found("granite") && found("basalt"));
    assert_eq!(db.apply_retention("default").unwrap(), 0, "erased history is not counted twice");
}

/// A classifier plugged in by an embedded user decides what clients otherwise say: here, a new
/// `uses` claim about the same subject contradicts the current one, and one whose object extends
/// the current object's name refines it. Its verdicts are applied like a client's; claims that
/// carry a verdict, and claims with no candidates, never reach it.
#[test]
fn a_plugged_classifier_gives_the_verdicts() {
    use engram::classifier::{Candidate, ClaimClassifier};
    use engram::ingest::{IngestDoc, Relation};
    use std::sync::atomic::{AtomicUsize, Ordering};
    struct Rules(AtomicUsize);
    impl ClaimClassifier for Rules {
        fn classify(&self, doc: &IngestDoc, claim: usize, candidates: &[Candidate]) -> Option<Relation> {
            self.0.fetch_add(1, Ordering::Relaxed);
            let c = &doc.claims[claim];
            let old = candidates.iter().find(|x| x.predicate == c.predicate && x.state != ClaimState::Deprecated)?;
            if c.object.starts_with(&old.object) {
                Some(Relation::Refines(old.claim.clone()))
            } else {
                Some(Relation::Contradicts(old.claim.clone()))
            }
        }
    }
    let db = db();
    let rules = Arc::new(Rules(AtomicUsize::new(0)));
    db.set_classifier(Some(rules.clone()));
    let o = IngestOptions::default();
    db.ingest(&msg("c1", "m1", "2026-01-01T00:00:00Z", r#""entities": [{"name": "Auth", "type": "project"}, {"name": "SAML", "type": "protocol"}, {"name": "OAuth2", "type": "protocol"}, {"name": "OAuth2 PKCE", "type": "protocol"}],
        "claims": [{"id": "uses-saml", "subject": "Auth", "predicate": "uses", "object": "SAML", "confidence": 0.7}]"#), &o).unwrap();
    assert_eq!(rules.0.load(Ordering::Relaxed), 0, "no candidates: not asked");
    let r = db
        .ingest(
            &msg(
                "c2",
                "m1",
                "2026-02-01T00:00:00Z",
                r#""claims": [{"id": "uses-oauth", "subject": "Auth", "predicate": "uses", "object": "OAuth2", "confidence": 0.95}]"#,
            ),
            &o,
        )
        .unwrap();
    assert_eq!(r.claims[0].outcome, Outcome::Superseded { old: vec!["uses-saml".into()] });
    let r = db
        .ingest(
            &msg(
                "c3",
                "m1",
                "2026-03-01T00:00:00Z",
                r#""claims": [{"id": "uses-pkce", "subject": "Auth", "predicate": "uses", "object": "OAuth2 PKCE", "confidence": 0.95}]"#,
            ),
            &o,
        )
        .unwrap();
    assert_eq!(r.claims[0].outcome, Outcome::Superseded { old: vec!["uses-oauth".into()] });
    assert_eq!(rules.0.load(Ordering::Relaxed), 2);
    // A client's verdict wins: the classifier is not asked.
    let r = db.ingest(&msg("c4", "m1", "2026-03-02T00:00:00Z", r#""claims": [{"subject": "Auth", "predicate": "uses", "object": "OAuth2 PKCE", "confidence": 0.5, "relation": {"corroborates": "uses-pkce"}}]"#), &o).unwrap();
    assert!(matches!(r.claims[0].outcome, Outcome::Corroborated { .. }));
    assert_eq!(rules.0.load(Ordering::Relaxed), 2);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let state = |id: &str| ws.claim(ws.claim_id(id).unwrap()).unwrap();
    assert_eq!(state("uses-saml").state, ClaimState::Deprecated);
    assert_eq!(state("uses-oauth").superseded_by, Some(state("uses-pkce").id));
    assert_eq!(state("uses-pkce").state, ClaimState::Accepted);
}

/// Words that name one entity each, and whose keyword tokens appear nowhere else.
const WORDS: [&str; 6] = ["Alvaqix", "Borvutz", "Cimplex", "Dravnik", "Eskulon", "Fyrthag"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// `forget` of a random entity or conversation, after random ingests (claims repeated across
    /// conversations corroborate each other): nothing forgotten is found again by name, keyword
    /// (entity names, claim texts), vector, id, evidence or recall, and the row counts drop by
    /// exactly what was derived from it alone — everything else stays.
    #[test]
    fn forget_leaves_no_trace_in_any_index(
        convs in prop::collection::vec(prop::collection::vec((0usize..6, 0usize..6, any::<bool>()), 1..4), 2..5),
        forget_entity in any::<bool>(),
        pick in any::<prop::sample::Index>(),
    ) {
        use engram::{ClaimId, EntityId, ForgetTarget, Op, VectorOptions, WriteBatch};
        let db = db();
        let one_hot = |k: usize| (0..6).map(|i| if i == k { 1.0f32 } else { 0.0 }).collect::<Vec<f32>>();
        for (c, claims) in convs.iter().enumerate() {
            let mut used: Vec<usize> = claims.iter().flat_map(|(s, o, _)| [*s, *o]).collect();
            used.sort_unstable();
            used.dedup();
            let entities: Vec<String> = used.iter().map(|k| format!(r#"{{"name": "{}", "type": "thing", "vector": {:?}}}"#, WORDS[*k], one_hot(*k))).collect();
            let claims: Vec<String> = claims.iter().enumerate().map(|(j, (s, o, p))| {
                format!(r#"{{"subject": "{}", "predicate": "{}", "object": "{}", "confidence": 0.6, "text": "note qz{c}x{j} about {}"}}"#,
                    WORDS[*s], if *p { "knows" } else { "visits" }, WORDS[*o], WORDS[*s])
            }).collect();
            let doc = msg(&format!("conv{c}"), "m", &format!("2026-01-0{}T00:00:00Z", c + 1),
                &format!(r#""entities": [{}], "claims": [{}]"#, entities.join(", "), claims.join(", ")));
            db.ingest(&doc, &IngestOptions::default()).unwrap();
        }
        let v = Visibility::all_versions();
        // Before: every claim with its evidence's conversations, and the entities.
        let (claims_before, entities_before) = {
            let snap = db.snapshot();
            let ws = snap.workspace("default").unwrap();
            let hits = ws.search_claim_text("note", 1000, &v).unwrap();
            let claims: Vec<(ClaimId, String, EntityId, EntityId, Vec<String>)> = hits.iter().map(|h| {
                let c = ws.claim(h.0).unwrap();
                let convs = ws.evidence_of(h.0).unwrap().iter().filter_map(|e| e.conversation_id.as_deref().map(str::to_owned)).collect();
                (h.0, c.ext_id.to_string(), c.subject, c.object, convs)
            }).collect();
            let entities: Vec<(usize, EntityId)> = (0..6).filter_map(|k| ws.find_by_name(WORDS[k]).first().map(|e| (k, *e))).collect();
            (claims, entities)
        };
        let counts_before = db.snapshot().row_counts();
        let mut b = WriteBatch::new("default");
        // (forgotten entity, forgotten conversation)
        let (gone_entity, gone_conv) = if forget_entity {
            let (k, e) = entities_before[pick.index(entities_before.len())];
            let ext = db.snapshot().workspace("default").unwrap().entity(e).unwrap().ext_id.to_string();
            b.push(Op::Forget(ForgetTarget::Entity(ext.as_str().into())));
            (Some((k, e)), None)
        } else {
            let c = format!("conv{}", pick.index(convs.len()));
            b.push(Op::Forget(ForgetTarget::Conversation(c.as_str().into())));
            (None, Some(c))
        };
        db.write(&b).unwrap();

        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        let recall_of = |q: &str| serde_json::to_string(&ws.recall(&RecallQuery { visibility: v.clone(), ..RecallQuery::new(q) }).unwrap()).unwrap();
        let mut erased_claims = 0;
        for (id, ext, s, o, from) in &claims_before {
            let erased = match (&gone_entity, &gone_conv) {
                (Some((_, e)), _) => s == e || o == e,
                (_, Some(c)) => from.iter().all(|x| x == c),
                _ => unreachable!(),
            };
            if erased {
                erased_claims += 1;
                prop_assert!(ws.claim(*id).is_none() && ws.claim_id(ext).is_none(), "claim {ext} survives");
                prop_assert!(ws.search_claim_text("note", 1000, &v).unwrap().iter().all(|h| h.0 != *id));
            } else {
                prop_assert!(ws.claim(*id).is_some(), "claim {ext} was not derived from what was forgotten");
                if let Some(c) = &gone_conv {
                    prop_assert!(ws.evidence_of(*id).unwrap().iter().all(|e| e.conversation_id.as_deref() != Some(c.as_str())));
                }
            }
        }
        let counts = snap.row_counts();
        prop_assert_eq!(counts.claims, counts_before.claims - erased_claims);
        if let Some((k, e)) = gone_entity {
            prop_assert_eq!(counts.entities, counts_before.entities - 1);
            prop_assert!(ws.find_by_name(WORDS[k]).is_empty());
            prop_assert!(ws.entity(e).is_none());
            prop_assert!(ws.search_entity_text(WORDS[k], 10, &v).unwrap().is_empty());
            prop_assert!(ws.search_claim_text(WORDS[k], 100, &v).unwrap().is_empty(), "claim texts about it are gone too");
            prop_assert!(db.entity_vector(e).is_none());
            let near = ws.search_entity_vectors(&one_hot(k), &VectorOptions { visibility: v.clone(), ..VectorOptions::default() }).unwrap();
            prop_assert!(near.iter().all(|(x, _)| *x != e));
            prop_assert!(!recall_of(WORDS[k]).to_lowercase().contains(&WORDS[k].to_lowercase()));
            // The other entities keep their names, keywords and vectors.
            for (j, other) in entities_before.iter().filter(|x| x.1 != e) {
                prop_assert_eq!(ws.find_by_name(WORDS[*j]), vec![*other]);
                prop_assert!(ws.search_entity_text(WORDS[*j], 10, &v).unwrap().iter().any(|h| h.0 == *other));
            }
        }
        if let Some(c) = &gone_conv {
            prop_assert_eq!(counts.entities, counts_before.entities, "a conversation's forget leaves entities others name");
            for (_, ext, ..) in &claims_before {
                if ext.starts_with(&format!("{c}/")) && ws.claim_id(ext).is_none() {
                    // `conv{c}/m/{j}` wrote the text token `qz{c}x{j}`.
                    let (conv, j) = (&ext[4..ext.find('/').unwrap()], &ext[ext.rfind('/').unwrap() + 1..]);
                    let token = format!("qz{conv}x{j}");
                    prop_assert!(ws.search_claim_text(&token, 10, &v).unwrap().is_empty(), "{token} still found");
                    prop_assert!(!recall_of(&token).contains(&token));
                }
            }
        }
    }
}

/// A document without a source has no idempotency key: the report says so, and a repeat adds
/// evidence without raising the confidence (no independent source).
#[test]
fn a_document_without_a_source_is_not_idempotent_and_says_so() {
    let db = db();
    let doc = r#"{"entities": [{"name": "A", "type": "t"}, {"name": "B", "type": "t"}],
                  "claims": [{"subject": "A", "predicate": "p", "object": "B", "confidence": 0.6}]}"#;
    let first = db.ingest(doc, &IngestOptions::default()).unwrap();
    assert!(first.warnings[0].contains("not idempotent"), "{:?}", first.warnings);
    let again = db.ingest(doc, &IngestOptions::default()).unwrap();
    assert!(!again.duplicate);
    assert_eq!(again.claims[0].outcome, Outcome::Corroborated { confidence: 0.6, accepted: false });
    let keyed = db.ingest(ISSUE_DOC, &IngestOptions::default()).unwrap();
    assert!(keyed.warnings.is_empty());
}

/// `ingest_docs`: each document its own transaction, planned after the ones before it (the
/// second sees the first's entities), a rejected one alone, one fsync for the group; the
/// result equals ingesting them one by one.
#[test]
fn a_group_of_documents_commits_each_atomically_with_one_fsync() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = [
        msg(
            "c1",
            "m1",
            "2026-03-01T00:00:00Z",
            r#""entities": [{"name": "A", "type": "t"}, {"name": "B", "type": "t"}], "claims": [{"subject": "A", "predicate": "p", "object": "B", "confidence": 0.6}]"#,
        ),
        msg("c1", "m2", "2026-03-01T00:00:00Z", r#""claims": [{"subject": "a", "predicate": "p", "object": "Ghost", "confidence": 0.6}]"#),
        msg("c2", "m1", "2026-03-02T00:00:00Z", r#""claims": [{"subject": "a", "predicate": "p", "object": "b", "confidence": 0.7}]"#),
        msg("c1", "m1", "2026-03-01T00:00:00Z", r#""claims": [{"subject": "a", "predicate": "q", "object": "b", "confidence": 0.6}]"#),
    ];
    let parsed: Vec<_> = docs.iter().map(|d| engram::ingest::parse(d).unwrap()).collect();
    let grouped = Database::open(tmp.path().join("g")).unwrap();
    let before = grouped.commit_stats();
    let reports = grouped.ingest_docs(parsed, &IngestOptions::default()).unwrap();
    let after = grouped.commit_stats();
    assert_eq!(after.fsyncs - before.fsyncs, 1, "one fsync for the group");
    assert!(reports[1].is_err(), "the bad reference is rejected alone");
    assert_eq!(reports[2].as_ref().unwrap().claims[0].outcome, Outcome::Corroborated { confidence: 0.88, accepted: true });
    assert!(reports[3].as_ref().unwrap().duplicate);
    let single = Database::open(tmp.path().join("s")).unwrap();
    for d in &docs {
        let _ = single.ingest(d, &IngestOptions::default());
    }
    let dump = |db: &Database| {
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        let mut facts: Vec<_> = ClaimState::ALL
            .iter()
            .flat_map(|&st| ws.claims_with(None, st))
            .filter_map(|c| ws.claim(c))
            .map(|c| (c.ext_id.to_string(), c.confidence, c.state))
            .collect();
        facts.sort_by(|a, b| a.0.cmp(&b.0));
        facts
    };
    assert_eq!(dump(&grouped), dump(&single));
    drop(grouped);
    assert_eq!(dump(&Database::open(tmp.path().join("g")).unwrap()), dump(&single), "the group is durable");
}
