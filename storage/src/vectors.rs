//! Vector files: fixed-dimension little-endian f32 rows, appendable, mapped for reading, with one
//! CRC-32C per block of 1,024 rows.
//!
//! `NAME` holds a 64-byte header (magic `ENGRMVEC`, format version `u32`, dimension `u32`, zero
//! padding) and then the rows back to back, so row `i` starts at `64 + i·dim·4`. The checksums live
//! in `NAME.crc` (magic `ENGRMCRC`, row count `u64`, one `u32` per block, and a CRC-32C of all of
//! that), replaced atomically (temporary file, fsync, rename, folder fsync) after the rows it covers
//! are synced. The row count in `NAME.crc` is what was acknowledged: rows beyond it are a torn
//! append (cut at the next writable open); a block that does not match its checksum is corruption,
//! named with the file and byte offset.

use crate::error::StorageError;
use crate::mapped::Mapped;
use crate::vfs::Vfs;
use std::path::{Path, PathBuf};

/// The vector file format this engram writes (and the newest it reads).
pub const VECTOR_FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"ENGRMVEC";
const CRC_MAGIC: &[u8; 8] = b"ENGRMCRC";
/// Bytes before row 0.
pub const VECTOR_FILE_HEADER: usize = 64;
const HEADER: usize = VECTOR_FILE_HEADER;
const BLOCK_ROWS: usize = 1024;

fn crc_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".crc");
    PathBuf::from(p)
}

/// An open vector file.
#[derive(Debug)]
pub struct VectorFile {
    path: PathBuf,
    dim: usize,
    rows: usize,
    crcs: Vec<u32>,
}

fn row_bytes(dim: usize) -> usize {
    dim * 4
}

impl VectorFile {
    /// Creates an empty vector file of dimension `dim` (which must be new).
    pub fn create(vfs: &dyn Vfs, path: &Path, dim: usize) -> Result<VectorFile, StorageError> {
        let dim32 =
            u32::try_from(dim).ok().filter(|d| *d > 0).ok_or(StorageError::RecordTooLarge { len: dim, limit: u32::MAX as usize })?;
        let f = vfs.open(path, true).map_err(|e| StorageError::io(path, e))?;
        let mut h = vec![0u8; HEADER];
        h[..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&VECTOR_FORMAT_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&dim32.to_le_bytes());
        f.truncate(0).map_err(|e| StorageError::io(path, e))?;
        f.write_at(0, &h).map_err(|e| StorageError::io(path, e))?;
        f.sync().map_err(|e| StorageError::io(path, e))?;
        let v = VectorFile { path: path.to_path_buf(), dim, rows: 0, crcs: Vec::new() };
        v.write_crcs(vfs)?;
        Ok(v)
    }

    fn write_crcs(&self, vfs: &dyn Vfs) -> Result<(), StorageError> {
        let mut b = Vec::with_capacity(20 + self.crcs.len() * 4);
        b.extend_from_slice(CRC_MAGIC);
        b.extend_from_slice(&(self.rows as u64).to_le_bytes());
        for c in &self.crcs {
            b.extend_from_slice(&c.to_le_bytes());
        }
        let all = crc32c::crc32c(&b);
        b.extend_from_slice(&all.to_le_bytes());
        let target = crc_path(&self.path);
        let mut tmp = target.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let f = vfs.open(&tmp, true).map_err(|e| StorageError::io(&tmp, e))?;
        f.truncate(0).map_err(|e| StorageError::io(&tmp, e))?;
        f.write_at(0, &b).map_err(|e| StorageError::io(&tmp, e))?;
        f.sync().map_err(|e| StorageError::io(&tmp, e))?;
        drop(f);
        vfs.rename(&tmp, &target).map_err(|e| StorageError::io(&target, e))?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        vfs.sync_dir(dir).map_err(|e| StorageError::io(dir, e))
    }

    /// Appends rows (`values.len()` must be a multiple of the dimension) and makes them durable:
    /// rows first, then the checksums that acknowledge them.
    pub fn append(&mut self, vfs: &dyn Vfs, values: &[f32]) -> Result<(), StorageError> {
        if !values.len().is_multiple_of(self.dim) {
            return Err(StorageError::RecordTooLarge { len: values.len(), limit: self.dim });
        }
        let first = self.rows;
        let rows: Vec<(usize, &[f32])> = values.chunks(self.dim).enumerate().map(|(i, r)| (first + i, r)).collect();
        self.write_rows(vfs, &rows)
    }

