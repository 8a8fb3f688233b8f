//! Write-ahead-log segments: `[len u32][crc32c u32][payload]` records after a segment header.
//!
//! Segment files are named `{seq:016x}.wal`. Header (24 bytes, little-endian): magic `ENGRMWAL`,
//! format version `u32`, header checksum `u32` (CRC-32C of the other 20 bytes), segment
//! sequence `u64`. A record's checksum is
//! CRC-32C over its length field and payload. Records never span segments; a segment is synced
//! before the next one is created.
//!
//! A segment may end in zero bytes: the writer extends the file with zeros ahead of the records
//! (`preallocate`), so that appending does not change the file's size and an fdatasync writes the
//! data alone, not the inode too (on this class of disk that halves the cost of a durable commit).
//! Replay ends a segment at a record header of zeros followed only by zeros: no record is all
//! zeros (its checksum covers its length field).
//!
//! Replay tells a torn tail from corruption. A write cut short by a crash leaves whole sectors of
//! what was there before, and the log only ever writes into zeros (preallocated, freshly extended,
//! or past the end of the file): so a bad last record that runs past the end of the file, or that
//! holds a zeroed sector, is a torn tail (never acknowledged): it is reported with the bytes to
//! cut, and the writer cuts it. A bad last record written whole (no zeroed sector) was damaged
//! after it was written: corruption, like a bad record with a valid one after it or any bad record
//! in an earlier segment. Replay then stops with the file and byte offset, and nothing is cut.
//!
//! Segments are created whole (header written and synced under a temporary name, then renamed),
//! so a segment shorter than its header is damage, not a crash. The segments replayed must be
//! consecutive, starting at the one the snapshot names (0 without a snapshot): a missing segment
//! is lost data, and replay refuses to go on without it.

use crate::error::StorageError;
use crate::vfs::{Vfs, VfsFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The segment format this engram writes (and the newest it reads).
pub const WAL_FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"ENGRMWAL";
const HEADER_LEN: u64 = 24;
const RECORD_HEADER_LEN: usize = 8;
/// Largest payload of one record.
pub const RECORD_BYTES_MAX: usize = 1 << 31;

/// When appended records are made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// fdatasync before every acknowledgement (the default).
    #[default]
    Always,
    /// fdatasync when at least this long has passed since the last one (a crash loses at most
    /// that window of acknowledged writes).
    Batch(Duration),
    /// Never fsync (the OS decides; a crash may lose acknowledged writes).
    Never,
}

/// Where a replayed record sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordPos {
    /// Its segment file.
    pub path: PathBuf,
    /// Byte offset of its length field.
    pub offset: u64,
}

/// A torn tail found by replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// The last segment.
    pub path: PathBuf,
    /// Where its valid records end.
    pub offset: u64,
    /// Bytes after that point, to cut.
    pub bytes: u64,
}

/// What replay found.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ReplayReport {
    /// Whole records replayed.
    pub records: u64,
    /// Segments read.
    pub segments: usize,
    /// Sequence of the last segment (`None` when there is none).
    pub last_seq: Option<u64>,
    /// End of the valid records in the last segment.
    pub end_offset: u64,
    /// The torn tail, if the last segment had one.
    pub torn_tail: Option<TornTail>,
    /// Where a new log starts when there is no segment (the segment a snapshot points at).
    pub first_seq_hint: u64,
}

/// The file name of segment `seq`.
pub fn segment_name(seq: u64) -> String {
    format!("{seq:016x}.wal")
}

fn parse_segment(name: &str) -> Option<u64> {
    let hex = name.strip_suffix(".wal")?;
    (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok()).flatten()
}

/// The segment sequence numbers in `dir`, ascending.
pub fn segments(vfs: &dyn Vfs, dir: &Path) -> Result<Vec<u64>, StorageError> {
    let mut seqs: Vec<u64> = vfs.list(dir).map_err(|e| StorageError::io(dir, e))?.iter().filter_map(|n| parse_segment(n)).collect();
    seqs.sort_unstable();
    Ok(seqs)
}

fn header(seq: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&WAL_FORMAT_VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&seq.to_le_bytes());
    let crc = header_crc(&h);
    h[12..16].copy_from_slice(&crc.to_le_bytes());
    h
}

fn header_crc(h: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&h[..12]), &h[16..24])
}

fn record_crc(len: u32, payload: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&len.to_le_bytes()), payload)
}

/// Bytes of a sector: the unit a write cut short by a crash loses or keeps.
const SECTOR: usize = 512;

/// Whether the bad record at `at` (the last of the log) is a write cut short by a crash rather
/// than a record damaged after it was written whole. A crash leaves whole sectors of what was
/// there before, which for the log is always zeros (or the end of the file).
fn cut_short(bytes: &[u8], at: usize) -> bool {
    let Some(head) = bytes.get(at..at + RECORD_HEADER_LEN) else { return true };
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    // No record has a zero length; a zeroed header is a lost first sector.
    if len == 0 || head.iter().all(|b| *b == 0) {
        return true;
    }
    let end = at + RECORD_HEADER_LEN + len;
    let Some(extent) = bytes.get(at..end) else { return true };
    if extent[RECORD_HEADER_LEN..].iter().all(|b| *b == 0) {
        return true;
    }
    // A zeroed sector overlapping the record: from the record's start (or the sector's) to the
    // sector's end (or the file's), at least 16 bytes, all zero.
    let mut s = at - at % SECTOR;
    while s < end {
        let (from, to) = (s.max(at), (s + SECTOR).min(bytes.len()));
        if to - from >= 16 && bytes[from..to].iter().all(|b| *b == 0) {
            return true;
        }
        s += SECTOR;
    }
    false
}

