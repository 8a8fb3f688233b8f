//! Shared helpers for engram's black-box tests: a naive reference model of the memory graph that
//! the engine is compared against, and seeded fixtures.

pub mod reference;

/// The folder of real third-party data (`../shared/data` beside the repository), or
/// `$ENGRAM_SHARED_DATA`. Tests that need it fail with this path in the message when it is absent.
pub fn shared_data() -> std::path::PathBuf {
    match std::env::var_os("ENGRAM_SHARED_DATA") {
        Some(p) => p.into(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
    }
}

/// Reads a file under [`shared_data`], decompressing `.gz`.
pub fn read_shared(rel: &str) -> String {
    use std::io::Read;
    let path = shared_data().join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (set ENGRAM_SHARED_DATA to the shared data folder)", path.display()));
    if rel.ends_with(".gz") {
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        s
    } else {
        String::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}
