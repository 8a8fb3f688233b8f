//! Conversations ingested without an extractor (`ingest::conversation_documents`): each turn a
//! claim with its text and valid time, speakers as entities, the names a turn mentions linked to
//! it. Recall never returns the links, and the graph knows what they say: a seed or a speaker the
//! question names visibly changes the ranking.

use engram::ingest::{conversation_documents, parse_conversation, IngestOptions};
use engram::{Database, RecallQuery};

const TRIP: &str = r#"{"id": "trip", "turns": [
    {"id": "t1", "speaker": "Caroline", "text": "I moved here from Sweden four years ago.", "at": "2023-05-08T13:56:00Z"},
    {"id": "t2", "speaker": "Melanie", "text": "Wow, Caroline! Do you miss Sweden?", "at": "2023-05-08T13:57:00Z"},
    {"id": "t3", "speaker": "Caroline", "text": "Sometimes. The lakes near Uppsala were my favourite.", "at": "2023-05-08T13:58:00Z",
     "image_caption": "a photo of a lake at dusk"},
    {"id": "t4", "speaker": "Melanie", "text": "My kids painted a sunset last weekend.", "at": "2023-06-01T09:00:00Z"},
    {"id": "t5", "speaker": "Caroline", "text": "Painting together sounds lovely.", "at": "2023-06-01T09:01:00Z"}]}"#;

/// A fresh database holding the documents of a conversation.
fn ingested(docs: Vec<engram::ingest::IngestDoc>) -> Database {
    ingested_into(Database::in_memory(), docs)
}

fn ingested_into(db: Database, docs: Vec<engram::ingest::IngestDoc>) -> Database {
    for r in db.ingest_docs(docs, &IngestOptions::default()).unwrap() {
        r.unwrap();
    }
    db
}

fn conversation(json: &str) -> Database {
    ingested(conversation_documents(&parse_conversation(json).unwrap()).unwrap())
}

fn trip() -> Database {
    conversation(TRIP)
}

/// What recall returns for `question` over the conversation `json`, every fact kept.
fn recall_in(json: &str, question: &str) -> engram::Recall {
    let db = conversation(json);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    ws.recall(&RecallQuery { budget: 10_000, ..RecallQuery::new(question) }).unwrap()
}

fn ids(r: &engram::Recall) -> Vec<&str> {
    r.packed.facts.iter().map(|f| f.claim_id.as_str()).collect()
}

#[test]
fn turns_are_claims_with_time_and_evidence() {
    let db = trip();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let r = ws.recall(&RecallQuery { budget: 10_000, ..RecallQuery::new("lakes") }).unwrap();
    let t3 = r.packed.facts.iter().find(|f| f.claim_id == "t3").expect("the turn about lakes");
    assert_eq!((t3.subject.name.as_str(), t3.predicate.as_str()), ("Caroline", "said"));
    assert_eq!(t3.text.as_deref(), Some("Sometimes. The lakes near Uppsala were my favourite. [image: a photo of a lake at dusk]"));
    assert_eq!(t3.valid_from, "2023-05-08T13:58:00Z");
    assert_eq!(t3.sources, ["trip/t3"]);
    // The names were linked: Uppsala and Sweden are entities, each mentioned by its turns.
    for name in ["Uppsala", "Sweden"] {
        assert!(ws.entity_id(&format!("name:{}", name.to_lowercase())).is_some(), "{name}");
    }
}

/// Whatever is asked, no fact recall returns is a text-less `MENTIONS` link.
#[test]
fn links_are_walked_never_returned() {
    let db = trip();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let uppsala = ws.entity_id("name:uppsala").unwrap();
    for question in ["Uppsala", "Sweden", "What did Caroline say?", "kids painting", "Tell me everything"] {
        let r = ws.recall(&RecallQuery { budget: 10_000, seeds: vec![uppsala], ..RecallQuery::new(question) }).unwrap();
        assert!(!r.packed.facts.is_empty(), "{question}");
        assert!(r.packed.facts.iter().all(|f| f.predicate == "said"), "{question}: {}", r.packed.context);
    }
}

