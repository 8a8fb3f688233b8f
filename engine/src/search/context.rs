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
    /// The fact's line in the context block (under its group's head when it has one).
    pub line: String,
    /// What the fact costs the block: its line with its newline, and its group's head line for
    /// the group's first fact.
    pub tokens: usize,
}

/// What a fact is said under: its subject, predicate and what an agent weighs it by — the valid
/// time as days (`2023-05-08`, `2023-05-08..2023-06-01` once it ended), the confidence when below
/// 1, the state when not `ACCEPTED`. Facts sharing it are listed under it once (`group_head`).
fn head(f: &Fact) -> (String, String) {
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
    (format!("{} {}", f.subject.name, f.predicate.to_uppercase()), meta.join(", "))
}

/// The sources of a fact's evidence (conversation and message ids), unless a source is the
/// claim id itself.
fn cited_sources(f: &Fact) -> Option<String> {
    let cites_itself = |s: &&String| **s == f.claim_id || s.strip_suffix(f.claim_id.as_str()).is_some_and(|p| p.ends_with('/'));
    let sources: Vec<&str> = f.sources.iter().filter(|s| !cites_itself(s)).map(String::as_str).collect();
    (!sources.is_empty()).then(|| format!("source {}", sources.join(",")))
}

/// The object, unless its name is the claim id (a turn's own entity): said once, not twice.
fn object(f: &Fact) -> Option<&str> {
    (f.object.name != f.claim_id).then_some(f.object.name.as_str())
}

/// Renders a fact alone on its line, spending its tokens on the fact: the claim id (what an answer
/// cites), subject, predicate, object and text, then its head's metadata and its sources:
/// `[c-12] AuthService DEPENDS_ON UpstreamService: "calls it" (2024-01-01, conf 0.9)`.
pub fn render(f: &Fact) -> String {
    use std::fmt::Write;
    let (who, meta) = head(f);
    let mut line = format!("[{}] {who}", f.claim_id);
    if let Some(o) = object(f) {
        let _ = write!(line, " {o}");
    }
    if let Some(t) = &f.text {
        let _ = write!(line, ": \"{}\"", t.replace(['\n', '\r'], " "));
    }
    let meta = match cited_sources(f) {
        Some(s) => format!("{meta}, {s}"),
        None => meta,
    };
    let _ = write!(line, " ({meta})");
    line
}

/// The line a fact's group starts with: `Caroline SAID (2023-05-08):`.
fn group_head(f: &Fact) -> String {
    let (who, meta) = head(f);
    format!("{who} ({meta}):")
}

/// A fact's line under its group's head: the claim id, the object, the text and the sources
/// (`[D1:3] "text"`, `[c-12] UpstreamService: "calls it" (source msg-7)`).
fn render_member(f: &Fact) -> String {
    use std::fmt::Write;
    let mut line = format!("[{}]", f.claim_id);
    match (object(f), &f.text) {
        (Some(o), Some(t)) => _ = write!(line, " {o}: \"{}\"", t.replace(['\n', '\r'], " ")),
        (None, Some(t)) => _ = write!(line, " \"{}\"", t.replace(['\n', '\r'], " ")),
        (Some(o), None) => _ = write!(line, " {o}"),
        (None, None) => {}
    }
    if let Some(s) = cited_sources(f) {
        let _ = write!(line, " ({s})");
    }
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
    /// The context block: the facts by group (see `pack`).
    pub context: String,
    /// Exact tokens of `context`.
    pub tokens_used: usize,
    /// The budget.
    pub budget: usize,
    /// Facts left out because they did not fit.
    pub cut: usize,
}

/// The facts sharing a head, in the block's order: the indices of their facts, best first.
struct Group {
    head: String,
    members: Vec<usize>,
}

/// The block's groups in the order of their best fact.
fn groups(facts: &[Fact]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, f) in facts.iter().enumerate() {
        let h = group_head(f);
        match at.get(&h) {
            Some(&g) => out[g].members.push(i),
            None => {
                at.insert(h.clone(), out.len());
                out.push(Group { head: h, members: vec![i] });
            }
        }
    }
    out
}

/// Renders the block: a group of one fact is its `render` line; a larger one its head, then a
/// `render_member` line per fact. Sets each fact's `line` and `tokens` (its line and newline; the
/// first of a group also carries the head's).
fn block(facts: &mut [Fact]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for g in groups(facts) {
        if let [only] = g.members[..] {
            let f = &mut facts[only];
            f.line = render(f);
            f.tokens = count_tokens(&f.line) + 1;
            lines.push(f.line.clone());
            continue;
        }
        let head_tokens = count_tokens(&g.head) + 1;
        lines.push(g.head);
        for (n, &i) in g.members.iter().enumerate() {
            let f = &mut facts[i];
            f.line = render_member(f);
            f.tokens = count_tokens(&f.line) + 1 + if n == 0 { head_tokens } else { 0 };
            lines.push(f.line.clone());
        }
    }
    lines.join("\n")
}

