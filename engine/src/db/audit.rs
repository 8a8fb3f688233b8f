//! The access history: an append-only log of who read and wrote what, kept apart from the data.
//!
//! A durable database keeps it in `DIR/audit/`, a write-ahead log of its own (the storage crate's
//! segments, checksums and torn-tail cut), one record per request: a version byte, then the
//! `AccessRecord` in postcard. It is not part of the state: snapshots, exports and the query
//! language's graph never hold it, and checkpoints do not touch it. A write's record is made
//! durable before the write is answered (`durable`); a read's is kept in memory and written to the
//! file (with the records before it, one write call) by the next write's record or by the flusher
//! within `audit_flush_ms` (default 10), so a process killed (kill -9) may lose the reads of the
//! last few milliseconds, never an answered write; the flusher syncs them to the disk every second
//! (`FSYNC_EVERY`), so a machine that stops may lose up to a second of reads. Retention (`audit_retention_days`) drops whole segments
//! whose newest record is older. An in-memory database keeps the records in memory, bounded by
//! `AUDIT_MEMORY_MAX` (oldest dropped first).

use crate::error::Error;
use crate::time::Timestamp;
use engram_storage::{FsyncPolicy, StorageError, Vfs, VfsFile, WalWriter};
use parking_lot::{Condvar, Mutex};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The folder of the access history inside a database folder.
pub const AUDIT_DIR: &str = "audit";
/// Records an in-memory database keeps.
pub const AUDIT_MEMORY_MAX: usize = 100_000;
/// Claim ids one record keeps (the first ones read).
pub const AUDIT_CLAIMS_MAX: usize = 64;
/// Bytes of query or command text one record keeps.
pub const AUDIT_TEXT_MAX: usize = 4096;
/// The format byte of a record.
const RECORD_VERSION: u8 = 1;
/// The format byte of a record that rode in the data WAL (`Carried`): its number, then the
/// record.
const CARRIED_VERSION: u8 = 2;
/// The first byte of a data WAL payload holding access records (`encode_carried`), apart from
/// every data record format (those count up from 1).
pub(crate) const CARRIED_TAG: u8 = 0xA5;
/// The flusher syncs the reads' records to the disk at least this often (it writes them to the
/// file every `audit_flush_ms`).
const FSYNC_EVERY: Duration = Duration::from_secs(1);
/// Audit segments roll at this size.
const SEGMENT_BYTES: u64 = 16 << 20;
/// The file is kept this far ahead of the records in zeros, as the data WAL is: appending then
/// leaves its size alone, so a write's durable record costs a data flush, not a metadata commit.
const PREALLOCATE_BYTES: u64 = 1 << 20;

/// One audited request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessRecord {
    /// When it started.
    pub at: Timestamp,
    /// Who asked (`cli` for the command line; the embedded principal's name).
    pub user: String,
    /// The roles the user held.
    pub roles: Vec<String>,
    /// `resp`, `http`, `mcp`, `cli` or `embedded`.
    pub interface: String,
    /// The workspace, when the request names one.
    pub workspace: Option<String>,
    /// The operation: a command name (`GRAPH.QUERY`, `AUTH`), `query`, or a CLI command.
    pub op: String,
    /// The query text or the command's words, parameters and passwords left out (bounded).
    pub text: String,
    /// Hex SHA-256 of the parameters, when there were any.
    pub params_sha256: Option<String>,
    /// Rows returned or written.
    pub rows: u64,
    /// Ids of the claims read (the first `AUDIT_CLAIMS_MAX`).
    pub claims: Vec<u64>,
    /// How long it took, in microseconds.
    pub duration_us: u64,
    /// `ok`, or `error` and the error's class and message.
    pub outcome: String,
}

impl AccessRecord {
    /// Bounds the text and the claim ids (at a character boundary).
    #[must_use]
    pub fn bounded(mut self) -> AccessRecord {
        if self.text.len() > AUDIT_TEXT_MAX {
            let mut end = AUDIT_TEXT_MAX;
            while !self.text.is_char_boundary(end) {
                end -= 1;
            }
            self.text.truncate(end);
            self.text.push('…');
        }
        self.claims.truncate(AUDIT_CLAIMS_MAX);
        self
    }

