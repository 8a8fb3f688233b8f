//! Recall ranks the answer first: the example story (the authentication service migration), typed
//! facts with no text, and the CX refund follow-up, ingested as extraction documents with `MiniLM`
//! and with the static table, and questions whose answer is one fact. At a budget of 100 tokens
//! (two or three fact lines) the expected fact is the first line, with either embedder. A question
//! of stop words only has no lexical hits.

use engram::ingest::IngestOptions;
use engram::{Config, Database, ManualClock, RecallQuery, Timestamp};
use std::sync::Arc;

fn doc(conv: &str, at: &str, body: &str) -> String {
    format!(r#"{{"source": {{"conversation_id": "{conv}", "message_id": "m", "extracted_at": "{at}"}}, {body}}}"#)
}

/// The story of the example (`engine/examples/agent_memory.rs`), as an extractor would give it.
fn story() -> Vec<String> {
    vec![
        doc(
            "conv-3",
            "2026-01-05T10:00:00Z",
            r#""predicates": [{"name": "streams_events_with", "cardinality": "one"}],
            "entities": [{"name": "AuthService", "type": "service"}, {"name": "Kafka", "type": "technology"}, {"name": "Platform team", "type": "team"}],
            "claims": [{"subject": "AuthService", "predicate": "streams_events_with", "object": "Kafka", "confidence": 0.95, "text": "We are using Kafka for event streaming"},
                       {"subject": "Platform team", "predicate": "owns", "object": "AuthService", "confidence": 0.95, "text": "The platform team owns AuthService"}]"#,
        ),
        doc(
            "conv-23",
            "2026-02-10T10:00:00Z",
            r#""entities": [{"name": "OAuth2 decision", "type": "decision"}, {"name": "Architect", "type": "person"}, {"name": "Auth service migration", "type": "project"}],
            "claims": [{"subject": "OAuth2 decision", "predicate": "decided_by", "object": "Architect", "confidence": 0.95, "text": "Decision in conversation 23: OAuth2 instead of SAML, SAML is too heavy for us"},
                       {"subject": "Auth service migration", "predicate": "implements", "object": "OAuth2 decision", "confidence": 0.95, "text": "The auth service migration implements the OAuth2 decision"}]"#,
        ),
        doc(
            "conv-38",
            "2026-02-20T10:00:00Z",
            r#""entities": [{"name": "Compatibility risk", "type": "risk"}, {"name": "Auth service migration", "type": "project"}],
            "claims": [{"subject": "Compatibility risk", "predicate": "blocked_by", "object": "Auth service migration", "confidence": 0.6, "text": "The architect flagged a backwards compatibility risk: old clients still send SAML assertions"}]"#,
        ),
        doc(
            "conv-41",
            "2026-03-01T10:00:00Z",
            r#""entities": [{"name": "AuthService", "type": "service"}, {"name": "Kinesis", "type": "technology"}],
            "claims": [{"subject": "AuthService", "predicate": "streams_events_with", "object": "Kinesis", "confidence": 0.95, "text": "We switched from Kafka to Kinesis for event streaming"}]"#,
        ),
        doc(
            "conv-44",
            "2026-03-20T09:00:00Z",
            r#""entities": [{"name": "AuthService", "type": "service"}, {"name": "Kinesis lag alarm", "type": "incident"}],
            "claims": [{"subject": "Kinesis lag alarm", "predicate": "affects", "object": "AuthService", "confidence": 0.8, "text": "Kinesis lag alarms fired twice this week for AuthService events"}]"#,
        ),
    ]
}

/// The CX refund follow-up of `tests/ingest.rs`.
fn refund() -> Vec<String> {
    let people = r#""entities": [{"name": "Maya Chen", "type": "customer", "aliases": ["maya.chen@example.com"]},
        {"name": "Order 1042", "type": "order"}, {"name": "Order 977", "type": "order"},
        {"name": "Refund for order 1042", "type": "issue"}, {"name": "Tier 2 support", "type": "team"}]"#;
    vec![
        doc(
            "call-1",
            "2026-04-01T09:00:00Z",
            &format!(
                r#"{people}, "claims": [
            {{"subject": "Maya Chen", "predicate": "placed", "object": "Order 977", "confidence": 1.0, "text": "Maya placed order 977 in February, delivered"}},
            {{"subject": "Maya Chen", "predicate": "placed", "object": "Order 1042", "confidence": 1.0, "text": "Maya placed order 1042; it arrived damaged"}},
            {{"subject": "Maya Chen", "predicate": "opened", "object": "Refund for order 1042", "confidence": 0.95, "text": "Maya asked for a refund of order 1042 (damaged)"}}]"#
            ),
        ),
        doc(
            "chat-2",
            "2026-04-05T15:00:00Z",
            r#""claims": [
            {"subject": "maya.chen@example.com", "predicate": "opened", "object": "Refund for order 1042", "confidence": 0.9, "text": "Maya followed up: refund still not received"}]"#,
        ),
        doc(
            "email-3",
            "2026-04-08T10:00:00Z",
            r#""claims": [
            {"subject": "Refund for order 1042", "predicate": "escalated_to", "object": "Tier 2 support", "confidence": 0.95, "text": "The refund was escalated to tier 2 after the second contact"}]"#,
        ),
    ]
}

