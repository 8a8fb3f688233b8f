//! PII detectors: the spans of free text that hold an email address, a phone number, a card-like
//! number or an IP address, found by one `regex` set.
//!
//! Used twice: when a claim's text is written, the kinds found become its `pii` tag (`pii=email,
//! phone`: `crate::tags`), so a masking policy knows which claims to mask without reading every
//! text; and when a masked view reads a text, the same detector gives the spans to replace
//! (`read::mask`). Detection is deterministic, so both agree.
//!
//! Precision over recall where they conflict: a card number must pass the Luhn check, an IPv4
//! address has four octets of at most 255, a phone number needs 8 to 15 digits and a leading `+`
//! or a separator pattern. What is not caught here is not masked as PII (a tag or property mask
//! still applies): `docs/security.md` says so.

use regex::{Regex, RegexSet};
use std::sync::LazyLock;

/// A kind of PII.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// An email address.
    Email,
    /// A card-like number (13 to 19 digits passing the Luhn check).
    Card,
    /// An IPv4 or IPv6 address.
    Ip,
    /// A phone number.
    Phone,
}

impl Kind {
    /// Every kind, in detection priority (an overlap keeps the earlier kind).
    pub const ALL: [Kind; 4] = [Kind::Email, Kind::Card, Kind::Ip, Kind::Phone];

    /// The name used in tags, policies and redactions.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Email => "email",
            Kind::Card => "card",
            Kind::Ip => "ip",
            Kind::Phone => "phone",
        }
    }

    /// The kind of this name.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The tag key that lists the kinds found in a claim's text.
pub const TAG: &str = "pii";

const PATTERNS: [&str; 4] = [
    // Email: a practical subset of RFC 5322's dot-atom form.
    r"[A-Za-z0-9](?:[A-Za-z0-9._%+\-]{0,63})@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}",
    // Card-like: 13 to 19 digits, in groups separated by single spaces or dashes.
    r"\b\d(?:[ \-]?\d){12,18}\b",
    // IPv4 (octets checked after), or IPv6 in full or `::`-compressed form.
    r"\b(?:\d{1,3}\.){3}\d{1,3}\b|(?:\b[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}\b|(?:\b[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}\b(?::[0-9A-Fa-f]{1,4}\b){0,5})?",
    // Phone: `+` and 8 to 15 digits with optional separators, or a national form with separators
    // such as `(555) 123-4567` / `555-123-4567` / `020 7946 0958`.
    r"\+\d(?:[ \-.]?\(?\d\)?){7,14}\b|(?:\(\d{2,4}\)[ \-.]?|\b\d{2,4}[\-. ])\d{3,4}[\-. ]\d{3,4}\b",
];

static SET: LazyLock<RegexSet> = LazyLock::new(|| RegexSet::new(PATTERNS).expect("the PII patterns compile"));
static EACH: LazyLock<Vec<Regex>> = LazyLock::new(|| PATTERNS.iter().map(|p| Regex::new(p).expect("the PII patterns compile")).collect());

/// One detected span: bytes `start..end` of the text hold PII of `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// What it holds.
    pub kind: Kind,
}

/// The PII spans of `text`, ascending and disjoint (an overlap keeps the kind earlier in
/// `Kind::ALL`, then the earlier span).
pub fn detect(text: &str) -> Vec<Span> {
    // Cheap gate: every pattern needs a digit or an `@` or a `:`.
    if !text.bytes().any(|b| b.is_ascii_digit() || b == b'@' || b == b':') {
        return Vec::new();
    }
    let matched = SET.matches(text);
    if !matched.matched_any() {
        return Vec::new();
    }
    let mut found: Vec<Span> = Vec::new();
    for (i, kind) in Kind::ALL.into_iter().enumerate() {
        if !matched.matched(i) {
            continue;
        }
        for m in EACH[i].find_iter(text) {
            let s = m.as_str();
            let ok = match kind {
                Kind::Card => luhn(s),
                Kind::Ip => s.contains(':') || s.split('.').all(|o| o.parse::<u16>().is_ok_and(|n| n <= 255)),
                Kind::Phone => {
                    (8..=15).contains(&s.bytes().filter(u8::is_ascii_digit).count()) && !in_longer_number(text, m.start(), m.end())
                }
                Kind::Email => true,
            };
            if ok && !found.iter().any(|f| f.start < m.end() && m.start() < f.end) {
                found.push(Span { start: m.start(), end: m.end(), kind });
            }
        }
    }
    found.sort_unstable_by_key(|s| s.start);
    found
}

/// The kinds found in `text`, as the `pii` tag's value (`email,phone`, in `Kind::ALL` order), or
/// `None` when there are none.
pub fn tag_value(text: &str) -> Option<String> {
    tag_value_of([text])
}

