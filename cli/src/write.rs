//! Writing memory: `ingest`, `merge` and `unmerge`, `delete`, `restore` and `forget`.

use crate::data::read;
use crate::embed;
use crate::fail::{bug, fail, Failure};
use crate::outln;
use crate::read as reads;
use std::path::Path;

/// `engram merge` (`pair` given) or `engram unmerge` (`undo` given); prints how many claims moved.
pub fn merge(dir: &Path, workspace: &str, pair: Option<(&String, &String)>, undo: Option<&String>) -> Result<(), Failure> {
    let db = crate::admin::open_existing(dir)?;
    let snap = db.snapshot();
    let ws = snap.workspace(workspace).map_err(fail)?;
    let mut batch = engram::WriteBatch::new(workspace);
    let (entity, op) = match (pair, undo) {
        (Some((from, into)), _) => {
            let (from, into) = (reads::resolve(&ws, from)?, reads::resolve(&ws, into)?);
            (from, engram::Op::MergeEntities { from: from.into(), into: into.into() })
        }
        (None, Some(ext)) => {
            let e = ws.entity_id(ext).ok_or_else(|| format!("no entity with external id `{ext}` in this workspace"))?;
            (e, engram::Op::UnmergeEntity { entity: e.into() })
        }
        (None, None) => return Err("nothing to merge".into()),
    };
    batch.push(op);
    db.write(&batch).map_err(fail)?;
    let snap = db.snapshot();
    let merges = snap.workspace(workspace).map_err(fail)?.merges_of(entity);
    let moved = merges.last().map_or(0, |m| m.claims);
    outln!("{moved} claims moved");
    Ok(())
}

/// Documents per commit group of `engram ingest`: each is its own transaction, the group shares one
/// WAL write and one fsync, and its report lines print once it is durable.
const INGEST_GROUP_DOCS: usize = 256;

/// `engram ingest`: one document or an array of them (`.json`), or one per line (`.jsonl`). The
/// whole file is parsed and checked first (a bad document writes nothing); then the documents are
/// committed in groups, each document atomic and idempotent, its report line printed when its group
/// is durable. A document the engine rejects (a bad reference) is reported and the rest go on; a
/// failure of the disk stops the command at once.
pub fn ingest(
    dir: &Path,
    file: &Path,
    conversation: bool,
    opts: engram::ingest::IngestOptions,
    (embedder, model_dir): (Option<&str>, Option<&Path>),
) -> Result<(), Failure> {
    let text =
        String::from_utf8(read(file)?).map_err(|e| format!("{}: not UTF-8 at byte {}", file.display(), e.utf8_error().valid_up_to()))?;
    let docs = if conversation { crate::docs::parse_conversations(file, &text)? } else { crate::docs::parse_file(file, &text)? };
    let db = crate::audit::open(dir).map_err(fail)?;
    embed::attach(&db, embedder, model_dir)?;
    let (total, mut durable, mut rejected) = (docs.len(), 0usize, 0usize);
    let mut docs = docs.into_iter().peekable();
    while docs.peek().is_some() {
        let (at, group): (Vec<String>, Vec<engram::ingest::IngestDoc>) =
            docs.by_ref().take(INGEST_GROUP_DOCS).map(|d| (d.at, d.doc)).unzip();
        let stopped = |e: engram::Error, durable: usize| {
            let f = fail(e);
            Failure {
                code: f.code,
                message: format!(
                    "{}: {}; stopped: {durable} of {total} document(s) are durable, the rest were not written",
                    file.display(),
                    f.message
                ),
            }
        };
        let reports = db.ingest_docs(group, &opts).map_err(|e| stopped(e, durable))?;
        for (at, report) in at.iter().zip(reports) {
            match report {
                Ok(report) => {
                    durable += 1;
                    outln!("{}", serde_json::to_string(&report).map_err(bug)?);
                }
                Err(e) if matches!(e.class(), engram::ErrorClass::Operator | engram::ErrorClass::Corruption | engram::ErrorClass::Bug) => {
                    return Err(stopped(e, durable))
                }
                Err(e) => {
                    rejected += 1;
                    eprintln!("engram: {}: {at}: {e}", file.display());
                }
            }
        }
    }
    if rejected > 0 {
        return Err(format!("{rejected} document(s) rejected; the other {durable} were ingested").into());
    }
    Ok(())
}

/// `engram delete`, `restore` (soft, reversible) and `forget` (erasure): one write each.
pub fn lifecycle(dir: &Path, workspace: &str, op: engram::Op, what: &str) -> Result<(), Failure> {
    let db = crate::admin::open_existing(dir)?;
    let mut batch = engram::WriteBatch::new(workspace);
    batch.push(op);
    db.write(&batch).map_err(fail)?;
    outln!("{what}");
    Ok(())
}

/// The op and the report line of `delete` / `restore` / `forget`.
pub fn lifecycle_op(
    verb: &str,
    entity: Option<&str>,
    claim: Option<&str>,
    conversation: Option<&str>,
) -> Result<(engram::Op, String), Failure> {
    use engram::write::batch::{ClaimRef, EntityRef, ForgetTarget};
    use engram::Op;
    let entity_ref = |e: &str| EntityRef::Ext(e.to_owned());
    let claim_ref = |c: &str| ClaimRef::Ext(c.to_owned());
    let (op, kind, id) = match (verb, entity, claim, conversation) {
        ("delete", Some(e), _, _) => (Op::DeleteEntity { entity: entity_ref(e) }, "entity", e),
        ("delete", None, Some(c), _) => (Op::DeleteClaim { claim: claim_ref(c) }, "claim", c),
        ("restore", Some(e), _, _) => (Op::RestoreEntity { entity: entity_ref(e) }, "entity", e),
        ("restore", None, Some(c), _) => (Op::RestoreClaim { claim: claim_ref(c) }, "claim", c),
        ("forget", Some(e), _, _) => (Op::Forget(ForgetTarget::Entity(entity_ref(e))), "entity", e),
        ("forget", None, _, Some(c)) => (Op::Forget(ForgetTarget::Conversation(c.to_owned())), "conversation", c),
        _ => return Err(format!("{verb} needs --entity or --{}", if verb == "forget" { "conversation" } else { "claim" }).into()),
    };
    let past = match verb {
        "delete" => "deleted",
        "restore" => "restored",
        _ => "forgot",
    };
    Ok((op, format!("{past} {kind} {id}")))
}
