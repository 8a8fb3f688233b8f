//! `PMap`: the persistent hash map of the state (imbl's HAMT), hashed with foldhash.
//!
//! imbl's default `RandomState` is `SipHash` 1-3; its keys here are mostly `u32` ids and short
//! names, looked up several times per claim a commit adds, where hashing them with `SipHash` took
//! 6% of a WAL replay. foldhash keeps a random per-map seed (no fixed seed an attacker could collide), and no
//! code depends on iteration order (encoders sort).

/// A persistent (structurally shared) hash map.
pub type PMap<K, V> = imbl::GenericHashMap<K, V, foldhash::fast::RandomState, imbl::shared_ptr::DefaultSharedPtr>;

/// A persistent hash set.
pub type PSet<K> = imbl::GenericHashSet<K, foldhash::fast::RandomState, imbl::shared_ptr::DefaultSharedPtr>;
