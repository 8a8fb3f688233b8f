//! Copying a workspace (FalkorDB's `GRAPH.COPY`): the source's export, as its administrator's
//! (with its settings, row and masking policies), renamed and imported into a new workspace. The
//! import stores settings and policies before the rows, so the copy is never readable without its
//! source's protections (constraints, sensitive keys, policies), and it holds what an export
//! holds: entities, claims, evidence, merges, tags and predicates, every state and soft delete.
//! Transaction times are the copy's (an import records its own), and vectors stay with the
//! source.

use super::jsonl::{before_merges, export_views, import, ImportError, Line};
use crate::db::Database;
use crate::error::{Error, WorkspaceError};
use crate::read::scope::ROOT_CONTEXT;

/// Copies workspace `from` of `db` into a new workspace `to`: the lines copied. On a failure
/// the new workspace is dropped again.
pub fn copy_workspace(db: &Database, from: &str, to: &str) -> Result<usize, ImportError> {
    if db.workspaces().iter().all(|w| *w.name != *from) {
        return Err(Error::from(WorkspaceError::Unknown(from.to_owned())).into());
    }
    db.create_workspace(to)?;
    let filled = fill(db, from, to);
    if filled.is_err() {
        let _ = db.drop_workspace(to);
    }
    filled
}

/// The source's export (its settings and policies with it), renamed, imported.
fn fill(db: &Database, from: &str, to: &str) -> Result<usize, ImportError> {
    let (snap, merges) = before_merges(&db.snapshot());
    let source: Vec<_> = snap.workspaces().into_iter().filter(|w| *w.name == *from).collect();
    let lines = export_views(&snap, &merges, source, |name| snap.workspace(name).ok(), &|ws| ws == from, &ROOT_CONTEXT, None)
        .map_err(|e| ImportError::Database(e.into()))?;
    let mut text = String::new();
    for l in lines {
        let mut line: Line = serde_json::from_str(&l).map_err(|e| ImportError::Database(Error::Internal(e.to_string())))?;
        rename(&mut line, to);
        text.push_str(&serde_json::to_string(&line).map_err(|e| ImportError::Database(Error::Internal(e.to_string())))?);
        text.push('\n');
    }
    import(db, &text, &format!("the copy of {from}"))
}

fn rename(line: &mut Line, to: &str) {
    match line {
        Line::Workspace { name } => to.clone_into(name),
        Line::Predicate { workspace, .. }
        | Line::Entity { workspace, .. }
        | Line::Claim { workspace, .. }
        | Line::Evidence { workspace, .. }
        | Line::Merge { workspace, .. }
        | Line::Message { workspace, .. }
        | Line::Policy { workspace, .. }
        | Line::Mask { workspace, .. }
        | Line::Setting { workspace, .. } => to.clone_into(workspace),
        Line::Role { .. } => {}
    }
}
