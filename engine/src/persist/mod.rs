//! Persistence of a state: the snapshot encoding and decoding (rkyv archives of the columns,
//! streamed block by block). The WAL records themselves are `write::mutation`; the files and
//! their lifecycle are `db/`.

pub mod snapshot;
