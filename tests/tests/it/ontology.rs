//! Ontologies on real data: Cell Ontology (OBO 2022 and cellxgene JSON), UBERON (JSON) and
//! `WordNet` 3.0 nouns, each checked against counts or closures computed independently here;
//! then re-import, resolution, mappings, profiles and hierarchy operations on hand-written cases.

use engram::ontology::{self, import::keys, Format, ProfileConfig, Profiles, Relations};
use engram::{ClaimState, Database, EntityId, Value, Visibility, WorkspaceView};
use engram_tests::{read_shared, wordnet_nouns_jsonl};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

fn import_text(db: &Database, text: &str, format: Format, name: &str) -> ontology::ImportReport {
    let doc = ontology::detect::parse(text.as_bytes(), format, name).expect("parses");
    ontology::import_ontology(db, "default", &doc).expect("imports")
}

fn id_of(ws: &WorkspaceView<'_>, curie: &str) -> EntityId {
    ws.entity_id(curie).unwrap_or_else(|| panic!("{curie} imported"))
}

fn ext(ws: &WorkspaceView<'_>, e: EntityId) -> String {
    ws.entity(e).expect("entity").ext_id.to_string()
}

/// Counts of an OBO file taken line by line, inside `[Term]` stanzas only.
#[derive(Default, Debug)]
struct OboCounts {
    terms: usize,
    obsolete: usize,
    is_a: usize,
    synonyms: usize,
    defs: usize,
    ids: HashSet<String>,
    targets: HashSet<String>,
}

fn count_obo(text: &str) -> OboCounts {
    let mut c = OboCounts::default();
    let mut in_term = false;
    for line in text.lines() {
        if line.starts_with('[') {
            in_term = line == "[Term]";
            c.terms += usize::from(in_term);
            continue;
        }
        if !in_term {
            continue;
        }
        let value = |tag: &str| line.strip_prefix(tag).map(|v| v.split(" !").next().unwrap_or(v).trim().to_owned());
        if let Some(id) = value("id: ") {
            c.ids.insert(id);
        }
        c.obsolete += usize::from(line == "is_obsolete: true");
        if let Some(t) = value("is_a: ") {
            c.is_a += 1;
            c.targets.insert(t.split_whitespace().next().unwrap_or_default().to_owned());
        }
        if let Some(r) = value("relationship: ") {
            c.targets.insert(r.split_whitespace().nth(1).unwrap_or_default().to_owned());
        }
        c.synonyms += usize::from(line.starts_with("synonym: "));
        c.defs += usize::from(line.starts_with("def: "));
    }
    c
}

#[test]
fn cell_ontology_obo_report_counts_match_the_file() {
    let text = read_shared("cell-ontology/cl-basic-2022-12-15.obo.gz");
    let want = count_obo(&text);
    let db = Database::in_memory();
    let r = import_text(&db, &text, Format::Obo, "cl");
    assert_eq!(r.terms, want.terms);
    assert_eq!(r.obsolete, want.obsolete);
    assert_eq!(r.is_a, want.is_a);
    assert_eq!(r.synonyms, want.synonyms);
    assert_eq!(r.definitions, want.defs);
    assert_eq!((r.terms, r.obsolete, r.is_a), (2804, 160, 3705), "SOURCE.md's figures");
    // Dangling references are reported, and kept as flagged external concepts with their edges.
    let mut dangling: Vec<String> = want.targets.difference(&want.ids).cloned().collect();
    dangling.sort();
    assert_eq!(r.dangling, dangling);
    assert!(!dangling.is_empty());
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    for d in &dangling {
        let e = ws.entity(id_of(&ws, d)).expect("external concept");
        assert_eq!(e.properties.get(keys::EXTERNAL), Some(&Value::Bool(true)), "{d}");
    }
    let taxon = dangling.iter().find(|d| d.starts_with("NCBITaxon:")).expect("a taxon target");
    let edges = ws.neighbors(id_of(&ws, taxon), &engram::NeighborQuery::default()).expect("neighbors");
    assert!(!edges.items.is_empty(), "edges to {taxon} kept");
    // Every is_a line is a claim.
    assert_eq!(ws.claims_with(Some("subclass_of"), ClaimState::Accepted).len(), want.is_a);
    // Synonym scope kept: CL:0000540 (neuron) has "nerve cell" as an exact synonym.
    let neuron = id_of(&ws, "CL:0000540");
    let found = ontology::resolve(&ws, "Nerve Cell", 5, None, None).expect("resolve");
    assert_eq!(found[0].concept, neuron);
    assert_eq!(found[0].matched_by, ontology::MatchedBy::Synonym(ontology::Scope::Exact));
}