    /// The record as one JSON object (`at` in RFC 3339), the line `engram audit --jsonl` prints.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "at": self.at.to_rfc3339(),
            "user": self.user,
            "roles": self.roles,
            "interface": self.interface,
            "workspace": self.workspace,
            "op": self.op,
            "text": self.text,
            "params_sha256": self.params_sha256,
            "rows": self.rows,
            "claims": self.claims,
            "duration_us": self.duration_us,
            "outcome": self.outcome,
        })
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = vec![RECORD_VERSION];
        out.extend(postcard::to_allocvec(self).expect("encoding to a Vec cannot fail"));
        out
    }

    fn decode(bytes: &[u8]) -> Option<AccessRecord> {
        Self::decode_numbered(bytes).map(|(_, r)| r)
    }

    /// A record and, for one that rode in the data WAL, its number.
    fn decode_numbered(bytes: &[u8]) -> Option<(Option<Carried>, AccessRecord)> {
        match bytes.split_first() {
            Some((&RECORD_VERSION, body)) => postcard::from_bytes(body).ok().map(|r| (None, r)),
            Some((&CARRIED_VERSION, body)) => postcard::from_bytes::<(Carried, AccessRecord)>(body).ok().map(|(n, r)| (Some(n), r)),
            _ => None,
        }
    }
}

/// The number of a record that rode in the data WAL: the transaction time of the last commit of
/// its group (commit times only grow, across restarts too) and its place among the group's
/// records. The history holds such records in number order, so after a crash the ones the data
/// WAL holds past the history's last are the ones it lost.
pub(crate) type Carried = (Timestamp, u32);

/// A group's access records riding in the data WAL: made durable by the fsync of the group's
/// writes instead of one of their own. The data WAL payload: `CARRIED_TAG`, then the group's
/// time and its records in postcard.
pub(crate) fn encode_carried(at: Timestamp, records: &[AccessRecord]) -> Vec<u8> {
    let mut out = vec![CARRIED_TAG];
    postcard::to_io(&(at, records), &mut out).expect("encoding to a Vec cannot fail");
    out
}

/// The group time and records of a data WAL payload, if it holds access records (`None`:
/// another payload; `Some(Err)`: one that does not decode).
pub(crate) fn decode_carried(payload: &[u8]) -> Option<Result<(Timestamp, Vec<AccessRecord>), ()>> {
    match payload.split_first() {
        Some((&CARRIED_TAG, body)) => Some(postcard::from_bytes(body).map_err(|_| ())),
        _ => None,
    }
}

/// Which records `history` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// At or after this time.
    pub since: Option<Timestamp>,
    /// Of this user.
    pub user: Option<String>,
    /// Of this operation (case-insensitive).
    pub op: Option<String>,
    /// At most this many, the newest (0: all).
    pub limit: usize,
}

impl AuditFilter {
    fn keeps(&self, r: &AccessRecord) -> bool {
        self.since.is_none_or(|t| r.at >= t)
            && self.user.as_ref().is_none_or(|u| *u == r.user)
            && self.op.as_ref().is_none_or(|o| o.eq_ignore_ascii_case(&r.op))
    }
}

/// A segment file to fsync outside the lock, and its path for errors.
type SyncHandle = (Arc<dyn VfsFile>, PathBuf);

/// The log's writer side.
struct Log {
    wal: Option<WalWriter>,
    memory: VecDeque<AccessRecord>,
    /// Encoded records not written to the file yet (the next sync writes them with one call).
    pending: Vec<Vec<u8>>,
    /// Records appended (a sequence number for the syncs).
    written: u64,
}

/// The access history of one open database.
pub(crate) struct AuditLog {
    log: Mutex<Log>,
    /// The last record number an fsync covered.
    synced: AtomicU64,
    /// One fsync at a time (true while one runs); the others wait on `synced_cv` and return as
    /// soon as an fsync covered their record, all woken together.
    syncing: Mutex<bool>,
    synced_cv: Condvar,
    home: Option<(Arc<dyn Vfs>, PathBuf)>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    flusher: Mutex<Option<std::thread::JoinHandle<()>>>,
    poisoned: AtomicBool,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog").field("home", &self.home.as_ref().map(|h| &h.1)).finish_non_exhaustive()
    }
}

