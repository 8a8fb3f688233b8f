//! The files of a database folder besides the WAL: snapshots and their keyword-index files,
//! checkpoints, and the mapped vector files.

use crate::error::Error;
use crate::index::bm25;
use crate::index::vectors::VectorBase;
use crate::state::State;
use engram_storage::{read_snapshot, remove_segments_before, write_snapshot, write_snapshot_streamed, StorageError, Vfs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes `state` as the snapshot covering the WAL before segment `seq`, then removes older
/// snapshots and the covered segments.
pub(super) fn write_checkpoint(vfs: &dyn Vfs, dir: &Path, state: &State, seq: u64) -> Result<PathBuf, Error> {
    let name = format!("{:016x}.snap", state.version);
    // The snapshot is encoded and written while the keyword index is built (both take seconds at
    // millions of rows); the index's `.text` file follows it. A snapshot without its `.text` file
    // still opens (the index is rebuilt on first use); a `.text` file without its snapshot is
    // ignored and removed. File operations stay on one thread, in one order.
    let (written, text) = rayon::join(
        || -> Result<PathBuf, Error> { Ok(write_state(vfs, dir, &name, state, (seq, 0))?) },
        || postcard::to_allocvec(&state.persisted_text()),
    );
    let path = written?;
    let text = text.map_err(|e| Error::Internal(format!("the keyword index does not encode: {e}")))?;
    write_snapshot(vfs, dir, &text_file_of(&name), &text)?;
    drop(text);
    for old in vfs.list(dir).map_err(|e| StorageError::io(dir, e))? {
        let ext = Path::new(&old).extension().and_then(|e| e.to_str()).unwrap_or("");
        if (ext == "snap" && old != name) || (ext == "text" && old != text_file_of(&name)) {
            vfs.remove(&dir.join(&old)).map_err(|e| StorageError::io(dir.join(&old), e))?;
        }
    }
    remove_segments_before(vfs, dir, seq)?;
    Ok(path)
}

/// Writes `state` as snapshot `dir/name`, streaming the archive to the file block by block: a
/// checkpoint holds the captured columns but never a second, serialized copy of them.
pub(super) fn write_state(vfs: &dyn Vfs, dir: &Path, name: &str, state: &State, wal_from: (u64, u64)) -> Result<PathBuf, StorageError> {
    let snap = crate::persist::snapshot::capture(state, wal_from);
    let len = crate::persist::snapshot::body_len(&snap);
    write_snapshot_streamed(vfs, dir, name, len, |sink| crate::persist::snapshot::write_body(&snap, sink))
}

/// The keyword-index file written beside snapshot `snap` (`0000000000000007.snap` →
/// `0000000000000007.t2.text`): named with the tokenizer's version, so a file of another
/// tokenizer is never read as this one's (the index is rebuilt, and the old file goes with the
/// old snapshot at the next checkpoint).
pub(super) fn text_file_of(snap: &str) -> String {
    format!("{}.t{}.text", snap.trim_end_matches(".snap"), crate::index::text::TOKENIZER_VERSION)
}

/// Reads the keyword bases persisted beside snapshot `snap` (claims, entities), checked and
/// prepared for `install_text`.
pub(super) fn read_text(vfs: &dyn Vfs, dir: &Path, snap: &str) -> Result<(bm25::RestoredBase, bm25::RestoredBase), Error> {
    let path = dir.join(text_file_of(snap));
    let file = read_snapshot(vfs, &path)?;
    let corrupt = |what| Error::from(StorageError::Corruption { path: path.clone(), offset: 0, what });
    let p: bm25::PersistedText = postcard::from_bytes(file.body()).map_err(|_| corrupt("keyword index does not decode"))?;
    let (claims, entities) = rayon::join(|| p.claims.prepare(), || p.entities.prepare());
    Ok((claims.map_err(corrupt)?, entities.map_err(corrupt)?))
}

/// Installs keyword bases read by `read_text`; fails when they do not cover the state's documents.
pub(super) fn install_text(st: &mut State, claims: bm25::RestoredBase, entities: bm25::RestoredBase) -> Result<(), &'static str> {
    st.text.claims.restore(claims)?;
    st.text.entities.restore(entities)
}

/// The entity vector file's name inside a database folder.
pub const VECTOR_FILE: &str = "vectors.f32v";
/// The claim vector file's name inside a database folder.
pub const CLAIM_VECTOR_FILE: &str = "claim_vectors.f32v";

/// The open vector files of a durable database, and which overlay rows checkpoints have written.
#[derive(Debug, Default)]
pub(super) struct VectorFiles {
    pub(super) entity: Option<engram_storage::VectorFile>,
    pub(super) claim: Option<engram_storage::VectorFile>,
    /// Overlay ids already in each file (entity, claim).
    pub(super) flushed: [std::collections::HashSet<u32>; 2],
    /// Erased ids already zeroed in each file.
    pub(super) zeroed: [std::collections::HashSet<u32>; 2],
}

