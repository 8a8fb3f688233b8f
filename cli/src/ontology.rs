//! The ontology commands: `import-ontology`, `ancestors`, `descendants`, `resolve`, `mapping`
//! and `profile`.

use crate::admin::open_for_reading;
use crate::data::spinner;
use crate::fail::{bug, fail, Failure};
use engram::ontology::{self, Format, ProfileConfig, Profiles, Relations};
use engram::{EntityId, Visibility, WorkspaceView};
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;

/// `engram import-ontology`: parse FILE completely, then write it in one transaction and
/// checkpoint. Prints the report (JSON with `--json`).
pub fn import(dir: &Path, file: &Path, format: Option<&str>, workspace: &str, as_json: bool) -> Result<String, Failure> {
    let format = format.map(|f| Format::parse(f).ok_or_else(|| format!("unknown --format `{f}` ({})", Format::NAMES))).transpose()?;
    let bar = spinner(&format!("parsing {}", file.display()));
    let input = std::fs::File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let doc = ontology::read_ontology(input, name, format).map_err(|e| format!("{}: {e}", file.display()))?;
    bar.set_message(format!("importing {} terms of `{}`", doc.terms.len(), doc.name));
    let db = crate::audit::open(dir).map_err(fail)?;
    let report = ontology::import_ontology(&db, workspace, &doc).map_err(fail)?;
    bar.set_message("writing the checkpoint");
    db.checkpoint().map_err(fail)?;
    db.wait_for_merge();
    bar.finish_and_clear();
    if as_json {
        return serde_json::to_string(&report).map(|s| s + "\n").map_err(bug);
    }
    let mut out = String::new();
    let r = &report;
    let _ = writeln!(out, "ontology {} version {}", r.ontology, r.version.as_deref().unwrap_or("-"));
    let _ = writeln!(
        out,
        "terms {} (obsolete {}), is_a {}, synonyms {}, definitions {}, xrefs {}",
        r.terms, r.obsolete, r.is_a, r.synonyms, r.definitions, r.xrefs
    );
    for (rel, n) in &r.relations {
        let _ = writeln!(out, "relation {rel} {n}");
    }
    let _ = writeln!(
        out,
        "added {}, updated {}, unchanged {}, obsoleted {}, removed {}",
        r.added, r.updated, r.unchanged, r.obsoleted, r.removed
    );
    let _ = writeln!(out, "claims added {}, deprecated {}", r.claims_added, r.claims_deprecated);
    let _ = writeln!(
        out,
        "external references {} to {} terms outside the file ({} new external concepts)",
        r.external_references,
        r.dangling.len(),
        r.external_entities
    );
    let s = &r.skipped;
    let _ = writeln!(out, "skipped: {} blank-node triples, {} restrictions, {} other", s.blank_node_triples, s.restrictions, s.other);
    if r.aliases_truncated > 0 {
        let _ = writeln!(out, "synonyms beyond the alias limit (kept in the synonyms property only): {}", r.aliases_truncated);
    }
    if !r.closure_mismatches.is_empty() {
        let _ = writeln!(out, "terms whose shipped closure is not derivable from the direct edges: {}", r.closure_mismatches.len());
        for (t, why) in &r.closure_mismatches {
            let _ = writeln!(out, "  {t}: {why}");
        }
    }
    Ok(out)
}

/// TERM as a CURIE, a label or a synonym (live concepts before obsolete ones). Several equally
/// good matches are an error that lists them.
pub fn find_term(ws: &WorkspaceView<'_>, term: &str) -> Result<EntityId, Failure> {
    let found = ontology::resolve(ws, term, 16, None, None).map_err(fail)?;
    let Some(best) = found.first() else { return Err(format!("no concept `{term}` (tried CURIE, label and synonyms)").into()) };
    let ties: Vec<&str> =
        found.iter().filter(|c| c.matched_by == best.matched_by && c.obsolete == best.obsolete).map(|c| c.id.as_str()).collect();
    if ties.len() > 1 {
        return Err(format!("`{term}` names {} concepts ({}); use a CURIE", ties.len(), ties.join(", ")).into());
    }
    Ok(best.concept)
}