/// A name's entity context lists the turns that mention it, not the links.
#[test]
fn a_names_context_is_the_turns_that_mention_it() {
    let db = trip();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let sweden = ws.entity_id("name:sweden").unwrap();
    let ctx = ws.entity_context(sweden, &engram::ContextQuery::default()).unwrap();
    let mut order = ids(&ctx);
    order.sort_unstable();
    assert_eq!(order, ["t1", "t2"], "{}", ctx.packed.context);
}

/// A seed the question's words do not reach leads, over the links, to the turn that mentions it;
/// without the seed that turn is not first.
#[test]
fn a_seed_reaches_the_turns_that_mention_it() {
    let db = trip();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let q = RecallQuery { budget: 10_000, ..RecallQuery::new("what do you remember about it") };
    let without = ws.recall(&q).unwrap();
    let sweden = ws.entity_id("name:sweden").unwrap();
    let with = ws.recall(&RecallQuery { seeds: vec![sweden], ..q.clone() }).unwrap();
    let (with_top, without_top): (Vec<&str>, Vec<&str>) =
        (ids(&with).into_iter().take(2).collect(), ids(&without).into_iter().take(2).collect());
    assert!(with_top.contains(&"t1") && with_top.contains(&"t2"), "{:?}", ids(&with));
    assert!(!without_top.contains(&"t1"), "{:?}", ids(&without));
    let t1 = with.packed.facts.iter().find(|f| f.claim_id == "t1").unwrap();
    assert!(t1.ranks.graph.is_some() && t1.ranks.lexical.is_none(), "{:?}", t1.ranks);
}

/// A speaker the question names is answered by the graph, not by keywords: her own turn about
/// Sweden ranks above the turn that only addresses her by name.
#[test]
fn a_named_speaker_lifts_her_own_turns() {
    let db = trip();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let r = ws.recall(&RecallQuery { budget: 10_000, ..RecallQuery::new("Did Caroline live in Sweden?") }).unwrap();
    let order = ids(&r);
    let pos = |id: &str| order.iter().position(|x| *x == id).unwrap();
    assert!(pos("t1") < pos("t2"), "{order:?}\n{}", r.packed.context);
    assert_eq!(order[0], "t1", "{}", r.packed.context);
}

/// What an embedder embeds of a question leaves out the speakers it names, whose turns the graph
/// path reaches; a name only turns mention (Sweden) stays, a question of nothing but names stays
/// whole, and a speaker whose turns the query cannot see is no speaker to it.
#[test]
fn the_question_is_embedded_without_the_speakers_it_names() {
    let db = trip();
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let asked = |q: RecallQuery| ws.question_to_embed(&q).unwrap();
    assert_eq!(asked(RecallQuery::new("What does Melanie miss about Sweden?")), "what does miss about sweden");
    assert_eq!(asked(RecallQuery::new("What did Caroline's kids paint with Melanie?")), "what did s kids paint with");
    assert_eq!(asked(RecallQuery::new("Melanie?")), "Melanie?");
    let before =
        engram::Visibility { as_of: Some(engram::Timestamp::parse("2023-01-01T00:00:00Z").unwrap()), ..engram::Visibility::current() };
    let q = RecallQuery { visibility: before, ..RecallQuery::new("What does Melanie miss?") };
    assert_eq!(asked(q), "What does Melanie miss?");
}

