//! The request decoder: arrays of bulk strings and inline lines, resumable across reads (a frame
//! may arrive one byte at a time or a hundred frames in one read), every limit checked before
//! anything is allocated for it. Errors carry Redis's texts; after one the connection closes.

use crate::limits::Limits;

/// A protocol error: the text Redis sends (after `-ERR `), then the connection closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    fn new(what: &str) -> ProtocolError {
        ProtocolError(format!("Protocol error: {what}"))
    }
}

/// Where the decoder is inside a multibulk frame.
#[derive(Debug, Default)]
struct Partial {
    /// Arguments still expected.
    remaining: usize,
    /// Those already read.
    args: Vec<Vec<u8>>,
    /// The length of the bulk string whose `$N` header was read and whose bytes have not all come.
    bulk: Option<usize>,
}

/// A resumable decoder for one connection.
#[derive(Debug, Default)]
pub struct Decoder {
    partial: Option<Partial>,
    /// Bytes at the front of the buffer already decoded: removed once, when the buffer holds no
    /// further complete command, not after each of a pipeline's commands.
    consumed: usize,
}

/// Bytes of the line starting at `buf[0]`, without its `\r\n` (or bare `\n`), and the bytes the
/// line takes with its end; `None` when the line has not ended yet.
fn line(buf: &[u8]) -> Option<(&[u8], usize)> {
    let end = memchr::memchr(b'\n', buf)?;
    let content = if end > 0 && buf[end - 1] == b'\r' { &buf[..end - 1] } else { &buf[..end] };
    Some((content, end + 1))
}

/// A decimal integer as Redis reads it in a header (optional sign, digits only).
fn integer(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        // Accumulated on the side of the sign, so `i64::MIN` reads too.
        n = n.checked_mul(10)?;
        n = if negative { n.checked_sub(d)? } else { n.checked_add(d)? };
    }
    Some(n)
}

impl Decoder {
    /// The next complete command in `buf` (the same buffer every call, bytes appended at its
    /// end). `Ok(None)` when more bytes are needed: the bytes decoded so far are then removed
    /// from `buf` (what was read of an unfinished command is kept in the decoder). Empty frames
    /// (`*0`, `*-1`, a blank line) are skipped, as Redis does.
    pub fn next(&mut self, buf: &mut Vec<u8>, limits: &Limits, authenticated: bool) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let mut at = self.consumed.min(buf.len());
        let result = loop {
            match self.decode(buf, &mut at, limits, authenticated) {
                Ok(Some(words)) if words.is_empty() => {}
                other => break other,
            }
        };
        if matches!(result, Ok(Some(_))) {
            self.consumed = at;
        } else {
            buf.drain(..at);
            self.consumed = 0;
        }
        result
    }

    /// One step: a command, an empty frame (no words), or `None` for more bytes.
    fn decode(&mut self, buf: &[u8], at: &mut usize, limits: &Limits, authenticated: bool) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        if self.partial.is_none() {
            let Some(&first) = buf.get(*at) else { return Ok(None) };
            if first != b'*' {
                return Self::inline(buf, at, limits);
            }
            let Some((header, used)) = line(&buf[*at..]) else {
                if buf.len() - *at > limits.inline_max {
                    return Err(ProtocolError::new("too big mbulk count string"));
                }
                return Ok(None);
            };
            let count = integer(&header[1..]).ok_or_else(|| ProtocolError::new("invalid multibulk length"))?;
            let max = if authenticated { limits.multibulk_max } else { limits.unauthenticated_multibulk_max };
            if count > i64::try_from(max).unwrap_or(i64::MAX) {
                return Err(ProtocolError::new(if authenticated {
                    "invalid multibulk length"
                } else {
                    "unauthenticated multibulk length"
                }));
            }
            *at += used;
            if count <= 0 {
                return Ok(Some(Vec::new()));
            }
            let count = usize::try_from(count).unwrap_or(0);
            // Reserve for what a small command needs; a large one grows as its arguments come.
            self.partial = Some(Partial { remaining: count, args: Vec::with_capacity(count.min(64)), bulk: None });
        }
        let Some(p) = self.partial.as_mut() else { return Ok(None) };
        while p.remaining > 0 {
            let len = match p.bulk {
                Some(len) => len,
                None => {
                    let Some(&first) = buf.get(*at) else { return Ok(None) };
                    if first != b'$' {
                        return Err(ProtocolError(format!("Protocol error: expected '$', got '{}'", char::from(first))));
                    }
                    let Some((header, used)) = line(&buf[*at..]) else {
                        if buf.len() - *at > 32 {
                            return Err(ProtocolError::new("invalid bulk length"));
                        }
                        return Ok(None);
                    };
                    let len = integer(&header[1..]).ok_or_else(|| ProtocolError::new("invalid bulk length"))?;
                    let max = if authenticated { limits.bulk_max } else { limits.unauthenticated_bulk_max };
                    if len < 0 || len > i64::try_from(max).unwrap_or(i64::MAX) {
                        return Err(ProtocolError::new(if authenticated || len < 0 {
                            "invalid bulk length"
                        } else {
                            "unauthenticated bulk length"
                        }));
                    }
                    *at += used;
                    let len = usize::try_from(len).unwrap_or(0);
                    p.bulk = Some(len);
                    len
                }
            };
            // The bytes of the string and its `\r\n`, all there or wait.
            if buf.len() - *at < len + 2 {
                return Ok(None);
            }
            p.args.push(buf[*at..*at + len].to_vec());
            *at += len + 2;
            p.bulk = None;
            p.remaining -= 1;
        }
        Ok(Some(self.partial.take().map(|p| p.args).unwrap_or_default()))
    }

    /// An inline command: a line of space-separated words, `"…"` and `'…'` quoting as Redis.
    /// A blank line gives no words (the caller skips it).
    fn inline(buf: &[u8], at: &mut usize, limits: &Limits) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let Some((text, used)) = line(&buf[*at..]) else {
            if buf.len() - *at > limits.inline_max {
                return Err(ProtocolError::new("too big inline request"));
            }
            return Ok(None);
        };
        if text.len() > limits.inline_max {
            return Err(ProtocolError::new("too big inline request"));
        }
        *at += used;
        split_inline(text).map(Some)
    }
}