impl VectorFiles {
    /// Writes the overlay rows of `state` that the files do not hold yet (creating the files on
    /// first use), durably. Only rows that were absent are written, so no mapped row changes.
    pub(super) fn flush(&mut self, vfs: &dyn Vfs, dir: &Path, state: &State) -> Result<(), Error> {
        let Some(dim) = state.settings.vector_dim.map(|d| d as usize) else { return Ok(()) };
        for (k, (col, name)) in [(&state.vectors.entity, VECTOR_FILE), (&state.vectors.claim, CLAIM_VECTOR_FILE)].into_iter().enumerate() {
            let base_rows = col.base.as_ref().map_or(0, |b| b.rows());
            let mut rows: Vec<(usize, &[f32])> = Vec::new();
            for (id, row) in col.written_rows() {
                if !self.flushed[k].contains(&id) {
                    rows.push((id as usize, row));
                }
            }
            // Erased rows (`forget`) are overwritten with zeros in the file: the one case where a
            // checkpoint rewrites a row a mapped reader may hold (its claim or entity is erased,
            // so no read returns it).
            let zeros = vec![0f32; dim];
            let file_rows = if k == 0 { self.entity.as_ref() } else { self.claim.as_ref() }.map_or(0, engram_storage::VectorFile::rows);
            for id in &col.erased {
                if (*id as usize) < file_rows && self.zeroed[k].insert(*id) {
                    rows.push((*id as usize, &zeros));
                }
            }
            if base_rows == 0 && rows.is_empty() {
                continue;
            }
            let slot = if k == 0 { &mut self.entity } else { &mut self.claim };
            if slot.is_none() {
                let path = dir.join(name);
                let mut file = engram_storage::VectorFile::create(vfs, &path, dim)?;
                // A fresh file (a backup's) also needs the base rows.
                if let Some(b) = &col.base {
                    file.append(vfs, b.floats())?;
                }
                *slot = Some(file);
            }
            if let Some(file) = slot.as_mut() {
                file.write_rows(vfs, &rows)?;
            }
            self.flushed[k].extend(rows.iter().map(|(id, _)| *id as u32));
        }
        Ok(())
    }
}

/// A base over a verified, mapped vector file.
pub(super) fn mapped_base(file: &engram_storage::VectorFile, mapped: engram_storage::Mapped, path: &Path) -> Result<VectorBase, Error> {
    VectorBase::mapped(file.dim(), file.rows(), Arc::new(mapped), engram_storage::VECTOR_FILE_HEADER).ok_or_else(|| {
        StorageError::Corruption { path: path.to_path_buf(), offset: 0, what: "vector rows are not 4-byte aligned in memory" }.into()
    })
}

/// Opens and verifies the folder's vector files (cutting a torn append when `repair_tail`) and
/// makes them the bases of the state's vector columns. A file whose dimension is not the stored
/// `vector_dim` is refused.
pub(super) fn install_vectors(st: &mut State, vfs: &dyn Vfs, dir: &Path, repair_tail: bool) -> Result<VectorFiles, Error> {
    let mut files = VectorFiles::default();
    for name in [VECTOR_FILE, CLAIM_VECTOR_FILE] {
        let path = dir.join(name);
        if !vfs.exists(&path) {
            continue;
        }
        let (file, mapped) = engram_storage::VectorFile::open(vfs, &path, repair_tail)?;
        if st.settings.vector_dim.is_some_and(|d| d as usize != file.dim()) {
            return Err(
                StorageError::Corruption { path, offset: 12, what: "vector file dimension differs from the stored vector_dim" }.into()
            );
        }
        let base = Arc::new(mapped_base(&file, mapped, &path)?);
        if name == VECTOR_FILE {
            st.vectors.entity.base = Some(base);
            files.entity = Some(file);
        } else {
            st.vectors.claim.base = Some(base);
            files.claim = Some(file);
        }
    }
    // Rows of ids erased since the files were last written (a `forget` replayed before the
    // files were installed) are erased again now, so no read returns them.
    let erased = |flags: &crate::index::cow::CowVec<u8>| {
        (0..flags.len() as u32).filter(|i| *flags.get(*i as usize) & crate::state::ERASED != 0).collect::<Vec<u32>>()
    };
    for e in erased(&st.entities.flags) {
        st.vectors.entity.erase(e);
    }
    for c in erased(&st.claims.flags) {
        st.vectors.claim.erase(c);
    }
    Ok(files)
}