/// The record at `at` if it is whole and its checksum matches: (payload range end).
fn valid_record(bytes: &[u8], at: usize) -> Option<usize> {
    let head = bytes.get(at..at + RECORD_HEADER_LEN)?;
    let len = u32::from_le_bytes(head[..4].try_into().ok()?);
    let crc = u32::from_le_bytes(head[4..8].try_into().ok()?);
    let end = (at + RECORD_HEADER_LEN).checked_add(len as usize)?;
    let payload = bytes.get(at + RECORD_HEADER_LEN..end)?;
    (record_crc(len, payload) == crc).then_some(end)
}

/// Replays every whole record of the log in `dir` in order, calling `on_record` with its position
/// and payload. Does not modify anything (read-only opens use it as is).
pub fn replay(
    vfs: &dyn Vfs,
    dir: &Path,
    on_record: impl FnMut(&RecordPos, &[u8]) -> Result<(), StorageError>,
) -> Result<ReplayReport, StorageError> {
    replay_from(vfs, dir, (0, 0), on_record)
}

/// Like `replay`, for the records at or after position `from` = (segment, offset): what a
/// snapshot taken at `from` does not cover. Earlier segments are skipped unread.
pub fn replay_from(
    vfs: &dyn Vfs,
    dir: &Path,
    from: (u64, u64),
    on_record: impl FnMut(&RecordPos, &[u8]) -> Result<(), StorageError>,
) -> Result<ReplayReport, StorageError> {
    replay_inner(vfs, dir, from, None, on_record)
}

/// The records of segment `seq` alone (a reader looking back from the newest segment without
/// reading the later ones again), its end read as the log's end.
pub fn replay_segment(
    vfs: &dyn Vfs,
    dir: &Path,
    seq: u64,
    on_record: impl FnMut(&RecordPos, &[u8]) -> Result<(), StorageError>,
) -> Result<ReplayReport, StorageError> {
    replay_inner(vfs, dir, (seq, 0), Some(seq), on_record)
}

/// `replay_from` (up to segment `until`, when given) for callbacks with an error type of their
/// own (the log's errors convert to it).
fn replay_inner<E: From<StorageError>>(
    vfs: &dyn Vfs,
    dir: &Path,
    from: (u64, u64),
    until: Option<u64>,
    mut on_record: impl FnMut(&RecordPos, &[u8]) -> Result<(), E>,
) -> Result<ReplayReport, E> {
    let seqs: Vec<u64> = segments(vfs, dir)?.into_iter().filter(|s| *s >= from.0 && until.is_none_or(|u| *s <= u)).collect();
    // What must exist: every segment from the one the snapshot names (0 without one) on.
    for (expected, &seq) in (from.0..).zip(&seqs) {
        if seq != expected {
            return Err(StorageError::Corruption {
                path: dir.join(segment_name(expected)),
                offset: 0,
                what: "WAL segment missing (deleted?): the commits it held are lost",
            }
            .into());
        }
    }
    if seqs.is_empty() && from.0 > 0 {
        return Err(StorageError::Corruption {
            path: dir.join(segment_name(from.0)),
            offset: 0,
            what: "WAL segment named by the snapshot is missing (deleted?): the commits after the snapshot are lost",
        }
        .into());
    }
    let mut report =
        ReplayReport { segments: seqs.len(), last_seq: seqs.last().copied(), first_seq_hint: from.0, ..ReplayReport::default() };
    for (i, &seq) in seqs.iter().enumerate() {
        let last = i + 1 == seqs.len();
        let path = dir.join(segment_name(seq));
        let file = vfs.open(&path, false).map_err(|e| StorageError::io(&path, e))?;
        let bytes = file.read_all().map_err(|e| StorageError::io(&path, e))?;
        if bytes.len() < HEADER_LEN as usize {
            // Segments are created whole (renamed into place): a short one was cut afterwards.
            return Err(StorageError::Corruption { path, offset: 0, what: "segment shorter than its header (truncated?)" }.into());
        }
        if &bytes[..8] != MAGIC {
            return Err(StorageError::Corruption { path, offset: 0, what: "bad segment magic" }.into());
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version > WAL_FORMAT_VERSION || version == 0 {
            return Err(StorageError::UnsupportedVersion { path, found: version, supported: WAL_FORMAT_VERSION }.into());
        }
        if u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) != header_crc(&bytes[..24]) {
            return Err(StorageError::Corruption { path, offset: 0, what: "segment header checksum does not match" }.into());
        }
        if u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes")) != seq {
            return Err(StorageError::Corruption { path, offset: 16, what: "segment sequence does not match its name" }.into());
        }
        let mut at = HEADER_LEN as usize;
        if seq == from.0 && from.1 > HEADER_LEN {
            at = usize::try_from(from.1).map_err(|_| StorageError::Corruption {
                path: path.clone(),
                offset: from.1,
                what: "snapshot position beyond the segment",
            })?;
            if at > bytes.len() {
                return Err(
                    StorageError::Corruption { path, offset: from.1, what: "the segment ends before the snapshot's position" }.into()
                );
            }
        }
        // One position per segment, its offset moved record by record (no path copy per record).
        let mut pos = RecordPos { path: path.clone(), offset: 0 };
        while at < bytes.len() {
            if bytes[at..].iter().all(|b| *b == 0) {
                // Preallocated space: the end of the records.
                break;
            }
            match valid_record(&bytes, at) {
                Some(end) => {
                    pos.offset = at as u64;
                    on_record(&pos, &bytes[at + RECORD_HEADER_LEN..end])?;
                    report.records += 1;
                    at = end;
                }
                None => {
                    let later_valid = (at + 1..bytes.len()).any(|o| valid_record(&bytes, o).is_some());
                    if last && !later_valid && cut_short(&bytes, at) {
                        report.torn_tail = Some(TornTail { path: path.clone(), offset: at as u64, bytes: (bytes.len() - at) as u64 });
                        break;
                    }
                    let what = if last && !later_valid {
                        "the last record does not match its checksum but was written whole (no zeroed sector): an acknowledged commit was damaged"
                    } else {
                        "record checksum or length does not match"
                    };
                    return Err(StorageError::Corruption { path, offset: at as u64, what }.into());
                }
            }
        }
        report.end_offset = at as u64;
    }
    Ok(report)
}

