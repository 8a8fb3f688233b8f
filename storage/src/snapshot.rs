//! Snapshot files: an opaque body (the engine writes an rkyv archive) in a checksummed envelope,
//! written atomically (temporary file, fsync, rename, folder fsync) and read back through a mapping.
//!
//! Layout (little-endian): magic `ENGRMSNP` (8), format version `u32`, block count `u32`, body
//! length `u64`, then one CRC-32C per 1 MiB block of the body, zero padding to a multiple of 64,
//! then the body (so it starts 64-byte aligned in a mapping). The header itself is covered by a
//! CRC-32C stored right after the block checksums.

use crate::error::StorageError;
use crate::vfs::{Mapped, Vfs};
use std::path::{Path, PathBuf};

/// The snapshot format this engram writes (and the newest it reads). The envelope's layout is
/// the same in every version; the version names the format of the body, which the engine reads
/// (`SnapshotFile::format`). Format 2 added evidence reasoning and entity merges; format 3 entity
/// labels and claim properties (the query language's elements); format 4 the server's users inside
/// the stored settings (same archive layout as 3); format 5 the HTTP API's bearer tokens inside
/// them (likewise); format 6 roles and row policies inside them (likewise); format 7 the tags of
/// claims, entities and messages after format 3's archive; format 8 masking policies inside the
/// settings (same archive layout as 7; a format-7 body gets its claims' `pii` tags when read);
/// format 9 temporal property values and packed float lists inside the encoded properties (same
/// layout as 8); format 10 date-times in a named time zone inside them (same layout as 9); format
/// 11 spatial points inside them (same layout as 10).
pub const SNAPSHOT_FORMAT_VERSION: u32 = 11;
/// The oldest snapshot format this engram reads.
pub const SNAPSHOT_FORMAT_OLDEST: u32 = 1;
const MAGIC: &[u8; 8] = b"ENGRMSNP";
const BLOCK: usize = 1 << 20;
const FIXED: usize = 24;

fn body_start(blocks: usize) -> usize {
    (FIXED + blocks * 4 + 4).div_ceil(64) * 64
}

/// Writes `body` to `dir/name` atomically and durably: `name.tmp`, fsync, rename, folder fsync.
pub fn write_snapshot(vfs: &dyn Vfs, dir: &Path, name: &str, body: &[u8]) -> Result<PathBuf, StorageError> {
    write_snapshot_streamed(vfs, dir, name, body.len(), |sink| sink.write_all(body))
}

/// `write_snapshot` for a body of `len` bytes that `produce` writes into a sink, so the body never
/// has to sit in memory whole: each 1 MiB block is checksummed and written as it fills, and the
/// header (which holds the blocks' checksums) is written last, before the fsync. A `produce` that
/// fails, or writes other than `len` bytes, leaves no snapshot (its temporary file is removed).
pub fn write_snapshot_streamed(
    vfs: &dyn Vfs,
    dir: &Path,
    name: &str,
    len: usize,
    produce: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<PathBuf, StorageError> {
    let blocks = len.div_ceil(BLOCK);
    let blocks_u32 = u32::try_from(blocks).map_err(|_| StorageError::RecordTooLarge { len, limit: BLOCK * u32::MAX as usize })?;
    let tmp = dir.join(format!("{name}.tmp"));
    let path = dir.join(name);
    let file = vfs.open(&tmp, true).map_err(|e| StorageError::io(&tmp, e))?;
    let written = (|| {
        file.truncate(0)?;
        let mut sink = BlockSink {
            file: file.as_ref(),
            at: body_start(blocks) as u64,
            buf: Vec::with_capacity(BLOCK.min(len)),
            crcs: Vec::with_capacity(blocks),
            total: 0,
        };
        produce(&mut sink)?;
        sink.flush_block()?;
        if sink.total != len {
            let why = format!("snapshot body is {} bytes, {len} were announced", sink.total);
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
        }
        let mut head = Vec::with_capacity(body_start(blocks));
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&SNAPSHOT_FORMAT_VERSION.to_le_bytes());
        head.extend_from_slice(&blocks_u32.to_le_bytes());
        head.extend_from_slice(&(len as u64).to_le_bytes());
        for crc in &sink.crcs {
            head.extend_from_slice(&crc.to_le_bytes());
        }
        let head_crc = crc32c::crc32c(&head);
        head.extend_from_slice(&head_crc.to_le_bytes());
        head.resize(body_start(blocks), 0);
        file.write_at(0, &head)?;
        file.sync()
    })();
    drop(file);
    if let Err(e) = written {
        // Best effort: a leftover temporary file is also removed at the next open.
        let _ = vfs.remove(&tmp);
        return Err(StorageError::io(&tmp, e));
    }
    vfs.rename(&tmp, &path).map_err(|e| StorageError::io(&path, e))?;
    vfs.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    Ok(path)
}

/// Where a streamed body goes: whole blocks are checksummed and written at their offsets.
struct BlockSink<'f> {
    file: &'f dyn crate::vfs::VfsFile,
    /// File offset of the next block.
    at: u64,
    /// The block being filled.
    buf: Vec<u8>,
    crcs: Vec<u32>,
    /// Body bytes received.
    total: usize,
}

