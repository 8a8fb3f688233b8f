//! Copying a workspace (FalkorDB's `GRAPH.COPY`): the new workspace is made first, then given the
//! source's settings (constraints, index declarations, sensitive properties, row and masking
//! policies), then filled with the source's export, renamed. So the copy is never readable
//! without its source's protections, and holds what an export holds: entities, claims, evidence,
//! merges, tags and predicates, every state and soft delete. Transaction times are the copy's (an
//! import records its own), and vectors stay with the source.

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
    let filled = settings(db, from, to).map_err(ImportError::from).and_then(|()| fill(db, from, to));
    if filled.is_err() {
        let _ = db.drop_workspace(to);
    }
    filled
}

/// The source's workspace settings, row policies and masking policies, under `to`'s name.
fn settings(db: &Database, from: &str, to: &str) -> Result<(), Error> {
    db.update_settings(|s, _| {
        if let Some(m) = s.workspaces.get(from).cloned() {
            s.workspaces.insert(to.to_owned(), m);
        }
        if let Some(p) = s.policies.get(from).cloned() {
            s.policies.insert(to.to_owned(), p);
        }
        if let Some(m) = s.masks.get(from).cloned() {
            s.masks.insert(to.to_owned(), m);
        }
        Ok(())
    })
}

/// The source's export (without its policies: `settings` copied them), renamed, imported.
fn fill(db: &Database, from: &str, to: &str) -> Result<usize, ImportError> {
    let (snap, merges) = before_merges(&db.snapshot());
    let source: Vec<_> = snap.workspaces().into_iter().filter(|w| *w.name == *from).collect();
    let lines = export_views(&snap, &merges, source, |name| snap.workspace(name).ok(), &|_| false, &ROOT_CONTEXT, None)
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
        | Line::Mask { workspace, .. } => to.clone_into(workspace),
        Line::Role { .. } => {}
    }
}
