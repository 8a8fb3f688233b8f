//! Opening a database folder: load the newest snapshot, replay the WAL after it, and `check`,
//! which verifies a folder without changing it.

use super::audit::{decode_carried, AccessRecord};
use super::files::{install_text, install_vectors, read_text, text_file_of};
use crate::error::Error;
use crate::index::bm25;
use crate::limits::Limits;
use crate::state::State;
use crate::time::Timestamp;
use crate::write::bulk::apply_bulk;
use crate::write::mutation::{DecodeError, Mutation, WalRecord, RECORD_FORMAT_VERSION};
use crate::write::workspace;
use engram_storage::{read_snapshot, replay_from_pipelined, RecordPos, StorageError, Vfs};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Applies one replayed record at its recorded transaction time. Replay does not re-check input
/// limits: the record was accepted under the limits in force when it was written.
pub(super) fn replay_record(st: &mut State, record: &WalRecord, deferred: crate::write::apply::Deferred) -> Result<(), Error> {
    let limits = Limits {
        ext_id_bytes_max: usize::MAX,
        name_bytes_max: usize::MAX,
        text_bytes_max: usize::MAX,
        aliases_max: usize::MAX,
        property_bytes_max: usize::MAX,
        batch_ops_max: usize::MAX,
        traversal_visited_max: usize::MAX,
        vector_dim_max: usize::MAX,
        import_file_bytes_max: usize::MAX,
    };
    let now = record.committed_at;
    st.version += 1;
    st.committed_at = now;
    let batch = matches!(record.mutation, Mutation::Batch(_));
    if !batch {
        // Workspace and bulk mutations read the bitmaps a replay may have deferred.
        st.catch_up_bitmaps();
    }
    match &record.mutation {
        Mutation::Batch(b) => crate::write::apply::apply_batch_with(st, b, now, &limits, deferred).map(|_| ())?,
        Mutation::CreateWorkspace(name) => workspace::create(st, name, now).map(|_| ())?,
        Mutation::DropWorkspace(name) => workspace::drop(st, name)?,
        Mutation::Bulk(load) => apply_bulk(st, Cow::Borrowed(load), now, &limits).map(|_| ())?,
        Mutation::Settings(s) => st.settings = Arc::new(s.clone().into()),
        Mutation::SettingsV2(s) => st.settings = Arc::new(crate::settings::Settings::from(s.clone())),
        Mutation::SettingsV3(s) => st.settings = Arc::new(crate::settings::Settings::from(s.clone())),
        Mutation::SettingsV4(s) => st.settings = Arc::new(s.clone().into()),
        Mutation::SettingsV5(s) => st.settings = Arc::new(s.clone().into()),
        Mutation::SettingsV6(s) => st.settings = Arc::new(s.clone()),
    }
    if !batch {
        // A bulk load sets its rows' bitmaps itself: deferral starts again after them.
        st.restart_bitmap_deferral();
    }
    Ok(())
}

/// Names of leftover temporary files in `dir`.
pub(super) fn temp_files(vfs: &dyn Vfs, dir: &Path) -> Result<Vec<String>, StorageError> {
    Ok(vfs
        .list(dir)
        .map_err(|e| StorageError::io(dir, e))?
        .into_iter()
        .filter(|n| Path::new(n).extension().is_some_and(|e| e == "tmp"))
        .collect())
}

/// A data WAL payload: a commit, or access records that rode with a group's commits.
#[allow(clippy::large_enum_variant, reason = "commits are nearly every payload: boxing them would allocate once per record replayed")]
enum Payload {
    Commit(WalRecord),
    Access(Timestamp, Vec<AccessRecord>),
}

/// What `load` recovered.
pub(super) struct Loaded {
    pub state: State,
    pub report: engram_storage::ReplayReport,
    /// The snapshot it started from.
    pub snapshot: Option<String>,
    /// The access records the replayed WAL carried, by group time, in log order.
    pub carried: Vec<(Timestamp, Vec<AccessRecord>)>,
}