    /// Writes rows at their positions (row `i` at `64 + i·dim·4`), growing the file with zero rows
    /// where needed, and makes them durable: rows first, then the checksums of every block they
    /// touched. Used for rows that were all zeros ("no vector") or beyond the end: rows a mapped
    /// reader may be scanning are never rewritten.
    pub fn write_rows(&mut self, vfs: &dyn Vfs, rows: &[(usize, &[f32])]) -> Result<(), StorageError> {
        if rows.is_empty() {
            return Ok(());
        }
        if let Some((_, bad)) = rows.iter().find(|(_, r)| r.len() != self.dim) {
            return Err(StorageError::RecordTooLarge { len: bad.len(), limit: self.dim });
        }
        let rb = row_bytes(self.dim);
        let f = vfs.open(&self.path, false).map_err(|e| StorageError::io(&self.path, e))?;
        let new_rows = rows.iter().map(|(i, _)| i + 1).max().unwrap_or(0).max(self.rows);
        // Rows between the old end and the new one that nobody wrote are explicit zero rows.
        f.truncate((HEADER + self.rows * rb) as u64).map_err(|e| StorageError::io(&self.path, e))?;
        f.write_at((HEADER + new_rows * rb) as u64 - 1, &[0]).map_err(|e| StorageError::io(&self.path, e))?;
        let mut touched: Vec<usize> = (self.rows / BLOCK_ROWS..new_rows.div_ceil(BLOCK_ROWS)).collect();
        let mut run: Vec<u8> = Vec::new();
        let mut sorted: Vec<&(usize, &[f32])> = rows.iter().collect();
        sorted.sort_by_key(|(i, _)| *i);
        let mut at = 0;
        while at < sorted.len() {
            // Contiguous rows go out in one write.
            let first = sorted[at].0;
            let mut end = at;
            run.clear();
            while end < sorted.len() && sorted[end].0 == first + (end - at) {
                run.extend(sorted[end].1.iter().flat_map(|v| v.to_le_bytes()));
                touched.push(sorted[end].0 / BLOCK_ROWS);
                end += 1;
            }
            f.write_at((HEADER + first * rb) as u64, &run).map_err(|e| StorageError::io(&self.path, e))?;
            at = end.max(at + 1);
        }
        f.sync().map_err(|e| StorageError::io(&self.path, e))?;
        touched.sort_unstable();
        touched.dedup();
        self.crcs.resize(new_rows.div_ceil(BLOCK_ROWS), 0);
        let mut block = Vec::new();
        for b in touched {
            let start = HEADER + b * BLOCK_ROWS * rb;
            let len = (((b + 1) * BLOCK_ROWS).min(new_rows) - b * BLOCK_ROWS) * rb;
            block.resize(len, 0);
            let mut got = 0;
            while got < len {
                let n = f.read_at((start + got) as u64, &mut block[got..]).map_err(|e| StorageError::io(&self.path, e))?;
                if n == 0 {
                    return Err(StorageError::Corruption {
                        path: self.path.clone(),
                        offset: (start + got) as u64,
                        what: "vector file shorter than just written",
                    });
                }
                got += n;
            }
            self.crcs[b] = crc32c::crc32c(&block);
        }
        self.rows = new_rows;
        self.write_crcs(vfs)
    }

