//! Named limits on everything a caller controls, so that bad or hostile input is rejected with a
//! clear error instead of exhausting memory. Each limit is a field with a documented default.

/// Size limits enforced on writes and reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest external id, in bytes (default 512).
    pub ext_id_bytes_max: usize,
    /// Longest entity name, alias, type or predicate name, in bytes (default 1,024).
    pub name_bytes_max: usize,
    /// Longest claim text or evidence snippet, in bytes (default 64 KiB).
    pub text_bytes_max: usize,
    /// Most aliases on one entity (default 256).
    pub aliases_max: usize,
    /// Largest encoded property value, in bytes (default 64 KiB).
    pub property_bytes_max: usize,
    /// Most operations in one batch (default 1,000,000).
    pub batch_ops_max: usize,
    /// Most entities a traversal may visit before it stops and reports `truncated` (default 10M).
    pub traversal_visited_max: usize,
    /// Largest vector dimension a database may be created with (default 8,192).
    pub vector_dim_max: usize,
    /// Largest file `LOAD CSV` reads from the import folder, in bytes (default 256 MiB): the
    /// file is read whole, and its rows live for the query.
    pub import_file_bytes_max: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ext_id_bytes_max: 512,
            name_bytes_max: 1024,
            text_bytes_max: 64 * 1024,
            aliases_max: 256,
            property_bytes_max: 64 * 1024,
            batch_ops_max: 1_000_000,
            traversal_visited_max: 10_000_000,
            vector_dim_max: 8192,
            import_file_bytes_max: 256 << 20,
        }
    }
}
