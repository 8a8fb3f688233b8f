//! Context assembly: facts rendered one line each, packed greedily by score into a token budget
//! counted exactly with the `cl100k_base` tokenizer. Counting uses `bpe-openai` (GitHub's
//! linear-time BPE, vocabulary compiled in), about ten times faster here than `tiktoken-rs`, whose
//! counts the tests hold it to.

use serde::Serialize;

/// Exact token count of `text` under `cl100k_base`.
pub fn count_tokens(text: &str) -> usize {
    bpe_openai::cl100k_base().count(text)
}

/// One end of a fact.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FactEntity {
    /// Dense id.
    pub id: u32,
    /// External id.
    pub ext_id: String,
    /// Canonical name.
    pub name: String,
    /// Type name.
    #[serde(rename = "type")]
    pub entity_type: String,
}

/// Where a fact ranked in each retrieval path that found it (1 = first); `None` = not found there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PathRanks {
    /// Vector similarity of the claim text.
    pub semantic: Option<u32>,
    /// BM25 over the claim text.
    pub lexical: Option<u32>,
    /// Hops from the entities the question is about.
    pub graph: Option<u32>,
    /// Newest first.
    pub recency: Option<u32>,
}

/// One retrieved claim, with everything needed to cite it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fact {
    /// Dense claim id.
    pub id: u32,
    /// External claim id.
    pub claim_id: String,
    /// Subject entity.
    pub subject: FactEntity,
    /// Predicate name.
    pub predicate: String,
    /// Object entity.
    pub object: FactEntity,
    /// Claim text, if any.
    pub text: Option<String>,
    /// Confidence in `[0, 1]`.
    #[serde(serialize_with = "crate::value::serialize_shortest")]
    pub confidence: f32,
    /// Lifecycle state.
    pub state: String,
    /// Valid time, RFC 3339.
    pub valid_from: String,
    /// End of valid time, RFC 3339; `None` when open.
    pub valid_until: Option<String>,
    /// External ids of the claim's evidence rows, oldest first.
    pub evidence: Vec<String>,
    /// Where the evidence came from, oldest first: `conversation/message` (or the one given);
    /// rows without a source are not listed. What the context line cites.
    pub sources: Vec<String>,
    /// Fused score (what the facts are ordered by).
    pub score: f64,
    /// The time-decay factor that multiplied the score.
    pub decay: f64,
    /// Rank in each path.
    pub ranks: PathRanks,
    /// The fact's line in the context block.
    pub line: String,
    /// Tokens of that line (with its newline).
    pub tokens: usize,
}

/// Renders a fact's context line, spending its tokens on the fact: the claim id (what an answer
/// cites), subject, predicate, object and text, then what an agent weighs it by — the valid time
/// as days (`2023-05-08`, `2023-05-08..2023-06-01` once it ended), the confidence when below 1,
/// the state when not `ACCEPTED`, and the sources of its evidence (conversation and message ids)
/// unless the source is the claim id itself. The whole record is in the `Fact`.
pub fn render(f: &Fact) -> String {
    use std::fmt::Write;
    let mut line = format!("[{}] {} {} {}", f.claim_id, f.subject.name, f.predicate.to_uppercase(), f.object.name);
    if let Some(t) = &f.text {
        let _ = write!(line, ": \"{}\"", t.replace(['\n', '\r'], " "));
    }
    let day = |t: &str| t.get(..10).unwrap_or(t).to_owned();
    let mut meta = vec![match &f.valid_until {
        Some(until) => format!("{}..{}", day(&f.valid_from), day(until)),
        None => day(&f.valid_from),
    }];
    if f.confidence < 1.0 {
        meta.push(format!("conf {}", (f64::from(f.confidence) * 100.0).round() / 100.0));
    }
    if f.state != "ACCEPTED" {
        meta.push(f.state.to_lowercase());
    }
    let cites_itself = |s: &&String| **s == f.claim_id || s.strip_suffix(f.claim_id.as_str()).is_some_and(|p| p.ends_with('/'));
    let sources: Vec<&str> = f.sources.iter().filter(|s| !cites_itself(s)).map(String::as_str).collect();
    if !sources.is_empty() {
        meta.push(format!("source {}", sources.join(",")));
    }
    let _ = write!(line, " ({})", meta.join(", "));
    line
}

