//! Masking policies: a role under a mask sees PII, tagged rows and named properties redacted,
//! hashed or left out, on every read path, while the roles it does not name see the values. The
//! property test holds keyword search under masks to a reference: a second database whose texts
//! were written already masked (same scores, same ranks: a word only the clear text holds moves
//! nothing).

use engram::embed::HashEmbedder;
use engram::ingest::IngestOptions;
use engram::search::recall::RecallQuery;
use engram::{Access, Database, ErrorClass, NeighborQuery, Params, Principal, QueryValue, StoredMask, VectorOptions, Visibility};
use proptest::prelude::*;
use serde_json::json;
use std::sync::Arc;

const WS: &str = "support";
/// What the engineer must never see: the clear PII and the confidential codename.
const SECRETS: [&str; 8] = ["zebracanary", "example.com", "7946", "4111", "10.1.2.3", "2671", "zebrastripe", "merger"];

fn mask(on: &str, mode: &str, roles: &[&str]) -> StoredMask {
    StoredMask { on: on.to_owned(), mode: mode.to_owned(), roles: roles.iter().map(|r| (*r).to_owned()).collect() }
}

fn engineer() -> Arc<Principal> {
    Arc::new(Principal::named("eve").grant(WS, Access::Write, true).with_role("engineer"))
}

fn owner() -> Arc<Principal> {
    Arc::new(Principal::named("olga").grant(WS, Access::Write, true).with_role("owner"))
}

fn cell(v: &QueryValue) -> String {
    match v {
        QueryValue::String(s) => s.clone(),
        QueryValue::Null => "null".to_owned(),
        other => format!("{other:?}"),
    }
}

fn rows(scope: &engram::Scope, q: &str) -> Vec<String> {
    let r = scope.query(WS, q, &Params::new()).unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut out: Vec<String> = r.rows.iter().map(|row| row.iter().map(cell).collect::<Vec<_>>().join("|")).collect();
    out.sort();
    out
}

/// Ann's contact details and card in claims, her phone and email as properties, and a
/// confidential message with a codename; the masks name the `engineer` role only.
fn seeded() -> Database {
    let db = Database::in_memory();
    db.set_embedder(Arc::new(HashEmbedder::new(64))).unwrap();
    db.create_workspace(WS).unwrap();
    // Only the first message sets Ann's properties (an entity takes the tags of the messages that
    // set its properties: the confidential one must not).
    let doc = |msg: &str, level: &str, snippet: &str, claims: serde_json::Value| {
        let props =
            if msg == "m1" { json!({"phone": "+1 415 555 2671", "email": "zebracanary@example.com", "team": "ops"}) } else { json!({}) };
        json!({
            "workspace": WS,
            "source": {"conversation_id": "conv-1", "message_id": msg, "snippet": snippet, "tags": {"sensitivity": level}},
            "entities": [{"name": "Ann", "type": "person", "properties": props}, {"name": "Acme", "type": "company"}],
            "claims": claims,
        })
    };
    let docs = [
        doc(
            "m1",
            "internal",
            "she wrote zebracanary@example.com",
            json!([
                {"subject": "Ann", "predicate": "reachable_at", "object": "Acme", "confidence": 0.9, "id": "contact",
                 "text": "ann can be reached at zebracanary@example.com or +44 20 7946 0958"},
                {"subject": "Ann", "predicate": "pays_with", "object": "Acme", "confidence": 0.9, "id": "card",
                 "text": "ann pays acme with card 4111 1111 1111 1111 from 10.1.2.3"},
                {"subject": "Ann", "predicate": "likes", "object": "Acme", "confidence": 0.9, "id": "tea", "text": "ann likes the tea at acme"},
            ]),
        ),
        doc(
            "m2",
            "confidential",
            "the merger codename",
            json!([{"subject": "Acme", "predicate": "plans", "object": "Ann", "confidence": 0.8, "id": "deal",
                    "text": "acme plans the merger codename zebrastripe with ann"}]),
        ),
    ];
    for d in docs {
        db.ingest(&d.to_string(), &IngestOptions::default()).unwrap();
    }
    db.put_mask(WS, "pii", mask("pii:*", "redact", &["engineer"])).unwrap();
    db.put_mask(WS, "phones", mask("property:phone", "hash", &["engineer"])).unwrap();
    db.put_mask(WS, "confidential", mask("tag:sensitivity=confidential", "redact", &["engineer"])).unwrap();
    db
}

