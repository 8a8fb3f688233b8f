//! The read commands: `neighbors` (a traversal from one entity), `recall` (hybrid retrieval into a
//! token budget) and `report`. They open the folder read-only when another process is writing it.

use crate::admin::open_for_reading;
use crate::args::{Command, EmbedArgs};
use crate::embed;
use crate::fail::{bug, fail, Failure};
use engram::{Direction, EdgeFilter, EntityId, KHopQuery, RecallQuery, VectorMode, WorkspaceView};
use serde_json::json;
use std::fmt::Write;
use std::path::Path;

/// Finds ENTITY as an external id, then a canonical name, then an alias (names compare after
/// Unicode normalisation and case folding). Several matches of the same kind are an error that
/// lists them. The id of a merged-away entity finds the entity it was merged into.
pub fn resolve(ws: &WorkspaceView<'_>, text: &str) -> Result<EntityId, Failure> {
    if let Some(mut e) = ws.entity_id(text) {
        while let Some(into) = ws.entity(e).and_then(|x| x.merged_into) {
            e = into;
        }
        return Ok(e);
    }
    let found = ws.find_by_name(text);
    let key = engram::normalize::name_key(text);
    let (by_name, by_alias): (Vec<EntityId>, Vec<EntityId>) =
        found.into_iter().partition(|e| ws.entity(*e).is_some_and(|x| engram::normalize::name_key(&x.name) == key));
    for set in [by_name, by_alias] {
        match set.len() {
            0 => {}
            1 => return Ok(set[0]),
            _ => {
                let ids: Vec<String> = set.iter().filter_map(|e| ws.entity(*e)).map(|x| x.ext_id.to_string()).collect();
                return Err(format!("`{text}` names {} entities ({}); use an external id", ids.len(), ids.join(", ")).into());
            }
        }
    }
    Err(format!("no entity `{text}` (tried external id, name and alias)").into())
}

/// `engram neighbors`: every distinct entity within `hops` of ENTITY, the start excluded.
pub fn neighbors(
    ws: &WorkspaceView<'_>,
    entity: &str,
    hops: u32,
    direction: Direction,
    visibility: engram::Visibility,
    as_json: bool,
) -> Result<String, Failure> {
    let start = resolve(ws, entity)?;
    let q = KHopQuery { max_depth: hops, hops: vec![EdgeFilter::new(direction)], with_claims: true, visibility, ..KHopQuery::default() };
    let r = ws.khop(&[start], &q).map_err(fail)?;
    let mut out = String::new();
    let mut items = Vec::new();
    for (reached, via) in r.entities.iter().zip(&r.via) {
        if reached.entity == start {
            continue;
        }
        let Some(e) = ws.entity(reached.entity) else { continue };
        if as_json {
            let claims: Vec<serde_json::Value> = via
                .iter()
                .filter_map(|c| ws.claim(*c))
                .map(|c| {
                    let ext = |e: EntityId| ws.entity(e).map(|x| x.ext_id.to_string());
                    json!({"id": c.ext_id.as_ref(), "subject": ext(c.subject), "predicate": c.predicate.as_ref(), "object": ext(c.object),
                           "confidence": engram::shortest_f64(c.confidence), "state": c.state.as_str()})
                })
                .collect();
            items.push(json!({"id": e.ext_id.as_ref(), "name": e.name.as_ref(), "type": e.entity_type.as_ref(), "depth": reached.depth, "claims": claims}));
        } else {
            let _ = writeln!(out, "{}\t{}\t{}\t{}", reached.depth, e.ext_id, e.entity_type, e.name);
        }
    }
    if r.truncated {
        eprintln!("engram: the traversal stopped at the visited limit; the list is incomplete");
    }
    if as_json {
        out = serde_json::Value::Array(items).to_string();
        out.push('\n');
    }
    Ok(out)
}

/// Options of `engram recall`.
#[derive(Debug)]
pub struct RecallArgs<'a> {
    pub text: &'a str,
    pub budget: usize,
    pub seeds: &'a [String],
    pub time: &'a crate::args::TimeArgs,
    pub vector: Option<&'a str>,
    /// Without `vector`, the database whose embedder embeds what the question asks.
    pub embedder: Option<&'a engram::Database>,
    pub hops: u32,
    pub history: bool,
    pub mode: &'a str,
    pub json: bool,
}

/// `engram recall`: the context block (or, with `--json`, the whole result as one object).
pub fn recall(ws: &WorkspaceView<'_>, a: &RecallArgs<'_>) -> Result<String, Failure> {
    let mut q = RecallQuery::new(a.text);
    q.budget = a.budget;
    q.hops = a.hops;
    q.mode = VectorMode::parse(a.mode).ok_or_else(|| format!("--mode `{}`: expected f32, f16 or i8", a.mode))?;
    for s in a.seeds {
        q.seeds.push(resolve(ws, s)?);
    }
    q.visibility = a.time.visibility(a.history)?;
    if let Some(v) = a.vector {
        let parsed: Vec<f32> = serde_json::from_str(v).map_err(|e| format!("--vector: {e} (expected a JSON array of numbers)"))?;
        q.vector = Some(parsed);
    } else if let Some(db) = a.embedder {
        q.vector = db.embed_question(a.text, &ws.question_to_embed(&q).map_err(fail)?).map_err(fail)?;
    }
    rendered(ws.recall(&q).map_err(fail)?, a.json)
}

