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

/// Per ASCII byte: bit 7 set when the key keeps the byte (it drops whitespace, `-`, `_`, `.`),
/// the low bits its lower-case form.
const ASCII_KEY: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        let drop = c.is_ascii_whitespace() || matches!(c, b'-' | b'_' | b'.' | b'\x0b');
        t[b] = if drop { 0 } else { 0x80 | c.to_ascii_lowercase() };
        b += 1;
    }
    t
};

/// `name_key`'s bytes written into `out` (cleared first), reusing its allocation: for bulk paths
/// that hash millions of keys. ASCII names take one branch-free pass over a table.
pub fn name_key_into(name: &str, out: &mut Vec<u8>) {
    out.clear();
    out.resize(name.len(), 0);
    let mut k = 0;
    for &b in name.as_bytes() {
        let Some(&t) = ASCII_KEY.get(usize::from(b)) else {
            out.clear();
            out.extend_from_slice(name_key(name).as_bytes());
            return;
        };
        out[k] = t & 0x7f;
        k += usize::from(t >> 7);
    }
    out.truncate(k);
}

/// The interned form of a predicate or entity type name: trimmed and lower-cased, so that
/// `DEPENDS_ON` and `depends_on` are one predicate.
pub fn vocabulary_key(name: &str) -> String {
    vocabulary_key_of(name).into_owned()
}

/// Whether `s` holds a control character (Unicode `Cc`), which names refuse. Names are mostly
/// printable ASCII, answered by one pass over the bytes without decoding characters.
pub fn has_control_chars(s: &str) -> bool {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return false;
    }
    s.chars().any(char::is_control)
}

/// Whether `name` is printable ASCII without capitals or surrounding spaces: then it is a valid
/// vocabulary name (non-empty, no control characters) and already its own key.
pub fn is_plain_vocabulary_key(name: &str) -> bool {
    match name.as_bytes() {
        [] => false,
        b => b[0] != b' ' && b[b.len() - 1] != b' ' && b.iter().all(|&c| (0x20..0x7f).contains(&c) && !c.is_ascii_uppercase()),
    }
}

/// `vocabulary_key`, borrowing `name` when it already is one (as it usually is on the write path,
/// where each claim names its predicate).
pub fn vocabulary_key_of(name: &str) -> std::borrow::Cow<'_, str> {
    if name.is_empty() || is_plain_vocabulary_key(name) {
        std::borrow::Cow::Borrowed(name)
    } else if name.is_ascii() {
        // Same result as `to_lowercase` on ASCII, without its per-character Unicode mapping.
        std::borrow::Cow::Owned(name.trim().to_ascii_lowercase())
    } else {
        std::borrow::Cow::Owned(name.trim().to_lowercase())
    }
}

/// Calls `f` with `vocabulary_key_of(name)`, folding a short printable-ASCII name on the stack
/// (a read that resolves a name per query allocates nothing).
pub fn with_vocabulary_key<R>(name: &str, f: impl FnOnce(&str) -> R) -> R {
    let trimmed = name.trim();
    let b = trimmed.as_bytes();
    if trimmed.len() == name.len() && b.len() <= 64 && b.iter().all(|&c| (0x20..0x7f).contains(&c)) {
        let mut buf = [0u8; 64];
        for (o, c) in buf.iter_mut().zip(b) {
            *o = c.to_ascii_lowercase();
        }
        if let Ok(key) = std::str::from_utf8(&buf[..b.len()]) {
            return f(key);
        }
    }
    f(&vocabulary_key_of(name))
}

/// The words of `s`, lower case (letters and digits; the rest separates them).
pub fn lower_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The stack-folded key is the key.
        #[test]
        fn the_stack_folded_key_is_the_key(s in "(\\PC|[ -~]|[A-Z]| ){0,70}") {
            let folded = with_vocabulary_key(&s, str::to_owned);
            proptest::prop_assert_eq!(folded, vocabulary_key_of(&s).into_owned());
        }


        /// A plain name passes every name check and is its own key; the key is always the
        /// trimmed lower-case name.
        #[test]
        fn plain_vocabulary_keys_are_their_own_keys(s in "(\\PC|[\\x00-\\x1f\\x7f-\\u{9f}]|[ -~]|[A-Z]| ){0,12}") {
            let key = vocabulary_key_of(&s);
            proptest::prop_assert_eq!(key.as_ref(), s.trim().to_lowercase());
            if is_plain_vocabulary_key(&s) {
                proptest::prop_assert_eq!(key.as_ref(), s.as_str());
                proptest::prop_assert!(!s.trim().is_empty() && !has_control_chars(&s));
            }
        }

        #[test]
        fn control_chars_match_the_char_test(s in "(\\PC|[\\x00-\\x1f\\x7f-\\u{9f}]|[ -~]){0,24}") {
            proptest::prop_assert_eq!(has_control_chars(&s), s.chars().any(char::is_control));
        }
    }

    #[test]
    fn plain_vocabulary_keys() {
        for (s, plain) in [
            ("mentions", true),
            ("depends on", true),
            ("a", true),
            ("Mentions", false),
            (" a", false),
            ("a ", false),
            ("", false),
            ("a\tb", false),
            ("é", false),
        ] {
            assert_eq!(is_plain_vocabulary_key(s), plain, "{s:?}");
        }
    }

    #[test]
    fn control_chars_at_the_edges_of_ascii() {
        for (s, want) in [
            ("depends_on", false),
            ("", false),
            ("a\tb", true),
            ("\x7f", true),
            ("~ ", false),
            ("é\u{85}", true),
            ("é\u{a0}", false),
            ("\u{9f}", true),
        ] {
            assert_eq!(has_control_chars(s), want, "{s:?}");
        }
    }

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

    proptest::proptest! {
        /// The table-driven bulk path writes the bytes of `name_key`, ASCII or not.
        #[test]
        fn name_key_into_writes_name_key(s in "[ -~\t\n\x0b\x0c\r\x00ßİＡé\u{3000}]{0,24}") {
            let mut buf = b"leftover".to_vec();
            name_key_into(&s, &mut buf);
            proptest::prop_assert_eq!(buf, name_key(&s).into_bytes());
        }
    }
}
