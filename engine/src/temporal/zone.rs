//! Named time zones (`Europe/Stockholm`): the IANA rules compiled in by chrono-tz, so a zone
//! gives the same offsets on every machine and no tz file is read at run time. A zone is kept by
//! its name wherever it is stored (WAL, snapshots, exports), never by the crate's enum index,
//! which changes between tz database releases.

use std::fmt;

use chrono::{Offset, TimeZone};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A named time zone.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Zone(chrono_tz::Tz);

impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Zone {
    /// The zone called `name`: its IANA name, any case (`europe/stockholm` is
    /// `Europe/Stockholm`); `None` when the database has no such zone.
    pub fn named(name: &str) -> Option<Zone> {
        if let Ok(tz) = name.parse::<chrono_tz::Tz>() {
            return Some(Zone(tz));
        }
        chrono_tz::TZ_VARIANTS.iter().find(|tz| tz.name().eq_ignore_ascii_case(name)).map(|tz| Zone(*tz))
    }

    /// Its IANA name, as the database spells it.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// Seconds east of UTC at the instant `utc_secs` (seconds since the epoch).
    pub fn offset_at(&self, utc_secs: i64) -> i32 {
        match chrono::DateTime::from_timestamp(utc_secs, 0) {
            Some(t) => self.0.offset_from_utc_datetime(&t.naive_utc()).fix().local_minus_utc(),
            None => 0,
        }
    }

    /// The offsets a local time (seconds since 1970-01-01T00:00, local) may have here: one, two
    /// in an overlap (the earlier instant's first), none in a gap.
    fn offsets_of_local(self, local_secs: i64) -> Vec<i32> {
        let Some(naive) = chrono::DateTime::from_timestamp(local_secs, 0).map(|t| t.naive_utc()) else { return Vec::new() };
        let mut offsets: Vec<i32> = match self.0.offset_from_local_datetime(&naive) {
            chrono::LocalResult::Single(o) => vec![o.fix().local_minus_utc()],
            chrono::LocalResult::Ambiguous(a, b) => vec![a.fix().local_minus_utc(), b.fix().local_minus_utc()],
            chrono::LocalResult::None => Vec::new(),
        };
        // The earlier instant has the larger offset.
        offsets.sort_unstable_by(|a, b| b.cmp(a));
        offsets
    }

    /// Whether `offset` is one this zone gives the local time `local_secs`.
    pub fn accepts(&self, local_secs: i64, offset: i32) -> bool {
        self.offsets_of_local(local_secs).contains(&offset)
    }

    /// The offset a local time gets here, as Java and Neo4j resolve it: its only offset; in an
    /// overlap (clocks set back) `preferred` when it is one of the two, else the earlier
    /// instant's; in a gap (clocks set forward) the offset before the gap, so the local time moves
    /// later by the gap's length (02:30 on a spring-forward night reads 03:30).
    pub fn resolve(&self, local_secs: i64, preferred: Option<i32>) -> i32 {
        let offsets = self.offsets_of_local(local_secs);
        if let Some(p) = preferred.filter(|p| offsets.contains(p)) {
            return p;
        }
        if let Some(first) = offsets.first() {
            return *first;
        }
        // In a gap the two candidates are the offsets on either side; read each at the instant
        // the other would give, and the smaller is the one before the gap.
        let o1 = self.offset_at(local_secs);
        let o2 = self.offset_at(local_secs.saturating_sub(i64::from(o1)));
        let o3 = self.offset_at(local_secs.saturating_sub(i64::from(o2)));
        o2.min(o3)
    }
}

impl Serialize for Zone {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Zone {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Zone, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Zone::named(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown time zone '{name}'")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str) -> Zone {
        Zone::named(name).expect("a zone")
    }

    #[test]
    fn names_resolve_in_any_case() {
        assert_eq!(zone("europe/stockholm").name(), "Europe/Stockholm");
        assert_eq!(zone("UTC").name(), "UTC");
        assert!(Zone::named("Europe/Atlantis").is_none());
        assert!(Zone::named("+01:00").is_none());
    }

    #[test]
    fn offsets_follow_the_rules() {
        let stockholm = zone("Europe/Stockholm");
        // 1984-10-11T11:00Z (winter time from 1984-09-30) and 1984-07-16T10:00Z (summer time).
        assert_eq!(stockholm.offset_at(466_340_400), 3600);
        assert_eq!(stockholm.offset_at(458_820_000), 7200);
        // 1818-01-07, before standard time: local mean time, +00:53:28.
        assert_eq!(stockholm.offset_at(-4_796_150_400), 3208);
    }

    #[test]
    fn gaps_move_later_and_overlaps_take_the_earlier_instant() {
        let berlin = zone("Europe/Berlin");
        // 2021-03-28 02:30 local does not exist (02:00 → 03:00): the offset before, +01:00.
        let gap = 1_616_898_600; // 2021-03-28T02:30 as local seconds
        assert_eq!(berlin.resolve(gap, None), 3600);
        assert!(!berlin.accepts(gap, 3600) && !berlin.accepts(gap, 7200));
        // 2021-10-31 02:30 local happens twice: first at +02:00.
        let overlap = 1_635_647_400; // 2021-10-31T02:30 as local seconds
        assert_eq!(berlin.resolve(overlap, None), 7200);
        assert_eq!(berlin.resolve(overlap, Some(3600)), 3600);
        assert!(berlin.accepts(overlap, 3600) && berlin.accepts(overlap, 7200));
    }

    #[test]
    fn a_zone_is_stored_by_name() {
        let z = zone("America/New_York");
        let bytes = postcard::to_stdvec(&z).expect("encode");
        assert_eq!(&bytes[1..], b"America/New_York");
        assert_eq!(postcard::from_bytes::<Zone>(&bytes).expect("decode"), z);
        let unknown = postcard::to_stdvec("Mars/Olympus").expect("encode");
        assert!(postcard::from_bytes::<Zone>(&unknown).is_err());
    }
}
