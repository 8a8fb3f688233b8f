//! Creating and dropping workspaces. Dropping erases: every entity, claim and evidence row of the
//! workspace is taken out of every index and its text is cleared, so nothing of it can be served
//! again; a workspace created later under the same name gets a new id and starts empty.

use crate::error::WorkspaceError;
use crate::ids::WorkspaceId;
use crate::model::WorkspaceInfo;
use crate::state::State;
use crate::time::Timestamp;
use std::sync::Arc;

fn check_name(name: &str) -> Result<(), WorkspaceError> {
    if name.is_empty() || name.len() > 128 || crate::normalize::has_control_chars(name) {
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
    if let Some(claims) = st.bitmaps.claims_by_ws.get(&ws).cloned() {
        for c in claims.iter() {
            st.erase_claim(ws, c);
        }
    }
    if let Some(ents) = st.bitmaps.entities_by_ws.get(&ws).cloned() {
        for e in ents.iter() {
            st.erase_entity(e);
        }
    }
    st.bitmaps.claims_by_ws.remove(&ws);
    st.bitmaps.entities_by_ws.remove(&ws);
    // The keyword indexes held the erased words: rebuilt from the (now cleared) columns.
    st.rebase_text();
    st.catalog.predicate_defs.retain(|(w, _), _| *w != ws);
    st.catalog.workspace_by_name.remove(name);
    Arc::make_mut(&mut st.catalog.workspaces)[ws.0 as usize] = None;
    if st.settings.workspaces.contains_key(name) {
        Arc::make_mut(&mut st.settings).workspaces.remove(name);
    }
    Ok(())
}
