//! Tokens of the query text. Keywords are not tokens of their own: Cypher's keywords are
//! case-insensitive and most of them may also name a property or a label, so the parser decides
//! from context (`Tok::Ident` with `is_keyword`).

use crate::error::{Detail, QueryError, Span};

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name or a keyword, as written.
    Ident(String),
    /// A backquoted name (never a keyword).
    Quoted(String),
    /// An integer literal's text (decimal, `0x…` or `0o…`), checked for range by the parser so
    /// that `-9223372036854775808` is valid.
    Int(String),
    /// A float literal.
    Float(f64),
    /// A number running into letters (`12abc`): an error where a number is expected, unexpected
    /// syntax elsewhere (a map key), so the parser decides.
    BadNumber(String),
    /// A string literal, unescaped.
    Str(String),
    /// `$name` or `$0`.
    Param(String),
    /// Punctuation and operators.
    Sym(Sym),
    /// The end of the text.
    End,
}

/// Punctuation and operators. Arrows are not single tokens: `<-`, `->` and `--` are read by the
/// pattern parser from `<`, `-` and `>`, so `a<-1` still means `a < -1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // Reason: each variant is the symbol its name spells.
pub enum Sym {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Dot,
    DotDot,
    Colon,
    Semicolon,
    Pipe,
    /// `||`: string and list concatenation (GQL's, Neo4j 5's).
    Concat,
    Eq,
    Neq,
    Lt,
    Gt,
    Le,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    RegexMatch,
    PlusEq,
    /// `!` (a label expression's negation).
    Bang,
    /// `&` (a label expression's conjunction).
    Amp,
}

impl Sym {
    /// The symbol as written.
    pub fn text(self) -> &'static str {
        match self {
            Sym::LParen => "(",
            Sym::RParen => ")",
            Sym::LBracket => "[",
            Sym::RBracket => "]",
            Sym::LBrace => "{",
            Sym::RBrace => "}",
            Sym::Comma => ",",
            Sym::Dot => ".",
            Sym::DotDot => "..",
            Sym::Colon => ":",
            Sym::Semicolon => ";",
            Sym::Pipe => "|",
            Sym::Concat => "||",
            Sym::Eq => "=",
            Sym::Neq => "<>",
            Sym::Lt => "<",
            Sym::Gt => ">",
            Sym::Le => "<=",
            Sym::Ge => ">=",
            Sym::Plus => "+",
            Sym::Minus => "-",
            Sym::Star => "*",
            Sym::Slash => "/",
            Sym::Percent => "%",
            Sym::Caret => "^",
            Sym::RegexMatch => "=~",
            Sym::PlusEq => "+=",
            Sym::Bang => "!",
            Sym::Amp => "&",
        }
    }
}

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Int(s) | Tok::BadNumber(s) => s.clone(),
            Tok::Quoted(s) => format!("`{s}`"),
            Tok::Float(f) => f.to_string(),
            Tok::Str(_) => "a string".to_owned(),
            Tok::Param(p) => format!("${p}"),
            Tok::Sym(s) => format!("'{}'", s.text()),
            Tok::End => "the end of the query".to_owned(),
        }
    }

    /// Whether this is the keyword `kw` (given in upper case), in any case.
    pub fn is_keyword(&self, kw: &str) -> bool {
        matches!(self, Tok::Ident(s) if s.eq_ignore_ascii_case(kw))
    }
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Its bytes in the text.
    pub span: Span,
}

/// Splits `text` into tokens, ending with `Tok::End`.
pub fn lex(text: &str) -> Result<Vec<Token>, QueryError> {
    let mut lexer = Lexer { text, bytes: text.as_bytes(), pos: 0, out: Vec::new() };
    lexer.run()?;
    Ok(lexer.out)
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    out: Vec<Token>,
}