/// Records a pipelined replay hands from its reading thread to its applying one at a time.
const PIPELINE_BATCH: usize = 256;

/// A batch of records of one segment, checked and decoded.
struct Decoded<T> {
    path: PathBuf,
    items: Vec<(u64, Result<T, StorageError>)>,
}

/// Why the reading side of a pipelined replay stopped early.
enum Halt {
    /// The log itself is bad (checksum, header, version, I/O): the replay's answer.
    Storage(StorageError),
    /// A record did not decode (its error went to the applying side in order) or the applying
    /// side stopped.
    Downstream,
}

impl From<StorageError> for Halt {
    fn from(e: StorageError) -> Halt {
        Halt::Storage(e)
    }
}

/// `replay_from` on two threads: this thread applies records in log order while a second one
/// reads the segments, verifies checksums and `decode`s the next records. Applying is most of a
/// replay, but checksums and decoding are a fifth of it, and they need nothing but the bytes.
/// Applied batches go back to the reading thread, which drops their records (the memory it
/// allocated) and reuses their space.
///
/// Errors keep their log order: the answer is the first bad record's error, whether its
/// checksum failed, it did not decode, or it did not apply, exactly as `replay_from` with
/// decode-then-apply in its callback would give. Records after it are not applied.
pub fn replay_from_pipelined<T: Send>(
    vfs: &dyn Vfs,
    dir: &Path,
    from: (u64, u64),
    decode: impl Fn(&RecordPos, &[u8]) -> Result<T, StorageError> + Sync,
    mut apply: impl FnMut(&RecordPos, &T) -> Result<(), StorageError>,
) -> Result<ReplayReport, StorageError> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Decoded<T>>(8);
    let (spent_tx, spent_rx) = std::sync::mpsc::sync_channel::<Decoded<T>>(8);
    let decode = &decode;
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut batch: Option<Decoded<T>> = None;
            let send = |b: Decoded<T>| tx.send(b).map_err(|_| Halt::Downstream);
            let fresh = |path: &Path| match spent_rx.try_recv() {
                Ok(mut b) => {
                    b.items.clear();
                    b.path.clear();
                    b.path.push(path);
                    b
                }
                Err(_) => Decoded { path: path.to_path_buf(), items: Vec::with_capacity(PIPELINE_BATCH) },
            };
            let read = replay_inner(vfs, dir, from, None, |pos, payload| {
                if batch.as_ref().is_some_and(|b| b.path != pos.path) {
                    batch.take().map(send).transpose()?;
                }
                let item = decode(pos, payload);
                let failed = item.is_err();
                let b = batch.get_or_insert_with(|| fresh(&pos.path));
                b.items.push((pos.offset, item));
                if failed || b.items.len() == PIPELINE_BATCH {
                    batch.take().map(send).transpose()?;
                }
                if failed {
                    return Err(Halt::Downstream);
                }
                Ok(())
            });
            if let Some(b) = batch.take() {
                // Records read before the log ended (or went bad) are still applied.
                let _ = send(b);
            }
            read
        });
        let mut applied = Ok(());
        'batches: for mut batch in &rx {
            let mut pos = RecordPos { path: batch.path.clone(), offset: 0 };
            let mut undecoded = None;
            for (i, (offset, item)) in batch.items.iter().enumerate() {
                pos.offset = *offset;
                match item {
                    Ok(record) => {
                        if let Err(e) = apply(&pos, record) {
                            applied = Err(e);
                            break 'batches;
                        }
                    }
                    Err(_) => {
                        undecoded = Some(i);
                        break;
                    }
                }
            }
            if let Some(i) = undecoded {
                if let Err(e) = batch.items.swap_remove(i).1 {
                    applied = Err(e);
                }
                break;
            }
            // Full or closed: the batch is dropped here instead.
            let _ = spent_tx.try_send(batch);
        }
        // Dropping the receiver stops a reader still sending.
        drop(rx);
        // A panic in `decode` is a bug, not a finding about the log: it goes on as a panic.
        let read = reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        applied?;
        match read {
            Ok(report) => Ok(report),
            Err(Halt::Storage(e)) => Err(e),
            // Unreachable: a decode error reaches the applying side, which then fails first.
            Err(Halt::Downstream) => {
                Err(StorageError::Corruption { path: dir.to_path_buf(), offset: 0, what: "the log reader stopped unexpectedly" })
            }
        }
    })
}