fn assert_clean(what: &str, seen: &str) {
    let seen = seen.to_lowercase();
    for s in SECRETS {
        assert!(!seen.contains(s), "{what}: `{s}` leaked in {seen}");
    }
}

#[test]
fn detected_pii_tags_claims_and_the_tag_is_the_detectors() {
    let db = seeded();
    let snap = db.snapshot();
    let ws = snap.workspace(WS).unwrap();
    let tags = |ext: &str| ws.claim_tags(ws.claim_id(ext).unwrap()).unwrap();
    assert_eq!(tags("contact").get("pii").map(|v| &**v), Some("email,phone"));
    assert_eq!(tags("card").get("pii").map(|v| &**v), Some("card,ip"));
    assert_eq!(tags("tea").get("pii"), None);
    // Only the detector sets it.
    let e = db.query(WS, "MATCH ()-[c {id: 'tea'}]->() SET c.text = 'mail x@y.org' RETURN c.text", &Params::new());
    assert!(e.is_ok(), "{e:?}");
    let snap = db.snapshot();
    let ws = snap.workspace(WS).unwrap();
    assert_eq!(ws.claim_tags(ws.claim_id("tea").unwrap()).unwrap().get("pii").map(|v| &**v), Some("email"));
    let mut b = engram::WriteBatch::new(WS);
    b.push(engram::Op::SetTags {
        target: engram::TagTarget::Claim("tea".into()),
        set: [("pii".to_owned(), "none".to_owned())].into(),
        remove: Vec::new(),
        inherit: false,
    });
    let e = db.write(&b).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Caller);
    assert!(e.to_string().contains("kept by the PII detector"), "{e}");
}