/// Loads the newest snapshot (verified) and replays the WAL after it, changing nothing on disk.
pub(super) fn load(vfs: &dyn Vfs, dir: &Path) -> Result<Loaded, Error> {
    let names = vfs.list(dir).map_err(|e| StorageError::io(dir, e))?;
    let newest = names.iter().filter(|n| Path::new(n).extension().is_some_and(|e| e == "snap")).max().cloned();
    // The snapshot and its keyword index (a file of its own) load side by side.
    let (decoded, text) = rayon::join(
        || match &newest {
            Some(name) => {
                let path = dir.join(name);
                let file = read_snapshot(vfs, &path)?;
                crate::persist::snapshot::decode(file.body(), file.format())
                    .map_err(|e| Error::from(StorageError::Corruption { path: path.clone(), offset: 0, what: e.0 }))
            }
            None => Ok((State::default(), (0, 0))),
        },
        || newest.as_ref().map(|n| read_text(vfs, dir, n)),
    );
    let (mut st, from) = decoded?;
    // The keyword index of the snapshot is loaded as built; the WAL tail is indexed on replay.
    // Without a usable `.text` file the index is rebuilt from the columns on first use.
    st.rebase_text();
    let restored = text.is_some_and(|t| t.is_ok_and(|(claims, entities)| install_text(&mut st, claims, entities).is_ok()));
    // Nobody reads while the log replays: adjacency, and the keyword indexes when they are
    // rebuilt afterwards anyway, are built once at the end instead of record by record.
    let deferred = crate::write::apply::Deferred { text: !restored, graph: true };
    st.defer_bitmaps();
    // Records are checked and decoded on a second thread while this one applies them.
    let decode = |pos: &RecordPos, payload: &[u8]| {
        if let Some(access) = decode_carried(payload) {
            return access.map(|(at, records)| Payload::Access(at, records)).map_err(|()| StorageError::Corruption {
                path: pos.path.clone(),
                offset: pos.offset,
                what: "access records that do not decode",
            });
        }
        WalRecord::decode(payload).map(Payload::Commit).map_err(|e| match e {
            DecodeError::Version(v) => StorageError::UnsupportedVersion {
                path: pos.path.clone(),
                found: u32::from(v),
                supported: u32::from(RECORD_FORMAT_VERSION),
            },
            DecodeError::Malformed => {
                StorageError::Corruption { path: pos.path.clone(), offset: pos.offset, what: "record does not decode" }
            }
        })
    };
    let mut carried = Vec::new();
    let report = replay_from_pipelined(vfs, dir, from, decode, |pos, payload| match payload {
        Payload::Commit(record) => replay_record(&mut st, record, deferred).map_err(|e| StorageError::Replay {
            path: pos.path.clone(),
            offset: pos.offset,
            source: Box::new(e),
        }),
        Payload::Access(at, records) => {
            carried.push((*at, records.clone()));
            Ok(())
        }
    })?;
    // The replayed rows' bitmaps and a fresh CSR read the same columns: built side by side.
    let fresh = report.records > 0 && st.claims.len() > 0;
    let (added, graph) = rayon::join(|| st.deferred_bitmaps(), || fresh.then(|| st.fresh_graph()));
    st.end_bitmap_deferral(added);
    if !restored {
        st.rebase_text();
    }
    if let Some(graph) = graph {
        st.graph = graph;
    }
    st.unlinked_from = None;
    Ok(Loaded { state: st, report, snapshot: newest, carried })
}

/// What `check` found in a database folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// The snapshot verified, if any.
    pub snapshot: Option<String>,
    /// WAL records replayed after it.
    pub records: u64,
    /// A torn WAL tail (file, offset, bytes): harmless, cut at the next writable open.
    pub torn_tail: Option<(PathBuf, u64, u64)>,
    /// Leftover temporary files: harmless, removed at the next writable open.
    pub temp_files: Vec<String>,
    /// Entities and claims of the recovered state.
    pub entities: usize,
    /// Claims of the recovered state.
    pub claims: usize,
}

/// Verifies a database folder without changing it: the newest snapshot's checksums and archive,
/// every WAL record's checksum and that each record applies, and the recovered state's
/// invariants. Anything else than a torn tail or leftover temporary files is an error.
pub fn check(vfs: &dyn Vfs, dir: &Path) -> Result<CheckReport, Error> {
    let temp = temp_files(vfs, dir)?;
    let Loaded { state: mut st, report, snapshot, .. } = load(vfs, dir)?;
    install_vectors(&mut st, vfs, dir, false)?;
    // The snapshot's keyword index, if written, must verify too (open would silently rebuild it).
    if let Some(snap) = &snapshot {
        let path = dir.join(text_file_of(snap));
        if vfs.exists(&path) {
            let file = read_snapshot(vfs, &path)?;
            let corrupt = |what| Error::from(StorageError::Corruption { path: path.clone(), offset: 0, what });
            let p: bm25::PersistedText = postcard::from_bytes(file.body()).map_err(|_| corrupt("keyword index does not decode"))?;
            p.validate().map_err(corrupt)?;
        }
    }
    if let Some(why) = st.check_invariants() {
        return Err(StorageError::Corruption { path: dir.to_path_buf(), offset: 0, what: why }.into());
    }
    Ok(CheckReport {
        snapshot,
        records: report.records,
        torn_tail: report.torn_tail.map(|t| (t.path, t.offset, t.bytes)),
        temp_files: temp,
        entities: st.entities.len(),
        claims: st.claims.len(),
    })
}