/// Removes the segments numbered below `seq` (covered by a snapshot) and syncs the folder.
pub fn remove_segments_before(vfs: &dyn Vfs, dir: &Path, seq: u64) -> Result<usize, StorageError> {
    let mut removed = 0;
    for s in segments(vfs, dir)?.into_iter().filter(|s| *s < seq) {
        let path = dir.join(segment_name(s));
        vfs.remove(&path).map_err(|e| StorageError::io(&path, e))?;
        removed += 1;
    }
    if removed > 0 {
        vfs.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    }
    Ok(removed)
}

/// Creates segment `seq` whole: its header written and synced under a temporary name, renamed
/// into place, the folder synced; returns it opened for appending. A crash leaves either no
/// segment or a whole one (the temporary file is removed at the next open).
fn create_segment(vfs: &dyn Vfs, dir: &Path, seq: u64) -> Result<Arc<dyn VfsFile>, StorageError> {
    let path = dir.join(segment_name(seq));
    let tmp = dir.join(format!("{}.tmp", segment_name(seq)));
    {
        let f = vfs.open(&tmp, true).map_err(|e| StorageError::io(&tmp, e))?;
        f.truncate(0).map_err(|e| StorageError::io(&tmp, e))?;
        f.write_at(0, &header(seq)).map_err(|e| StorageError::io(&tmp, e))?;
        f.sync().map_err(|e| StorageError::io(&tmp, e))?;
    }
    vfs.rename(&tmp, &path).map_err(|e| StorageError::io(&path, e))?;
    vfs.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    Ok(Arc::from(vfs.open(&path, true).map_err(|e| StorageError::io(&path, e))?))
}

/// Appends records to the last segment, rolling to a new one past `segment_bytes_max`.
#[derive(Debug)]
pub struct WalWriter {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    file: Arc<dyn VfsFile>,
    path: PathBuf,
    seq: u64,
    offset: u64,
    policy: FsyncPolicy,
    segment_bytes_max: u64,
    /// Zeros are written ahead of the records in chunks of this many bytes (0: never).
    preallocate: u64,
    /// The current segment file's length (records, then preallocated zeros).
    file_len: u64,
    last_sync: Instant,
    unsynced: bool,
    poisoned: Option<String>,
}

impl WalWriter {
    /// Opens the log for appending after a replay: cuts the torn tail the replay found (and syncs
    /// the cut), or creates the first segment. With `preallocate` > 0 the file is kept that many
    /// bytes (rounded up) ahead of the records in zeros.
    pub fn open(
        vfs: Arc<dyn Vfs>,
        dir: &Path,
        replayed: &ReplayReport,
        policy: FsyncPolicy,
        segment_bytes_max: u64,
        preallocate: u64,
    ) -> Result<WalWriter, StorageError> {
        let (seq, offset) = match replayed.last_seq {
            Some(seq) => (seq, replayed.end_offset),
            None => (replayed.first_seq_hint, 0),
        };
        let path = dir.join(segment_name(seq));
        let file: Arc<dyn VfsFile> = if offset < HEADER_LEN {
            create_segment(vfs.as_ref(), dir, seq)?
        } else {
            Arc::from(vfs.open(&path, true).map_err(|e| StorageError::io(&path, e))?)
        };
        let mut w = WalWriter {
            vfs,
            dir: dir.to_path_buf(),
            file,
            path,
            seq,
            offset,
            policy,
            segment_bytes_max: segment_bytes_max.max(HEADER_LEN + 1024),
            preallocate,
            file_len: 0,
            last_sync: Instant::now(),
            unsynced: false,
            poisoned: None,
        };
        if offset < HEADER_LEN {
            (w.offset, w.file_len) = (HEADER_LEN, HEADER_LEN);
        } else {
            w.file_len = w.file.len().map_err(|e| StorageError::io(&w.path, e))?;
            // Bytes after the records that are not preallocated zeros are a torn tail: cut them.
            if w.file_len > offset && replayed.torn_tail.is_some() {
                w.file.truncate(offset).map_err(|e| StorageError::io(&w.path, e))?;
                w.file.sync().map_err(|e| StorageError::io(&w.path, e))?;
                w.file_len = offset;
            }
        }
        Ok(w)
    }

    /// Creates segment `self.seq` (see `create_segment`) and appends to it from now on.
    fn start_segment(&mut self) -> Result<(), StorageError> {
        self.file = create_segment(self.vfs.as_ref(), &self.dir, self.seq)?;
        self.offset = HEADER_LEN;
        self.file_len = HEADER_LEN;
        Ok(())
    }

    /// Fails with `Poisoned` once an fsync (or cutting a failed write) has failed.
    pub fn check(&self) -> Result<(), StorageError> {
        match &self.poisoned {
            Some(why) => Err(StorageError::Poisoned(why.clone())),
            None => Ok(()),
        }
    }

    /// Appends one record and makes it durable per the policy. On an error nothing of the record
    /// counts: a failed write is cut back off (a failure to cut it, or any fsync failure, poisons
    /// the writer: fail-stop).
    pub fn append(&mut self, payload: &[u8]) -> Result<(), StorageError> {
        self.append_many(&[payload])
    }