#[test]
fn a_masked_role_never_meets_a_clear_value_on_any_read_path() {
    let db = seeded();
    let eng = db.scope(engineer());
    let own = db.scope(owner());
    let queries = [
        "MATCH (a)-[c]->(b) RETURN a.name, type(c), c.text, b.name",
        "MATCH (n) RETURN n.name, n.phone, n.email, n.team",
        "MATCH (n) RETURN properties(n), keys(n)",
        "MATCH ()-[c]->() RETURN properties(c)",
        "MATCH p = (a)-[*1..2]-(b) RETURN p",
        "MATCH ()-[c]->() WHERE c.text CONTAINS 'zebracanary' OR c.text CONTAINS '4111' RETURN count(c)",
        "MATCH (n) WHERE n.email = 'zebracanary@example.com' RETURN n.name",
        "MATCH ()-[c]->() RETURN c.text ORDER BY c.text",
        "CALL engram.search.text('zebracanary zebrastripe tea', 10) YIELD relationship, score RETURN relationship.text",
        "CALL engram.neighbors('Ann') YIELD relationship RETURN relationship.text",
        "CALL db.idx.fulltext.queryNodes('Person', 'example') YIELD node RETURN node.name",
    ];
    let mut owner_saw = String::new();
    for q in queries {
        let seen = rows(&eng, q).join("\n");
        assert_clean(q, &seen);
        owner_saw.push_str(&rows(&own, q).join("\n"));
    }
    // The owner's answers hold every secret: the checks above are not vacuous.
    for s in SECRETS {
        assert!(owner_saw.to_lowercase().contains(s), "the owner should see `{s}`");
    }
    // What the engineer sees instead.
    let texts = rows(&eng, "MATCH ()-[c]->() RETURN c.text").join("\n");
    assert!(texts.contains("ann can be reached at [REDACTED:email] or [REDACTED:phone]"), "{texts}");
    assert!(texts.contains("card [REDACTED:card] from [REDACTED:ip]") && texts.contains("[REDACTED:confidential]"), "{texts}");
    assert!(texts.contains("ann likes the tea at acme"), "an unmasked text is shown whole: {texts}");
    let phone = rows(&eng, "MATCH (n:Person) RETURN n.phone, n.email, n.team");
    assert!(phone[0].starts_with("[HMAC:") && phone[0].ends_with("|[REDACTED:email]|ops"), "{phone:?}");
    assert_eq!(rows(&eng, "MATCH ()-[c]->() WHERE c.text CONTAINS 'zebracanary' RETURN count(c)"), ["Int(0)"]);
    assert_eq!(rows(&own, "MATCH ()-[c]->() WHERE c.text CONTAINS 'zebracanary' RETURN count(c)"), ["Int(1)"]);

    let ws = eng.workspace(WS).unwrap();
    let all = db.snapshot();
    let clear = all.workspace(WS).unwrap();
    let contact = clear.claim_id("contact").unwrap();
    // Keyword search: no hit, and no score shift, from the clear words.
    assert!(ws.search_claim_text("zebracanary", 10, &Visibility::default()).unwrap().is_empty());
    assert!(ws.search_claim_text("zebrastripe merger", 10, &Visibility::default()).unwrap().is_empty());
    assert_eq!(clear.search_claim_text("zebracanary", 10, &Visibility::default()).unwrap().len(), 1);
    // The masked texts are searched as masked: the contact by its remaining words, the
    // confidential claim by none of its clear ones.
    let reached = ws.search_claim_text("reached", 10, &Visibility::default()).unwrap();
    assert_eq!(reached.iter().map(|h| h.0).collect::<Vec<_>>(), [contact]);
    let merger = clear.claim_id("deal").unwrap();
    assert!(ws.search_claim_text("acme plans", 10, &Visibility::default()).unwrap().iter().all(|h| h.0 != merger));
    assert_eq!(clear.search_claim_text("plans", 10, &Visibility::default()).unwrap()[0].0, merger);
    // Vector search: a masked claim takes no part (its vector is of the clear text).
    let q = db.embed_query("ann can be reached at zebracanary@example.com or +44 20 7946 0958").unwrap().unwrap();
    let opts = VectorOptions { k: 10, ..VectorOptions::default() };
    let mine = ws.search_claim_vectors(&q, &opts).unwrap();
    assert!(!mine.is_empty() && mine.iter().all(|(c, _)| *c != contact), "{mine:?}");
    assert_eq!(clear.search_claim_vectors(&q, &opts).unwrap()[0].0, contact);
    // Nor in the neighbourhood of its subject, ranked by the same vector.
    let ann = clear.find_by_name("Ann")[0];
    let near = |v: &engram::WorkspaceView<'_>| {
        let r = v.neighborhood(ann, "", Some(&q), &engram::ContextQuery::default()).unwrap();
        r.packed.facts.iter().map(|f| f.id).collect::<Vec<_>>()
    };
    let mine = near(&ws);
    assert!(!mine.is_empty() && !mine.contains(&contact.0), "{mine:?}");
    assert_eq!(near(&clear)[0], contact.0);
    // Claims, evidence and entities as values.
    let claim = ws.claim(contact).unwrap();
    assert_clean("claim", claim.text.as_deref().unwrap_or_default());
    let ev = ws.evidence_of(contact).unwrap();
    assert_eq!(ev[0].snippet.as_deref(), Some("she wrote [REDACTED:email]"));
    let merger = ws.evidence_of(merger).unwrap();
    assert_eq!(merger[0].snippet.as_deref(), Some("[REDACTED:confidential]"));
    assert_clean("entity", &format!("{:?}", ws.entity(ann).unwrap().properties));
    let n = ws.neighbors(ann, &NeighborQuery::default()).unwrap();
    assert_eq!(n.items.len(), 4);
    for item in &n.items {
        assert_clean("neighbour", ws.claim_text(item.claim).unwrap_or_default());
    }
    // Recall packs masked texts only.
    let recalled = ws.recall(&RecallQuery::new("how do I reach ann zebracanary merger")).unwrap();
    assert!(!recalled.packed.facts.is_empty());
    assert_clean("recall", &recalled.packed.context);
    // Export through the scope.
    let lines = engram::jsonl::export_scope(&eng).unwrap().join("\n");
    assert_clean("export", &lines);
    assert!(engram::jsonl::export_scope(&own).unwrap().join("\n").contains("zebracanary"));
}