/// The kinds found in any of `texts`, as `tag_value`.
pub fn tag_value_of<'t>(texts: impl IntoIterator<Item = &'t str>) -> Option<String> {
    let mut found = [false; Kind::ALL.len()];
    for t in texts {
        for s in detect(t) {
            found[Kind::ALL.iter().position(|k| *k == s.kind).unwrap_or_default()] = true;
        }
    }
    let names: Vec<&str> = Kind::ALL.into_iter().zip(found).filter(|(_, f)| *f).map(|(k, _)| k.name()).collect();
    (!names.is_empty()).then(|| names.join(","))
}

/// The strings of a row's property values (top level, and inside lists and maps): what the
/// detector reads besides a claim's text.
pub fn strings(props: &crate::value::Properties) -> Vec<&str> {
    fn walk<'v>(v: &'v crate::value::Value, out: &mut Vec<&'v str>) {
        match v {
            crate::value::Value::Str(s) => out.push(s),
            crate::value::Value::List(items) => items.iter().for_each(|i| walk(i, out)),
            crate::value::Value::Map(m) => m.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for v in props.values() {
        walk(v, &mut out);
    }
    out
}

/// `tags` with its `pii` key set to `found` (removed when `None`); `None` when nothing changes.
pub fn retag(tags: Option<&crate::tags::Tags>, found: Option<String>) -> Option<crate::tags::Tags> {
    if tags.and_then(|t| t.get(TAG)).map(|v| &**v) == found.as_deref() {
        return None;
    }
    let mut t = tags.cloned().unwrap_or_default();
    match found {
        Some(v) => drop(t.insert(std::sync::Arc::from(TAG), std::sync::Arc::from(v))),
        None => drop(t.remove(TAG)),
    }
    Some(t)
}

/// Whether `start..end` of `text` is part of a longer run of digit groups (`4111 1111 1111 1112`
/// is not a phone number followed by ` 1112`).
fn in_longer_number(text: &str, start: usize, end: usize) -> bool {
    let (before, after) = (&text.as_bytes()[..start], &text.as_bytes()[end..]);
    let sep = |b: u8| matches!(b, b' ' | b'-' | b'.');
    let digit_after = matches!(after, [s, d, ..] if sep(*s) && d.is_ascii_digit()) || after.first().is_some_and(u8::is_ascii_digit);
    let digit_before = matches!(before, [.., d, s] if sep(*s) && d.is_ascii_digit()) || before.last().is_some_and(u8::is_ascii_digit);
    digit_after || digit_before
}

/// The Luhn check over the digits of `s`.
fn luhn(s: &str) -> bool {
    let digits: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(&str, Kind)> {
        detect(text).into_iter().map(|s| (&text[s.start..s.end], s.kind)).collect()
    }

    #[test]
    fn finds_each_kind_with_its_span() {
        assert_eq!(kinds("write to jane.doe+x@example.co.uk today"), [("jane.doe+x@example.co.uk", Kind::Email)]);
        assert_eq!(kinds("card 4111 1111 1111 1111 on file"), [("4111 1111 1111 1111", Kind::Card)]);
        assert_eq!(kinds("card 4111-1111-1111-1111."), [("4111-1111-1111-1111", Kind::Card)]);
        assert_eq!(kinds("from 192.168.10.254, then"), [("192.168.10.254", Kind::Ip)]);
        assert_eq!(kinds("v6 2001:db8::8a2e:370:7334 seen"), [("2001:db8::8a2e:370:7334", Kind::Ip)]);
        assert_eq!(kinds("call +44 20 7946 0958 now"), [("+44 20 7946 0958", Kind::Phone)]);
        assert_eq!(kinds("call (555) 123-4567 now"), [("(555) 123-4567", Kind::Phone)]);
        assert_eq!(kinds("call 555-123-4567 now"), [("555-123-4567", Kind::Phone)]);
    }

    #[test]
    fn leaves_look_alikes_alone() {
        // Fails Luhn; an octet above 255; a version number; a year; a time; too few digits.
        for text in ["4111 1111 1111 1112", "999.1.1.1", "v1.2.3", "in 2024", "at 10:30", "+12 34", "user@localhost", "ratio 3:1"] {
            assert_eq!(detect(text), [], "{text}");
        }
    }

    #[test]
    fn several_spans_in_order_and_the_tag_value() {
        let t = "mail a@b.io or 10.0.0.1, card 5500 0000 0000 0004, +1 415 555 2671";
        let got: Vec<Kind> = detect(t).into_iter().map(|s| s.kind).collect();
        assert_eq!(got, [Kind::Email, Kind::Ip, Kind::Card, Kind::Phone]);
        assert_eq!(tag_value(t).as_deref(), Some("email,card,ip,phone"));
        assert_eq!(tag_value("nothing here"), None);
    }

    #[test]
    fn spans_are_char_boundaries_on_unicode_text() {
        let t = "ünïcödé → josé@exämple.com? no: jose@example.com ✓";
        for s in detect(t) {
            assert!(t.is_char_boundary(s.start) && t.is_char_boundary(s.end));
        }
        assert_eq!(kinds(t).last().map(|k| k.0), Some("jose@example.com"));
    }
}
