//! Loading the workload CSV files (`../shared/workloads/README.md`) into engram through its public
//! API: the files are mapped, parsed on all cores by `engram::csv`, and handed to
//! `Database::bulk_load`.

use engram::csv::{parse_claims, parse_entities, CsvError, EntityIndex};
use engram::{BulkLoad, DeclarePredicate};
use std::path::Path;

/// An unreadable or malformed input file.
#[derive(Debug)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<CsvError> for LoadError {
    fn from(e: CsvError) -> Self {
        LoadError(e.to_string())
    }
}

/// Maps a data file read-only: the page cache is used in place, with no copy into fresh memory.
fn map(path: &Path) -> Result<memmap2::Mmap, LoadError> {
    let file = std::fs::File::open(path).map_err(|e| LoadError(format!("{}: {e}", path.display())))?;
    // `populate` maps every page up front (one kernel call instead of a fault per 4 KB page as
    // the parse threads first touch them).
    // Safety: the mapping is read-only and lives only while this load parses it. The workload
    // files are written once by the generator and not modified during a run; if another process
    // truncated one meanwhile, reads could fault (SIGBUS), which is why the engine itself loads
    // through its own APIs and only this benchmark harness maps its inputs.
    unsafe { memmap2::MmapOptions::new().populate().map(&file) }.map_err(|e| LoadError(format!("{}: {e}", path.display())))
}

/// Reads `entities.csv` and `claims.csv` of `dir` into a `BulkLoad` for workspace `default`,
/// with `SUBCLASS_OF` declared transitive.
pub fn read_dir(dir: &Path) -> Result<BulkLoad, LoadError> {
    let (ents, claims) = (map(&dir.join("entities.csv"))?, map(&dir.join("claims.csv"))?);
    let entities = parse_entities(&ents, "entities.csv")?;
    drop(ents);
    let index = EntityIndex::new(&entities, "entities.csv")?;
    let claims = parse_claims(&claims, "claims.csv", &index)?;
    drop(index);
    Ok(BulkLoad { workspace: "default".into(), predicates: vec![DeclarePredicate::new("SUBCLASS_OF").transitive()], entities, claims })
}