impl Lexer<'_> {
    fn run(&mut self) -> Result<(), QueryError> {
        loop {
            self.skip_space_and_comments()?;
            let start = self.pos;
            let Some(c) = self.peek_char() else {
                self.out.push(Token { tok: Tok::End, span: Span::new(start, start) });
                return Ok(());
            };
            let tok = if c == '_' || c.is_alphabetic() {
                self.ident()
            } else if c.is_ascii_digit() || (c == '.' && self.digit_at(self.pos + 1) && !self.after_value()) {
                self.number()?
            } else {
                match c {
                    '`' => self.quoted()?,
                    '\'' | '"' => self.string(c)?,
                    '$' => self.param()?,
                    _ => Tok::Sym(self.symbol()?),
                }
            };
            self.out.push(Token { tok, span: Span::new(start, self.pos) });
        }
    }

    fn peek_char(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn byte_at(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    fn digit_at(&self, i: usize) -> bool {
        self.byte_at(i).is_some_and(|b| b.is_ascii_digit())
    }

    /// Whether the previous token ends a value, so a following `.` is property access, not `.5`.
    fn after_value(&self) -> bool {
        matches!(
            self.out.last().map(|t| &t.tok),
            Some(Tok::Ident(_) | Tok::Quoted(_) | Tok::Sym(Sym::RParen | Sym::RBracket | Sym::RBrace))
        )
    }

    fn error(&self, at: usize, detail: Detail, message: impl Into<String>) -> QueryError {
        QueryError::syntax(self.text, Span::new(at, at), detail, message)
    }

    fn skip_space_and_comments(&mut self) -> Result<(), QueryError> {
        loop {
            match self.peek_char() {
                Some(c) if c.is_whitespace() => self.pos += c.len_utf8(),
                Some('/') if self.byte_at(self.pos + 1) == Some(b'/') => {
                    while let Some(c) = self.peek_char() {
                        if c == '\n' {
                            break;
                        }
                        self.pos += c.len_utf8();
                    }
                }
                Some('/') if self.byte_at(self.pos + 1) == Some(b'*') => {
                    let start = self.pos;
                    match self.text[self.pos + 2..].find("*/") {
                        Some(i) => self.pos += 2 + i + 2,
                        None => return Err(self.error(start, Detail::UnexpectedSyntax, "unterminated comment")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn ident(&mut self) -> Tok {
        let start = self.pos;
        while let Some(c) = self.peek_char() {
            if c == '_' || c.is_alphanumeric() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        Tok::Ident(self.text[start..self.pos].to_owned())
    }

    fn quoted(&mut self) -> Result<Tok, QueryError> {
        let start = self.pos;
        self.pos += 1;
        let mut name = String::new();
        loop {
            match self.peek_char() {
                None => return Err(self.error(start, Detail::UnexpectedSyntax, "unterminated backquoted name")),
                // A doubled backquote stands for one.
                Some('`') if self.byte_at(self.pos + 1) == Some(b'`') => {
                    name.push('`');
                    self.pos += 2;
                }
                Some('`') => {
                    self.pos += 1;
                    return Ok(Tok::Quoted(name));
                }
                Some(c) => {
                    name.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn param(&mut self) -> Result<Tok, QueryError> {
        let start = self.pos;
        self.pos += 1;
        match self.peek_char() {
            Some('`') => match self.quoted()? {
                Tok::Quoted(name) => Ok(Tok::Param(name)),
                _ => unreachable!("quoted() returns Tok::Quoted"),
            },
            Some(c) if c == '_' || c.is_alphanumeric() => {
                let name_start = self.pos;
                while let Some(c) = self.peek_char() {
                    if c == '_' || c.is_alphanumeric() {
                        self.pos += c.len_utf8();
                    } else {
                        break;
                    }
                }
                Ok(Tok::Param(self.text[name_start..self.pos].to_owned()))
            }
            _ => Err(self.error(start, Detail::UnexpectedSyntax, "expected a parameter name after '$'")),
        }
    }

    fn number(&mut self) -> Result<Tok, QueryError> {
        let start = self.pos;
        let b = self.bytes;
        if b[start] == b'0' && matches!(self.byte_at(start + 1), Some(b'x' | b'X' | b'o' | b'O')) {
            self.pos += 2;
            while self.byte_at(self.pos).is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
                self.pos += 1;
            }
            return Ok(Tok::Int(self.text[start..self.pos].to_owned()));
        }
        while self.digit_at(self.pos) {
            self.pos += 1;
        }
        let mut float = false;
        if self.byte_at(self.pos) == Some(b'.') && self.digit_at(self.pos + 1) {
            float = true;
            self.pos += 1;
            while self.digit_at(self.pos) {
                self.pos += 1;
            }
        }
        if matches!(self.byte_at(self.pos), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.byte_at(self.pos + 1), Some(b'+' | b'-')));
            if self.digit_at(self.pos + 1 + sign) {
                float = true;
                self.pos += 1 + sign;
                while self.digit_at(self.pos) {
                    self.pos += 1;
                }
            }
        }
        // A number runs straight into a name (`1abc`): not a number.
        if self.peek_char().is_some_and(|c| c == '_' || c.is_alphabetic()) {
            while self.peek_char().is_some_and(|c| c == '_' || c.is_alphanumeric()) {
                self.pos += self.peek_char().map_or(1, char::len_utf8);
            }
            return Ok(Tok::BadNumber(self.text[start..self.pos].to_owned()));
        }
        let text = &self.text[start..self.pos];
        if float {
            let value: f64 =
                text.parse().map_err(|_| self.error(start, Detail::InvalidNumberLiteral, format!("invalid number '{text}'")))?;
            if !value.is_finite() {
                return Err(self.error(start, Detail::IntegerOverflow, format!("float literal '{text}' is too large")));
            }
            Ok(Tok::Float(value))
        } else {
            Ok(Tok::Int(text.to_owned()))
        }
    }

    fn string(&mut self, quote: char) -> Result<Tok, QueryError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek_char() else {
                return Err(self.error(start, Detail::UnexpectedSyntax, "unterminated string literal"));
            };
            self.pos += c.len_utf8();
            if c == quote {
                return Ok(Tok::Str(out));
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let esc_at = self.pos - 1;
            let Some(e) = self.peek_char() else {
                return Err(self.error(start, Detail::UnexpectedSyntax, "unterminated string literal"));
            };
            self.pos += e.len_utf8();
            match e {
                '\\' => out.push('\\'),
                '\'' => out.push('\''),
                '"' => out.push('"'),
                'b' | 'B' => out.push('\u{8}'),
                'f' | 'F' => out.push('\u{c}'),
                'n' | 'N' => out.push('\n'),
                'r' | 'R' => out.push('\r'),
                't' | 'T' => out.push('\t'),
                'u' | 'U' => {
                    let digits = if e == 'u' { 4 } else { 8 };
                    let hex = self.text.get(self.pos..self.pos + digits).unwrap_or("");
                    let code = (hex.len() == digits && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                        .then(|| u32::from_str_radix(hex, 16).ok())
                        .flatten()
                        .and_then(char::from_u32);
                    match code {
                        Some(ch) => {
                            out.push(ch);
                            self.pos += digits;
                        }
                        None => {
                            return Err(self.error(
                                esc_at,
                                Detail::InvalidUnicodeLiteral,
                                format!("invalid unicode escape: expected {digits} hex digits naming a character"),
                            ))
                        }
                    }
                }
                other => return Err(self.error(esc_at, Detail::UnexpectedSyntax, format!("unknown escape '\\{other}'"))),
            }
        }
    }

    fn symbol(&mut self) -> Result<Sym, QueryError> {
        let start = self.pos;
        let next = self.byte_at(self.pos + 1);
        let (sym, len) = match (self.bytes[start], next) {
            (b'.', Some(b'.')) => (Sym::DotDot, 2),
            (b'<', Some(b'>')) | (b'!', Some(b'=')) => (Sym::Neq, 2),
            (b'<', Some(b'=')) => (Sym::Le, 2),
            (b'>', Some(b'=')) => (Sym::Ge, 2),
            (b'=', Some(b'~')) => (Sym::RegexMatch, 2),
            (b'+', Some(b'=')) => (Sym::PlusEq, 2),
            (b'(', _) => (Sym::LParen, 1),
            (b')', _) => (Sym::RParen, 1),
            (b'[', _) => (Sym::LBracket, 1),
            (b']', _) => (Sym::RBracket, 1),
            (b'{', _) => (Sym::LBrace, 1),
            (b'}', _) => (Sym::RBrace, 1),
            (b',', _) => (Sym::Comma, 1),
            (b'.', _) => (Sym::Dot, 1),
            (b':', _) => (Sym::Colon, 1),
            (b';', _) => (Sym::Semicolon, 1),
            (b'|', Some(b'|')) => (Sym::Concat, 2),
            (b'|', _) => (Sym::Pipe, 1),
            (b'=', _) => (Sym::Eq, 1),
            (b'<', _) => (Sym::Lt, 1),
            (b'>', _) => (Sym::Gt, 1),
            (b'+', _) => (Sym::Plus, 1),
            (b'-', _) => (Sym::Minus, 1),
            (b'*', _) => (Sym::Star, 1),
            (b'/', _) => (Sym::Slash, 1),
            (b'%', _) => (Sym::Percent, 1),
            (b'^', _) => (Sym::Caret, 1),
            (b'!', _) => (Sym::Bang, 1),
            (b'&', _) => (Sym::Amp, 1),
            _ => {
                let c = self.peek_char().unwrap_or('?');
                return Err(self.error(start, Detail::UnexpectedSyntax, format!("unexpected character '{c}'")));
            }
        };
        self.pos += len;
        Ok(sym)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        lex(text).expect("lexes").into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn arrows_are_read_from_their_parts() {
        use Sym::*;
        assert_eq!(
            toks("(a)<-[:T]->(b)"),
            vec![
                Tok::Sym(LParen),
                Tok::Ident("a".into()),
                Tok::Sym(RParen),
                Tok::Sym(Lt),
                Tok::Sym(Minus),
                Tok::Sym(LBracket),
                Tok::Sym(Colon),
                Tok::Ident("T".into()),
                Tok::Sym(RBracket),
                Tok::Sym(Minus),
                Tok::Sym(Gt),
                Tok::Sym(LParen),
                Tok::Ident("b".into()),
                Tok::Sym(RParen),
                Tok::End
            ]
        );
    }

    #[test]
    fn numbers_ranges_and_property_access() {
        assert_eq!(
            toks("1..3 .5 n.x 1.5e3 2E-1"),
            vec![
                Tok::Int("1".into()),
                Tok::Sym(Sym::DotDot),
                Tok::Int("3".into()),
                Tok::Float(0.5),
                Tok::Ident("n".into()),
                Tok::Sym(Sym::Dot),
                Tok::Ident("x".into()),
                Tok::Float(1500.0),
                Tok::Float(0.2),
                Tok::End
            ]
        );
        assert_eq!(toks("0x1F 0o17"), vec![Tok::Int("0x1F".into()), Tok::Int("0o17".into()), Tok::End]);
    }

    #[test]
    fn strings_unescape_and_bad_escapes_say_where() {
        assert_eq!(
            toks(r"'a\'b' 'é\u00e9' `we``ird`"),
            vec![Tok::Str("a'b".into()), Tok::Str("éé".into()), Tok::Quoted("we`ird".into()), Tok::End]
        );
        let err = lex("RETURN '\\uH'").expect_err("bad escape");
        assert_eq!(err.detail, Detail::InvalidUnicodeLiteral);
        assert_eq!(err.column(), Some(9));
        let err = lex("RETURN 'abc").expect_err("unterminated");
        assert_eq!(err.detail, Detail::UnexpectedSyntax);
    }

    #[test]
    fn comments_are_skipped() {
        assert_eq!(toks("a // x\n/* y */ b"), vec![Tok::Ident("a".into()), Tok::Ident("b".into()), Tok::End]);
    }
}
