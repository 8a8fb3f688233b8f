//! Tags: `key=value` labels on messages (the source of evidence), entities and claims, and the
//! rules that carry them.
//!
//! Propagation, decided when read (so a change of evidence is reflected at once):
//! - a claim's tags are its own, then those of each message its evidence came from (a key the
//!   claim has keeps the claim's value, else the first message's, newest evidence first);
//! - the `sensitivity` key takes the strictest value of all of them, in the order of
//!   `SENSITIVITY_LEVELS` (`public` < `internal` < `confidential` < `sensitive`);
//! - a claim that supersedes another keeps at least the old one's sensitivity (copied into its own
//!   tags when it supersedes);
//! - an entity's tags are its own; an ingest document that sets an entity's properties adds its
//!   source's tags to the entity (the strictest sensitivity kept).
//!
//! `sensitivity=sensitive` is the claim flag of old (`sensitive: true`): such a claim does not exist
//! for a principal without `see_sensitive`. The engine keeps the flag equal to the rule above.

use std::collections::BTreeMap;
use std::sync::Arc;

/// A row's tags, by key.
pub type Tags = BTreeMap<Arc<str>, Arc<str>>;

/// The tag key whose value orders.
pub const SENSITIVITY: &str = "sensitivity";
/// Its values, least strict first.
pub const SENSITIVITY_LEVELS: [&str; 4] = ["public", "internal", "confidential", "sensitive"];
/// The value the `SENSITIVE` flag stands for.
pub const SENSITIVE_LEVEL: &str = "sensitive";
/// Most tags on one row.
pub const TAGS_MAX: usize = 32;
/// Longest tag key or value, in bytes.
pub const TAG_BYTES_MAX: usize = 128;

/// The tags of a claim marked sensitive: `sensitivity=sensitive`.
pub fn sensitive() -> Arc<Tags> {
    Arc::new(Tags::from([(Arc::from(SENSITIVITY), Arc::from(SENSITIVE_LEVEL))]))
}

/// The rank of a sensitivity value (`None`: not a level).
pub fn level(value: &str) -> Option<usize> {
    SENSITIVITY_LEVELS.iter().position(|l| *l == value)
}

/// The stricter of two sensitivity values (unknown values rank below every level).
pub fn stricter<'a>(a: Option<&'a str>, b: Option<&'a str>) -> Option<&'a str> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if level(y) > level(x) { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Why a tag is refused.
pub fn check(key: &str, value: &str) -> Result<(), String> {
    for (what, s) in [("key", key), ("value", value)] {
        if s.is_empty() || s.len() > TAG_BYTES_MAX || crate::normalize::has_control_chars(s) {
            return Err(format!(
                "tag {what} `{}`: 1 to {TAG_BYTES_MAX} bytes without control characters",
                s.chars().take(40).collect::<String>()
            ));
        }
    }
    if key.contains('=') {
        return Err(format!("tag key `{key}` holds `=`"));
    }
    if key == SENSITIVITY && level(value).is_none() {
        return Err(format!("tag sensitivity=`{value}`: expected one of {}", SENSITIVITY_LEVELS.join(", ")));
    }
    Ok(())
}

/// `into` with `more` merged: keys `into` lacks are added, and `sensitivity` becomes the stricter
/// of the two (what inheriting from a source does).
pub fn inherit(into: &mut Tags, more: &Tags) {
    for (k, v) in more {
        if &**k == SENSITIVITY {
            let s = stricter(into.get(k).map(|x| &**x), Some(v)).map(Arc::from);
            if let Some(s) = s {
                into.insert(k.clone(), s);
            }
        } else {
            into.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

/// Parses `key=value` words.
pub fn parse_pairs<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for w in words {
        let (k, v) = w.split_once('=').ok_or_else(|| format!("`{w}`: expected key=value"))?;
        check(k, v)?;
        out.insert(k.to_owned(), v.to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(pairs: &[(&str, &str)]) -> Tags {
        pairs.iter().map(|(k, v)| (Arc::from(*k), Arc::from(*v))).collect()
    }

    #[test]
    fn the_strictest_sensitivity_wins_and_own_keys_stay() {
        let mut own = tags(&[("team", "ops"), ("sensitivity", "internal")]);
        inherit(&mut own, &tags(&[("team", "sales"), ("sensitivity", "confidential"), ("origin", "slack")]));
        assert_eq!(own, tags(&[("team", "ops"), ("sensitivity", "confidential"), ("origin", "slack")]));
        inherit(&mut own, &tags(&[("sensitivity", "public")]));
        assert_eq!(own.get("sensitivity").map(|s| &**s), Some("confidential"));
        assert!(check("sensitivity", "secret").is_err());
        assert!(check("a=b", "x").is_err());
        assert!(check("k", "").is_err());
        assert_eq!(parse_pairs(["a=1", "sensitivity=sensitive"]).unwrap().len(), 2);
        assert!(parse_pairs(["nope"]).is_err());
    }
}