/// Every term's ancestors over the imported direct edges, with distances, equal the closure the
/// file ships, except the terms the report lists.
fn closure_matches_shipped(rel: &str, name: &str) {
    let text = read_shared(rel);
    let shipped: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text).expect("json");
    let db = Database::in_memory();
    let r = import_text(&db, &text, Format::CxgJson, name);
    assert_eq!(r.terms, shipped.len());
    let excused: HashSet<&str> = r.closure_mismatches.iter().map(|(t, _)| t.as_str()).collect();
    assert!(excused.len() * 100 < shipped.len(), "{} mismatches", excused.len());
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let v = Visibility::default();
    let mut checked = 0;
    for (id, term) in &shipped {
        let want: BTreeMap<String, u64> =
            term["ancestors"].as_object().expect("ancestors").iter().map(|(a, d)| (a.clone(), d.as_u64().expect("distance"))).collect();
        let got: BTreeMap<String, u64> = ws
            .ancestors_over(id_of(&ws, id), &Relations::is_a(), &v)
            .expect("ancestors")
            .into_iter()
            .map(|(e, d)| (ext(&ws, e), u64::from(d)))
            .collect();
        if excused.contains(id.as_str()) {
            assert_ne!(got, want, "{id} is listed as a mismatch but matches");
        } else {
            assert_eq!(got, want, "{id}");
            checked += 1;
        }
    }
    assert!(checked > 0);
}

#[test]
fn cell_ontology_json_closures_equal_the_shipped_ones() {
    closure_matches_shipped("cell-ontology/CL-cxg-v2026-03-26.json.gz", "cl");
}

#[test]
fn uberon_json_closures_equal_the_shipped_ones() {
    closure_matches_shipped("obo-cxg/UBERON-cxg-v2026-04-01.json.gz", "uberon");
}

#[test]
fn wordnet_nouns_import_with_the_known_dog_chain() {
    let (jsonl, synsets, links) = wordnet_nouns_jsonl(&read_shared("wordnet/dict/data.noun.gz"));
    assert_eq!((synsets, links), (82_115, 84_427), "SOURCE.md's counts");
    let db = Database::in_memory();
    let r = import_text(&db, &jsonl, Format::TermsJsonl, "wordnet");
    assert_eq!((r.terms, r.is_a, r.claims_added, r.external_references), (82_115, 84_427, 84_427, 0));
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    // dog.n.01 is the first sense of "dog" in index.noun.
    let index = read_shared("wordnet/dict/index.noun.gz");
    let dog_line = index.lines().find(|l| l.starts_with("dog n ")).expect("dog in index");
    let dog_offset = dog_line.split_whitespace().find(|w| w.len() == 8 && w.bytes().all(|b| b.is_ascii_digit())).expect("offset");
    let dog = id_of(&ws, &format!("wn:{dog_offset}"));
    let v = Visibility::default();
    let got: BTreeMap<String, u32> = ws
        .ancestors_over(dog, &Relations::is_a(), &v)
        .expect("ancestors")
        .into_iter()
        .map(|(e, d)| (ws.entity(e).expect("e").name.to_string(), d))
        .collect();
    let want: BTreeMap<String, u32> = [
        ("canine", 1),
        ("domestic animal", 1),
        ("carnivore", 2),
        ("animal", 2),
        ("placental", 3),
        ("organism", 3),
        ("mammal", 4),
        ("living thing", 4),
        ("vertebrate", 5),
        ("whole", 5),
        ("chordate", 6),
        ("object", 6),
        ("physical entity", 7),
        ("entity", 8),
    ]
    .into_iter()
    .map(|(n, d)| (n.to_owned(), d))
    .collect();
    assert_eq!(got, want);
    let entity = id_of(&ws, "wn:00001740");
    let path = ws.shortest_hierarchy_path(dog, entity, &Relations::is_a(), &v).expect("path").expect("entity is an ancestor");
    let names: Vec<String> = path.iter().map(|e| ws.entity(*e).expect("e").name.to_string()).collect();
    assert_eq!(names, ["dog", "domestic animal", "animal", "organism", "living thing", "whole", "object", "physical entity", "entity"]);
}