#[test]
fn writes_by_a_masked_role_read_back_masked() {
    let db = seeded();
    let eng = db.scope(engineer());
    let r = rows(&eng, "MATCH (n:Person {name: 'Ann'}) SET n.note = 'call +1 415 555 0000 today' RETURN n.phone, n.note, n.team");
    assert_eq!(r.len(), 1);
    let cols: Vec<&str> = r[0].split('|').collect();
    assert!(cols[0].starts_with("[HMAC:"), "{r:?}");
    assert_eq!(cols[1..], ["call [REDACTED:phone] today", "ops"]);
    // The value was written in clear: the owner reads it.
    assert_eq!(rows(&db.scope(owner()), "MATCH (n:Person) RETURN n.note"), ["call +1 415 555 0000 today"]);
}

#[test]
fn hashes_are_keyed_stable_and_survive_restart() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let db = Database::open(dir.path()).unwrap();
        db.create_workspace(WS).unwrap();
        db.query(WS, "CREATE (:P {name: 'a', phone: '+1 415 555 2671'}), (:P {name: 'b', phone: '+1 415 555 2671'}), (:P {name: 'c', phone: '+1 415 555 9999'})", &Params::new()).unwrap();
        let e = db.put_mask(WS, "bad", mask("pii:ssn", "redact", &["engineer"])).unwrap_err();
        assert!(e.to_string().contains("pii:ssn") && e.to_string().contains("pii:KIND"), "{e}");
        let e = db.put_mask(WS, "bad", mask("pii:email", "blur", &["engineer"])).unwrap_err();
        assert!(e.to_string().contains("blur") && e.to_string().contains("redact, hash or hide"), "{e}");
        assert!(db.masks().is_empty(), "a refused mask stores nothing");
        db.put_mask(WS, "phones", mask("property:phone", "hash", &["engineer"])).unwrap();
        let seen = rows(&db.scope(engineer()), "MATCH (n:P) RETURN n.name, n.phone");
        // Equal values, equal tokens; not the plain SHA-256 of the value.
        let token = |i: usize| seen[i].split('|').nth(1).unwrap().to_owned();
        assert_eq!(token(0), token(1));
        assert_ne!(token(0), token(2));
        assert!(token(0).starts_with("[HMAC:") && token(0).len() == "[HMAC:]".len() + 16, "{seen:?}");
        let plain: String = {
            use sha2::Digest as _;
            sha2::Sha256::digest(b"+1 415 555 2671")[..8].iter().fold(String::new(), |s, b| s + format!("{b:02x}").as_str())
        };
        assert!(!token(0).contains(&plain));
        db.checkpoint().unwrap();
        seen
    };
    for _ in 0..2 {
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(db.masks()[WS]["phones"].mode, "hash");
        assert_eq!(rows(&db.scope(engineer()), "MATCH (n:P) RETURN n.name, n.phone"), first, "the same secret after a restart");
    }
    let db = Database::open(dir.path()).unwrap();
    assert!(db.remove_mask(WS, "phones").unwrap());
    assert!(!db.remove_mask(WS, "phones").unwrap());
    assert!(rows(&db.scope(engineer()), "MATCH (n:P) RETURN n.phone").iter().all(|p| p.starts_with("+1 415")));
}

// ---- the property test ------------------------------------------------------------------------

const WORDS: [&str; 8] = ["router", "modem", "wifi", "billing", "outage", "refund", "ticket", "zebracanary"];
const PII: [&str; 4] = ["zebracanary@example.com", "+44 20 7946 0958", "4111 1111 1111 1111", "10.1.2.3"];

/// One claim: its words, an optional PII value inserted, and whether it is confidential.
type Row = (Vec<usize>, Option<usize>, bool);

fn text(r: &Row) -> String {
    let mut words: Vec<String> = r.0.iter().map(|w| WORDS[*w].to_owned()).collect();
    if let Some(p) = r.1 {
        words.insert(words.len() / 2, PII[p].to_owned());
    }
    words.join(" ")
}