    /// Opens and verifies `path`: header, checksum file, and every block. Rows beyond the
    /// acknowledged count (a torn append) are ignored, and cut when `repair_tail` is set.
    pub fn open(vfs: &dyn Vfs, path: &Path, repair_tail: bool) -> Result<(VectorFile, Mapped), StorageError> {
        let corrupt = |p: &Path, offset: usize, what| StorageError::Corruption { path: p.to_path_buf(), offset: offset as u64, what };
        let crc_file = crc_path(path);
        let c = vfs.map(&crc_file).map_err(|e| StorageError::io(&crc_file, e))?;
        if c.len() < 20 || &c[..8] != CRC_MAGIC || (c.len() - 20) % 4 != 0 {
            return Err(corrupt(&crc_file, 0, "not a vector checksum file"));
        }
        if crc32c::crc32c(&c[..c.len() - 4]) != u32::from_le_bytes(c[c.len() - 4..].try_into().expect("4 bytes")) {
            return Err(corrupt(&crc_file, 0, "vector checksum file checksum mismatch"));
        }
        let rows =
            usize::try_from(u64::from_le_bytes(c[8..16].try_into().expect("8 bytes"))).map_err(|_| corrupt(&crc_file, 8, "row count"))?;
        let crcs: Vec<u32> = c[16..c.len() - 4].chunks(4).map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes"))).collect();
        let data = vfs.map(path).map_err(|e| StorageError::io(path, e))?;
        if data.len() < HEADER || &data[..8] != MAGIC {
            return Err(corrupt(path, 0, "not a vector file"));
        }
        let version = u32::from_le_bytes(data[8..12].try_into().expect("4 bytes"));
        if version != VECTOR_FORMAT_VERSION {
            return Err(StorageError::UnsupportedVersion { path: path.to_path_buf(), found: version, supported: VECTOR_FORMAT_VERSION });
        }
        let dim = u32::from_le_bytes(data[12..16].try_into().expect("4 bytes")) as usize;
        if dim == 0 || data[16..HEADER].iter().any(|b| *b != 0) {
            return Err(corrupt(path, 12, "vector file header checksum mismatch (dimension or padding)"));
        }
        let rb = row_bytes(dim);
        if crcs.len() != rows.div_ceil(BLOCK_ROWS) || data.len() < HEADER + rows * rb {
            return Err(corrupt(path, HEADER, "vector file shorter than its acknowledged rows"));
        }
        for (b, want) in crcs.iter().enumerate() {
            let start = HEADER + b * BLOCK_ROWS * rb;
            let end = HEADER + ((b + 1) * BLOCK_ROWS).min(rows) * rb;
            if crc32c::crc32c(&data[start..end]) != *want {
                return Err(corrupt(path, start, "vector block checksum mismatch"));
            }
        }
        let acknowledged = HEADER + rows * rb;
        if repair_tail && data.len() > acknowledged {
            drop(data);
            let f = vfs.open(path, false).map_err(|e| StorageError::io(path, e))?;
            f.truncate(acknowledged as u64).map_err(|e| StorageError::io(path, e))?;
            f.sync().map_err(|e| StorageError::io(path, e))?;
            return VectorFile::open(vfs, path, false);
        }
        Ok((VectorFile { path: path.to_path_buf(), dim, rows, crcs }, data))
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Acknowledged rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row `i` of a mapping returned by `open`, decoded.
    pub fn row(&self, mapped: &Mapped, i: usize) -> Option<Vec<f32>> {
        (i < self.rows).then(|| {
            let start = HEADER + i * row_bytes(self.dim);
            mapped[start..start + row_bytes(self.dim)].chunks(4).map(|w| f32::from_le_bytes(w.try_into().expect("4 bytes"))).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemVfs;

    fn rows(n: usize, dim: usize, seed: f32) -> Vec<f32> {
        (0..n * dim).map(|i| i as f32 * 0.5 + seed).collect()
    }

    #[test]
    fn appends_round_trip_and_corruption_is_named() {
        let vfs = MemVfs::new();
        let path = Path::new("/db/vectors.f32v");
        let mut v = VectorFile::create(&vfs, path, 3).unwrap();
        v.append(&vfs, &rows(1500, 3, 0.0)).unwrap();
        v.append(&vfs, &rows(700, 3, 1.0)).unwrap();
        let (v2, mapped) = VectorFile::open(&vfs, path, false).unwrap();
        assert_eq!((v2.dim(), v2.rows()), (3, 2200));
        assert_eq!(v2.row(&mapped, 0).unwrap(), vec![0.0, 0.5, 1.0]);
        assert_eq!(v2.row(&mapped, 1500).unwrap(), vec![1.0, 1.5, 2.0]);
        assert!(v2.row(&mapped, 2200).is_none());
        drop(mapped);
        // A torn append: rows written past the acknowledged count are cut at a writable open.
        let mut bytes = vfs.bytes(path).unwrap();
        bytes.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7]);
        vfs.set_bytes(path, bytes.clone());
        assert_eq!(VectorFile::open(&vfs, path, true).unwrap().0.rows(), 2200);
        assert_eq!(vfs.bytes(path).unwrap().len(), bytes.len() - 7);
        // A flipped bit inside an acknowledged block is corruption with its block's offset.
        let mut bad = vfs.bytes(path).unwrap();
        bad[HEADER + 1025 * 12 + 5] ^= 0x08;
        vfs.set_bytes(path, bad);
        let err = VectorFile::open(&vfs, path, false).unwrap_err();
        assert!(matches!(err, StorageError::Corruption { offset, .. } if offset == (HEADER + 1024 * 12) as u64), "{err}");
        assert!(err.to_string().contains("checksum mismatch"));
    }

    #[test]
    fn rows_written_in_place_and_past_the_end_verify() {
        let vfs = MemVfs::new();
        let path = Path::new("/db/v.f32v");
        let mut v = VectorFile::create(&vfs, path, 2).unwrap();
        v.append(&vfs, &[0.0; 2 * 10]).unwrap();
        // One row inside (a former zero row), a run past the end, and one far beyond (zero gap).
        v.write_rows(&vfs, &[(3, &[1.0, 2.0]), (10, &[3.0, 4.0]), (11, &[5.0, 6.0]), (2500, &[7.0, 8.0])]).unwrap();
        let (v2, mapped) = VectorFile::open(&vfs, path, false).unwrap();
        assert_eq!(v2.rows(), 2501);
        assert_eq!(v2.row(&mapped, 3).unwrap(), vec![1.0, 2.0]);
        assert_eq!(v2.row(&mapped, 11).unwrap(), vec![5.0, 6.0]);
        assert_eq!(v2.row(&mapped, 1500).unwrap(), vec![0.0, 0.0]);
        assert_eq!(v2.row(&mapped, 2500).unwrap(), vec![7.0, 8.0]);
        assert!(v.write_rows(&vfs, &[(1, &[1.0])]).is_err());
    }
}