const V1: &str = "format-version: 1.2\ndata-version: t/1\nontology: tiny\n\n\
[Term]\nid: T:1\nname: cell\n\n\
[Term]\nid: T:2\nname: neuron\nis_a: T:1\nsynonym: \"nerve cell\" EXACT []\nsynonym: \"neurone\" RELATED []\n\n\
[Term]\nid: T:3\nname: glial cell\nis_a: T:1\n\n\
[Term]\nid: T:4\nname: astrocyte\nis_a: T:3\nrelationship: part_of T:9\n\n\
[Term]\nid: T:5\nname: old cell\nis_a: T:1\n\n\
[Term]\nid: T:6\nname: doomed cell\nis_a: T:1\n";

// T:2 renamed and a synonym swapped (updated); T:4 moved (an edge change only) from T:3 to T:2; T:5 obsolete; T:6 gone; T:7 new.
const V2: &str = "format-version: 1.2\ndata-version: t/2\nontology: tiny\n\n\
[Term]\nid: T:1\nname: cell\n\n\
[Term]\nid: T:2\nname: nerve cell\nis_a: T:1\nsynonym: \"neuron\" EXACT []\nsynonym: \"neurocyte\" EXACT []\n\n\
[Term]\nid: T:3\nname: glial cell\nis_a: T:1\n\n\
[Term]\nid: T:4\nname: astrocyte\nis_a: T:2\nrelationship: part_of T:9\n\n\
[Term]\nid: T:5\nname: old cell\nis_obsolete: true\nreplaced_by: T:1\n\n\
[Term]\nid: T:7\nname: microglia\nis_a: T:3\n";

#[test]
fn reimport_updates_in_place_and_deprecates_without_deleting() {
    let db = Database::in_memory();
    let r1 = import_text(&db, V1, Format::Obo, "tiny");
    assert_eq!((r1.added, r1.claims_added, r1.external_entities), (6, 6, 1));
    let r2 = import_text(&db, V2, Format::Obo, "tiny");
    assert_eq!((r2.added, r2.updated, r2.unchanged, r2.obsoleted, r2.removed), (1, 2, 3, 1, 1), "{r2:?}");
    // T:4 is_a T:3, T:5 is_a T:1 and T:6 is_a T:1 are gone; T:4 is_a T:2 and T:7 is_a T:3 are new.
    assert_eq!((r2.claims_added, r2.claims_deprecated), (2, 3), "{r2:?}");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let n = ws.entity(id_of(&ws, "T:2")).expect("T:2");
    assert_eq!(&*n.name, "nerve cell");
    let mut aliases: Vec<&str> = n.aliases.iter().map(|a| &**a).collect();
    aliases.sort_unstable();
    assert_eq!(aliases, ["neurocyte", "neuron"]);
    let gone = ws.entity(id_of(&ws, "T:6")).expect("kept, not deleted");
    assert!(!gone.deleted);
    assert_eq!(gone.properties.get(keys::OBSOLETE), Some(&Value::Bool(true)));
    assert_eq!(gone.properties.get(keys::REMOVED_IN), Some(&Value::from("t/2")));
    let old = ws.claim(ws.claim_id("T:4|subclass_of|T:3").expect("old edge")).expect("claim");
    assert_eq!(old.state, ClaimState::Deprecated);
    let v = Visibility::default();
    let up: Vec<String> =
        ws.ancestors_over(id_of(&ws, "T:4"), &Relations::is_a(), &v).expect("up").into_iter().map(|(e, _)| ext(&ws, e)).collect();
    assert_eq!(up, ["T:2", "T:1"]);
    // The same release again changes nothing; the first release again brings the old edge back
    // as a new claim (the deprecated one keeps its history).
    let again = import_text(&db, V2, Format::Obo, "tiny");
    assert_eq!((again.updated, again.claims_added, again.claims_deprecated, again.committed_version), (0, 0, 0, None));
    let back = import_text(&db, V1, Format::Obo, "tiny");
    assert!(back.claims_added >= 3, "{back:?}");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    assert!(ws.claim_id("T:4|subclass_of|T:3#2").is_some());
}