/// Packs `facts` (sorted by score; built lazily, so facts past a full budget cost little)
/// greedily: each fact that still fits is taken, the others are counted as cut. Facts with the
/// same subject, predicate, day and trust are listed under one head line
/// (`Caroline SAID (2023-05-08):` then `[D1:3] "…"` per fact), so what repeats is said once; a
/// fact costs what it adds to the block: its own line, or its group's head and the first member's
/// shorter line when it turns a lone fact into a group. The result's exact token count never
/// exceeds `budget`.
pub fn pack(facts: impl IntoIterator<Item = Fact>, budget: usize) -> Packed {
    let mut out = Packed { budget, ..Packed::default() };
    let mut used = 0;
    // Per head: how many facts are in, and what the lone first one costs inline and as a member.
    let mut heads: std::collections::HashMap<String, (usize, usize, usize)> = std::collections::HashMap::new();
    for f in facts {
        let head = group_head(&f);
        let room = budget.saturating_add(1).saturating_sub(used);
        let (line, extra) = match heads.get(&head) {
            None => (render(&f), 0),
            Some(&(1, inline, member)) => (render_member(&f), (count_tokens(&head) + 1 + member).saturating_sub(inline)),
            Some(_) => (render_member(&f), 0),
        };
        // Every whitespace-separated word holds at least one token (cl100k's pre-tokenizer never
        // joins two words), so a line with more words than the room left cannot fit: it is cut
        // without running the tokenizer.
        if line.split_whitespace().count() + 1 + extra > room {
            out.cut += 1;
            continue;
        }
        let cost = count_tokens(&line) + 1 + extra;
        if cost > room {
            out.cut += 1;
            continue;
        }
        used += cost;
        let entry = heads.entry(head).or_insert((0, 0, 0));
        if entry.0 == 0 {
            *entry = (0, cost, count_tokens(&render_member(&f)) + 1);
        }
        entry.0 += 1;
        out.facts.push(f);
    }
    // Lines are tokenized apart; the block is recounted whole, and facts dropped from the end in
    // the (unseen in practice) case where joining them merged into more tokens.
    loop {
        out.context = block(&mut out.facts);
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
    use super::*;

    fn fact(id: &str, subject: &str, object: &str, day: &str, text: &str, score: f64) -> Fact {
        let entity = |name: &str| FactEntity { id: 0, ext_id: name.into(), name: name.into(), entity_type: "t".into() };
        Fact {
            id: 0,
            claim_id: id.into(),
            subject: entity(subject),
            predicate: "said".into(),
            object: entity(object),
            text: Some(text.into()),
            confidence: 1.0,
            state: "ACCEPTED".into(),
            valid_from: format!("{day}T10:00:00Z"),
            valid_until: None,
            evidence: vec![],
            sources: vec![format!("conv-1/{id}")],
            score,
            decay: 1.0,
            ranks: PathRanks::default(),
            line: String::new(),
            tokens: 0,
        }
    }

    /// Facts sharing subject, predicate and day are listed under one head, in the order of their
    /// best fact; a lone fact keeps its full line; an object named as the claim is not repeated;
    /// the facts' costs add up to the block's.
    #[test]
    fn facts_sharing_a_head_are_grouped() {
        let facts = vec![
            fact("D1:3", "Caroline", "D1:3", "2023-05-08", "I went to a support group.", 0.9),
            fact("D2:1", "Melanie", "D2:1", "2023-05-20", "We went camping.", 0.8),
            fact("D1:5", "Caroline", "D1:5", "2023-05-08", "It was powerful.", 0.7),
            fact("c-9", "Caroline", "Sweden", "2023-05-08", "moved from Sweden", 0.6),
        ];
        let p = pack(facts.clone(), 10_000);
        assert_eq!(
            p.context,
            "Caroline SAID (2023-05-08):\n[D1:3] \"I went to a support group.\"\n[D1:5] \"It was powerful.\"\n\
             [c-9] Sweden: \"moved from Sweden\"\n[D2:1] Melanie SAID: \"We went camping.\" (2023-05-20)"
        );
        let ids: Vec<&str> = p.facts.iter().map(|f| f.claim_id.as_str()).collect();
        assert_eq!(ids, ["D1:3", "D2:1", "D1:5", "c-9"], "the facts stay by score");
        let summed: usize = p.facts.iter().map(|f| f.tokens).sum();
        // Counted apart, a line's closing quote and its newline are two tokens; in the block often one.
        assert!(summed > p.tokens_used && summed <= p.tokens_used + 1 + p.facts.len(), "{summed} against {}", p.tokens_used);
        let inline: usize = facts.iter().map(|f| count_tokens(&render(f)) + 1).sum();
        assert!(p.tokens_used + 1 < inline, "grouping saves tokens: {} against {inline}", p.tokens_used + 1);
        // Every budget: never over, and what fits is a prefix-by-greed of the same order.
        for budget in 0..=p.tokens_used + 2 {
            let q = pack(facts.clone(), budget);
            assert!(q.tokens_used <= budget && q.tokens_used == count_tokens(&q.context), "budget {budget}");
            assert_eq!(q.facts.len() + q.cut, facts.len());
        }
    }

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
