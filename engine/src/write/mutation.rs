//! The WAL record: one committed change, with its transaction time.
//!
//! Replaying the records in order through the same apply functions, at their recorded times,
//! rebuilds exactly the state that was acknowledged: every id and every timestamp is derived from
//! the state and the record, never from the replaying machine's clock. Payload layout: one byte of
//! record format version, then the record in postcard (serde) encoding.

use crate::time::Timestamp;
use crate::write::batch::WriteBatch;
use crate::write::bulk::BulkLoad;
use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// The record format this engram writes (and the newest it reads). Format 2 added
/// `AddEvidence::reasoning`; format 3 the query language's operations (`Op::CreateNode` and the
/// three after it), appended so format 2 records decode unchanged; format 1 records are still
/// read (see `field_since_v2`); format 4 the settings with the server's users
/// (`Mutation::SettingsV3`), appended likewise; format 5 the settings with the HTTP API's bearer
/// tokens (`Mutation::SettingsV4`), appended likewise; format 6 the settings with roles and row
/// policies (`Mutation::SettingsV5`), appended likewise; format 7 `Op::SetTags`, appended last;
/// format 8 the settings with masking policies (`Mutation::SettingsV6`), appended last; format 9
/// temporal property values (`Value::Temporal`) and packed float lists (`Value::Floats`), appended
/// last to `Value`; format 10 date-times in a named time zone (`Temporal::ZonedDateTime`, the zone
/// by its name), appended last to `Temporal`; format 11 spatial points (`Value::Point`), appended
/// last to `Value`.
pub const RECORD_FORMAT_VERSION: u8 = 11;
/// The format before spatial points: the same encoding, without them.
const RECORD_FORMAT_10: u8 = 10;
/// The format before named time zones: the same encoding, without them.
const RECORD_FORMAT_9: u8 = 9;
/// The format before temporal values: the same encoding, without them.
const RECORD_FORMAT_8: u8 = 8;
/// The format before masking policies: the same encoding, without them.
const RECORD_FORMAT_7: u8 = 7;
/// The format before tags: the same encoding, without `Op::SetTags`.
const RECORD_FORMAT_6: u8 = 6;
/// The format before roles and policies: the same encoding, without them.
const RECORD_FORMAT_5: u8 = 5;
/// The format before tokens: the same encoding, without them.
const RECORD_FORMAT_4: u8 = 4;
/// The format before the server's users: the same encoding, without them.
const RECORD_FORMAT_3: u8 = 3;
/// The format before the query language's operations: the same encoding, without them.
const RECORD_FORMAT_2: u8 = 2;
/// The oldest record format this engram reads.
pub const RECORD_FORMAT_OLDEST: u8 = 1;

thread_local! {
    /// Set while a format-1 record is being decoded on this thread.
    static DECODING_V1: Cell<bool> = const { Cell::new(false) };
}

/// Deserializes a trailing field that record format 2 added: postcard reads fields one after the
/// other, so in a format-1 record the field is simply absent and reads as its default without
/// consuming input. Only for the last field of a struct.
pub(crate) fn field_since_v2<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    if DECODING_V1.with(Cell::get) {
        Ok(T::default())
    } else {
        T::deserialize(d)
    }
}

/// One committed change.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Mutation {
    /// A write batch.
    Batch(WriteBatch),
    /// A new workspace.
    CreateWorkspace(String),
    /// A dropped (erased) workspace.
    DropWorkspace(String),
    /// A bulk load (boxed: it is far larger than the other variants).
    Bulk(Box<BulkLoad>),
    /// The stored settings, replaced whole (the layout before per-workspace settings; read only).
    Settings(crate::settings::SettingsV1),
    /// The stored settings, replaced whole (the layout before users; read only).
    SettingsV2(crate::settings::SettingsV2),
    /// The stored settings with the server's users, replaced whole (the layout before tokens;
    /// read only).
    SettingsV3(crate::settings::SettingsV3),
    /// The stored settings with the server's users and tokens, replaced whole (the layout
    /// before roles and policies; read only).
    SettingsV4(crate::settings::SettingsV4),
    /// The stored settings with users, tokens, roles and row policies, replaced whole (the
    /// layout before masking policies; read only).
    SettingsV5(crate::settings::SettingsV5),
    /// The stored settings with masking policies, replaced whole.
    SettingsV6(crate::settings::Settings),
}

/// A WAL record: the change and the transaction time it was committed at.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WalRecord {
    /// Transaction time of the commit.
    pub committed_at: Timestamp,
    /// The change.
    pub mutation: Mutation,
}

/// Why a payload could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Written by a newer record format.
    Version(u8),
    /// Not a valid record.
    Malformed,
}