/// The text as a role under `modes` (for pii, for confidential rows) sees it.
fn masked(r: &Row, pii: &str, confidential: &str) -> String {
    if r.2 && confidential != "none" {
        return if confidential == "hide" { String::new() } else { "[REDACTED:confidential]".to_owned() };
    }
    let mut words: Vec<String> = r.0.iter().map(|w| WORDS[*w].to_owned()).collect();
    if let Some(p) = r.1 {
        let kind = ["email", "phone", "card", "ip"][p];
        match pii {
            "redact" => words.insert(words.len() / 2, format!("[REDACTED:{kind}]")),
            "hide" => words.insert(words.len() / 2, String::new()),
            _ => words.insert(words.len() / 2, PII[p].to_owned()),
        }
    }
    words.join(" ")
}

fn write(rows: &[Row], text_of: &dyn Fn(&Row) -> String) -> Database {
    let db = Database::in_memory();
    db.create_workspace(WS).unwrap();
    db.query(WS, "CREATE (:T {id: 'a', name: 'A'}), (:T {id: 'b', name: 'B'})", &Params::new()).unwrap();
    for (i, r) in rows.iter().enumerate() {
        let t = text_of(r);
        let text = if t.is_empty() { "null".to_owned() } else { format!("'{t}'") };
        db.query(WS, &format!("MATCH (a {{id: 'a'}}), (b {{id: 'b'}}) CREATE (a)-[:R{i} {{text: {text}}}]->(b)"), &Params::new()).unwrap();
        if r.2 {
            let mut b = engram::WriteBatch::new(WS);
            let ext = db.snapshot().workspace(WS).unwrap().claims_of_rel_type(&format!("R{i}"))[0];
            let ext = db.snapshot().workspace(WS).unwrap().claim_ext_id(ext).unwrap().to_owned();
            b.push(engram::Op::SetTags {
                target: engram::TagTarget::Claim(ext.into()),
                set: [("sensitivity".to_owned(), "confidential".to_owned())].into(),
                remove: Vec::new(),
                inherit: false,
            });
            db.write(&b).unwrap();
        }
    }
    db
}

/// Each word's keyword hits, by relationship type and rounded score, and the texts.
fn answers(scope: &engram::Scope) -> Vec<String> {
    let ws = scope.workspace(WS).unwrap();
    let mut out = Vec::new();
    for word in WORDS.iter().chain(&["redacted", "email", "confidential"]) {
        let hits = ws.search_claim_text(word, 20, &Visibility::default()).unwrap();
        let named: Vec<String> = hits
            .iter()
            .map(|(c, s)| format!("{} {:.4}", ws.claim_triple(*c).and_then(|t| ws.predicate_name(t.1)).unwrap_or_default(), s))
            .collect();
        out.push(format!("{word}: {named:?}"));
    }
    out.push(format!("{:?}", rows(scope, "MATCH ()-[c]->() RETURN type(c), c.text")));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: engram_tests::cases(32), ..ProptestConfig::default() })]

    /// Keyword search and the texts under random masks equal a database written masked.
    #[test]
    fn a_masked_view_equals_a_database_written_masked(
        rows in proptest::collection::vec((proptest::collection::vec(0..WORDS.len(), 1..5), proptest::option::of(0..PII.len()), any::<bool>()), 1..10),
        pii in prop_oneof![Just("none"), Just("redact"), Just("hide")],
        confidential in prop_oneof![Just("none"), Just("redact"), Just("hide")],
    ) {
        let full = write(&rows, &text);
        if pii != "none" {
            full.put_mask(WS, "pii", mask("pii:*", pii, &["engineer"])).unwrap();
        }
        if confidential != "none" {
            full.put_mask(WS, "conf", mask("tag:sensitivity=confidential", confidential, &["engineer"])).unwrap();
        }
        let reference = write(&rows, &|r| masked(r, pii, confidential));
        let got = answers(&full.scope(engineer()));
        let want = answers(&reference.scope(owner()));
        prop_assert_eq!(got, want);
    }
}