/// Typed facts with no text, as an extractor that gives only triples writes them: the question
/// names the relation, and nothing else tells the facts about `AuthService` apart.
fn triples() -> Vec<String> {
    vec![doc(
        "conv-7",
        "2026-05-02T10:00:00Z",
        r#""entities": [{"name": "AuthService", "type": "service"}, {"name": "UpstreamService", "type": "service"},
            {"name": "Platform team", "type": "team"}, {"name": "eu-west-1", "type": "region"}, {"name": "Rust", "type": "language"},
            {"name": "Priya", "type": "person"}, {"name": "Kinesis", "type": "technology"}],
        "claims": [{"subject": "AuthService", "predicate": "depends_on", "object": "UpstreamService", "confidence": 0.9},
                   {"subject": "AuthService", "predicate": "deployed_in", "object": "eu-west-1", "confidence": 0.9},
                   {"subject": "AuthService", "predicate": "written_in", "object": "Rust", "confidence": 0.9},
                   {"subject": "Priya", "predicate": "maintains", "object": "AuthService", "confidence": 0.9},
                   {"subject": "AuthService", "predicate": "streams_events_with", "object": "Kinesis", "confidence": 0.9},
                   {"subject": "Platform team", "predicate": "owns", "object": "AuthService", "confidence": 0.9}]"#,
    )]
}

/// Typed facts of one relation with no text: the question names the kind of thing it asks for,
/// and only the types of the facts' objects tell them apart.
fn kinds() -> Vec<String> {
    vec![doc(
        "conv-8",
        "2026-05-02T10:00:00Z",
        r#""entities": [{"name": "AuthService", "type": "service"}, {"name": "Postgres", "type": "database"},
            {"name": "Redis", "type": "cache"}, {"name": "Kafka", "type": "queue"}, {"name": "Vault", "type": "secret_store"}],
        "claims": [{"subject": "AuthService", "predicate": "uses", "object": "Postgres", "confidence": 0.9},
                   {"subject": "AuthService", "predicate": "uses", "object": "Redis", "confidence": 0.9},
                   {"subject": "AuthService", "predicate": "uses", "object": "Kafka", "confidence": 0.9},
                   {"subject": "AuthService", "predicate": "uses", "object": "Vault", "confidence": 0.9}]"#,
    )]
}

/// A scenario: its name, its documents, its "now", and each question with the claim that answers
/// it (`conversation/message/index`).
type Scenario = (&'static str, Vec<String>, &'static str, Vec<(&'static str, &'static str)>);