impl AuditLog {
    /// An in-memory history.
    pub fn in_memory() -> Arc<AuditLog> {
        Arc::new(AuditLog {
            log: Mutex::new(Log { wal: None, memory: VecDeque::new(), pending: Vec::new(), written: 0 }),
            synced: AtomicU64::new(0),
            syncing: Mutex::new(false),
            synced_cv: Condvar::new(),
            home: None,
            stop: Arc::new((Mutex::new(false), Condvar::new())),
            flusher: Mutex::new(None),
            poisoned: AtomicBool::new(false),
        })
    }

    /// The history in `dir/audit` (created if absent), its torn tail cut, and a flusher thread
    /// syncing reads' records every `flush`.
    pub fn open(vfs: Arc<dyn Vfs>, dir: &Path, flush: Duration) -> Result<Arc<AuditLog>, Error> {
        let home = dir.join(AUDIT_DIR);
        vfs.create_dir_all(&home).map_err(|e| StorageError::io(&home, e))?;
        let last = engram_storage::wal::segments(vfs.as_ref(), &home)?.last().copied().unwrap_or(0);
        let report = engram_storage::wal::replay_from(vfs.as_ref(), &home, (last, 0), |_, _| Ok(()))?;
        let wal = WalWriter::open(vfs.clone(), &home, &report, FsyncPolicy::Never, SEGMENT_BYTES, PREALLOCATE_BYTES)?;
        let log = Arc::new(AuditLog {
            log: Mutex::new(Log { wal: Some(wal), memory: VecDeque::new(), pending: Vec::new(), written: 0 }),
            synced: AtomicU64::new(0),
            syncing: Mutex::new(false),
            synced_cv: Condvar::new(),
            home: Some((vfs, home)),
            stop: Arc::new((Mutex::new(false), Condvar::new())),
            flusher: Mutex::new(None),
            poisoned: AtomicBool::new(false),
        });
        let weak = Arc::downgrade(&log);
        let stop = log.stop.clone();
        let handle = std::thread::Builder::new()
            .name("engram-audit".to_owned())
            .spawn(move || {
                let mut last_sync = std::time::Instant::now();
                loop {
                    {
                        let mut stopped = stop.0.lock();
                        if *stopped {
                            return;
                        }
                        stop.1.wait_for(&mut stopped, flush);
                        if *stopped {
                            return;
                        }
                    }
                    let Some(log) = weak.upgrade() else { return };
                    // Reads' records reach the file (a process killed from now on keeps them) every
                    // tick, and the disk (a machine that stops keeps them) every `FSYNC_EVERY`; a
                    // failed write or fsync poisons the log: later durable records fail, as writes do.
                    let written = log.log.lock().written;
                    if log.synced.load(Ordering::Acquire) < written {
                        if last_sync.elapsed() >= FSYNC_EVERY {
                            drop(log.sync_through(written));
                            last_sync = std::time::Instant::now();
                        } else {
                            drop(log.write_pending());
                        }
                    }
                }
            })
            .map_err(|e| Error::Internal(format!("could not start the audit flusher: {e}")))?;
        *log.flusher.lock() = Some(handle);
        Ok(log)
    }

    /// Appends `record`; with `durable`, returns once it is on disk.
    pub fn append(&self, record: AccessRecord, durable: bool) -> Result<(), Error> {
        let record = record.bounded();
        let encoded = self.home.is_some().then(|| record.encode());
        let seq = {
            let mut log = self.log.lock();
            match encoded {
                Some(bytes) => log.pending.push(bytes),
                None => {
                    if log.memory.len() >= AUDIT_MEMORY_MAX {
                        log.memory.pop_front();
                    }
                    log.memory.push_back(record);
                }
            }
            log.written += 1;
            log.written
        };
        if durable {
            self.sync_through(seq)?;
        }
        Ok(())
    }