#[test]
fn a_failed_import_changes_nothing() {
    let db = Database::in_memory();
    import_text(&db, V1, Format::Obo, "tiny");
    let before = db.snapshot().version();
    let long_id = format!("T:{}", "9".repeat(600));
    let bad = format!("{V2}\n[Term]\nid: {long_id}\nname: too long\nis_a: T:1\n");
    let doc = ontology::detect::parse(bad.as_bytes(), Format::Obo, "tiny").expect("parses");
    let err = ontology::import_ontology(&db, "default", &doc).expect_err("id over the limit");
    assert!(err.to_string().contains("512") || err.to_string().to_lowercase().contains("long"), "{err}");
    assert_eq!(db.snapshot().version(), before);
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    assert_eq!(&*ws.entity(id_of(&ws, "T:2")).expect("T:2").name, "neuron");
}

#[test]
fn resolution_is_scope_aware_and_ranks_obsolete_terms_last() {
    let db = Database::in_memory();
    import_text(&db, V1, Format::Obo, "tiny");
    import_text(&db, V2, Format::Obo, "tiny");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let one = |text: &str| {
        let c = ontology::resolve(&ws, text, 5, None, None).expect("resolve");
        c.first().map(|c| (c.id.clone(), c.matched_by.as_string()))
    };
    assert_eq!(one("NERVE-CELL"), Some(("T:2".into(), "label".into())));
    assert_eq!(one("neurocyte"), Some(("T:2".into(), "synonym:exact".into())));
    assert_eq!(one("T:3"), Some(("T:3".into(), "id".into())));
    assert_eq!(one("no such thing"), None);
    // "old cell" (obsolete) and a live concept given the same alias: the live one first.
    let mut batch = engram::WriteBatch::new("default");
    batch.push(engram::Op::AddAlias { entity: "T:1".into(), alias: "old cell".into() });
    db.write(&batch).expect("alias");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let found = ontology::resolve(&ws, "old cell", 5, None, None).expect("resolve");
    let ids: Vec<(&str, bool)> = found.iter().map(|c| (c.id.as_str(), c.obsolete)).collect();
    assert_eq!(ids, [("T:1", false), ("T:5", true)]);
    // Profile search finds a concept by words of its definition or neighbourhood.
    let profiles = Profiles::build(&ws, ProfileConfig::default()).expect("profiles");
    let found = ontology::resolve(&ws, "microglia astrocyte", 5, Some(&profiles), None).expect("resolve");
    assert!(found.iter().all(|c| c.matched_by == ontology::MatchedBy::Profile));
    assert!(found.iter().any(|c| c.id == "T:7") && found.iter().any(|c| c.id == "T:4"), "{found:?}");
    assert!(found.iter().all(|c| c.score <= 0.7));
}

#[test]
fn term_mappings_are_data_consulted_first_and_editable() {
    let db = Database::in_memory();
    import_text(&db, V2, Format::Obo, "tiny");
    ontology::set_mapping(&db, "default", "Brain support cells", &["T:3", "T:7"], Some("curated")).expect("set");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let found = ontology::resolve(&ws, "brain-support cells", 5, None, None).expect("resolve");
    let got: Vec<(&str, String)> = found.iter().map(|c| (c.id.as_str(), c.matched_by.as_string())).collect();
    assert_eq!(got, [("T:3", "mapping".to_owned()), ("T:7", "mapping".to_owned())]);
    assert_eq!(ontology::list_mappings(&ws).len(), 1);
    // Edit: now only T:7; an unknown target is refused and changes nothing.
    ontology::set_mapping(&db, "default", "brain support cells", &["T:7"], None).expect("edit");
    let before = db.snapshot().version();
    let err = ontology::set_mapping(&db, "default", "brain support cells", &["T:404"], None).expect_err("unknown target");
    assert!(err.to_string().contains("T:404"), "{err}");
    assert_eq!(db.snapshot().version(), before);
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let m = ontology::lookup_mapping(&ws, "Brain Support Cells").expect("mapping");
    assert_eq!(m.targets, vec![id_of(&ws, "T:7")]);
    assert!(ontology::remove_mapping(&db, "default", "brain support cells").expect("remove"));
    assert!(ontology::lookup_mapping(&db.snapshot().workspace("default").expect("ws"), "brain support cells").is_none());
}