/// What `engram recall` and `engram context` print: the context block, with a summary on stderr
/// (or, with `json`, the whole result as one object).
fn rendered(r: engram::Recall, json: bool) -> Result<String, Failure> {
    for s in &r.skipped {
        eprintln!("engram: {} path not run: {}", s.path, s.reason);
    }
    if json {
        let mut out = serde_json::to_string(&r).map_err(bug)?;
        out.push('\n');
        return Ok(out);
    }
    eprintln!(
        "engram: {} facts, {} of {} tokens, {} cut by the budget; paths: {}",
        r.packed.facts.len(),
        r.packed.tokens_used,
        r.packed.budget,
        r.packed.cut,
        r.paths_run.join(", ")
    );
    let mut out = r.packed.context;
    if !out.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// `engram context`: the entity's context, or with `--text` its neighbourhood ranked by the text
/// (embedded by the database's embedder when it has one, else by keywords).
pub fn context_command(command: &Command) -> Result<(), Failure> {
    let Command::Context {
        dir,
        entity,
        workspace,
        text,
        depth,
        budget,
        limit,
        predicate,
        types,
        time,
        json,
        embedding: EmbedArgs { embedder, model_dir },
    } = command
    else {
        return Err("not a context command".into());
    };
    let db = open_for_reading(dir)?;
    let vector = match text {
        Some(t) => {
            embed::attach(&db, embedder.as_deref(), model_dir.as_deref())?;
            db.embed_query(t).map_err(fail)?
        }
        None => None,
    };
    let q = engram::ContextQuery {
        depth: *depth,
        budget: *budget,
        max_facts: *limit,
        predicates: predicate.clone(),
        types: types.clone(),
        visibility: time.visibility(false)?,
        ..engram::ContextQuery::default()
    };
    let snap = db.snapshot();
    let ws = snap.workspace(workspace).map_err(fail)?;
    let root = resolve(&ws, entity)?;
    let r = match text {
        Some(t) => ws.neighborhood(root, t, vector.as_deref(), &q),
        None => ws.entity_context(root, &q),
    };
    crate::out::print(&rendered(r.map_err(fail)?, *json)?)
}

/// `engram report`: the workspace report, or one claim's attribution trace.
pub fn report(ws: &WorkspaceView<'_>, trace: Option<&str>) -> Result<String, Failure> {
    let value = match trace {
        None => serde_json::to_value(ws.report()).map_err(bug)?,
        Some(id) => {
            let c = ws.claim_id(id).and_then(|c| ws.claim(c)).ok_or_else(|| format!("no claim `{id}` in this workspace"))?;
            let ext = |e: EntityId| ws.entity(e).map(|x| x.ext_id.to_string());
            let evidence: Vec<serde_json::Value> = ws
                .evidence_of(c.id)
                .map_err(fail)?
                .into_iter()
                .map(|v| {
                    serde_json::json!({"id": v.ext_id.as_ref(), "conversation_id": v.conversation_id.as_deref(), "message_id": v.message_id.as_deref(),
                        "model": v.model.as_deref(), "model_version": v.model_version.as_deref(), "raw_confidence": v.raw_confidence.map(engram::shortest_f64),
                        "snippet": v.snippet.as_deref(), "reasoning": v.reasoning.as_deref(), "observed_at": v.observed_at.to_rfc3339(), "recorded_at": v.recorded_at.to_rfc3339()})
                })
                .collect();
            serde_json::json!({"claim": id, "subject": ext(c.subject), "predicate": c.predicate.as_ref(), "object": ext(c.object),
                "state": c.state.as_str(), "confidence": engram::shortest_f64(c.confidence), "superseded_by": c.superseded_by.and_then(|s| ws.claim(s)).map(|s| s.ext_id.to_string()),
                "evidence": evidence})
        }
    };
    Ok(format!("{value}\n"))
}

/// Opens DIR for reading, runs `f` on one workspace and prints what it returns.
pub fn with_workspace(dir: &Path, workspace: &str, f: impl FnOnce(&WorkspaceView<'_>) -> Result<String, Failure>) -> Result<(), Failure> {
    let db = open_for_reading(dir)?;
    let snap = db.snapshot();
    let ws = snap.workspace(workspace).map_err(fail)?;
    let out = f(&ws)?;
    crate::out::print(&out)
}

/// `engram recall`: the question is embedded by the database's embedder unless `--vector` gives
/// one.
pub fn recall_command(command: &Command) -> Result<(), Failure> {
    let Command::Recall {
        dir,
        text,
        workspace,
        budget,
        seed,
        time,
        vector,
        hops,
        history,
        mode,
        json,
        embedding: EmbedArgs { embedder, model_dir },
    } = command
    else {
        return Err("not a recall command".into());
    };
    let db = open_for_reading(dir)?;
    // Without a client vector, the question is embedded by the database's embedder. A client
    // vector the stored vectors cannot be compared with is the caller's error, not a skipped path.
    match vector {
        Some(v) => {
            let got = serde_json::from_str::<Vec<f32>>(v).map_err(|e| format!("--vector: {e} (expected a JSON array of numbers)"))?.len();
            let stored = db.settings().vector_dim.map(|d| d as usize);
            if stored != Some(got) {
                let have = stored.map_or_else(|| "none (no vectors stored)".to_owned(), |d| d.to_string());
                return Err(format!("--vector has {got} components; the stored vectors have {have}").into());
            }
        }
        None => embed::attach(&db, embedder.as_deref(), model_dir.as_deref())?,
    }
    let args = RecallArgs {
        text,
        budget: *budget,
        seeds: seed,
        time,
        vector: vector.as_deref(),
        embedder: Some(&db),
        hops: *hops,
        history: *history,
        mode,
        json: *json,
    };
    let snap = db.snapshot();
    let ws = snap.workspace(workspace).map_err(fail)?;
    crate::out::print(&recall(&ws, &args)?)
}