/// `engram ancestors|descendants`: the closure with distances, the term itself excluded.
pub fn closure(ws: &WorkspaceView<'_>, term: &str, relations: &str, up: bool, as_json: bool) -> Result<String, Failure> {
    let e = find_term(ws, term)?;
    let rels = Relations::parse(relations);
    let v = Visibility::default();
    let list = if up { ws.ancestors_over(e, &rels, &v) } else { ws.descendants_over(e, &rels, &v) }.map_err(fail)?;
    let rows: Vec<(String, String, u32)> =
        list.into_iter().filter_map(|(x, d)| ws.entity(x).map(|ent| (ent.ext_id.to_string(), ent.name.to_string(), d))).collect();
    if as_json {
        let items: Vec<serde_json::Value> = rows.iter().map(|(id, name, d)| json!({"id": id, "name": name, "distance": d})).collect();
        return Ok(format!("{}\n", serde_json::Value::Array(items)));
    }
    let mut out = String::new();
    for (id, name, d) in rows {
        let _ = writeln!(out, "{d}\t{id}\t{name}");
    }
    Ok(out)
}

/// `engram resolve`: candidates for TEXT, best first.
/// The search step is hybrid: BM25 over the profiles fused with vector search over profile vectors
/// made here (profiles are derived data, so any embedder will do as long as the question uses the
/// same one).
pub fn resolve(
    ws: &WorkspaceView<'_>,
    text: &str,
    k: usize,
    as_json: bool,
    embedder: Option<&str>,
    model_dir: Option<&Path>,
) -> Result<String, Failure> {
    let mut profiles = Profiles::build(ws, ProfileConfig::default()).map_err(fail)?;
    let dir = model_dir.map_or_else(engram::embed::default_model_dir, Path::to_path_buf);
    let name = embedder.unwrap_or(if engram::embed::StaticModel::present(&dir) { "static" } else { "hash" });
    let (e, why) = engram::embed::select(Some(name), Some(&dir), 256).map_err(fail)?;
    eprintln!("engram: profile vectors: {why}");
    profiles.embed_with(e.clone()).map_err(fail)?;
    let query = e.embed(&[text]).map_err(fail)?.pop();
    let found = ontology::resolve(ws, text, k, Some(&profiles), query.as_deref()).map_err(fail)?;
    if as_json {
        let items: Vec<serde_json::Value> = found
            .iter()
            .map(
                |c| json!({"id": c.id, "label": c.label, "matched_by": c.matched_by.as_string(), "score": c.score, "obsolete": c.obsolete}),
            )
            .collect();
        return Ok(format!("{}\n", serde_json::Value::Array(items)));
    }
    let mut out = String::new();
    for c in found {
        let _ = writeln!(
            out,
            "{:.3}\t{}\t{}\t{}{}",
            c.score,
            c.matched_by.as_string(),
            c.id,
            c.label,
            if c.obsolete { "\t(obsolete)" } else { "" }
        );
    }
    Ok(out)
}

/// `engram profile`: one concept's flattened profile.
pub fn profile(ws: &WorkspaceView<'_>, term: &str, config: ProfileConfig) -> Result<String, Failure> {
    let e = find_term(ws, term)?;
    let profiles = Profiles::build(ws, config).map_err(fail)?;
    let p = profiles.get(e).ok_or_else(|| format!("`{term}` is not a concept of this workspace"))?;
    Ok(format!("{}\n", p.text()))
}

/// `engram mapping DIR set|remove|list`.
pub fn mapping(
    dir: &Path,
    workspace: &str,
    action: &str,
    text: Option<&str>,
    targets: &[String],
    note: Option<&str>,
) -> Result<String, Failure> {
    match action {
        "list" => {
            let db = open_for_reading(dir)?;
            let snap = db.snapshot();
            let ws = snap.workspace(workspace).map_err(fail)?;
            let items: Vec<serde_json::Value> = ontology::list_mappings(&ws)
                .into_iter()
                .map(|m| {
                    let ids: Vec<String> = m.targets.iter().filter_map(|t| ws.entity(*t)).map(|t| t.ext_id.to_string()).collect();
                    json!({"text": m.text, "targets": ids, "note": m.note})
                })
                .collect();
            Ok(format!("{}\n", serde_json::Value::Array(items)))
        }
        "set" | "remove" => {
            let text = text.ok_or_else(|| format!("mapping {action} needs TEXT"))?;
            let db = crate::admin::open_existing(dir)?;
            if action == "set" {
                if targets.is_empty() {
                    return Err("mapping set needs at least one --to CURIE".into());
                }
                let t: Vec<&str> = targets.iter().map(String::as_str).collect();
                ontology::set_mapping(&db, workspace, text, &t, note).map_err(fail)?;
                Ok(String::new())
            } else if ontology::remove_mapping(&db, workspace, text).map_err(fail)? {
                Ok(String::new())
            } else {
                Err(format!("no mapping for `{text}`").into())
            }
        }
        other => Err(format!("unknown mapping action `{other}` (set, remove, list)").into()),
    }
}