impl BlockSink<'_> {
    fn flush_block(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.crcs.push(crc32c::crc32c(&self.buf));
        self.file.write_at(self.at, &self.buf)?;
        self.at += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

impl std::io::Write for BlockSink<'_> {
    fn write(&mut self, mut data: &[u8]) -> std::io::Result<usize> {
        let n = data.len();
        while !data.is_empty() {
            let take = (BLOCK - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() == BLOCK {
                self.flush_block()?;
            }
        }
        self.total += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A verified snapshot: its mapping and where the body starts.
#[derive(Debug)]
pub struct SnapshotFile {
    mapped: Mapped,
    start: usize,
    len: usize,
    format: u32,
}

impl SnapshotFile {
    /// The format version of the body.
    pub fn format(&self) -> u32 {
        self.format
    }

    /// The body bytes (64-byte aligned).
    pub fn body(&self) -> &[u8] {
        &self.mapped[self.start..self.start + self.len]
    }
}

/// Maps and verifies `path`: magic, version, header checksum, and every block checksum. A
/// mismatch fails with the file and the byte offset of the bad header or block.
pub fn read_snapshot(vfs: &dyn Vfs, path: &Path) -> Result<SnapshotFile, StorageError> {
    let mapped = vfs.map(path).map_err(|e| StorageError::io(path, e))?;
    let bytes: &[u8] = &mapped;
    let corrupt = |offset: usize, what| StorageError::Corruption { path: path.to_path_buf(), offset: offset as u64, what };
    if bytes.len() < FIXED + 4 || &bytes[..8] != MAGIC {
        return Err(corrupt(0, "not a snapshot (bad magic or too short)"));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if !(SNAPSHOT_FORMAT_OLDEST..=SNAPSHOT_FORMAT_VERSION).contains(&version) {
        return Err(StorageError::UnsupportedVersion { path: path.to_path_buf(), found: version, supported: SNAPSHOT_FORMAT_VERSION });
    }
    let blocks = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize;
    let len = usize::try_from(u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"))).map_err(|_| corrupt(16, "body length"))?;
    let crcs_end = FIXED + blocks * 4;
    if bytes.len() < crcs_end + 4 {
        return Err(corrupt(12, "header truncated"));
    }
    let head_crc = u32::from_le_bytes(bytes[crcs_end..crcs_end + 4].try_into().expect("4 bytes"));
    if crc32c::crc32c(&bytes[..crcs_end]) != head_crc {
        return Err(corrupt(0, "snapshot header checksum mismatch"));
    }
    let start = body_start(blocks);
    if blocks != len.div_ceil(BLOCK) || bytes.len() != start + len {
        return Err(corrupt(start.min(bytes.len()), "body length does not match the file"));
    }
    if let Some(p) = bytes[crcs_end + 4..start].iter().position(|b| *b != 0) {
        return Err(corrupt(crcs_end + 4 + p, "header padding is not zero"));
    }
    for (i, chunk) in bytes[start..].chunks(BLOCK).enumerate() {
        let want = u32::from_le_bytes(bytes[FIXED + i * 4..FIXED + i * 4 + 4].try_into().expect("4 bytes"));
        if crc32c::crc32c(chunk) != want {
            return Err(corrupt(start + i * BLOCK, "snapshot block checksum mismatch"));
        }
    }
    Ok(SnapshotFile { mapped, start, len, format: version })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemVfs;

    #[test]
    fn a_streamed_body_matches_a_written_one() {
        let vfs = MemVfs::new();
        let dir = Path::new("/db");
        for len in [0, 1, BLOCK - 1, BLOCK, 2 * BLOCK + 12_345] {
            let body: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let whole = vfs.bytes(&write_snapshot(&vfs, dir, "a.snap", &body).unwrap()).unwrap();
            // Fed in uneven pieces that straddle block boundaries.
            let path =
                write_snapshot_streamed(&vfs, dir, "b.snap", len, |sink| body.chunks(77_777).try_for_each(|piece| sink.write_all(piece)))
                    .unwrap();
            assert_eq!(vfs.bytes(&path).unwrap(), whole, "{len} bytes");
            assert_eq!(read_snapshot(&vfs, &path).unwrap().body(), &body[..]);
        }
        // A body that comes out shorter than announced, or a failing producer, leaves nothing.
        let short = write_snapshot_streamed(&vfs, dir, "c.snap", 10, |sink| sink.write_all(b"12345"));
        assert!(matches!(short, Err(StorageError::Io { .. })), "{short:?}");
        let failed = write_snapshot_streamed(&vfs, dir, "d.snap", 10, |_| Err(std::io::Error::other("no")));
        assert!(failed.is_err());
        for name in ["c.snap", "c.snap.tmp", "d.snap", "d.snap.tmp"] {
            assert!(!vfs.exists(&dir.join(name)), "{name}");
        }
    }

    #[test]
    fn round_trip_and_every_flip_is_named() {
        let vfs = MemVfs::new();
        let dir = Path::new("/db");
        let body: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
        let path = write_snapshot(&vfs, dir, "s.snap", &body).unwrap();
        assert_eq!(read_snapshot(&vfs, &path).unwrap().body(), &body[..]);
        assert!(!vfs.exists(&dir.join("s.snap.tmp")));
        let full = vfs.bytes(&path).unwrap();
        for at in (0..full.len()).step_by(3) {
            let mut bytes = full.clone();
            bytes[at] ^= 0x04;
            vfs.set_bytes(&path, bytes);
            let err = read_snapshot(&vfs, &path).unwrap_err();
            assert!(matches!(err, StorageError::Corruption { .. } | StorageError::UnsupportedVersion { .. }), "flip at {at}: {err}");
        }
    }
}