    /// Appends several records with one write and makes them durable per the policy; on an error
    /// none of them counts, as in `append`.
    pub fn append_many(&mut self, payloads: &[&[u8]]) -> Result<(), StorageError> {
        self.write_many(payloads)?;
        let due = match self.policy {
            FsyncPolicy::Always => true,
            FsyncPolicy::Batch(every) => self.last_sync.elapsed() >= every,
            FsyncPolicy::Never => false,
        };
        if due {
            self.sync()?;
        }
        Ok(())
    }

    /// Writes one record without syncing it (group commit syncs many at once through
    /// `sync_handle`). A failed write is cut back off, as in `append`.
    pub fn write(&mut self, payload: &[u8]) -> Result<(), StorageError> {
        self.write_many(&[payload])
    }

    /// Writes several records, framed one after the other, with one write call and without
    /// syncing (a commit group's records). A failed write is cut back off whole: none of them
    /// counts.
    pub fn write_many(&mut self, payloads: &[&[u8]]) -> Result<(), StorageError> {
        self.check()?;
        let mut total = 0;
        for p in payloads {
            if p.len() > RECORD_BYTES_MAX {
                return Err(StorageError::RecordTooLarge { len: p.len(), limit: RECORD_BYTES_MAX });
            }
            total += RECORD_HEADER_LEN + p.len();
        }
        let mut rec = Vec::with_capacity(total);
        for p in payloads {
            let len = p.len() as u32;
            rec.extend_from_slice(&len.to_le_bytes());
            rec.extend_from_slice(&record_crc(len, p).to_le_bytes());
            rec.extend_from_slice(p);
        }
        if self.offset > HEADER_LEN && self.offset + rec.len() as u64 > self.segment_bytes_max {
            self.roll()?;
        }
        let end = self.offset + rec.len() as u64;
        if self.preallocate > 0 && end > self.file_len {
            // Zeros ahead of the records, written with them (the group's fsync makes the new
            // length durable once; later fsyncs of this chunk change no metadata).
            let new_len = end.div_ceil(self.preallocate) * self.preallocate;
            rec.resize((new_len - self.offset) as usize, 0);
        }
        if let Err(e) = self.file.write_at(self.offset, &rec) {
            let err = StorageError::io(&self.path, e);
            match self.file.truncate(self.offset) {
                Ok(()) => self.file_len = self.offset,
                Err(cut) => self.poisoned = Some(format!("could not cut a failed write from {}: {cut}", self.path.display())),
            }
            return Err(err);
        }
        self.file_len = self.file_len.max(self.offset + rec.len() as u64);
        self.offset = end;
        self.unsynced = true;
        Ok(())
    }

    /// The current segment file, for a group-commit leader to fsync without holding the writer.
    /// Records in earlier segments were synced when the log rolled past them.
    pub fn sync_handle(&self) -> (Arc<dyn VfsFile>, PathBuf) {
        (self.file.clone(), self.path.clone())
    }

    /// Marks the log failed (an fsync through `sync_handle` failed): every later call fails.
    pub fn poison(&mut self, why: String) {
        self.poisoned = Some(why);
    }

    /// The fsync policy.
    pub fn policy(&self) -> FsyncPolicy {
        self.policy
    }

    /// Makes everything appended so far durable.
    pub fn sync(&mut self) -> Result<(), StorageError> {
        self.check()?;
        if !self.unsynced {
            return Ok(());
        }
        if let Err(e) = self.file.sync() {
            let why = format!("fsync of {} failed: {e}", self.path.display());
            self.poisoned = Some(why.clone());
            return Err(StorageError::Poisoned(why));
        }
        self.unsynced = false;
        self.last_sync = Instant::now();
        Ok(())
    }

    fn roll(&mut self) -> Result<(), StorageError> {
        if self.file_len > self.offset {
            // A finished segment keeps no preallocated zeros.
            self.file.truncate(self.offset).map_err(|e| StorageError::io(&self.path, e))?;
            self.file_len = self.offset;
            self.unsynced = true;
        }
        if self.policy != FsyncPolicy::Never {
            self.sync()?;
        }
        self.seq += 1;
        self.path = self.dir.join(segment_name(self.seq));
        if let Err(e) = self.start_segment() {
            self.poisoned = Some(format!("could not start segment {}: {e}", self.path.display()));
            return Err(e);
        }
        Ok(())
    }

    /// Syncs what was written and starts a new segment; returns its sequence number. Everything
    /// before it is then in older segments (what a checkpoint covers).
    pub fn roll_now(&mut self) -> Result<u64, StorageError> {
        self.check()?;
        self.unsynced = true;
        self.sync()?;
        self.roll()?;
        Ok(self.seq)
    }

    /// The current segment and the offset where the next record goes.
    pub fn position(&self) -> (u64, u64) {
        (self.seq, self.offset)
    }
}

