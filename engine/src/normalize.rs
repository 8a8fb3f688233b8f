//! The name key used for exact entity lookup.
//!
//! Agents and extractors spell one thing many ways: "Auth Service", "auth-service", `AuthService`.
//! The key is the name in Unicode NFKC, case-folded, with whitespace, `-`, `_` and `.` removed, so all
//! three share a key while the display name keeps the form it was given.

use unicode_normalization::UnicodeNormalization;

/// The lookup key of a name or alias.
pub fn name_key(name: &str) -> String {
    if name.is_ascii() {
        // ASCII is its own NFKC form and folds by lower-casing: skip the Unicode machinery.
        return name
            .bytes()
            .filter(|b| !(b.is_ascii_whitespace() || matches!(b, b'-' | b'_' | b'.' | b'\x0b')))
            .map(|b| char::from(b.to_ascii_lowercase()))
            .collect();
    }
    let nfkc: String = name.nfkc().collect();
    let folded = caseless::default_case_fold_str(&nfkc);
    folded.chars().filter(|c| !(c.is_whitespace() || matches!(c, '-' | '_' | '.'))).collect()
}

/// `name_key` written into `out` (cleared first), reusing its allocation: for bulk paths that
/// hash millions of keys.
pub fn name_key_into(name: &str, out: &mut String) {
    out.clear();
    if name.is_ascii() {
        out.extend(
            name.bytes()
                .filter(|b| !(b.is_ascii_whitespace() || matches!(b, b'-' | b'_' | b'.' | b'\x0b')))
                .map(|b| char::from(b.to_ascii_lowercase())),
        );
    } else {
        out.push_str(&name_key(name));
    }
}

/// The interned form of a predicate or entity type name: trimmed and lower-cased, so that
/// `DEPENDS_ON` and `depends_on` are one predicate.
pub fn vocabulary_key(name: &str) -> String {
    vocabulary_key_of(name).into_owned()
}

/// `vocabulary_key`, borrowing `name` when it already is one (as it usually is on the write path,
/// where each claim names its predicate).
pub fn vocabulary_key_of(name: &str) -> std::borrow::Cow<'_, str> {
    let plain = name.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) && name.trim().len() == name.len();
    if plain {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(name.trim().to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_keys_borrow_only_what_already_is_a_key() {
        for name in ["depends_on", "DEPENDS_ON", " depends_on", "depends_on\t", "Straße", "straße", "ÉTAT", "a b", ""] {
            let key = vocabulary_key_of(name);
            assert_eq!(key, name.trim().to_lowercase(), "{name:?}");
        }
        for name in ["depends_on", "a b", ""] {
            assert!(matches!(vocabulary_key_of(name), std::borrow::Cow::Borrowed(_)), "{name:?}");
        }
    }

    #[test]
    fn spellings_share_a_key() {
        let k = name_key("AuthService");
        assert_eq!(name_key("Auth Service"), k);
        assert_eq!(name_key("auth-service"), k);
        assert_eq!(name_key("auth_service"), k);
        assert_eq!(name_key("AUTH.SERVICE"), k);
        // NFKC folds the full-width form; case folding handles ß.
        assert_eq!(name_key("ＡｕｔｈＳｅｒｖｉｃｅ"), k);
        assert_eq!(name_key("Straße"), name_key("STRASSE"));
        assert_ne!(name_key("AuthService2"), k);
        // The ASCII fast path agrees with the general path.
        for s in ["Auth Service", "a-b_c.d", "MiXeD\tCase", "x\u{b}y"] {
            let general: String = caseless::default_case_fold_str(&s.nfkc().collect::<String>())
                .chars()
                .filter(|c| !(c.is_whitespace() || matches!(c, '-' | '_' | '.')))
                .collect();
            assert_eq!(name_key(s), general, "{s:?}");
        }
    }
}