#[test]
fn profiles_aggregate_over_descendants() {
    let db = Database::in_memory();
    import_text(&db, V2, Format::Obo, "tiny");
    let mut b = engram::WriteBatch::new("default");
    b.upsert_entity("ds1", "dataset", "Cortex atlas").upsert_entity("ds2", "dataset", "Retina scan");
    b.add_claim(engram::AddClaim::new("ds1", "has_cell_type", "T:4").state(ClaimState::Accepted));
    b.add_claim(engram::AddClaim::new("ds2", "has_cell_type", "T:7").state(ClaimState::Accepted));
    b.add_claim(engram::AddClaim::new("ds1", "has_cell_type", "T:7").state(ClaimState::Accepted));
    b.push(engram::Op::SetProperty { entity: "T:4".into(), key: "tissue".into(), value: Value::from("brain") });
    b.push(engram::Op::SetProperty { entity: "T:7".into(), key: "tissue".into(), value: Value::from("brain") });
    db.write(&b).expect("data");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let config = ProfileConfig {
        aggregate_properties: vec!["tissue".into()],
        aggregate_linked_types: vec!["dataset".into()],
        ..ProfileConfig::default()
    };
    let profiles = Profiles::build(&ws, config).expect("profiles");
    let root = profiles.get(id_of(&ws, "T:1")).expect("root profile");
    assert_eq!(root.aggregates["tissue"], vec![("brain".to_owned(), 2)]);
    assert_eq!(root.aggregates["linked dataset"], vec![("Cortex atlas".to_owned(), 2), ("Retina scan".to_owned(), 1)]);
    assert_eq!(root.children, ["glial cell", "nerve cell"]);
    assert_eq!(root.grandchildren, ["astrocyte", "microglia"]);
    let leaf = profiles.get(id_of(&ws, "T:7")).expect("leaf");
    assert_eq!(leaf.grandparents, ["cell"]);
    assert!(root.text().contains("linked dataset: Cortex atlas (2); Retina scan (1)"), "{}", root.text());
    let hits: HashSet<String> = profiles.search("retina", 10).into_iter().map(|(e, _)| ext(&ws, e)).collect();
    assert_eq!(hits, HashSet::from(["T:1".to_owned(), "T:3".to_owned(), "T:7".to_owned()]));
}

/// A random hierarchy with random data links, changed at random: profiles kept up to date by
/// `refresh` equal profiles rebuilt from scratch, and fewer were rebuilt than exist.
#[test]
fn refreshed_profiles_equal_a_full_rebuild() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let db = Database::in_memory();
    let n = 300;
    let mut lines = String::new();
    for i in 0..n {
        let parents: Vec<String> =
            if i == 0 { vec![] } else { (0..rng.gen_range(1..3)).map(|_| format!("R:{}", rng.gen_range(0..i))).collect() };
        lines.push_str(&serde_json::json!({"id": format!("R:{i}"), "label": format!("concept {i}"), "parents": parents}).to_string());
        lines.push('\n');
    }
    import_text(&db, &lines, Format::TermsJsonl, "random");
    let config = ProfileConfig {
        aggregate_linked_types: vec!["item".into()],
        aggregate_properties: vec!["colour".into()],
        ..ProfileConfig::default()
    };
    let mut profiles = Profiles::build(&db.snapshot().workspace("default").expect("ws"), config.clone()).expect("build");
    for round in 0..6 {
        let mut b = engram::WriteBatch::new("default");
        for j in 0..5 {
            let item = format!("item{round}-{j}");
            b.upsert_entity(&item, "item", &item);
            b.add_claim(engram::AddClaim::new(item.as_str(), "about", format!("R:{}", rng.gen_range(0..n)).as_str()));
            let target = format!("R:{}", rng.gen_range(0..n));
            b.push(engram::Op::SetProperty {
                entity: target.as_str().into(),
                key: "colour".into(),
                value: Value::from(["red", "blue"][rng.gen_range(0..2)]),
            });
        }
        let child = rng.gen_range(1..n);
        b.add_claim(engram::AddClaim::new(format!("R:{child}").as_str(), "subclass_of", format!("R:{}", rng.gen_range(0..child)).as_str()));
        db.write(&b).expect("write");
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("ws");
        let stats = profiles.refresh(&ws).expect("refresh");
        assert!(stats.rebuilt < n, "round {round}: rebuilt all {}", stats.rebuilt);
        let fresh = Profiles::build(&ws, config.clone()).expect("rebuild");
        for i in 0..n {
            let e = id_of(&ws, &format!("R:{i}"));
            assert_eq!(profiles.get(e), fresh.get(e), "round {round}, R:{i}");
        }
        // Rename a linked item: the aggregates that list it follow.
        let mut rename = engram::WriteBatch::new("default");
        rename.push(engram::Op::RenameEntity { entity: format!("item{round}-0").as_str().into(), name: format!("renamed {round}") });
        db.write(&rename).expect("rename");
        let snap = db.snapshot();
        let ws = snap.workspace("default").expect("ws");
        profiles.refresh(&ws).expect("refresh after rename");
        let fresh = Profiles::build(&ws, config.clone()).expect("rebuild");
        for i in 0..n {
            let e = id_of(&ws, &format!("R:{i}"));
            assert_eq!(profiles.get(e), fresh.get(e), "round {round}, R:{i}, after a rename");
        }
        let q = "concept 17";
        assert_eq!(profiles.search(q, 5).len(), fresh.search(q, 5).len());
    }
}

