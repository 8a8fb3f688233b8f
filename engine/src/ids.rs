//! Dense internal ids.
//!
//! Every row of every table is addressed by a `u32` newtype. Dense ids make CSR offsets, flag columns
//! and roaring bitmaps natural, and the newtypes stop an entity id from being used as a claim id.
//! Clients see stable external string ids; the engine maps them to these.

use std::fmt;

macro_rules! dense_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into the table's columns.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

dense_id!(
    /// An entity (graph node).
    EntityId,
    "e"
);
dense_id!(
    /// A claim (directed typed edge `subject PREDICATE object`).
    ClaimId,
    "c"
);
dense_id!(
    /// An evidence row: the provenance of one claim.
    EvidenceId,
    "v"
);
dense_id!(
    /// A workspace: the unit of isolation. Ids are never reused, so a dropped workspace's id
    /// cannot alias a new one.
    WorkspaceId,
    "w"
);

/// An interned predicate name (lower-cased). Global across workspaces; each workspace declares its
/// own properties for it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct PredicateId(pub u16);

/// An interned entity type name (lower-cased).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct TypeId(pub u16);

/// Marks "no row" in `u32` link columns (supersession, evidence chains, delta chains).
pub(crate) const NONE: u32 = u32::MAX;