/// Embedded beside what it asks without the speaker it names (`Database::embed_question`), the
/// question's vector finds the turn about what it asks, not the turns that address her by name (a
/// hashing embedder: names weigh as much as any word).
#[test]
fn the_semantic_path_finds_what_is_asked_not_who_is_named() {
    let conv = r#"{"id": "c", "turns": [
        {"id": "c1", "speaker": "Caroline", "text": "Thanks, Melanie!", "at": "2023-05-08T13:56:00Z"},
        {"id": "m1", "speaker": "Melanie", "text": "Running helps me destress.", "at": "2023-05-08T13:57:00Z"},
        {"id": "c2", "speaker": "Caroline", "text": "Oh Melanie, a good week.", "at": "2023-05-08T13:58:00Z"},
        {"id": "m2", "speaker": "Melanie", "text": "The kids painted a sunset.", "at": "2023-05-08T13:59:00Z"}]}"#;
    let db = Database::in_memory();
    db.set_embedder(std::sync::Arc::new(engram::embed::HashEmbedder::new(256))).unwrap();
    let db = ingested_into(db, conversation_documents(&parse_conversation(conv).unwrap()).unwrap());
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let mut q = RecallQuery { budget: 10_000, ..RecallQuery::new("What does Melanie do to destress?") };
    let semantic_first = |q: &RecallQuery| {
        let r = ws.recall(q).unwrap();
        r.packed.facts.iter().find(|f| f.ranks.semantic == Some(1)).map(|f| f.claim_id.clone()).unwrap()
    };
    q.vector = db.embed_query(&q.text).unwrap();
    assert_ne!(semantic_first(&q), "m1", "the whole question's vector is drawn to the name");
    q.vector = db.embed_question(&q.text, &ws.question_to_embed(&q).unwrap()).unwrap();
    assert_eq!(semantic_first(&q), "m1", "the name counts half");
}

/// The turn after a matching one is lifted: a question's best keyword match is often the turn that
/// asked, and the answer the turn after it, which shares none of its words.
#[test]
fn the_reply_to_a_matching_turn_is_lifted() {
    let conv = r#"{"id": "c", "turns": [
        {"id": "a1", "speaker": "Melanie", "text": "What kind of research have you been doing lately?", "at": "2023-05-08T13:56:00Z"},
        {"id": "a2", "speaker": "Caroline", "text": "Adoption agencies! It has been a dream to give kids a loving home.", "at": "2023-05-08T13:57:00Z"},
        {"id": "a3", "speaker": "Melanie", "text": "We went camping by the lake with the dog.", "at": "2023-05-08T13:58:00Z"},
        {"id": "a4", "speaker": "Caroline", "text": "Camping sounds fun, I love a loving dog.", "at": "2023-05-08T13:59:00Z"}]}"#;
    let r = recall_in(conv, "research lately");
    let order = ids(&r);
    assert_eq!(order[..2], ["a1", "a2"], "{}", r.packed.context);
    let a2 = &r.packed.facts[1];
    assert!(a2.ranks.lexical.is_none() && a2.ranks.semantic.is_none(), "found only as the reply: {:?}", a2.ranks);
    assert!(!order.contains(&"a4") || order.iter().position(|x| *x == "a4") > Some(1), "{order:?}");
}

/// The reply to a matching turn that asks is the answer, and gains more than the reply to a
/// matching statement: it passes turns that share one of the question's words, where the reply
/// to a statement does not.
#[test]
fn the_answer_to_a_matching_question_passes_weaker_matches() {
    let conv = r#"{"id": "c", "turns": [
        {"id": "q1", "speaker": "Melanie", "text": "Which band played the birthday concert?", "at": "2023-05-08T13:56:00Z"},
        {"id": "q2", "speaker": "Caroline", "text": "It was Matt Patterson, so talented!", "at": "2023-05-08T13:57:00Z"},
        {"id": "s1", "speaker": "Melanie", "text": "The birthday concert band played until midnight.", "at": "2023-05-08T13:58:00Z"},
        {"id": "s2", "speaker": "Caroline", "text": "Oh no, that is late for the kids.", "at": "2023-05-08T13:59:00Z"},
        {"id": "f1", "speaker": "Melanie", "text": "We may go to a band concert in the park.", "at": "2023-05-08T14:00:00Z"},
        {"id": "f2", "speaker": "Caroline", "text": "My birthday concert is in June, remember?", "at": "2023-05-08T14:01:00Z"},
        {"id": "f3", "speaker": "Melanie", "text": "I would love a band at my birthday.", "at": "2023-05-08T14:02:00Z"}]}"#;
    let r = recall_in(conv, "Which band played the birthday concert?");
    let order = ids(&r);
    let pos = |id: &str| order.iter().position(|x| *x == id).unwrap_or(usize::MAX);
    for weaker in ["f1", "f2", "f3"] {
        assert!(pos("q2") < pos(weaker), "the answer passes {weaker}: {order:?}\n{}", r.packed.context);
        assert!(pos("s2") > pos(weaker), "the reply to a statement stays below {weaker}: {order:?}\n{}", r.packed.context);
    }
    let q2 = r.packed.facts.iter().find(|f| f.claim_id == "q2").unwrap();
    assert!(q2.ranks.lexical.is_none(), "found only as the answer: {:?}", q2.ranks);
}