impl WalRecord {
    /// Encodes to a WAL payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![RECORD_FORMAT_VERSION];
        postcard::to_io(self, &mut out).expect("encoding to a Vec cannot fail");
        out
    }

    /// The payload of a record whose mutation was encoded beforehand (by `encode_mutation` or
    /// `encode_batch`, outside the writer lock): postcard writes a struct as its fields one after
    /// the other, so this is byte for byte what `encode` gives.
    pub fn encode_parts(committed_at: Timestamp, mutation: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(mutation.len() + 11);
        out.push(RECORD_FORMAT_VERSION);
        postcard::to_io(&committed_at, &mut out).expect("encoding to a Vec cannot fail");
        out.extend_from_slice(mutation);
        out
    }

    /// Decodes a WAL payload.
    pub fn decode(payload: &[u8]) -> Result<WalRecord, DecodeError> {
        match payload.split_first() {
            Some((
                &(RECORD_FORMAT_VERSION
                | RECORD_FORMAT_10
                | RECORD_FORMAT_9
                | RECORD_FORMAT_8
                | RECORD_FORMAT_7
                | RECORD_FORMAT_6
                | RECORD_FORMAT_5
                | RECORD_FORMAT_4
                | RECORD_FORMAT_3
                | RECORD_FORMAT_2),
                body,
            )) => postcard::from_bytes(body).map_err(|_| DecodeError::Malformed),
            Some((&RECORD_FORMAT_OLDEST, body)) => {
                DECODING_V1.with(|f| f.set(true));
                let record = postcard::from_bytes(body).map_err(|_| DecodeError::Malformed);
                DECODING_V1.with(|f| f.set(false));
                record
            }
            Some((&v, _)) => Err(DecodeError::Version(v)),
            None => Err(DecodeError::Malformed),
        }
    }
}

/// A mutation in its record encoding (see `WalRecord::encode_parts`).
pub fn encode_mutation(m: &Mutation) -> Vec<u8> {
    postcard::to_allocvec(m).expect("encoding to a Vec cannot fail")
}

/// `encode_mutation(&Mutation::Batch(batch.clone()))` without the clone.
pub fn encode_batch(batch: &WriteBatch) -> Vec<u8> {
    MutationRef::Batch(batch).encode()
}