/// The source an evidence row cites: `conversation/message`, or whichever of the two it has,
/// else the id the writer gave the row; `None` for a row with none of these (its id `v<n>` is
/// engram's own, meaningless to a reader).
pub fn source_of(v: &crate::model::Evidence) -> Option<String> {
    match (v.conversation_id.as_deref(), v.message_id.as_deref()) {
        (Some(c), Some(m)) => Some(format!("{c}/{m}")),
        (Some(x), None) | (None, Some(x)) => Some(x.to_owned()),
        (None, None) => {
            let id = v.ext_id.as_ref();
            let generated = id
                .strip_prefix('v')
                .is_some_and(|n| !n.is_empty() && n.split('_').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())));
            (!generated).then(|| id.to_owned())
        }
    }
}

/// What packing produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Packed {
    /// The facts that fit, by score.
    pub facts: Vec<Fact>,
    /// The context block: one line per fact.
    pub context: String,
    /// Exact tokens of `context`.
    pub tokens_used: usize,
    /// The budget.
    pub budget: usize,
    /// Facts left out because they did not fit.
    pub cut: usize,
}

/// Packs `facts` (sorted by score; built lazily, so facts past a full budget cost little)
/// greedily: each fact that still fits is taken, the others are counted as cut. The result's
/// exact token count never exceeds `budget`.
pub fn pack(facts: impl IntoIterator<Item = Fact>, budget: usize) -> Packed {
    let mut out = Packed { budget, ..Packed::default() };
    let mut used = 0;
    for mut f in facts {
        f.line = render(&f);
        // Every whitespace-separated word holds at least one token (cl100k's pre-tokenizer never
        // joins two words), so a line with more words than the room left cannot fit: it is cut
        // without running the tokenizer.
        let room = budget.saturating_add(1).saturating_sub(used);
        if f.line.split_whitespace().count() + 1 > room {
            out.cut += 1;
            continue;
        }
        f.tokens = count_tokens(&f.line) + 1;
        if f.tokens <= room {
            used += f.tokens;
            out.facts.push(f);
        } else {
            out.cut += 1;
        }
    }
    // Lines are tokenized apart; the block is recounted whole, and facts dropped from the end in
    // the (unseen in practice) case where joining them merged into more tokens.
    loop {
        out.context = out.facts.iter().map(|f| f.line.as_str()).collect::<Vec<_>>().join("\n");
        out.tokens_used = count_tokens(&out.context);
        if out.tokens_used <= budget || out.facts.pop().is_none() {
            break;
        }
        out.cut += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::count_tokens;

    /// Two independent implementations of `cl100k_base` agree on every count.
    #[test]
    fn counts_equal_tiktoken() {
        use rand::{Rng, SeedableRng};
        let samples = [
            "",
            "[c-12] AuthService DEPENDS_ON UpstreamService: \"calls it to validate tokens\" (conf 0.90, ACCEPTED, valid 2024-01-01T00:00:00Z.., evidence msg-1,msg-2)",
            "  leading and trailing spaces   ",
            "line one\nline two\n\n  indented\r\nwindows",
            "Größe naïve 東京 emoji 🚀🚀 and numbers 1234567 3.14159 x=y+z;",
            "it's we're they'll I'd you've",
        ];
        let bpe = tiktoken_rs::cl100k_base_singleton();
        for s in samples {
            assert_eq!(count_tokens(s), bpe.encode_ordinary(s).len(), "{s:?}");
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let alphabet: Vec<char> = "abc XYZ 01 \n\t.,:;'\"()[]-_/é東🚀".chars().collect();
        for _ in 0..300 {
            let s: String = (0..rng.gen_range(0..80)).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect();
            assert_eq!(count_tokens(&s), bpe.encode_ordinary(&s).len(), "{s:?}");
        }
    }
}