/// Closures over several relations equal a naive breadth-first search, on a random graph.
#[test]
fn multi_relation_closures_match_a_naive_bfs() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let db = Database::in_memory();
    let n = 200;
    let mut edges: Vec<(usize, &str, usize)> = Vec::new();
    let mut lines = String::new();
    for i in 1..n {
        let mut parents = Vec::new();
        let mut rels = Vec::new();
        for _ in 0..rng.gen_range(0..3) {
            let p = rng.gen_range(0..n); // cycles allowed
            if rng.gen_bool(0.5) {
                parents.push(format!("N:{p}"));
                edges.push((i, "subclass_of", p));
            } else {
                rels.push(serde_json::json!({"relation": "part_of", "target": format!("N:{p}")}));
                edges.push((i, "part_of", p));
            }
        }
        lines.push_str(&serde_json::json!({"id": format!("N:{i}"), "parents": parents, "relations": rels}).to_string());
        lines.push('\n');
    }
    lines.push_str("{\"id\": \"N:0\"}\n");
    import_text(&db, &lines, Format::TermsJsonl, "graph");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let v = Visibility::default();
    for rels in ["is_a", "part_of", "is_a,part_of"] {
        let parsed = Relations::parse(rels);
        let use_rel = |r: &str| parsed.names().iter().any(|x| x == r);
        for start in 0..n {
            let mut dist: HashMap<usize, u32> = HashMap::from([(start, 0)]);
            let mut q = VecDeque::from([start]);
            while let Some(x) = q.pop_front() {
                for &(s, r, o) in &edges {
                    if s == x && use_rel(r) && !dist.contains_key(&o) {
                        dist.insert(o, dist[&x] + 1);
                        q.push_back(o);
                    }
                }
            }
            dist.remove(&start);
            let want: BTreeMap<String, u32> = dist.into_iter().map(|(e, d)| (format!("N:{e}"), d)).collect();
            let got: BTreeMap<String, u32> = ws
                .ancestors_over(id_of(&ws, &format!("N:{start}")), &parsed, &v)
                .expect("closure")
                .into_iter()
                .map(|(e, d)| (ext(&ws, e), d))
                .collect();
            assert_eq!(got, want, "{rels} from N:{start}");
        }
    }
    assert!(matches!(
        ws.ancestors_over(id_of(&ws, "N:1"), &Relations::parse("part-whole"), &v),
        Err(engram::ReadError::UnknownPredicate(_))
    ));
}

