//! Writing memory: `ingest`, `merge` and `unmerge`.

use crate::data::read;
use crate::embed;
use crate::fail::{bug, fail, Failure};
use crate::outln;
use crate::read as reads;
use engram::Database;
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

/// `engram ingest`: one document (`.json`) or one per line (`.jsonl`).
pub fn ingest(
    dir: &Path,
    file: &Path,
    opts: engram::ingest::IngestOptions,
    embedder: Option<&str>,
    model_dir: Option<&Path>,
) -> Result<(), Failure> {
    let text =
        String::from_utf8(read(file)?).map_err(|e| format!("{}: not UTF-8 at byte {}", file.display(), e.utf8_error().valid_up_to()))?;
    let lines: Vec<(usize, &str)> = if file.extension().is_some_and(|e| e == "jsonl") {
        text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty()).collect()
    } else {
        vec![(1, text.as_str())]
    };
    let db = Database::open(dir).map_err(fail)?;
    embed::attach(&db, embedder, model_dir)?;
    let mut failed = 0;
    for (line, doc) in lines {
        match db.ingest(doc, &opts) {
            Ok(report) => outln!("{}", serde_json::to_string(&report).map_err(bug)?),
            Err(e) => {
                failed += 1;
                eprintln!("engram: {}:{line}: {e}", file.display());
            }
        }
    }
    if failed > 0 {
        return Err(format!("{failed} document(s) rejected; the others were ingested").into());
    }
    Ok(())
}