#[test]
fn policies_and_masks_travel_with_an_admins_export_only() {
    let db = seeded();
    db.put_policy(
        WS,
        "own",
        engram::StoredPolicy {
            target: "claims".into(),
            roles: vec!["agent".into()],
            predicate: "c.user_id IS NULL OR c.user_id = $user".into(),
        },
    )
    .unwrap();
    db.add_role("engineer").unwrap();
    db.grant_role("engineer", WS, engram::StoredGrant::of(Access::Read, false)).unwrap();
    let lines = engram::jsonl::export(&db.snapshot());
    assert_eq!(lines[0], r#"{"kind":"role","name":"engineer","grants":{"support":{"access":"read","see_sensitive":false}}}"#);
    let governance: Vec<&String> = lines.iter().filter(|l| l.contains(r#""kind":"policy""#) || l.contains(r#""kind":"mask""#)).collect();
    assert_eq!(governance.len(), 4, "{governance:?}");
    // Neither the secret nor the detector's tag travels.
    let text = lines.join("\n");
    assert!(!text.contains(db.settings().mask_secret.as_deref().unwrap()) && !text.contains(r#""pii":""#), "{text}");
    // A reader's export holds no policy; an admin's does.
    let reader = db.scope(Arc::new(Principal::named("r").grant(WS, Access::Read, true)));
    assert!(!engram::jsonl::export_scope(&reader).unwrap().join("\n").contains(r#""kind":"mask""#));
    let admin = db.scope(Arc::new(Principal::named("a").grant(WS, Access::Admin, true)));
    let admins = engram::jsonl::export_scope(&admin).unwrap().join("\n");
    assert!(admins.contains(r#""kind":"mask""#) && !admins.contains(r#""kind":"role""#), "roles need admin on *");
    // Export → import → export: the same lines, the same policies, the masks enforced.
    let copy = Database::in_memory();
    engram::jsonl::import(&copy, &text, "x.jsonl").unwrap();
    assert_eq!(copy.masks(), db.masks());
    assert_eq!(copy.policies(), db.policies());
    assert_eq!(copy.roles(), db.roles());
    assert_eq!(engram::jsonl::export(&copy.snapshot()), lines);
    assert_clean("imported", &rows(&copy.scope(engineer()), "MATCH ()-[c]->() RETURN c.text").join("\n"));
    // A bad policy line is refused by line, and nothing is written.
    let bad = text.replace(r#""on":"pii:*""#, r#""on":"pii:ssn""#);
    let empty = Database::in_memory();
    let e = engram::jsonl::import(&empty, &bad, "bad.jsonl").unwrap_err().to_string();
    assert!(e.contains("bad.jsonl:") && e.contains("pii:ssn"), "{e}");
    assert!(empty.snapshot().workspace(WS).is_err() && empty.masks().is_empty(), "nothing written");
}

#[test]
fn tags_on_property_keys_mask_their_values_like_column_tags() {
    let db = Database::in_memory();
    db.create_workspace(WS).unwrap();
    db.query(WS, "CREATE (:P {name: 'a', badge: 'B-1234', team: 'ops'})", &Params::new()).unwrap();
    let e = db.set_workspace_setting(WS, "property_tags", r#"{"badge": {"pii": "not a tag value\u0001"}}"#).unwrap_err();
    assert!(e.to_string().contains("property_tags"), "{e}");
    db.set_workspace_setting(WS, "property_tags", r#"{"badge": {"classification": "badge"}}"#).unwrap();
    db.put_mask(WS, "badges", mask("tag:classification", "redact", &["engineer"])).unwrap();
    assert_eq!(rows(&db.scope(engineer()), "MATCH (n:P) RETURN n.badge, n.team"), ["[REDACTED:badge]|ops"]);
    assert_eq!(rows(&db.scope(owner()), "MATCH (n:P) RETURN n.badge, n.team"), ["B-1234|ops"]);
    // A stricter mask on the key itself wins.
    db.put_mask(WS, "no-badges", mask("property:badge", "hide", &["engineer"])).unwrap();
    assert_eq!(rows(&db.scope(engineer()), "MATCH (n:P) RETURN keys(n)"), ["List([String(\"name\"), String(\"team\")])"]);
}