    /// Appends the records of the group at `at` that rode in the data WAL (durable there
    /// already: the file gets them with the next flush, the disk within a second), those from
    /// place `from` on. Callers append in group order.
    pub(crate) fn append_carried(&self, at: Timestamp, records: Vec<AccessRecord>, from: u32) {
        let mut log = self.log.lock();
        for (i, record) in (0u32..).zip(records).skip(from as usize) {
            if self.home.is_some() {
                let mut bytes = vec![CARRIED_VERSION];
                postcard::to_io(&((at, i), &record), &mut bytes).expect("encoding to a Vec cannot fail");
                log.pending.push(bytes);
            } else {
                if log.memory.len() >= AUDIT_MEMORY_MAX {
                    log.memory.pop_front();
                }
                log.memory.push_back(record);
            }
            log.written += 1;
        }
    }

    /// After a crash: appends the access records the data WAL carried past this history's last
    /// carried one (those it lost with its unsynced tail), and syncs them.
    pub(crate) fn recover_carried(&self, carried: Vec<(Timestamp, Vec<AccessRecord>)>) -> Result<(), Error> {
        if carried.is_empty() {
            return Ok(());
        }
        let last = self.last_carried()?;
        let mut appended = false;
        for (at, records) in carried {
            let from = match last {
                Some((t, _)) if at < t => continue,
                Some((t, i)) if at == t => i.saturating_add(1),
                _ => 0,
            };
            appended |= (from as usize) < records.len();
            self.append_carried(at, records, from);
        }
        if appended {
            self.sync_all()?;
        }
        Ok(())
    }

    /// Makes every record appended so far durable (before the data WAL that carried some of them
    /// is removed by a checkpoint).
    pub(crate) fn sync_all(&self) -> Result<(), Error> {
        let written = self.log.lock().written;
        self.sync_through(written)
    }