/// Splits an inline line into words (Redis's `sdssplitargs`): spaces separate; `"…"` takes
/// `\n`, `\r`, `\t`, `\xHH` and `\"` escapes; `'…'` takes `\'`; an unclosed quote is an error.
fn split_inline(text: &[u8]) -> Result<Vec<Vec<u8>>, ProtocolError> {
    let unbalanced = || ProtocolError::new("unbalanced quotes in request");
    let mut words = Vec::new();
    let mut i = 0;
    while i < text.len() {
        while i < text.len() && text[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= text.len() {
            break;
        }
        let mut word = Vec::new();
        match text[i] {
            b'"' => {
                i += 1;
                loop {
                    let Some(&c) = text.get(i) else { return Err(unbalanced()) };
                    match c {
                        b'\\'
                            if text.get(i + 1) == Some(&b'x')
                                && text.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
                                && text.get(i + 3).is_some_and(u8::is_ascii_hexdigit) =>
                        {
                            let hex =
                                std::str::from_utf8(&text[i + 2..i + 4]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(0);
                            word.push(hex);
                            i += 4;
                        }
                        b'\\' if i + 1 < text.len() => {
                            word.push(match text[i + 1] {
                                b'n' => b'\n',
                                b'r' => b'\r',
                                b't' => b'\t',
                                b'b' => 8,
                                b'a' => 7,
                                other => other,
                            });
                            i += 2;
                        }
                        b'"' => {
                            i += 1;
                            // A closing quote must be followed by a space or the end.
                            if text.get(i).is_some_and(|c| !c.is_ascii_whitespace()) {
                                return Err(unbalanced());
                            }
                            break;
                        }
                        _ => {
                            word.push(c);
                            i += 1;
                        }
                    }
                }
            }
            b'\'' => {
                i += 1;
                loop {
                    let Some(&c) = text.get(i) else { return Err(unbalanced()) };
                    match c {
                        b'\\' if text.get(i + 1) == Some(&b'\'') => {
                            word.push(b'\'');
                            i += 2;
                        }
                        b'\'' => {
                            i += 1;
                            if text.get(i).is_some_and(|c| !c.is_ascii_whitespace()) {
                                return Err(unbalanced());
                            }
                            break;
                        }
                        _ => {
                            word.push(c);
                            i += 1;
                        }
                    }
                }
            }
            _ => {
                let start = i;
                while i < text.len() && !text[i].is_ascii_whitespace() {
                    i += 1;
                }
                word.extend_from_slice(&text[start..i]);
            }
        }
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(input: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, ProtocolError> {
        let limits = Limits::default();
        let mut d = Decoder::default();
        let mut buf = input.to_vec();
        let mut out = Vec::new();
        while let Some(cmd) = d.next(&mut buf, &limits, true)? {
            out.push(cmd);
        }
        Ok(out)
    }

    fn words(ws: &[&str]) -> Vec<Vec<u8>> {
        ws.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn frames_inline_and_empty() {
        assert_eq!(all(b"*2\r\n$4\r\nECHO\r\n$4\r\na\r\nb\r\n").expect("decodes"), vec![vec![b"ECHO".to_vec(), b"a\r\nb".to_vec()]]);
        assert_eq!(all(b"*-1\r\n*0\r\n\r\n \r\nPING\r\n").expect("decodes"), vec![words(&["PING"])]);
        assert_eq!(all(b"set foo 123\nget foo\r\n").expect("decodes"), vec![words(&["set", "foo", "123"]), words(&["get", "foo"])]);
        assert_eq!(all(b"echo \"a b\\n\" 'c\\'d'\r\n").expect("decodes"), vec![words(&["echo", "a b\n", "c'd"])]);
    }

    #[test]
    fn malformed_frames_get_redis_texts() {
        let err = |input: &[u8]| all(input).expect_err("refused").0;
        assert_eq!(err(b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfoo\r\n"), "Protocol error: expected '$', got 'f'");
        assert_eq!(err(b"*1\r\n$-10\r\n"), "Protocol error: invalid bulk length");
        assert_eq!(err(b"*1\r\n$-1\r\n"), "Protocol error: invalid bulk length");
        assert_eq!(err(b"*1\r\n$2000000000\r\n"), "Protocol error: invalid bulk length");
        assert_eq!(err(b"echo \"abc\r\n"), "Protocol error: unbalanced quotes in request");
        assert_eq!(err(b"*x\r\n"), "Protocol error: invalid multibulk length");
        let limits = Limits::default();
        let mut buf = b"*20000000\r\n".to_vec();
        assert_eq!(
            Decoder::default().next(&mut buf, &limits, false).expect_err("refused").0,
            "Protocol error: unauthenticated multibulk length"
        );
    }

    proptest! {
        /// Header integers read as Rust's own parser reads them, overflow and all.
        #[test]
        fn integers_read_as_std(text in "[+-]?[0-9]{0,21}|[+-]?9223372036854775[0-9]{3}|.{0,6}") {
            prop_assert_eq!(integer(text.as_bytes()), text.parse::<i64>().ok());
        }

        /// Any split of a stream of frames into reads decodes to the same commands.
        #[test]
        fn any_split_decodes_the_same(cmds in prop::collection::vec(prop::collection::vec(prop::collection::vec(any::<u8>(), 0..20), 1..5), 1..6), cuts in prop::collection::vec(1usize..7, 1..40)) {
            let mut wire = Vec::new();
            for c in &cmds {
                wire.extend(format!("*{}\r\n", c.len()).as_bytes());
                for a in c {
                    wire.extend(format!("${}\r\n", a.len()).as_bytes());
                    wire.extend(a);
                    wire.extend(b"\r\n");
                }
            }
            let limits = Limits::default();
            let mut d = Decoder::default();
            let mut buf = Vec::new();
            let mut got = Vec::new();
            let mut pos = 0;
            let mut k = 0;
            while pos < wire.len() {
                let n = cuts[k % cuts.len()].min(wire.len() - pos);
                k += 1;
                buf.extend_from_slice(&wire[pos..pos + n]);
                pos += n;
                while let Some(c) = d.next(&mut buf, &limits, true).expect("valid frames") {
                    got.push(c);
                }
            }
            prop_assert_eq!(got, cmds);
        }

        /// Random bytes give commands or a protocol error, never a panic.
        #[test]
        fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = all(&bytes);
        }
    }
}