#[test]
fn lowest_common_ancestors_and_cohorts() {
    let db = Database::in_memory();
    import_text(&db, V2, Format::Obo, "tiny");
    let mut b = engram::WriteBatch::new("default");
    b.upsert_entity("ds1", "dataset", "Cortex atlas").upsert_entity("ds2", "dataset", "Gut atlas");
    b.add_claim(engram::AddClaim::new("ds1", "has_cell_type", "T:7"));
    b.add_claim(engram::AddClaim::new("ds2", "has_cell_type", "T:5"));
    db.write(&b).expect("data");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let v = Visibility::default();
    let is_a = Relations::is_a();
    let lca = ws.lowest_common_ancestors(id_of(&ws, "T:4"), id_of(&ws, "T:7"), &is_a, &v).expect("lca");
    assert_eq!(lca.iter().map(|(e, a, b)| (ext(&ws, *e), *a, *b)).collect::<Vec<_>>(), [("T:1".to_owned(), 2, 2)]);
    let lca = ws.lowest_common_ancestors(id_of(&ws, "T:4"), id_of(&ws, "T:2"), &is_a, &v).expect("lca");
    assert_eq!(lca.iter().map(|(e, a, b)| (ext(&ws, *e), *a, *b)).collect::<Vec<_>>(), [("T:2".to_owned(), 1, 0)]);
    let cohort = ws.expand_cohort(id_of(&ws, "T:3"), &is_a, None, &v).expect("cohort");
    let concepts: HashSet<String> = cohort.concepts.iter().map(|(e, _)| ext(&ws, *e)).collect();
    assert_eq!(concepts, HashSet::from(["T:3".to_owned(), "T:7".to_owned()]));
    let members: Vec<String> = cohort.members.iter().map(|(e, _)| ext(&ws, *e)).collect();
    assert_eq!(members, ["ds1"]);
}

/// Embedded profiles: vector search finds a concept by its neighbourhood's words, resolution fuses
/// it with BM25, and a refresh re-embeds what it rebuilds.
#[test]
fn embedded_profiles_are_searchable_and_stay_in_step() {
    use engram::embed::{Embedder, HashEmbedder};
    let db = Database::in_memory();
    import_text(&db, V2, Format::Obo, "tiny");
    let hash = std::sync::Arc::new(HashEmbedder::new(128));
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    let mut profiles = Profiles::build(&ws, ProfileConfig::default()).expect("profiles");
    profiles.embed_with(hash.clone()).expect("embeds");
    assert!(profiles.has_vectors());
    for i in [1, 2, 3, 4, 7] {
        let e = id_of(&ws, &format!("T:{i}"));
        let v = hash.embed(&[profiles.get(e).expect("profile").text().as_str()]).expect("embed").remove(0);
        assert_eq!(profiles.search_vector(&v, 1)[0].0, e, "T:{i}");
    }
    // Words no profile holds: only the vector path can answer, and it does.
    let microglia = profiles.get(id_of(&ws, "T:7")).expect("profile").text();
    let q = hash.embed(&[microglia.as_str()]).expect("embed").remove(0);
    let found = ontology::resolve(&ws, "zzyzx qwerty", 3, Some(&profiles), Some(&q)).expect("resolve");
    assert_eq!(found.first().map(|c| (c.id.as_str(), &c.matched_by)), Some(("T:7", &ontology::MatchedBy::Profile)), "{found:?}");
    assert!(ontology::resolve(&ws, "zzyzx qwerty", 3, Some(&profiles), None).expect("resolve").is_empty());
    // A new child of T:3: the refreshed T:3 profile lists it, and its vector follows.
    let mut b = engram::WriteBatch::new("default");
    b.upsert_entity("T:10", "concept", "oligodendrocyte");
    b.add_claim(engram::AddClaim::new("T:10", "subclass_of", "T:3").state(ClaimState::Accepted));
    db.write(&b).expect("write");
    let snap = db.snapshot();
    let ws = snap.workspace("default").expect("ws");
    profiles.refresh(&ws).expect("refresh");
    let glia = id_of(&ws, "T:3");
    let text = profiles.get(glia).expect("profile").text();
    assert!(text.contains("oligodendrocyte"), "{text}");
    let v = hash.embed(&[text.as_str()]).expect("embed").remove(0);
    let (top, score) = profiles.search_vector(&v, 1)[0];
    assert_eq!(top, glia);
    assert!(score > 0.9999, "{score}");
}
