//! Creating and dropping workspaces. Dropping erases: every entity, claim and evidence row of the
//! workspace is taken out of every index and its text is cleared, so nothing of it can be served
//! again; a workspace created later under the same name gets a new id and starts empty.

use crate::error::WorkspaceError;
use crate::ids::{WorkspaceId, NONE};
use crate::model::WorkspaceInfo;
use crate::state::{State, ERASED, LIVE};
use crate::time::Timestamp;
use std::sync::Arc;

fn check_name(name: &str) -> Result<(), WorkspaceError> {
    if name.is_empty() || name.len() > 128 || name.chars().any(char::is_control) {
        return Err(WorkspaceError::InvalidName(name.chars().take(140).collect()));
    }
    Ok(())
}

/// Adds workspace `name`.
pub fn create(st: &mut State, name: &str, now: Timestamp) -> Result<WorkspaceId, WorkspaceError> {
    check_name(name)?;
    if st.catalog.workspace(name).is_some() {
        return Err(WorkspaceError::AlreadyExists(name.to_owned()));
    }
    let id = WorkspaceId(st.catalog.workspaces.len() as u32);
    let name: Arc<str> = Arc::from(name);
    Arc::make_mut(&mut st.catalog.workspaces).push(Some(WorkspaceInfo { id, name: name.clone(), created_at: now }));
    st.catalog.workspace_by_name.insert(name, id);
    Ok(id)
}

/// Erases workspace `name` and everything in it.
pub fn drop(st: &mut State, name: &str) -> Result<(), WorkspaceError> {
    let ws = st.catalog.workspace(name).ok_or_else(|| WorkspaceError::Unknown(name.to_owned()))?;
    // Index entries are left behind: lookups verify candidates and skip erased rows.
    if let Some(ents) = st.bitmaps.entities_by_ws.remove(&ws) {
        for e in ents.iter() {
            let i = e as usize;
            let f = *st.entities.flags.get(i);
            st.entities.flags.set(i, f | ERASED);
            st.entities.name.set(i, "");
            st.entities.ext_id.set(i, "");
            st.entities.aliases.set(i, "");
            st.entities.props.remove(&e);
            let ty = *st.entities.ty.get(i);
            if let Some(set) = st.bitmaps.entities_by_type.get_mut(&ty) {
                set.remove(e);
            }
            st.bitmaps.entities_deleted.remove(e);
        }
    }
    if let Some(claims) = st.bitmaps.claims_by_ws.remove(&ws) {
        for c in claims.iter() {
            let i = c as usize;
            let f = *st.claims.flags.get(i);
            st.claims.flags.set(i, (f | ERASED) & !LIVE);
            st.claims.fast.set(i, false);
            st.claims.timed_live.set(i, false);
            st.claims.ext_id.set(i, "");
            st.claims.text.set(i, "");
            let mut ev = *st.claims.evidence_head.get(i);
            while ev != NONE {
                let row = st.evidence.rows.get_mut(ev as usize);
                if let Some(ext) = row.ext_id.take() {
                    st.evidence.by_ext.remove(&(ws, ext));
                }
                row.conversation_id = None;
                row.message_id = None;
                row.model = None;
                row.model_version = None;
                row.snippet = None;
                ev = row.next;
            }
            st.claims.supersedes.remove(&c);
            let bm = &mut st.bitmaps;
            for s in &mut bm.claims_by_state {
                s.remove(c);
            }
            bm.claims_deleted.remove(c);
            bm.claims_live.remove(c);
            let p = crate::ids::PredicateId(*st.claims.pred.get(i));
            if let Some(set) = bm.claims_by_pred.get_mut(&p) {
                set.remove(c);
            }
        }
    }
    st.catalog.predicate_defs.retain(|(w, _), _| *w != ws);
    st.catalog.workspace_by_name.remove(name);
    Arc::make_mut(&mut st.catalog.workspaces)[ws.0 as usize] = None;
    Ok(())
}