/// A thread is followed to its answer: the best match's reply asks, and the reply to that is
/// lifted too, though it shares no word with the question.
#[test]
fn a_thread_is_followed_to_the_answer() {
    let conv = r#"{"id": "c", "turns": [
        {"id": "m1", "speaker": "Melanie", "text": "We celebrated my daughter's birthday with a concert last night.", "at": "2023-05-08T13:56:00Z"},
        {"id": "m2", "speaker": "Caroline", "text": "Wow, lovely! Who was playing?", "at": "2023-05-08T13:57:00Z"},
        {"id": "m3", "speaker": "Melanie", "text": "It was Matt Patterson, so talented!", "at": "2023-05-08T13:58:00Z"},
        {"id": "m4", "speaker": "Caroline", "text": "I have heard great things.", "at": "2023-05-08T13:59:00Z"},
        {"id": "f1", "speaker": "Melanie", "text": "The park concert is next week.", "at": "2023-05-09T10:00:00Z"},
        {"id": "f2", "speaker": "Caroline", "text": "My birthday is in June.", "at": "2023-05-09T10:01:00Z"}]}"#;
    let r = recall_in(conv, "Who performed at the birthday concert?");
    let order = ids(&r);
    let pos = |id: &str| order.iter().position(|x| *x == id);
    assert_eq!(order[0], "m1", "{}", r.packed.context);
    assert_eq!(pos("m3"), pos("m2").map(|p| p + 1), "the answer right after the question that asked it: {order:?}");
    let m3 = r.packed.facts.iter().find(|f| f.claim_id == "m3").unwrap();
    assert!(m3.ranks.lexical.is_none(), "found only by following the thread: {:?}", m3.ranks);
    assert!(!order.contains(&"m4"), "m3 says, so its reply is not followed: {order:?}");
}

/// A reply outside the query's sub-scope (another user's turn) is not lifted into it.
#[test]
fn replies_stay_inside_the_sub_scope() {
    let conv = r#"{"id": "c", "turns": [
        {"id": "b1", "speaker": "Ann", "text": "Where did you park the research van?", "at": "2023-05-08T13:56:00Z"},
        {"id": "b2", "speaker": "Bob", "text": "Behind the old mill.", "at": "2023-05-08T13:57:00Z"}]}"#;
    let mut docs = conversation_documents(&parse_conversation(conv).unwrap()).unwrap();
    for (doc, user) in docs.iter_mut().zip(["ann", "bob"]) {
        doc.claims[0].properties.insert("user_id".into(), serde_json::json!(user));
    }
    let db = ingested(docs);
    let snap = db.snapshot();
    let ws = snap.workspace("default").unwrap();
    let q = RecallQuery { budget: 10_000, ..RecallQuery::new("research van") };
    assert_eq!(ids(&ws.recall(&q).unwrap()), ["b1", "b2"], "the reply is lifted");
    let ann = RecallQuery { properties: vec![("user_id".into(), engram::Value::Str("ann".into()))], ..q };
    assert_eq!(ids(&ws.recall(&ann).unwrap()), ["b1"], "not into Ann's sub-scope");
}
