//! The scenario of "Scaling agent context with knowledge graphs": an internal assistant's memory of
//! the authentication service migration, built through the embedded API and kept in a local folder
//! (`./engram-data`, or the folder given as the first argument). The first run writes the memory;
//! later runs find it on disk. Prints the two-hop neighbourhood of the migration and the
//! Kafka → Kinesis supersession, ingests a new message of extractor output (once: a re-run is
//! recognised as the same message), and shows what an agent gets back for a question: the
//! context block, within a token budget, each fact citing its evidence. The memory's clock is the
//! story's, the day after its last message (2026-03-21): what recall weighs by age (the decay of
//! `streams_events_with`, recency) reads the same on whatever day the example runs.
//!
//! Run: `cargo run --release --example agent_memory [-- FOLDER]`

use engram::{
    AddClaim, AddEvidence, ClaimState, Config, Database, DeclarePredicate, Direction, KHopQuery, ManualClock, Op, OsVfs, StateSet,
    Timestamp, Visibility, WriteBatch,
};
use std::sync::Arc;

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("literal times are valid")
}

fn evidence(claim: &str, conversation: &str, message: &str, snippet: &str) -> Op {
    Op::AddEvidence(AddEvidence {
        claim: Some(claim.into()),
        conversation_id: Some(conversation.into()),
        message_id: Some(message.into()),
        model: Some("extractor".into()),
        model_version: Some("1.2".into()),
        raw_confidence: Some(0.9),
        snippet: Some(snippet.into()),
        ..AddEvidence::default()
    })
}

fn main() -> Result<(), engram::Error> {
    let folder = std::env::args().nth(1).unwrap_or_else(|| "engram-data".to_owned());
    let clock = Arc::new(ManualClock::new(at("2026-03-21T12:00:00Z")));
    let db = Database::open_with(&folder, Config { clock, ..Config::default() }, Arc::new(OsVfs))?;
    let known = db.snapshot().workspace("default")?.entity_id("auth-migration").is_some();
    if known {
        println!("(memory found in {folder}/, {} commits)\n", db.snapshot().version());
    } else {
        remember(&db)?;
        println!("(memory written to {folder}/)\n");
    }
    recall(&db)?;
    ingest_and_ask(&db)
}

/// A new message's extraction arrives; then the agent asks before answering.
fn ingest_and_ask(db: &Database) -> Result<(), engram::Error> {
    let extraction = r#"{"source": {"conversation_id": "conv-44", "message_id": "m-2", "model": "extractor", "model_version": "1.2",
                                    "extracted_at": "2026-03-20T09:00:00Z", "snippet": "Kinesis lag alarms fired twice this week"},
        "entities": [{"name": "AuthService", "type": "service"}, {"name": "Kinesis lag alarm", "type": "incident"}],
        "claims": [{"subject": "Kinesis lag alarm", "predicate": "affects", "object": "AuthService", "confidence": 0.8,
                    "text": "Kinesis lag alarms fired twice this week for AuthService events"}]}"#;
    let report = db.ingest(extraction, &engram::ingest::IngestOptions::default())?;
    if report.duplicate {
        println!("\nIngest of conv-44/m-2: already in memory, nothing written");
    } else {
        let how: Vec<String> = report.entities.iter().map(|r| format!("{} → {} ({:?})", r.name, r.entity, r.how)).collect();
        println!("\nIngested conv-44/m-2: {}", how.join("; "));
    }
    let snap = db.snapshot();
    let ws = snap.workspace("default")?;
    let question = "What does AuthService use for event streaming, and is it healthy?";
    let r = ws.recall(&engram::RecallQuery { budget: 400, ..engram::RecallQuery::new(question) })?;
    println!(
        "\nRecall for \"{question}\" ({} of {} tokens, {} cut; paths {}):\n{}",
        r.packed.tokens_used,
        r.packed.budget,
        r.packed.cut,
        r.paths_run.join("+"),
        r.packed.context
    );
    Ok(())
}