/// A `Mutation` that borrows its content, encoding byte for byte the same (serde numbers enum
/// variants by position, so the two enums must list the same variants in the same order).
#[derive(Serialize)]
pub enum MutationRef<'a> {
    /// `Mutation::Batch`.
    Batch(&'a WriteBatch),
    /// `Mutation::CreateWorkspace`.
    CreateWorkspace(&'a str),
    /// `Mutation::DropWorkspace`.
    DropWorkspace(&'a str),
    /// `Mutation::Bulk`.
    Bulk(&'a BulkLoad),
    /// `Mutation::Settings`.
    Settings(&'a crate::settings::SettingsV1),
    /// `Mutation::SettingsV2`.
    SettingsV2(&'a crate::settings::SettingsV2),
    /// `Mutation::SettingsV3`.
    SettingsV3(&'a crate::settings::SettingsV3),
    /// `Mutation::SettingsV4`.
    SettingsV4(&'a crate::settings::SettingsV4),
    /// `Mutation::SettingsV5`.
    SettingsV5(&'a crate::settings::SettingsV5),
    /// `Mutation::SettingsV6`.
    SettingsV6(&'a crate::settings::Settings),
}

impl MutationRef<'_> {
    /// The encoding `encode_mutation` gives the owned mutation.
    pub fn encode(&self) -> Vec<u8> {
        postcard::to_allocvec(self).expect("encoding to a Vec cannot fail")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::EntityId;
    use crate::write::batch::AddClaim;

    #[test]
    fn parts_encode_exactly_like_the_whole_record() {
        let mut batch = WriteBatch::new("default");
        batch.upsert_entity("a", "thing", "A");
        let mut claim = AddClaim::new(EntityId(0), "likes", EntityId(1));
        claim.confidence = 0.5;
        batch.add_claim(claim);
        let t = Timestamp(1_700_000_000_123_456);
        let whole = WalRecord { committed_at: t, mutation: Mutation::Batch(batch.clone()) }.encode();
        assert_eq!(WalRecord::encode_parts(t, &encode_batch(&batch)), whole);
        assert_eq!(WalRecord::encode_parts(t, &encode_mutation(&Mutation::Batch(batch))), whole);
        let ws = WalRecord { committed_at: Timestamp(-5), mutation: Mutation::CreateWorkspace("w".into()) };
        assert_eq!(WalRecord::encode_parts(ws.committed_at, &encode_mutation(&ws.mutation)), ws.encode());
        assert_eq!(MutationRef::CreateWorkspace("w").encode(), encode_mutation(&ws.mutation));
        assert_eq!(MutationRef::DropWorkspace("w").encode(), encode_mutation(&Mutation::DropWorkspace("w".into())));
        let old = crate::settings::SettingsV1 { vector_dim: Some(8), ..Default::default() };
        assert_eq!(MutationRef::Settings(&old).encode(), encode_mutation(&Mutation::Settings(old.clone())));
        let mut settings = crate::settings::Settings::from(old);
        settings.set_for("default", "retention_days", "30").unwrap();
        settings.tokens.insert("t1".into(), crate::settings::StoredToken { user: "u".into(), sha256: "00".into(), created_at: 1 });
        assert_eq!(MutationRef::SettingsV6(&settings).encode(), encode_mutation(&Mutation::SettingsV6(settings.clone())));
        let v5 = crate::settings::SettingsV5 { audit_flush_ms: Some(5), ..Default::default() };
        assert_eq!(MutationRef::SettingsV5(&v5).encode(), encode_mutation(&Mutation::SettingsV5(v5.clone())));
        let bytes = postcard::to_allocvec(&v5).unwrap();
        assert_eq!(crate::settings::Settings::decode(&bytes), Some(crate::settings::Settings::from(v5)));
        let v4 = crate::settings::SettingsV4 { vector_dim: Some(8), ..Default::default() };
        assert_eq!(MutationRef::SettingsV4(&v4).encode(), encode_mutation(&Mutation::SettingsV4(v4.clone())));
        let bytes = postcard::to_allocvec(&v4).unwrap();
        assert_eq!(crate::settings::Settings::decode(&bytes), Some(crate::settings::Settings::from(v4)));
        let v3 = crate::settings::SettingsV3 { vector_dim: Some(8), ..Default::default() };
        assert_eq!(MutationRef::SettingsV3(&v3).encode(), encode_mutation(&Mutation::SettingsV3(v3.clone())));
        // A format-4 settings snapshot reads as the settings with no tokens.
        let bytes = postcard::to_allocvec(&v3).unwrap();
        assert_eq!(crate::settings::Settings::decode(&bytes), Some(crate::settings::Settings::from(v3)));
        assert_eq!(crate::settings::Settings::decode(&postcard::to_allocvec(&settings).unwrap()), Some(settings.clone()));
        let v2 = crate::settings::SettingsV2 { vector_dim: Some(8), ..Default::default() };
        assert_eq!(MutationRef::SettingsV2(&v2).encode(), encode_mutation(&Mutation::SettingsV2(v2.clone())));
        // A format-3 settings record reads as the settings with no users.
        let bytes = postcard::to_allocvec(&v2).unwrap();
        assert_eq!(crate::settings::Settings::decode(&bytes), Some(crate::settings::Settings::from(v2)));
        let bulk = BulkLoad::default();
        assert_eq!(MutationRef::Bulk(&bulk).encode(), encode_mutation(&Mutation::Bulk(Box::new(bulk.clone()))));
    }

    /// A format-1 record (written before evidence had `reasoning`) still decodes, as `None`.
    #[test]
    fn format_one_records_decode_without_reasoning() {
        let mut batch = WriteBatch::new("default");
        batch.push(crate::write::batch::Op::AddEvidence(crate::write::batch::AddEvidence {
            claim: Some("c1".into()),
            snippet: Some("said so".into()),
            ..Default::default()
        }));
        let record = WalRecord { committed_at: Timestamp(7), mutation: Mutation::Batch(batch) };
        let v2 = record.encode();
        // Format 1 is format 2 (and 3) without the trailing `reasoning` (here `None`, one zero byte).
        assert_eq!(v2.last(), Some(&0));
        let mut v1 = v2[..v2.len() - 1].to_vec();
        v1[0] = 1;
        let back = WalRecord::decode(&v1).unwrap();
        assert_eq!(back.encode(), v2);
        // Read as format 2, the same bytes are one byte short: malformed, never misread.
        v1[0] = 2;
        assert_eq!(WalRecord::decode(&v1).unwrap_err(), DecodeError::Malformed);
        // Reasoning round-trips in format 7; format 2 to 6 bytes read the same; a format 8 is named.
        let Mutation::Batch(mut batch) = back.mutation else { panic!("a batch") };
        if let crate::write::batch::Op::AddEvidence(v) = &mut batch.ops[0] {
            v.reasoning = Some("stated by the architect".into());
        }
        let with = WalRecord { committed_at: Timestamp(7), mutation: Mutation::Batch(batch.clone()) }.encode();
        let Mutation::Batch(again) = WalRecord::decode(&with).unwrap().mutation else { panic!("a batch") };
        assert_eq!(again, batch);
        let mut v2 = with;
        v2[0] = 2;
        let Mutation::Batch(as_two) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_two, batch);
        v2[0] = 3;
        let Mutation::Batch(as_three) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_three, batch);
        v2[0] = 4;
        let Mutation::Batch(as_four) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_four, batch);
        v2[0] = 5;
        let Mutation::Batch(as_five) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_five, batch);
        v2[0] = 6;
        let Mutation::Batch(as_six) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_six, batch);
        v2[0] = 7;
        let Mutation::Batch(as_seven) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_seven, batch);
        v2[0] = 8;
        let Mutation::Batch(as_eight) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_eight, batch);
        v2[0] = 9;
        let Mutation::Batch(as_nine) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_nine, batch);
        v2[0] = 10;
        let Mutation::Batch(as_ten) = WalRecord::decode(&v2).unwrap().mutation else { panic!("a batch") };
        assert_eq!(as_ten, batch);
        v2[0] = 12;
        assert_eq!(WalRecord::decode(&v2).unwrap_err(), DecodeError::Version(12));
    }
}