fn cases() -> Vec<Scenario> {
    vec![
        (
            "story",
            story(),
            "2026-03-25T12:00:00Z",
            vec![
                ("What does AuthService use for event streaming?", "conv-41/m/0"),
                ("Who owns AuthService?", "conv-3/m/1"),
                ("Why did we choose OAuth2 over SAML?", "conv-23/m/0"),
                ("Is there a compatibility risk with old clients?", "conv-38/m/0"),
                ("Were there any Kinesis lag alarms?", "conv-44/m/0"),
            ],
        ),
        (
            "triples",
            triples(),
            "2026-05-03T12:00:00Z",
            vec![
                ("What does AuthService depend on?", "conv-7/m/0"),
                ("Where is AuthService deployed?", "conv-7/m/1"),
                ("Which language is AuthService written in?", "conv-7/m/2"),
                ("Who maintains AuthService?", "conv-7/m/3"),
                ("What does AuthService use for event streaming?", "conv-7/m/4"),
                ("Who owns AuthService?", "conv-7/m/5"),
            ],
        ),
        (
            "kinds",
            kinds(),
            "2026-05-03T12:00:00Z",
            vec![
                ("Which database does AuthService use?", "conv-8/m/0"),
                ("Which cache does AuthService use?", "conv-8/m/1"),
                ("What queue does AuthService use?", "conv-8/m/2"),
                ("Which secret store does AuthService use?", "conv-8/m/3"),
            ],
        ),
        (
            "refund",
            refund(),
            "2026-04-10T12:00:00Z",
            vec![
                ("Was Maya's refund escalated?", "email-3/m/0"),
                ("What did Maya order in February?", "call-1/m/0"),
                ("Which order arrived damaged?", "call-1/m/1"),
            ],
        ),
    ]
}

fn run(embedder: &str) {
    let (e, _) =
        engram::embed::select(Some(embedder), None, 384).unwrap_or_else(|e| panic!("{embedder}: {e} (run scripts/fetch-model.sh)"));
    let mut failures = Vec::new();
    for (name, docs, now, questions) in cases() {
        let clock = Arc::new(ManualClock::new(Timestamp::parse(now).unwrap()));
        let db = Database::with_config(Config { clock, ..Config::default() });
        db.set_embedder(e.clone()).unwrap();
        for d in &docs {
            db.ingest(d, &IngestOptions::default()).unwrap();
        }
        let snap = db.snapshot();
        let ws = snap.workspace("default").unwrap();
        for (question, want) in questions {
            let vector = db.embed_query(question).unwrap();
            let r = ws.recall(&RecallQuery { budget: 100, vector, ..RecallQuery::new(question) }).unwrap();
            let first = r.packed.facts.first().map(|f| f.claim_id.as_str());
            if std::env::var_os("RANKING_VERBOSE").is_some() {
                let wide = ws
                    .recall(&RecallQuery { budget: 2000, vector: db.embed_query(question).unwrap(), ..RecallQuery::new(question) })
                    .unwrap();
                let top: Vec<String> = wide.packed.facts.iter().take(3).map(|f| format!("{} {:.3}", f.claim_id, f.score)).collect();
                eprintln!("{embedder} {question}: {}", top.join(" | "));
            }
            if first != Some(want) {
                let wide = ws
                    .recall(&RecallQuery { budget: 2000, vector: db.embed_query(question).unwrap(), ..RecallQuery::new(question) })
                    .unwrap();
                let why: Vec<String> =
                    wide.packed.facts.iter().take(5).map(|f| format!("{} {:.4} {:?}", f.claim_id, f.score, f.ranks)).collect();
                failures.push(format!("{embedder} {name}: {question} → {first:?}, want {want}\n{}", why.join("\n")));
            }
        }
        // Stop words only: nothing matches lexically.
        let r = ws.recall(&RecallQuery { budget: 100, ..RecallQuery::new("the and of what is") }).unwrap();
        assert!(r.packed.facts.iter().all(|f| f.ranks.lexical.is_none()), "stop words matched: {}", r.packed.context);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_answer_ranks_first_with_minilm() {
    run("minilm");
}

#[test]
fn the_answer_ranks_first_with_the_static_table() {
    run("static");
}