    /// Writes the pending records to the file, without an fsync.
    fn write_pending(&self) -> Result<(), Error> {
        let mut log = self.log.lock();
        if log.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut log.pending);
        if let Some(wal) = log.wal.as_mut() {
            let payloads: Vec<&[u8]> = pending.iter().map(Vec::as_slice).collect();
            if let Err(e) = wal.write_many(&payloads) {
                self.poisoned.store(true, Ordering::Release);
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// Makes every record up to number `seq` durable (everything written, for `u64::MAX`).
    fn sync_through(&self, seq: u64) -> Result<(), Error> {
        if self.poisoned.load(Ordering::Acquire) {
            return Err(StorageError::Poisoned("an fsync of the access history failed".to_owned()).into());
        }
        if self.synced.load(Ordering::Acquire) >= seq {
            return Ok(());
        }
        {
            let mut busy = self.syncing.lock();
            loop {
                if self.synced.load(Ordering::Acquire) >= seq {
                    return Ok(());
                }
                if self.poisoned.load(Ordering::Acquire) {
                    return Err(StorageError::Poisoned("an fsync of the access history failed".to_owned()).into());
                }
                if !*busy {
                    *busy = true;
                    break;
                }
                self.synced_cv.wait(&mut busy);
            }
        }
        let result = self.write_and_sync();
        *self.syncing.lock() = false;
        self.synced_cv.notify_all();
        result
    }

    /// Writes the pending records and fsyncs them with everything before: the leader's part of
    /// `sync_through`.
    fn write_and_sync(&self) -> Result<(), Error> {
        let (target, handle): (u64, Option<SyncHandle>) = {
            let mut log = self.log.lock();
            let pending = std::mem::take(&mut log.pending);
            let written = log.written;
            match log.wal.as_mut() {
                Some(wal) => {
                    let payloads: Vec<&[u8]> = pending.iter().map(Vec::as_slice).collect();
                    if let Err(e) = wal.write_many(&payloads) {
                        self.poisoned.store(true, Ordering::Release);
                        return Err(e.into());
                    }
                    (written, Some(wal.sync_handle()))
                }
                None => (written, None),
            }
        };
        if let Some((file, path)) = handle {
            if let Err(e) = file.sync() {
                self.poisoned.store(true, Ordering::Release);
                return Err(StorageError::Poisoned(format!("fsync of {} failed: {e}", path.display())).into());
            }
        }
        self.synced.fetch_max(target, Ordering::AcqRel);
        Ok(())
    }

    /// The records `filter` keeps, oldest first.
    pub fn history(&self, filter: &AuditFilter) -> Result<Vec<AccessRecord>, Error> {
        // What was appended is read back, the last few milliseconds of reads included.
        let written = self.log.lock().written;
        self.sync_through(written)?;
        let mut out: Vec<AccessRecord> = match &self.home {
            None => self.log.lock().memory.iter().filter(|r| filter.keeps(r)).cloned().collect(),
            Some((vfs, home)) => read_dir(vfs.as_ref(), home, filter)?,
        };
        if filter.limit > 0 && out.len() > filter.limit {
            out.drain(..out.len() - filter.limit);
        }
        Ok(out)
    }

    /// Drops the segments (all but the current one) whose records are all older than `before`;
    /// returns how many. Reads the whole history once.
    pub fn drop_before(&self, before: Timestamp) -> Result<usize, Error> {
        let Some((vfs, home)) = &self.home else {
            self.log.lock().memory.retain(|r| r.at >= before);
            return Ok(0);
        };
        let current = self.log.lock().wal.as_ref().map_or(0, |w| w.position().0);
        let mut newest: std::collections::HashMap<PathBuf, Timestamp> = std::collections::HashMap::new();
        engram_storage::wal::replay(vfs.as_ref(), home, |pos, payload| {
            if let Some(r) = AccessRecord::decode(payload) {
                let t = newest.entry(pos.path.clone()).or_insert(Timestamp::MIN);
                *t = (*t).max(r.at);
            }
            Ok(())
        })?;
        let seqs = engram_storage::wal::segments(vfs.as_ref(), home)?;
        let old = |seq: &u64| *seq < current && newest.get(&home.join(engram_storage::wal::segment_name(*seq))).is_none_or(|t| *t < before);
        let keep_from = seqs.iter().copied().find(|s| !old(s)).unwrap_or(current);
        Ok(engram_storage::remove_segments_before(vfs.as_ref(), home, keep_from)?)
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
        if let Some(h) = self.flusher.get_mut().take() {
            if h.thread().id() != std::thread::current().id() {
                drop(h.join());
            }
        }
        let log = self.log.get_mut();
        let pending = std::mem::take(&mut log.pending);
        if let Some(wal) = log.wal.as_mut() {
            let payloads: Vec<&[u8]> = pending.iter().map(Vec::as_slice).collect();
            drop(wal.write_many(&payloads).and_then(|()| wal.sync()));
        }
    }
}

impl super::Database {
    /// Records one request in the access history (nothing while the `audit` setting is `off`).
    /// With `durable` (a write's record), returns once the record is on disk.
    pub fn record_access(&self, record: AccessRecord, durable: bool) -> Result<(), Error> {
        if !self.access_history_on() {
            return Ok(());
        }
        self.inner.audit.append(record, durable)
    }

    /// Whether requests are recorded (the `audit` setting): a caller skips building a record,
    /// or a thread hop to make it durable, when not.
    pub fn access_history_on(&self) -> bool {
        self.inner.published.read().settings.audit_on()
    }

    /// The records of the access history `filter` keeps, oldest first (admins only: callers
    /// check).
    pub fn access_history(&self, filter: &AuditFilter) -> Result<Vec<AccessRecord>, Error> {
        self.inner.audit.history(filter)
    }
}

/// The access history of the database in `dir`, read without opening it (it works while a
/// server holds the folder): its file, and the records the data WAL carries past the file's
/// newest (after a crash the file may lack them until the database is opened again).
pub fn read_access_history(dir: &Path, filter: &AuditFilter) -> Result<Vec<AccessRecord>, Error> {
    let vfs = engram_storage::OsVfs;
    let (mut out, last) = read_numbered(&vfs, &dir.join(AUDIT_DIR), filter)?;
    // The data WAL from its oldest segment (a checkpoint removed the ones before).
    let segments = if vfs.exists(dir) { engram_storage::wal::segments(&vfs, dir)? } else { Vec::new() };
    if let Some(first) = segments.first() {
        let read = engram_storage::wal::replay_from(&vfs, dir, (*first, 0), |_, payload| {
            if let Some(Ok((at, records))) = decode_carried(payload) {
                let past = (0u32..).zip(records).filter(|(i, _)| last.is_none_or(|l| (at, *i) > l));
                out.extend(past.map(|(_, r)| r).filter(|r| filter.keeps(r)));
            }
            Ok(())
        });
        match read {
            // A running server's checkpoint removed a segment meanwhile: its records are in
            // the history's file by then.
            Err(StorageError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
            other => drop(other?),
        }
    }
    if filter.limit > 0 && out.len() > filter.limit {
        out.drain(..out.len() - filter.limit);
    }
    Ok(out)
}

/// Hex SHA-256 of `text` (parameters are recorded by digest, never stored).
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    crate::read::mask::hex(&sha2::Sha256::digest(text.as_bytes()))
}

impl AuditLog {
    /// The number of the newest record in this history that rode in the data WAL, reading the
    /// segments from the newest back until one holds such a record (`None`: none does).
    pub(crate) fn last_carried(&self) -> Result<Option<Carried>, Error> {
        let Some((vfs, home)) = &self.home else { return Ok(None) };
        self.write_pending()?;
        for seq in engram_storage::wal::segments(vfs.as_ref(), home)?.into_iter().rev() {
            let mut last = None;
            engram_storage::wal::replay_segment(vfs.as_ref(), home, seq, |_, payload| {
                if let Some((Some(n), _)) = AccessRecord::decode_numbered(payload) {
                    last = last.max(Some(n));
                }
                Ok(())
            })?;
            if last.is_some() {
                return Ok(last);
            }
        }
        Ok(None)
    }
}

/// Reads the history in `home` (another process may be appending: a record being written is
/// left out).
pub fn read_dir(vfs: &dyn Vfs, home: &Path, filter: &AuditFilter) -> Result<Vec<AccessRecord>, Error> {
    Ok(read_numbered(vfs, home, filter)?.0)
}

/// `read_dir`, and the number of the newest record that rode in the data WAL.
fn read_numbered(vfs: &dyn Vfs, home: &Path, filter: &AuditFilter) -> Result<(Vec<AccessRecord>, Option<Carried>), Error> {
    let (mut out, mut last) = (Vec::new(), None);
    if !vfs.exists(home) {
        return Ok((out, last));
    }
    engram_storage::wal::replay(vfs, home, |pos, payload| {
        let (n, r) = AccessRecord::decode_numbered(payload).ok_or_else(|| StorageError::Corruption {
            path: pos.path.clone(),
            offset: pos.offset,
            what: "an access record that does not decode",
        })?;
        last = last.max(n);
        if filter.keeps(&r) {
            out.push(r);
        }
        Ok(())
    })?;
    Ok((out, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_bounded_at_a_character_boundary() {
        let r = AccessRecord { text: "é".repeat(AUDIT_TEXT_MAX), claims: (0..100).collect(), ..AccessRecord::default() }.bounded();
        assert!(r.text.len() <= AUDIT_TEXT_MAX + '…'.len_utf8() && r.text.ends_with('…'));
        assert_eq!(r.claims.len(), AUDIT_CLAIMS_MAX);
        assert_eq!(AccessRecord::decode(&r.encode()), Some(r));
        assert_eq!(AccessRecord::decode(b"\x09junk"), None);
    }

    /// Writers syncing their records at once: each returns only once its record is durable
    /// (`synced` covers it), none waits forever, and the file holds every record.
    #[test]
    fn concurrent_durable_records_all_reach_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = AuditLog::open(Arc::new(engram_storage::OsVfs), dir.path(), Duration::from_secs(60)).expect("opens");
        std::thread::scope(|s| {
            for t in 0..8 {
                let log = &log;
                s.spawn(move || {
                    for i in 0..40 {
                        let r = AccessRecord { user: format!("u{t}"), op: format!("w{i}"), ..AccessRecord::default() };
                        // This record's number is above every number given before the call.
                        let before = log.log.lock().written;
                        log.append(r, true).expect("durable");
                        assert!(log.synced.load(Ordering::Acquire) > before, "returned before its record was synced");
                    }
                });
            }
        });
        assert_eq!(log.synced.load(Ordering::Acquire), 320);
        assert!(!*log.syncing.lock(), "no fsync left running");
        let read = read_dir(&engram_storage::OsVfs, &dir.path().join(AUDIT_DIR), &AuditFilter::default()).expect("reads");
        assert_eq!(read.len(), 320);
        for t in 0..8 {
            assert_eq!(read.iter().filter(|r| r.user == format!("u{t}")).count(), 40);
        }
    }

    /// After a crash the data WAL's carried records past the history's last one are appended:
    /// the rest of a group it holds part of, and the groups after it; none before it, none twice.
    #[test]
    fn recovery_appends_exactly_the_carried_records_the_history_lost() {
        let dir = tempfile::tempdir().expect("temp dir");
        let vfs: Arc<dyn Vfs> = Arc::new(engram_storage::OsVfs);
        let r = |op: &str| AccessRecord { user: "ann".to_owned(), op: op.to_owned(), ..AccessRecord::default() };
        let (t0, t1, t2) = (Timestamp(10), Timestamp(20), Timestamp(30));
        let log = AuditLog::open(vfs.clone(), dir.path(), Duration::from_secs(60)).expect("opens");
        log.append(r("read"), false).expect("appends");
        // Group t1 reached the file only in part (its first two records).
        log.append_carried(t1, vec![r("a"), r("b")], 0);
        log.append(r("read2"), true).expect("durable");
        assert_eq!(log.last_carried().expect("reads"), Some((t1, 1)));
        let wal = vec![(t0, vec![r("x")]), (t1, vec![r("a"), r("b"), r("c"), r("d")]), (t2, vec![r("e")])];
        log.recover_carried(wal.clone()).expect("recovers");
        let ops =
            |log: &AuditLog| -> Vec<String> { log.history(&AuditFilter::default()).expect("reads").into_iter().map(|r| r.op).collect() };
        assert_eq!(ops(&log), ["read", "a", "b", "read2", "c", "d", "e"]);
        drop(log);
        // Again on the next open (the data WAL still carries them): nothing is added.
        let log = AuditLog::open(vfs, dir.path(), Duration::from_secs(60)).expect("reopens");
        assert_eq!(log.last_carried().expect("reads"), Some((t2, 0)));
        log.recover_carried(wal).expect("recovers");
        assert_eq!(ops(&log), ["read", "a", "b", "read2", "c", "d", "e"]);
    }

    /// The file stays ahead of the records in zeros (a durable record then leaves the file's size
    /// alone); a reopened history reads every record and appends after the last one, not after
    /// the zeros, across a reopen and a new durable record.
    #[test]
    fn a_preallocated_history_reopens_whole() {
        let dir = tempfile::tempdir().expect("temp dir");
        let vfs: Arc<dyn Vfs> = Arc::new(engram_storage::OsVfs);
        let record = |i: usize| AccessRecord { user: "ann".to_owned(), op: format!("w{i}"), ..AccessRecord::default() };
        let home = dir.path().join(AUDIT_DIR);
        let segment_len = || {
            let seg = std::fs::read_dir(&home).expect("lists").filter_map(Result::ok).map(|e| e.path()).max().expect("a segment");
            std::fs::metadata(seg).expect("stat").len()
        };
        {
            let log = AuditLog::open(vfs.clone(), dir.path(), Duration::from_secs(60)).expect("opens");
            for i in 0..3 {
                log.append(record(i), true).expect("durable");
            }
            assert_eq!(segment_len(), PREALLOCATE_BYTES, "the segment is kept ahead in zeros");
        }
        let log = AuditLog::open(vfs.clone(), dir.path(), Duration::from_secs(60)).expect("reopens");
        log.append(record(3), true).expect("durable");
        let read = read_dir(vfs.as_ref(), &home, &AuditFilter::default()).expect("reads");
        assert_eq!(read.iter().map(|r| r.op.as_str()).collect::<Vec<_>>(), ["w0", "w1", "w2", "w3"]);
        assert_eq!(segment_len(), PREALLOCATE_BYTES);
    }
}
