//! The compiler's own limits, each with a name the error message uses.

/// `query.max_nesting`: how deeply expressions and patterns may nest. Bounds the parser's
/// recursion, so a hostile query cannot overflow the stack: one level of a nested list is about a
/// dozen calls, some 10 KiB of stack in a debug build, and 128 levels fit a 2 MiB thread stack
/// (a test parses past the limit on one).
pub const MAX_NESTING: usize = 128;

/// `query.max_text_bytes`: the longest query text accepted (1 MiB).
pub const MAX_TEXT_BYTES: usize = 1 << 20;