/// What the extraction pipeline wrote after conversations 3 to 41.
fn remember(db: &Database) -> Result<(), engram::Error> {
    // Conversations 3..23: the first facts.
    let mut b = WriteBatch::new("default");
    b.upsert_entity("auth-migration", "project", "Auth Service Migration")
        .upsert_entity("auth", "service", "AuthService")
        .upsert_entity("upstream", "service", "UpstreamService")
        .upsert_entity("upstream-deprecation", "decision", "UpstreamService deprecation timeline")
        .upsert_entity("oauth2-decision", "decision", "Use OAuth2 instead of SAML")
        .upsert_entity("architect", "person", "Priya (architect)")
        .upsert_entity("platform", "team", "Platform Team")
        .upsert_entity("kafka", "technology", "Kafka")
        .upsert_entity("kinesis", "technology", "Kinesis")
        .upsert_entity("compat-risk", "incident", "Backwards compatibility risk");
    b.push(Op::DeclarePredicate(DeclarePredicate { half_life_days: Some(180.0), ..DeclarePredicate::new("streams_events_with") }));
    let accepted = |c: AddClaim| c.state(ClaimState::Accepted);
    b.add_claim(accepted(AddClaim::new("auth-migration", "part_of", "auth").id("m1").text("The migration is about AuthService")))
        .add_claim(accepted(
            AddClaim::new("auth-migration", "blocked_by", "upstream-deprecation")
                .id("m2")
                .confidence(0.85)
                .text("The migration depends on the UpstreamService deprecation timeline"),
        ))
        .add_claim(accepted(AddClaim::new("upstream-deprecation", "part_of", "upstream").id("m3")))
        .add_claim(accepted(AddClaim::new("auth", "depends_on", "upstream").id("m4").confidence(0.95)))
        .add_claim(accepted(AddClaim::new("platform", "owns", "auth").id("m5")))
        .add_claim(accepted(
            AddClaim::new("oauth2-decision", "decided_by", "architect")
                .id("d1")
                .text("Decision in conversation 23: OAuth2 instead of SAML")
                .valid(Some(at("2026-02-10T00:00:00Z")), None),
        ))
        .add_claim(accepted(AddClaim::new("auth-migration", "implements", "oauth2-decision").id("d2")))
        .add_claim(
            AddClaim::new("compat-risk", "blocked_by", "auth-migration")
                .id("r1")
                .confidence(0.6)
                .text("The architect flagged a backwards compatibility risk"),
        )
        .add_claim(accepted(
            AddClaim::new("auth", "streams_events_with", "kafka")
                .id("k1")
                .text("We are using Kafka for event streaming")
                .valid(Some(at("2026-01-05T00:00:00Z")), None),
        ));
    b.push(evidence("d1", "conv-23", "m-4", "let's go with OAuth2, SAML is too heavy for us"))
        .push(evidence("r1", "conv-38", "m-12", "careful, old clients still send SAML assertions"))
        .push(evidence("k1", "conv-3", "m-2", "we are using Kafka for event streaming"));
    db.write(&b)?;

    // Conversation 41: "we switched to Kinesis" supersedes the Kafka claim.
    let mut b = WriteBatch::new("default");
    b.add_claim(
        AddClaim::new("auth", "streams_events_with", "kinesis")
            .id("k2")
            .state(ClaimState::Accepted)
            .text("We switched to Kinesis")
            .valid(Some(at("2026-03-01T00:00:00Z")), None),
    )
    .push(evidence("k2", "conv-41", "m-7", "we switched to Kinesis last sprint"))
    .push(Op::Deprecate { claim: "k1".into(), superseded_by: Some("k2".into()) });
    db.write(&b)?;
    Ok(())
}

/// What an agent asks before its next turn.
fn recall(db: &Database) -> Result<(), engram::Error> {
    let snap = db.snapshot();
    let ws = snap.workspace("default")?;
    let name = |id| ws.entity(id).map_or_else(|| "?".to_owned(), |e| e.name.to_string());
    let root = ws.find_by_name("auth service migration")[0];

    println!("Two-hop neighbourhood of \"{}\" (current, trusted facts):", name(root));
    let reach = ws.khop(&[root], &KHopQuery { max_depth: 2, with_claims: true, ..KHopQuery::default() })?;
    for (r, via) in reach.entities.iter().zip(&reach.via).skip(1) {
        for c in via {
            let claim = ws.claim(*c).expect("claims returned by a traversal exist");
            let ev: Vec<String> = ws.evidence_of(*c)?.iter().filter_map(|e| e.conversation_id.as_deref().map(str::to_owned)).collect();
            println!(
                "  hop {}  {} -[{}]-> {}  (conf {:.2}, {}{})",
                r.depth,
                name(claim.subject),
                claim.predicate.to_uppercase(),
                name(claim.object),
                claim.confidence,
                claim.state.as_str(),
                if ev.is_empty() { String::new() } else { format!(", evidence {}", ev.join(", ")) }
            );
        }
    }

    let k1 = ws.claim_id("k1").expect("k1 was written");
    println!("\nSupersession of the event-streaming claim:");
    for c in ws.supersession_chain(k1)? {
        let claim = ws.claim(c).expect("chain members exist");
        println!(
            "  {}  {} -[{}]-> {}  {}  valid from {}",
            claim.ext_id,
            name(claim.subject),
            claim.predicate.to_uppercase(),
            name(claim.object),
            claim.state.as_str(),
            claim.valid_from
        );
    }
    let auth = ws.entity_id("auth").expect("auth was written");
    let current = ws.neighbors(
        auth,
        &engram::NeighborQuery {
            filter: engram::EdgeFilter::new(Direction::Out).predicates(&["streams_events_with"]),
            ..Default::default()
        },
    )?;
    let history = ws.neighbors(
        auth,
        &engram::NeighborQuery {
            filter: engram::EdgeFilter::new(Direction::Out).predicates(&["streams_events_with"]),
            visibility: Visibility { states: StateSet::ALL, ..Visibility::default() },
            ..Default::default()
        },
    )?;
    println!(
        "\nAuthService streams events with: now {:?}; in history {:?}",
        current.items.iter().map(|n| name(n.neighbor)).collect::<Vec<_>>(),
        history.items.iter().map(|n| name(n.neighbor)).collect::<Vec<_>>()
    );
    Ok(())
}