impl Drop for WalWriter {
    fn drop(&mut self) {
        if self.poisoned.is_none() && self.unsynced && self.policy != FsyncPolicy::Never {
            let _ = self.file.sync();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemVfs;

    fn dir() -> PathBuf {
        PathBuf::from("/db")
    }

    fn write_log(vfs: &MemVfs, records: &[Vec<u8>], segment_bytes_max: u64) {
        write_log_preallocated(vfs, records, segment_bytes_max, 0);
    }

    fn write_log_preallocated(vfs: &MemVfs, records: &[Vec<u8>], segment_bytes_max: u64, preallocate: u64) {
        let report = replay(vfs, &dir(), |_, _| Ok(())).unwrap();
        let mut w = WalWriter::open(Arc::new(vfs.clone()), &dir(), &report, FsyncPolicy::Always, segment_bytes_max, preallocate).unwrap();
        for r in records {
            w.append(r).unwrap();
        }
    }

    /// Preallocated segments: finished ones are cut to their records, the last ends in zeros,
    /// replay stops at the zeros without reporting a tail, and a reopened writer appends after
    /// the records, not after the zeros.
    #[test]
    fn preallocated_segments_round_trip() {
        let vfs = MemVfs::new();
        let recs = records(200);
        write_log_preallocated(&vfs, &recs[..100], 1500, 256);
        write_log_preallocated(&vfs, &recs[100..], 1500, 256);
        let (got, report) = read_log(&vfs).unwrap();
        assert_eq!(got, recs);
        assert_eq!(report.torn_tail, None);
        let seqs = segments(&vfs, &dir()).unwrap();
        assert!(seqs.len() > 3);
        for (i, seq) in seqs.iter().enumerate() {
            let bytes = vfs.bytes(&dir().join(segment_name(*seq))).unwrap();
            let last = i + 1 == seqs.len();
            if last {
                assert_eq!(bytes.len() % 256, 0, "the last segment is preallocated");
                assert!(bytes.len() as u64 > report.end_offset);
            } else {
                assert_ne!(*bytes.last().unwrap(), 0, "a finished segment keeps no zeros");
            }
        }
    }

    /// A crash inside preallocated space: every tear of the last records at a sector boundary,
    /// with the unwritten rest still zeros, and every bit flip among those zeros, recovers exactly
    /// the whole records before; a writer reopened there continues cleanly.
    #[test]
    fn torn_tail_inside_preallocated_space() {
        let vfs = MemVfs::new();
        // Records of up to ~1.5 KiB, so that they span sectors.
        let recs: Vec<Vec<u8>> = (0..12).map(|i| (0..(i * 397 % 1500 + 20)).map(|j| (i * 31 + j % 251 + 1) as u8).collect()).collect();
        write_log_preallocated(&vfs, &recs, 1 << 20, 4096);
        let path = dir().join(segment_name(0));
        let full = vfs.bytes(&path).unwrap();
        let mut ends = vec![HEADER_LEN as usize];
        for r in &recs {
            ends.push(ends.last().unwrap() + RECORD_HEADER_LEN + r.len());
        }
        let end = *ends.last().unwrap();
        assert!(full.len() > end && full[end..].iter().all(|b| *b == 0));
        let check = |bytes: Vec<u8>, whole: usize, torn: bool, what: &str| {
            let v = MemVfs::new();
            v.set_bytes(&path, bytes);
            let (got, report) = read_log(&v).unwrap();
            assert_eq!(got, recs[..whole].to_vec(), "{what}");
            assert_eq!(report.torn_tail.is_some(), torn, "{what}");
            write_log_preallocated(&v, &[b"after".to_vec()], 1 << 20, 512);
            let (again, report) = read_log(&v).unwrap();
            assert_eq!(again.len(), whole + 1, "{what}");
            assert_eq!(again.last().unwrap(), b"after");
            assert_eq!(report.torn_tail, None);
        };
        let first = ends[ends.len() - 4];
        for cut in (first.next_multiple_of(SECTOR)..=end).step_by(SECTOR).chain(ends[ends.len() - 4..].iter().copied()) {
            let mut bytes = full[..cut].to_vec();
            bytes.resize(full.len(), 0);
            let whole = ends.iter().filter(|e| **e <= cut).count() - 1;
            check(bytes, whole, cut != ends[whole], &format!("cut at {cut}"));
        }
        for at in (end..full.len()).step_by(13) {
            let mut bytes = full.clone();
            bytes[at] ^= 0x10;
            check(bytes, recs.len(), true, &format!("flip at {at}"));
        }
        // A tear inside a record's last sector, with the rest of the sector zeros.
        let last_sector = (end - 1) / SECTOR * SECTOR;
        if last_sector > ends[ends.len() - 2] {
            let mut bytes = full[..last_sector].to_vec();
            bytes.resize(full.len(), 0);
            check(bytes, recs.len() - 1, true, "tear of the last sector");
        }
        // A record written whole and then damaged is not a tear: corruption at its offset.
        let mut bytes = full.clone();
        bytes[end - 3] ^= 0x40;
        let v = MemVfs::new();
        v.set_bytes(&path, bytes);
        match read_log(&v) {
            Err(StorageError::Corruption { offset, .. }) => assert_eq!(offset, ends[ends.len() - 2] as u64),
            other => panic!("a damaged last record was accepted: {other:?}"),
        }
    }

    /// The pipelined replay gives exactly what the sequential one gives when its callback decodes
    /// then applies: the same records applied in order, and the same report or first error, for
    /// logs spanning segments and pipeline batches, with a record that does not decode, one that
    /// does not apply, a checksum mismatch before the tail, or a torn tail.
    #[test]
    fn pipelined_replay_matches_sequential() {
        // "Decoding" reads the first byte; a record starting with 0xEE does not decode, 0xDD
        // does not apply.
        let decode = |pos: &RecordPos, p: &[u8]| match p.first() {
            Some(0xEE) => Err(StorageError::Corruption { path: pos.path.clone(), offset: pos.offset, what: "no decode" }),
            _ => Ok(p.to_vec()),
        };
        let run = |vfs: &MemVfs, pipelined: bool| {
            let mut applied: Vec<(u64, Vec<u8>)> = Vec::new();
            let mut apply = |pos: &RecordPos, r: &Vec<u8>| {
                if r.first() == Some(&0xDD) {
                    return Err(StorageError::Corruption { path: pos.path.clone(), offset: pos.offset, what: "no apply" });
                }
                applied.push((pos.offset, r.clone()));
                Ok(())
            };
            let result = if pipelined {
                replay_from_pipelined(vfs, &dir(), (0, 0), decode, &mut apply)
            } else {
                replay(vfs, &dir(), |pos, p| apply(pos, &decode(pos, p)?))
            };
            (applied, result.map_err(|e| e.to_string()))
        };
        let n = PIPELINE_BATCH * 2 + 37;
        let mut cases: Vec<(String, MemVfs)> = Vec::new();
        for segment_bytes in [1 << 20, 3000] {
            let clean = |bad: Option<(usize, u8)>| {
                let vfs = MemVfs::new();
                let mut recs = records(n);
                for r in &mut recs {
                    if matches!(r[0], 0xDD | 0xEE) {
                        r[0] = 0;
                    }
                }
                if let Some((at, marker)) = bad {
                    recs[at][0] = marker;
                }
                write_log(&vfs, &recs, segment_bytes);
                vfs
            };
            cases.push((format!("clean, segments of {segment_bytes}"), clean(None)));
            for at in [0, 1, PIPELINE_BATCH - 1, PIPELINE_BATCH, n - 1] {
                cases.push((format!("record {at} does not decode"), clean(Some((at, 0xEE)))));
                cases.push((format!("record {at} does not apply"), clean(Some((at, 0xDD)))));
            }
            for third in [0, 1] {
                let vfs = clean(None);
                let path = dir().join(segment_name(0));
                let mut bytes = vfs.bytes(&path).unwrap();
                let flip = if third == 0 { HEADER_LEN as usize + 3 } else { bytes.len() / 3 };
                bytes[flip] ^= 0x40;
                vfs.set_bytes(&path, bytes);
                cases.push((format!("bit flip at {flip}, segments of {segment_bytes}"), vfs));
            }
            // Two defects: the earlier one is the answer, whichever thread finds each.
            for marker in [0xEE, 0xDD] {
                let vfs = clean(Some((3, marker)));
                let last = *segments(&vfs, &dir()).unwrap().last().unwrap();
                let path = dir().join(segment_name(last));
                let mut bytes = vfs.bytes(&path).unwrap();
                let flip = bytes.len() / 2;
                bytes[flip] ^= 0x40;
                vfs.set_bytes(&path, bytes);
                cases.push((format!("marker {marker:x} at record 3, then a bit flip, segments of {segment_bytes}"), vfs));
            }
            let vfs = clean(None);
            let last = *segments(&vfs, &dir()).unwrap().last().unwrap();
            let path = dir().join(segment_name(last));
            let bytes = vfs.bytes(&path).unwrap();
            vfs.set_bytes(&path, bytes[..bytes.len() - 5].to_vec());
            cases.push((format!("torn tail, segments of {segment_bytes}"), vfs));
        }
        for (what, vfs) in &cases {
            let (seq_applied, seq) = run(vfs, false);
            let (pipe_applied, pipe) = run(vfs, true);
            assert_eq!(pipe, seq, "{what}");
            assert_eq!(pipe_applied, seq_applied, "{what}");
        }
        // The cases do fail where they should: not every one is a clean replay.
        let failures = cases.iter().filter(|(_, v)| run(v, true).1.is_err()).count();
        assert_eq!(failures, 2 * (5 * 2 + 2 + 2), "every bad record, flip and marker is an error");
    }

    impl MemVfs {
        /// An independent copy of the folder's files.
        fn clone_deep(&self) -> MemVfs {
            let copy = MemVfs::new();
            for name in self.list(&dir()).unwrap() {
                let path = dir().join(name);
                copy.set_bytes(&path, self.bytes(&path).unwrap());
            }
            copy
        }
    }

    fn read_log(vfs: &MemVfs) -> Result<(Vec<Vec<u8>>, ReplayReport), StorageError> {
        let mut out = Vec::new();
        let report = replay(vfs, &dir(), |_, p| {
            out.push(p.to_vec());
            Ok(())
        })?;
        Ok((out, report))
    }

    fn records(n: usize) -> Vec<Vec<u8>> {
        (0..n).map(|i| (0..=(i * 7 % 40)).map(|j| (i * 31 + j) as u8).collect()).collect()
    }

    #[test]
    fn round_trips_across_segments() {
        let vfs = MemVfs::new();
        let recs = records(200);
        write_log(&vfs, &recs[..100], 1500);
        write_log(&vfs, &recs[100..], 1500);
        let (got, report) = read_log(&vfs).unwrap();
        assert_eq!(got, recs);
        assert!(report.segments > 3, "small segments roll: {}", report.segments);
        assert_eq!(report.torn_tail, None);
    }

    /// Cutting the log at every byte of its last records yields exactly the whole records
    /// before the cut, and a writer reopened there continues cleanly.
    #[test]
    fn torn_tail_at_every_offset() {
        let vfs = MemVfs::new();
        let recs = records(12);
        write_log(&vfs, &recs, 1 << 20);
        let path = dir().join(segment_name(0));
        let full = vfs.bytes(&path).unwrap();
        let mut ends = vec![HEADER_LEN as usize];
        for r in &recs {
            ends.push(ends.last().unwrap() + RECORD_HEADER_LEN + r.len());
        }
        for cut in HEADER_LEN as usize..=full.len() {
            let v = MemVfs::new();
            v.set_bytes(&path, full[..cut].to_vec());
            let (got, report) = read_log(&v).unwrap();
            let whole = ends.iter().filter(|e| **e <= cut).count() - 1;
            assert_eq!(got, recs[..whole].to_vec(), "cut at {cut}");
            assert_eq!(report.torn_tail.as_ref().map_or(0, |t| t.bytes), (cut - ends[whole]) as u64, "cut at {cut}");
            write_log(&v, &[b"after".to_vec()], 1 << 20);
            let (again, report) = read_log(&v).unwrap();
            assert_eq!(again.len(), whole + 1);
            assert_eq!(again.last().unwrap(), b"after");
            assert_eq!(report.torn_tail, None);
        }
    }

    /// A bit flip anywhere is corruption named with the file and offset, the last record
    /// included (it was written whole: no zeroed sector); only a flip in the last record's length
    /// that makes it run past the end of the file reads as a write cut short. Altered bytes are
    /// never returned.
    #[test]
    fn bit_flips_at_every_byte() {
        let vfs = MemVfs::new();
        let recs = records(6);
        write_log(&vfs, &recs, 1 << 20);
        let path = dir().join(segment_name(0));
        let full = vfs.bytes(&path).unwrap();
        let last_start = full.len() - RECORD_HEADER_LEN - recs.last().unwrap().len();
        for at in 0..full.len() {
            for bit in [0u8, 3, 7] {
                let mut bytes = full.clone();
                bytes[at] ^= 1 << bit;
                let v = MemVfs::new();
                v.set_bytes(&path, bytes);
                match read_log(&v) {
                    Ok((got, report)) => {
                        assert!((last_start..last_start + 4).contains(&at), "flip at {at} accepted silently");
                        assert_eq!(got, recs[..recs.len() - 1].to_vec());
                        assert!(report.torn_tail.is_some());
                    }
                    Err(StorageError::Corruption { offset, .. }) => {
                        assert!(offset <= at as u64, "flip at {at} → offset {offset}");
                    }
                    Err(StorageError::UnsupportedVersion { .. }) => assert!((8..12).contains(&at)),
                    Err(e) => panic!("flip at {at}: {e}"),
                }
            }
        }
    }

    /// What must exist: a segment truncated below its header, a missing segment in the middle,
    /// missing first segments, or no segment where the snapshot names one, is corruption naming
    /// the file, never an empty or shortened log.
    #[test]
    fn missing_or_truncated_segments_are_refused() {
        let vfs = MemVfs::new();
        write_log(&vfs, &records(200), 1500);
        let seqs = segments(&vfs, &dir()).unwrap();
        assert!(seqs.len() >= 4);
        let refused = |v: &MemVfs, from: (u64, u64), what: &str| match replay_from(v, &dir(), from, |_, _| Ok(())) {
            Err(StorageError::Corruption { what: w, .. }) => assert!(w.contains(what), "{w}"),
            other => panic!("accepted: {other:?}"),
        };
        for cut in [0, 5, 10, 23] {
            let v = vfs.clone_deep();
            let last = dir().join(segment_name(*seqs.last().unwrap()));
            let bytes = v.bytes(&last).unwrap();
            v.set_bytes(&last, bytes[..cut].to_vec());
            refused(&v, (0, 0), "shorter than its header");
        }
        let v = vfs.clone_deep();
        v.remove(&dir().join(segment_name(seqs[1]))).unwrap();
        refused(&v, (0, 0), "missing");
        let v = vfs.clone_deep();
        v.remove(&dir().join(segment_name(seqs[0]))).unwrap();
        refused(&v, (0, 0), "missing");
        let v = vfs.clone_deep();
        for s in &seqs {
            v.remove(&dir().join(segment_name(*s))).unwrap();
        }
        refused(&v, (seqs[2], 0), "named by the snapshot is missing");
        // A crash while a segment is being created leaves its temporary file only: the log
        // before it is whole.
        let v = vfs.clone_deep();
        let next = *seqs.last().unwrap() + 1;
        v.set_bytes(&dir().join(format!("{}.tmp", segment_name(next))), header(next)[..10].to_vec());
        let (got, report) = read_log(&v).unwrap();
        assert_eq!((got.len(), report.torn_tail), (200, None));
    }

    #[test]
    fn unknown_version_is_named() {
        let vfs = MemVfs::new();
        write_log(&vfs, &records(2), 1 << 20);
        let path = dir().join(segment_name(0));
        let mut bytes = vfs.bytes(&path).unwrap();
        bytes[8..12].copy_from_slice(&7u32.to_le_bytes());
        vfs.set_bytes(&path, bytes);
        let err = read_log(&vfs).unwrap_err();
        assert!(matches!(err, StorageError::UnsupportedVersion { found: 7, supported: 1, .. }), "{err}");
        assert!(err.to_string().contains("format version 7"));
    }
}
