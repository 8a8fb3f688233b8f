//! The compiler's own limits, each with a name the error message uses.

/// `query.max_nesting`: how deeply expressions and patterns may nest. Bounds the parser's
/// recursion, so a hostile query cannot overflow the stack: one level of a nested list is about a
/// dozen calls, some 10 KiB of stack in a debug build, and 128 levels fit a 2 MiB thread stack
/// (a test parses past the limit on one).
pub const MAX_NESTING: usize = 128;

/// `query.max_value_depth`: how deeply a value `reduce` builds may nest (lists and maps inside
/// lists and maps). Everything else that builds a value nests no deeper than the query text
/// (`MAX_NESTING`); `reduce` could add a level per element, and what reads a value (equality,
/// ordering, hashing, output, JSON) recurses through its nesting, so the bound keeps that within
/// a thread's stack.
pub const MAX_VALUE_DEPTH: usize = 256;

/// `query.max_text_bytes`: the longest query text accepted (1 MiB).
pub const MAX_TEXT_BYTES: usize = 1 << 20;
