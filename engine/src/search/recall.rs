//! Hybrid recall: four retrieval paths fused by reciprocal rank, weighted by trust and time,
//! packed into a token budget. Also the two graph-first forms: entity context (who is this and
//! what is open) and neighbourhood RAG (traverse from a root, then rank by similarity).
//!
//! Fusion: `score = Σ_path w_path × s_path × confidence × 0.5^(age / half_life)`, a convex
//! combination of each path's own score scaled to `[0, 1]` within its candidates: the cosine
//! min-max scaled (the best candidate 1, the weakest 0), BM25 over the best BM25, `1 / depth` for
//! the graph (twice that of the others for a relation and kind the question names, `Asked`), and
//! position for recency (claims as recent alike). Scores, not ranks: a fact that is the clear
//! answer of one path (1.0) is not beaten by one that sits in the middle of every list, as
//! reciprocal-rank fusion let it be (four weak ranks summed past one strong one). Cosines are
//! scaled above their candidates' mean instead (`scaled_above_mean`): they crowd together. The
//! lexical path weighs 1, the semantic 0.5 (the embedders engram ships are small: on conversational
//! recall, `engram replay` on the `LoCoMo` dev set, a full weight lets them outvote BM25 and ranks
//! the evidence lower, `bench/README.md`); the graph and recency, which rank facts near the
//! question's entities or recent ones whatever was asked, weigh 0.25 and 0.1. Among claims as near
//! to the question's entities, the graph path keeps first those the lexical or semantic path found,
//! so the entities a question names lift the relevant facts about them rather than an arbitrary
//! few; the names it spells out that have facts of their own are left to the graph, not the
//! keywords (`without_names`), and count half in the question's vector (engram's interfaces embed
//! `question_to_embed` beside the question, `Database::embed_question`); a name only texts mention
//! leads the graph to those texts (a conversation's `MENTIONS` links, `ingest::conversation`),
//! which recall walks but never returns.
//! The texts that follow the best candidates (`FOLLOWS` links: a conversation's next turn) gain
//! part of their score (`lift_replies`). A question that names a time ("on May 3, 2023", "last
//! week", `search::when`) lifts the facts that began or were heard in it by half their score, and
//! its lexical path also takes the best matches said then. Age is the time from the claim's
//! `valid_from` to the query's valid time, and the half-life is the predicate's (no decay when it
//! has none). Every path reads through the same visibility, so a claim the query may not see is
//! never scored, ranked or printed.

use crate::error::ReadError;
use crate::ids::{ClaimId, EntityId};
use crate::index::graph::Direction;
use crate::index::kernels::cosine_f32;
use crate::index::vectors::VectorMode;
use crate::normalize::lower_words;
use crate::read::filter::EdgeFilter;
use crate::read::khop::KHopQuery;
use crate::read::scope::ReadLimits;
use crate::read::view::WorkspaceView;
use crate::read::visibility::Visibility;
use crate::search::context::{pack, Fact, FactEntity, Packed, PathRanks};
use crate::search::semantic::VectorOptions;
use crate::time::Timestamp;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// What a reply gains of the score of the text it follows (`lift_replies`).
const REPLY_SHARE: f64 = 0.35;
/// What the reply to a text that asks (a `?` ends one of its sentences) gains: the answer.
const ANSWER_SHARE: f64 = 0.7;
/// A lifted reply's score stays below this share of the text it follows.
const REPLY_CAP: f64 = 0.999;
/// How many of the best candidates lift their replies.
const REPLIES_FROM: usize = 5;
/// Rounds of lifting: a lifted reply that rises among the best lifts its own reply in the next
/// ("We saw a concert" → "Which band was it?" → "Matt Patterson!").
const REPLY_ROUNDS: usize = 2;

/// What a fact said in the time a question names gains, as a share of its score (`search::when`).
const WHEN_LIFT: f64 = 0.5;

/// The reciprocal-rank-fusion constant.
pub const RRF_K: f64 = 60.0;

/// Per-path weights of the fusion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathWeights {
    /// Vector similarity.
    pub semantic: f64,
    /// BM25.
    pub lexical: f64,
    /// Graph proximity.
    pub graph: f64,
    /// Recency.
    pub recency: f64,
}

impl Default for PathWeights {
    fn default() -> Self {
        PathWeights { semantic: 0.5, lexical: 1.0, graph: 0.25, recency: 0.1 }
    }
}

/// A hybrid recall request.
#[derive(Clone, Debug, PartialEq)]
pub struct RecallQuery {
    /// The question (for the lexical path).
    pub text: String,
    /// Its embedding (for the semantic path), from the client or an embedder.
    pub vector: Option<Vec<f32>>,
    /// Entities the question is about (graph path seeds), besides those the other paths find.
    pub seeds: Vec<EntityId>,
    /// Token budget of the context block (default 800).
    pub budget: usize,
    /// What may be returned: `as_of` and `known_as_of` travel in time; history needs
    /// `Visibility::all_versions()` (default: what is current).
    pub visibility: Visibility,
    /// Fusion weights.
    pub weights: PathWeights,
    /// Candidates each path contributes (default 50).
    pub per_path: usize,
    /// Hops of the graph path (default 2).
    pub hops: u32,
    /// Entities the graph path may visit (default 5,000; hubs stop it deterministically).
    pub graph_visited_max: usize,
    /// The recency window, in days before the query's valid time (default 30).
    pub recency_days: u32,
    /// Vector scan mode (default exact f32).
    pub mode: VectorMode,
    /// Entities the semantic and lexical paths pass on to the graph path (default 5 each).
    pub entity_seeds: usize,
    /// Vector comparison (default inner product: the cosine for unit-length embeddings).
    pub metric: crate::search::semantic::Metric,
    /// A sub-scope: only claims whose properties hold these values (the MCP tools' `user_id`,
    /// `agent_id`, `run_id`). Each path then looks at `SUB_SCOPE_WIDEN` times more candidates,
    /// keeps those in scope, and ranks among them.
    pub properties: Vec<(String, crate::value::Value)>,
}

/// How many more candidates each path reads when a sub-scope filters them.
pub const SUB_SCOPE_WIDEN: usize = 4;

impl RecallQuery {
    /// A query with the defaults.
    pub fn new(text: &str) -> RecallQuery {
        RecallQuery {
            text: text.to_owned(),
            vector: None,
            seeds: Vec::new(),
            budget: 800,
            visibility: Visibility::current(),
            weights: PathWeights::default(),
            per_path: 50,
            hops: 2,
            graph_visited_max: 5_000,
            recency_days: 30,
            mode: VectorMode::F32,
            entity_seeds: 5,
            metric: crate::search::semantic::Metric::Dot,
            properties: Vec::new(),
        }
    }
}

/// A path that could not run, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Skipped {
    /// The path.
    pub path: &'static str,
    /// Why.
    pub reason: String,
}

/// What recall returns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recall {
    /// Facts, context block, tokens used, budget and how many facts the budget cut.
    #[serde(flatten)]
    pub packed: Packed,
    /// The paths that ran.
    pub paths_run: Vec<&'static str>,
    /// The paths that could not run.
    pub skipped: Vec<Skipped>,
    /// Entities the graph path started from (not serialized: an entity appears in recall output
    /// only as a fact's subject or object).
    #[serde(skip)]
    pub graph_seeds: Vec<u32>,
    /// Wall time of each stage, in microseconds: `semantic+lexical` (run side by side), then each
    /// of the two alone, `graph`, `recency`, `fuse`, `pack`.
    pub timings_us: Vec<(&'static str, u64)>,
}

/// Candidate claims of one path, best first, with the path's own score (higher is better).
type Scored = Vec<(ClaimId, f64)>;

/// A path's scores scaled to `[0, 1]` over its best candidate's (the best 1; all 1 when the best is
/// not positive). Over the best, not min-max: with few candidates min-max makes a relevant fact
/// that happens to be last worth nothing.
fn scaled(list: &Scored) -> Vec<(ClaimId, f64)> {
    let top = list.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
    list.iter().map(|&(c, s)| (c, if top > 1e-9 { (s / top).clamp(0.0, 1.0) } else { 1.0 })).collect()
}

/// Whether `text` asks: a `?` (or a full-width `？`) that ends a sentence, followed by a space,
/// a closing quote or bracket, or the end (not the `?` of a URL's query string).
fn asks(text: &str) -> bool {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if (c == '?' || c == '？') && chars.peek().is_none_or(|n| n.is_whitespace() || "\"'”’)]?!".contains(*n)) {
            return true;
        }
    }
    false
}

/// Recency's scores: by position, newest first (`(n - i) / n`), and the same for claims as
/// recent: a run of equal times takes its first position's score, so the order in which the
/// index lists them (by id) ranks nothing.
fn by_position(recent: &[(ClaimId, Timestamp)]) -> Scored {
    let n = recent.len() as f64;
    let mut out: Scored = Vec::with_capacity(recent.len());
    for (i, &(c, t)) in recent.iter().enumerate() {
        let tied = i > 0 && recent[i - 1].1 == t;
        let score = if tied { out[i - 1].1 } else { (n - i as f64) / n };
        out.push((c, score));
    }
    out
}

/// Fewest candidates whose cosines are scaled above their mean.
const ABOVE_MEAN_MIN: usize = 10;

/// Cosine similarities scaled to `[0, 1]` above their candidates' mean (the best 1, the mean
/// and below 0). Embedding similarities crowd together — with a small model every one of fifty
/// candidates sits within a few hundredths of the best —, so over the best alone they would
/// add nearly the same to every candidate and drown the other paths; above the mean only the
/// candidates that stand out count. Below `ABOVE_MEAN_MIN` candidates their mean says little:
/// they are scaled over the best.
fn scaled_above_mean(list: &Scored) -> Vec<(ClaimId, f64)> {
    if list.len() < ABOVE_MEAN_MIN {
        return scaled(list);
    }
    let top = list.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
    let mean = list.iter().map(|x| x.1).sum::<f64>() / list.len() as f64;
    let spread = top - mean;
    list.iter().map(|&(c, s)| (c, if spread > 1e-9 { ((s - mean) / spread).clamp(0.0, 1.0) } else { 1.0 })).collect()
}

/// What a question asks about a fact: the relation it names, and the kind of thing it asks for.
/// For a predicate, the share of the words of its name (`model::predicate_words`, stemmed, stop
/// words out: `STREAMS_EVENTS_WITH` is `stream event`) that the question's keywords hold; for an
/// entity, the same share of the words of its labels (`secret_store`, `ProgrammingLanguage`). A
/// fact's predicate and the kind of its far end are part of what it says, and a typed fact often
/// has no text: "Who owns the auth service?" names no text of `team OWNS auth`, only its relation;
/// "Which database does it use?" names neither `Postgres` nor `Redis`, only the kind of one. It
/// orders and scores the graph path's claims, which are near the question's entities; it is no
/// keyword of the lexical path, where in a graph of typed facts every `OWNS` fact would match
/// alike, near the question's entities or not.
struct Asked {
    terms: HashSet<String>,
    /// Per predicate met, its share.
    shares: HashMap<u16, f64>,
    /// Per label met, its share.
    kinds: HashMap<u16, f64>,
}

impl Asked {
    fn new(keywords: &str) -> Asked {
        Asked { terms: crate::index::text::terms(keywords).into_iter().collect(), shares: HashMap::new(), kinds: HashMap::new() }
    }

    /// The share of `name`'s words (split as a predicate's) the question holds (0 when it has none).
    fn share_of(terms: &HashSet<String>, name: Option<&str>) -> f64 {
        let mut words = String::new();
        if let Some(name) = name {
            crate::model::predicate_words(name, &mut words);
        }
        let own = crate::index::text::terms(&words);
        if own.is_empty() {
            return 0.0;
        }
        own.iter().filter(|t| terms.contains(*t)).count() as f64 / own.len() as f64
    }

    /// The share of predicate `p`'s words the question holds (0 when its name has no keyword).
    fn share(&mut self, view: &WorkspaceView<'_>, p: crate::ids::PredicateId) -> f64 {
        if self.terms.is_empty() {
            return 0.0;
        }
        let terms = &self.terms;
        *self.shares.entry(p.0).or_insert_with(|| Asked::share_of(terms, view.predicate_name(p).as_deref()))
    }

    /// The largest share of the words of one of entity `e`'s labels the question holds.
    fn kind(&mut self, view: &WorkspaceView<'_>, e: EntityId) -> f64 {
        if self.terms.is_empty() {
            return 0.0;
        }
        let terms = &self.terms;
        view.entity_labels(e)
            .into_iter()
            .map(|t| *self.kinds.entry(t.0).or_insert_with(|| Asked::share_of(terms, view.type_name_ref(t))))
            .fold(0.0, f64::max)
    }
}

/// The scope's limits on a recall's size.
fn check_limits(limits: &ReadLimits, q: &RecallQuery) -> Result<(), ReadError> {
    ReadLimits::check("recall_budget_max", limits.recall_budget_max, q.budget, "the recall's token budget")?;
    ReadLimits::check("recall_per_path_max", limits.recall_per_path_max, q.per_path, "the recall's candidates per path")?;
    ReadLimits::check("recall_hops_max", limits.recall_hops_max as usize, q.hops as usize, "the recall's hops")
}

impl WorkspaceView<'_> {
    /// Hybrid recall: see the module documentation.
    pub fn recall(&self, q: &RecallQuery) -> Result<Recall, ReadError> {
        for s in &q.seeds {
            self.check_entity(*s)?;
        }
        check_limits(&self.cx.limits, q)?;
        self.cx.check().map_err(ReadError::Interrupted)?;
        let vis = &q.visibility;
        let (mut paths_run, mut skipped) = (Vec::new(), Vec::new());
        let mut graph_seeds: Vec<EntityId> = q.seeds.clone();
        let per = if q.properties.is_empty() { q.per_path } else { q.per_path.saturating_mul(SUB_SCOPE_WIDEN) };
        let opts = VectorOptions {
            k: per,
            mode: q.mode,
            rescore: per.max(100),
            visibility: vis.clone(),
            metric: q.metric,
            entity_types: Vec::new(),
        };
        let words = lower_words(&q.text);
        let times = crate::search::when::times_named(&words, vis.as_of.unwrap_or(self.now));
        let mut timings: Vec<(&'static str, u64)> = Vec::new();
        let clock = std::cell::Cell::new(std::time::Instant::now());
        macro_rules! lap {
            ($name:expr) => {{
                timings.push(($name, clock.get().elapsed().as_micros() as u64));
                clock.set(std::time::Instant::now());
            }};
        }

        // Semantic and lexical run side by side: the vector scan is bound by memory bandwidth,
        // the keyword search by one core.
        let ((semantic_out, semantic_us), (lexical_out, lexical_us)) = rayon::join(
            || {
                let t = std::time::Instant::now();
                let r = self.semantic_path(q, &opts);
                (r, t.elapsed().as_micros() as u64)
            },
            || {
                let t = std::time::Instant::now();
                let r = self.lexical_path(q, &times, per, vis);
                (r, t.elapsed().as_micros() as u64)
            },
        );
        let (lexical, lexical_entities, mut asked) = lexical_out?;
        let semantic: Scored = match semantic_out? {
            Ok((claims, entities)) => {
                graph_seeds.extend(entities);
                paths_run.push("semantic");
                claims
            }
            Err(skip) => {
                skipped.push(skip);
                Vec::new()
            }
        };
        graph_seeds.extend(lexical_entities);
        paths_run.push("lexical");
        lap!("semantic+lexical");
        timings.push(("semantic", semantic_us));
        timings.push(("lexical", lexical_us));

        // Graph: from the caller's seeds and the entities the other paths found, and from the texts
        // that mention the names the question spells out (a link is not a hop; names with facts of
        // their own, such as a speaker, reach their facts directly).
        // The seeds the question names (or the caller gave) are nearer than those its words or
        // meaning only resemble ("document-0050054" for "document-0050010").
        let mut spelled: Vec<EntityId> =
            graph_seeds.iter().copied().filter(|e| q.seeds.contains(e) || self.spelled_out(&words, *e)).collect();
        let named: Vec<EntityId> = spelled.iter().copied().filter(|e| !self.has_facts(*e, vis)).collect();
        let mentioning = self.mentioning(&named, vis, q.graph_visited_max);
        for list in [&mut graph_seeds, &mut spelled] {
            list.sort_unstable();
            list.dedup();
        }
        // Among claims as near, those the question's words or meaning also found come first: the
        // graph then says which of them are about the entities it names.
        let found: HashSet<ClaimId> = semantic.iter().chain(&lexical).map(|x| x.0).collect();
        let graph =
            self.graph_path((&graph_seeds, &spelled), q.hops, (q.graph_visited_max, &[]), vis, per, (&found, &mentioning, &mut asked))?;
        // Nearer is better: 1 at depth 1, ½ at depth 2, …; what the question asks doubles it
        // (`Asked`: "who owns X?" puts X's OWNS facts before its others, "which database does X
        // use?" its USES facts that reach a database).
        let graph: Scored = graph.into_iter().map(|(c, depth, share)| (c, f64::midpoint(1.0, share) / f64::from(depth.max(1)))).collect();
        paths_run.push("graph");
        lap!("graph");

        // Recency.
        let until = vis.as_of.unwrap_or(self.now);
        let after = until.plus_seconds(-i64::from(q.recency_days) * 86_400);
        let mut recent = self.recent_claims(after, until, per, vis);
        recent.retain(|(c, _)| !self.is_link(*c));
        let recency = by_position(&recent);
        paths_run.push("recency");
        lap!("recency");

        let [semantic, lexical, graph, recency] = [semantic, lexical, graph, recency].map(|list| self.in_sub_scope(q, list));
        let mut scored = self.fuse(q.weights, [&semantic, &lexical, &graph, &recency], until);
        // A fact said in the time the question names ("in December 2023") gains half its score.
        if !times.is_empty() {
            for x in scored.iter_mut().filter(|x| self.said_in(x.2, &times)) {
                x.0 *= 1.0 + WHEN_LIFT;
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
        self.lift_replies(&mut scored, q);
        lap!("fuse");
        let packed = pack(scored.into_iter().filter_map(|(score, decay, c, r)| self.fact(c, r, score, decay)), q.budget);
        lap!("pack");
        Ok(Recall { packed, paths_run, skipped, graph_seeds: graph_seeds.iter().map(|e| e.0).collect(), timings_us: timings })
    }

    /// The fusion of the module documentation: each candidate's weighted sum of its paths' scaled
    /// scores, times its confidence and decay at `until`: `(score, decay, claim, ranks)`.
    fn fuse(&self, w: PathWeights, paths: [&Scored; 4], until: Timestamp) -> Vec<(f64, f64, ClaimId, PathRanks)> {
        let [semantic, lexical, graph, recency] = paths;
        let mut fused: HashMap<ClaimId, (PathRanks, f64)> = HashMap::new();
        for (list, weight, slot) in [(semantic, w.semantic, 0usize), (lexical, w.lexical, 1), (graph, w.graph, 2), (recency, w.recency, 3)]
        {
            if weight <= 0.0 {
                continue;
            }
            let scaled = if slot == 0 { scaled_above_mean(list) } else { scaled(list) };
            for (i, (c, s)) in scaled.into_iter().enumerate() {
                let (r, sum) = fused.entry(c).or_default();
                *sum += weight * s;
                let rank = Some(i as u32 + 1);
                match slot {
                    0 => r.semantic = rank,
                    1 => r.lexical = rank,
                    2 => r.graph = rank,
                    _ => r.recency = rank,
                }
            }
        }
        fused
            .into_iter()
            .map(|(c, (r, relevance))| {
                let (score, decay) = self.weigh(c, relevance, until);
                (score, decay, c, r)
            })
            .collect()
    }

    /// The texts that follow the best candidates (a conversation's next turn, over `FOLLOWS`
    /// links) gain `REPLY_SHARE` of their score, up to just below it: a question's best match is
    /// often the turn that asked, and the answer the turn after it. The reply to a text that asks
    /// gains `ANSWER_SHARE` (a reply to a statement is as often "Wow, great!"). A reply lifted
    /// into the best lifts its own in the next of `REPLY_ROUNDS` rounds. Only replies in the
    /// query's sub-scope are lifted. Re-sorts `scored`.
    fn lift_replies(&self, scored: &mut Vec<(f64, f64, ClaimId, PathRanks)>, q: &RecallQuery) {
        let vis = &q.visibility;
        let Some(p) = self.predicate_id(crate::model::FOLLOWS) else { return };
        let (next, any) = (self.expander(Direction::In, Some(&[p]), vis), self.expander(Direction::Both, None, vis));
        // The texts whose replies this round lifts: the best candidates, then the replies just lifted
        // that rose among them.
        let mut sources: Vec<ClaimId> = scored.iter().take(REPLIES_FROM).map(|x| x.2).collect();
        let mut used: HashSet<ClaimId> = HashSet::new();
        for _ in 0..REPLY_ROUNDS {
            // (reply, score of the text it follows, share)
            let mut lifts: Vec<(ClaimId, f64, f64)> = Vec::new();
            for &(score, _, c, _) in scored.iter().take(REPLIES_FROM).filter(|x| sources.contains(&x.2) && used.insert(x.2)) {
                let Some((s, _, o)) = self.claim_triple(c) else { continue };
                let share = if self.claim_text(c).is_some_and(asks) { ANSWER_SHARE } else { REPLY_SHARE };
                for text in [s, o] {
                    for reply in next.edges(text).filter(|r| self.is_link(r.claim)).map(|r| r.neighbor) {
                        lifts.extend(any.edges(reply).filter(|r| !self.is_link(r.claim)).map(|r| (r.claim, score, share)));
                    }
                }
            }
            lifts.retain(|(c, _, _)| self.holds_properties(q, *c));
            if lifts.is_empty() {
                return;
            }
            let mut at: HashMap<ClaimId, usize> = scored.iter().enumerate().map(|(i, x)| (x.2, i)).collect();
            sources.clear();
            for (c, followed, share) in lifts {
                // A reply gains a share of the score of the text it follows, and never passes it.
                let cap = followed * REPLY_CAP;
                let i = *at.entry(c).or_insert_with(|| {
                    let decay = self.claim_decay(c, vis.as_of.unwrap_or(self.now)).unwrap_or(0.0);
                    scored.push((0.0, decay, c, PathRanks::default()));
                    scored.len() - 1
                });
                scored[i].0 = scored[i].0.max((scored[i].0 + share * followed).min(cap));
                sources.push(c);
            }
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
        }
    }

    /// A path's candidates in the query's sub-scope (claims holding its properties), at most
    /// `per_path` of them; all of them when it sets none.
    fn in_sub_scope(&self, q: &RecallQuery, list: Scored) -> Scored {
        if q.properties.is_empty() {
            return list;
        }
        list.into_iter().filter(|(c, _)| self.holds_properties(q, *c)).take(q.per_path).collect()
    }

    /// Whether claim `c` holds the query's sub-scope properties (true when it sets none).
    fn holds_properties(&self, q: &RecallQuery, c: ClaimId) -> bool {
        q.properties.iter().all(|(k, v)| self.claim_property(c, k) == Some(v))
    }

    /// The semantic path: claims by text vector, and entities by name vector for the graph
    /// path; `Err(Skipped)` when the query vector is missing or of another dimension.
    fn semantic_path(&self, q: &RecallQuery, opts: &VectorOptions) -> Result<Result<(Scored, Vec<EntityId>), Skipped>, ReadError> {
        let Some(v) = &q.vector else {
            return Ok(Err(Skipped { path: "semantic", reason: "no query vector (no embedder configured)".into() }));
        };
        match self.search_claim_vectors(v, opts) {
            Ok(hits) => {
                let entities = self.search_entity_vectors(v, &VectorOptions { k: q.entity_seeds, ..opts.clone() })?;
                Ok(Ok((hits.into_iter().map(|(c, s)| (c, f64::from(s))).collect(), entities.into_iter().map(|(e, _)| e).collect())))
            }
            Err(e @ ReadError::VectorDimension { .. }) => Ok(Err(Skipped { path: "semantic", reason: e.to_string() })),
            Err(e) => Err(e),
        }
    }

    /// Entity context: the claims within `depth` hops of `entity` (filtered by predicate and
    /// neighbour type), nearest first, then by confidence × decay × activity (halved every
    /// `activity_half_life_days` since the claim's latest evidence: what the caller is following
    /// up on comes first), at most `max_facts`, packed into `budget`. A fact's score is
    /// `1 / (60 + rank)` in that order.
    pub fn entity_context(&self, entity: EntityId, q: &ContextQuery) -> Result<Recall, ReadError> {
        self.check_entity(entity)?;
        self.check_context_limits(q)?;
        let filter = EdgeFilter { predicates: q.predicates.clone(), neighbor_types: q.types.clone(), ..EdgeFilter::default() };
        let (found, _) = self.graph_claims(&[entity], q.depth, q.visited_max, &[filter], &q.visibility)?;
        let until = q.visibility.as_of.unwrap_or(self.now);
        let mut items: Vec<(u32, f64, Timestamp, f64, ClaimId)> = found
            .into_iter()
            .filter(|(_, c)| !self.is_link(*c))
            .map(|(depth, c)| {
                let (weight, decay) = self.weigh(c, 1.0, until);
                let activity = self.last_activity(c);
                let idle_days = ((until.0 - activity.0).max(0) as f64) / 86_400e6;
                let active = q.activity_half_life_days.filter(|h| *h > 0.0).map_or(1.0, |h| 0.5f64.powf(idle_days / h));
                (depth, weight * active, activity, decay, c)
            })
            .collect();
        items.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(b.2.cmp(&a.2)).then(a.4.cmp(&b.4)));
        items.truncate(q.max_facts);
        let facts = items.into_iter().enumerate().filter_map(|(i, (_, _, _, decay, c))| {
            self.fact(c, PathRanks { graph: Some(i as u32 + 1), ..PathRanks::default() }, 1.0 / (RRF_K + i as f64 + 1.0), decay)
        });
        Ok(Recall {
            packed: pack(facts, q.budget),
            paths_run: vec!["graph"],
            skipped: Vec::new(),
            graph_seeds: vec![entity.0],
            timings_us: Vec::new(),
        })
    }

    /// Neighbourhood RAG: traverse from `root`, then rank the claims found by similarity ×
    /// confidence × decay, where similarity is the cosine of their text vector with `vector`
    /// (claims without a vector are left out, and so are those whose text is masked here: their
    /// vector is of the clear text) or, without a usable vector, the BM25 score of `text` among
    /// them.
    pub fn neighborhood(&self, root: EntityId, text: &str, vector: Option<&[f32]>, q: &ContextQuery) -> Result<Recall, ReadError> {
        self.check_entity(root)?;
        self.check_context_limits(q)?;
        let filter = EdgeFilter { predicates: q.predicates.clone(), neighbor_types: q.types.clone(), ..EdgeFilter::default() };
        let found: Vec<ClaimId> =
            self.graph_claims(&[root], q.depth, q.visited_max, &[filter], &q.visibility)?.0.into_iter().map(|x| x.1).collect();
        let until = q.visibility.as_of.unwrap_or(self.now);
        let mut similar: Vec<(ClaimId, f64)> = Vec::new();
        let mut skipped = Vec::new();
        let by_vector = vector.filter(|v| self.st.settings.vector_dim == Some(v.len() as u32));
        let path = if let Some(v) = by_vector {
            let masked = self.masked.map(|m| &m.claim_text);
            for c in found.iter().filter(|c| masked.is_none_or(|m| !m.contains_key(&c.0))) {
                if let Some(row) = self.st.vectors.claim.get(c.0) {
                    similar.push((*c, f64::from(cosine_f32(v, &row))));
                }
            }
            "semantic"
        } else {
            if vector.is_some() {
                skipped.push(Skipped { path: "semantic", reason: "query vector dimension differs from the stored vectors".into() });
            }
            let inside: HashSet<ClaimId> = found.iter().copied().collect();
            let hits = self.search_claim_text(text, usize::MAX >> 1, &q.visibility)?;
            similar.extend(hits.into_iter().filter(|(c, _)| inside.contains(c)).map(|(c, s)| (c, f64::from(s))));
            "lexical"
        };
        let mut scored: Vec<(f64, f64, ClaimId)> = similar
            .into_iter()
            .map(|(c, sim)| {
                let (weight, decay) = self.weigh(c, 1.0, until);
                (sim * weight, decay, c)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
        scored.truncate(q.max_facts);
        let facts = scored.into_iter().enumerate().filter_map(|(i, (score, decay, c))| {
            let rank = Some(i as u32 + 1);
            let r = if path == "semantic" {
                PathRanks { semantic: rank, ..PathRanks::default() }
            } else {
                PathRanks { lexical: rank, ..PathRanks::default() }
            };
            self.fact(c, r, score, decay)
        });
        Ok(Recall {
            packed: pack(facts, q.budget),
            paths_run: vec!["graph", path],
            skipped,
            graph_seeds: vec![root.0],
            timings_us: Vec::new(),
        })
    }

    /// The lexical path: claims by BM25, entities by name (for the graph path), and the
    /// question's keywords without those names (`Asked`, for the graph path).
    fn lexical_path(
        &self,
        q: &RecallQuery,
        windows: &[crate::search::when::Window],
        per: usize,
        vis: &Visibility,
    ) -> Result<(Scored, Vec<EntityId>, Asked), ReadError> {
        let (entities, text) = self.names_and_keywords(q)?;
        let mut claims: Scored = self.search_claim_text(&text, per, vis)?.into_iter().map(|(c, s)| (c, f64::from(s))).collect();
        if !windows.is_empty() {
            // And the best matches said in the time the question names, which a busy memory's
            // best overall can crowd out.
            let then = self.search_claim_text_where(&text, per, vis, &|c| self.said_in(c, windows))?;
            let have: HashSet<ClaimId> = claims.iter().map(|x| x.0).collect();
            claims.extend(then.into_iter().filter(|(c, _)| !have.contains(c)).map(|(c, s)| (c, f64::from(s))));
            claims.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        }
        Ok((claims, entities, Asked::new(&text)))
    }

    /// `text` without the words of the names of `entities` that it spells out whole (`Caroline`
    /// in "What did Caroline's group do?") and that have facts of their own: the graph path,
    /// seeded from those entities, answers for them; as keywords they would rank every text that
    /// names them (in a conversation, every turn addressed to a speaker) above those about what
    /// was asked. A name only texts mention stays a keyword: the texts that use it are what the
    /// question is after.
    fn without_names(&self, text: &str, entities: &[EntityId], vis: &Visibility) -> String {
        let words = lower_words(text);
        let mut keep = vec![true; words.len()];
        for x in entities.iter().filter(|e| self.has_facts(**e, vis)).filter_map(|e| self.entity(*e)) {
            let name = lower_words(&x.name);
            if name.is_empty() || name.len() > words.len() {
                continue;
            }
            for start in 0..=words.len() - name.len() {
                if words[start..start + name.len()] == name[..] {
                    keep[start..start + name.len()].iter_mut().for_each(|k| *k = false);
                }
            }
        }
        if keep.iter().all(|k| *k) || keep.iter().all(|k| !k) {
            // No name, or nothing but names: they are the keywords.
            return text.to_owned();
        }
        words.into_iter().zip(keep).filter_map(|(w, k)| k.then_some(w)).collect::<Vec<_>>().join(" ")
    }

    /// What question `q` asks, for the semantic path: its text without the names it spells out of
    /// entities with facts of their own, as the lexical path reads it (`without_names`; the
    /// question itself when it names none, or nothing else). The graph path answers for those
    /// names; in an embedding they outweigh what is asked, and "What does Melanie do to destress?"
    /// finds the turns addressed to Melanie before those about destressing. Engram's interfaces
    /// embed this beside the whole question (`Database::embed_question`). Only what `q.visibility`
    /// sees decides what is left out.
    pub fn question_to_embed(&self, q: &RecallQuery) -> Result<String, ReadError> {
        self.names_and_keywords(q).map(|x| x.1)
    }

    /// The entities whose names question `q` matches (for the graph path), and its text without
    /// the names it spells out of those with facts of their own (`without_names`).
    fn names_and_keywords(&self, q: &RecallQuery) -> Result<(Vec<EntityId>, String), ReadError> {
        let vis = &q.visibility;
        let entities: Vec<EntityId> = self.search_entity_text(&q.text, q.entity_seeds, vis)?.into_iter().map(|(e, _)| e).collect();
        let text = self.without_names(&q.text, &entities, vis);
        Ok((entities, text))
    }

    /// The scope's limits on a context query's size, and its deadline.
    fn check_context_limits(&self, q: &ContextQuery) -> Result<(), ReadError> {
        let limits = &self.cx.limits;
        ReadLimits::check("facts_max", limits.facts_max, q.max_facts, "the context's facts")?;
        ReadLimits::check("recall_budget_max", limits.recall_budget_max, q.budget, "the context's token budget")?;
        ReadLimits::check("recall_hops_max", limits.recall_hops_max as usize, q.depth as usize, "the context's hops")?;
        self.cx.check().map_err(ReadError::Interrupted)
    }

    /// Whether claim `c` began in one of `windows` (its `valid_from`) or was heard in one (an
    /// evidence's `observed_at`).
    fn said_in(&self, c: ClaimId, windows: &[crate::search::when::Window]) -> bool {
        let began = self.claim_valid(c).map(|(from, _)| from);
        began
            .into_iter()
            .chain(self.claim_evidence(c).filter_map(|v| self.evidence_observed_at(v)))
            .any(|t| windows.iter().any(|w| w.holds(t)))
    }

    /// When claim `c` was last heard of: its newest evidence's `observed_at` (when the source
    /// said it), else when it was recorded.
    fn last_activity(&self, c: ClaimId) -> Timestamp {
        let latest = self.claim_evidence(c).filter_map(|v| self.evidence_observed_at(v)).max();
        latest.or_else(|| self.claim_recorded_at(c)).unwrap_or(Timestamp::MIN)
    }

    /// Every claim reached from `seeds` within `hops` (visited cap `visited_max`), with the depth
    /// of the entity it reaches (its first, shallowest), and whether the traversal is exhausted
    /// (capped, or nothing reached at the last depth: more hops would find nothing new).
    fn graph_claims(
        &self,
        seeds: &[EntityId],
        hops: u32,
        visited_max: usize,
        filters: &[EdgeFilter],
        vis: &Visibility,
    ) -> Result<(Vec<(u32, ClaimId)>, bool), ReadError> {
        if hops == 0 || seeds.is_empty() {
            return Ok((Vec::new(), true));
        }
        let kq = KHopQuery {
            max_depth: hops,
            hops: filters.to_vec(),
            visibility: vis.clone(),
            max_visited: Some(visited_max),
            with_claims: true,
            parallel: true,
        };
        let r = self.khop(seeds, &kq)?;
        let exhausted = r.truncated || r.entities.iter().all(|x| x.depth < hops);
        // The claims between two seeds are the nearest of all ("Platform Team OWNS AuthService"
        // when the question's words found both), though they reach no new entity.
        let hop = filters.first().cloned().unwrap_or_default();
        let mut out: Vec<(u32, ClaimId)> = self.claims_between(seeds, &hop, vis)?.into_iter().map(|c| (1, c)).collect();
        let mut seen: HashSet<ClaimId> = out.iter().map(|x| x.1).collect();
        for (reached, via) in r.entities.iter().zip(&r.via) {
            for c in via {
                if seen.insert(*c) {
                    out.push((reached.depth, *c));
                }
            }
        }
        Ok((out, exhausted))
    }

    /// Claims reached from `seeds` within `hops` (and the `mentioning` texts' claims, at depth 1),
    /// by the depth of the entity they reach (one more when some seeds are `spelled` and these do
    /// not reach it as near; `spelled` is sorted), then how much of what the question asks they say
    /// (`Asked`: their relation, and the kind of their far end; descending), then whether they are
    /// in `prefer`, then confidence (descending), then id; at most `limit`, each with its depth and
    /// that share. Links are walked, not returned. Depths are expanded one more at a time and only
    /// while fewer than `limit` claims were found: nearer claims always rank first, so a hub's
    /// second hop is never walked when its first already fills the list.
    fn graph_path(
        &self,
        (seeds, spelled): (&[EntityId], &[EntityId]),
        hops: u32,
        (visited_max, filters): (usize, &[EdgeFilter]),
        vis: &Visibility,
        limit: usize,
        (prefer, mentioning, asked): (&HashSet<ClaimId>, &[ClaimId], &mut Asked),
    ) -> Result<Vec<(ClaimId, u32, f64)>, ReadError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut depth = 1.min(hops);
        loop {
            let (mut found, exhausted) = self.graph_claims(seeds, depth, visited_max, filters, vis)?;
            found.retain(|(_, c)| !self.is_link(*c));
            let traversed = found.len();
            let mut seen: HashSet<ClaimId> = found.iter().map(|x| x.1).collect();
            found.extend(mentioning.iter().filter(|c| seen.insert(**c)).map(|c| (1, *c)));
            if found.len() >= limit || depth >= hops || exhausted {
                if !spelled.is_empty() && spelled.len() < seeds.len() {
                    // A claim the named seeds do not reach as near is one hop further.
                    let near: HashMap<ClaimId, u32> =
                        self.graph_claims(spelled, depth, visited_max, filters, vis)?.0.into_iter().map(|(d, c)| (c, d)).collect();
                    for (d, c) in &mut found[..traversed] {
                        *d = near.get(c).map_or(*d + 1, |n| (*n).min(*d + 1));
                    }
                }
                // How much of what the question asks a claim says: its relation's share, and when
                // the question names the kind of some claim's far end (an end it does not name),
                // the mean of that and its far end's kind.
                let said: Vec<(f64, f64)> = found
                    .iter()
                    .map(|&(_, c)| {
                        self.claim_triple(c).map_or((0.0, 0.0), |(s, p, o)| {
                            let far = [s, o].into_iter().filter(|e| spelled.binary_search(e).is_err());
                            (asked.share(self, p), far.map(|e| asked.kind(self, e)).fold(0.0, f64::max))
                        })
                    })
                    .collect();
                let kinds = said.iter().any(|x| x.1 > 0.0);
                let mut out: Vec<(u32, f64, bool, f32, ClaimId)> = found
                    .into_iter()
                    .zip(said)
                    .map(|((d, c), (relation, kind))| {
                        let share = if kinds { f64::midpoint(relation, kind) } else { relation };
                        (d, share, !prefer.contains(&c), self.claim_confidence(c).unwrap_or(0.0), c)
                    })
                    .collect();
                out.sort_by(|a, b| {
                    a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)).then(b.3.total_cmp(&a.3)).then(a.4.cmp(&b.4))
                });
                return Ok(out.into_iter().take(limit).map(|x| (x.4, x.0, x.1)).collect());
            }
            depth += 1;
        }
    }

    /// Whether entity `e` has a claim of its own, not only texts that mention it.
    fn has_facts(&self, e: EntityId, vis: &Visibility) -> bool {
        self.expander(Direction::Both, None, vis).edges(e).any(|r| !self.is_link(r.claim))
    }

    /// Whether a text of `words` (`lower_words`) spells out the name of `e` whole, as words.
    fn spelled_out(&self, words: &[String], e: EntityId) -> bool {
        let Some(x) = self.entity(e) else { return false };
        let name = lower_words(&x.name);
        !name.is_empty() && words.windows(name.len()).any(|w| w == &name[..])
    }

    /// The claims of the texts that mention one of `names` (over `model::is_link` claims: a
    /// conversation's turns, with what their speakers said), at most `max`.
    fn mentioning(&self, names: &[EntityId], vis: &Visibility, max: usize) -> Vec<ClaimId> {
        let Some(p) = self.predicate_id(crate::model::MENTIONS) else { return Vec::new() };
        let (links, any) = (self.expander(Direction::In, Some(&[p]), vis), self.expander(Direction::Both, None, vis));
        let mut out = Vec::new();
        for text in names.iter().flat_map(|e| links.edges(*e).filter(|r| self.is_link(r.claim)).map(|r| r.neighbor)) {
            out.extend(any.edges(text).filter(|r| !self.is_link(r.claim)).map(|r| r.claim));
            if out.len() >= max {
                out.truncate(max);
                break;
            }
        }
        out
    }

    /// Whether claim `c` only links a text to a name it mentions (`model::is_link`): the graph
    /// path walks it, recall never returns it.
    fn is_link(&self, c: ClaimId) -> bool {
        self.claim_text(c).is_none()
            && self.claim_triple(c).and_then(|(_, p, _)| self.predicate_name(p)).is_some_and(|p| crate::model::is_link(&p, None))
    }

    /// A claim's score from its relevance: `(relevance × confidence × decay, decay)`.
    fn weigh(&self, c: ClaimId, relevance: f64, at: Timestamp) -> (f64, f64) {
        let decay = self.claim_decay(c, at).unwrap_or(0.0);
        (relevance * f64::from(self.claim_confidence(c).unwrap_or(0.0)) * decay, decay)
    }

    /// A fact, ready to render.
    fn fact(&self, c: ClaimId, ranks: PathRanks, score: f64, decay: f64) -> Option<Fact> {
        let claim = self.claim(c)?;
        let entity = |e: EntityId| {
            self.entity(e).map(|x| FactEntity {
                id: e.0,
                ext_id: x.ext_id.to_string(),
                name: x.name.to_string(),
                entity_type: x.entity_type.to_string(),
            })
        };
        let rows = self.evidence_of(c).ok()?;
        let sources = rows.iter().filter_map(crate::search::context::source_of).collect();
        let evidence = rows.into_iter().map(|v| v.ext_id.to_string()).collect();
        Some(Fact {
            id: c.0,
            claim_id: claim.ext_id.to_string(),
            subject: entity(claim.subject)?,
            predicate: claim.predicate.to_string(),
            object: entity(claim.object)?,
            text: claim.text.as_ref().map(ToString::to_string),
            confidence: claim.confidence,
            state: claim.state.as_str().to_owned(),
            valid_from: claim.valid_from.to_rfc3339(),
            valid_until: (claim.valid_until != Timestamp::MAX).then(|| claim.valid_until.to_rfc3339()),
            evidence,
            sources,
            score,
            decay,
            ranks,
            line: String::new(),
            tokens: 0,
        })
    }
}

/// An entity-context or neighbourhood request.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextQuery {
    /// Hops from the entity (default 2).
    pub depth: u32,
    /// Most facts returned (default 50).
    pub max_facts: usize,
    /// Predicates to follow; empty = all.
    pub predicates: Vec<String>,
    /// Entity types to reach; empty = all.
    pub types: Vec<String>,
    /// Token budget (default 800).
    pub budget: usize,
    /// Entities the traversal may visit (default 5,000).
    pub visited_max: usize,
    /// Entity context: a claim's weight halves per this many days since its latest evidence
    /// (default 30; `None` = activity does not count).
    pub activity_half_life_days: Option<f64>,
    /// What may be returned.
    pub visibility: Visibility,
}

impl Default for ContextQuery {
    fn default() -> Self {
        ContextQuery {
            depth: 2,
            max_facts: 50,
            predicates: Vec::new(),
            types: Vec::new(),
            budget: 800,
            visited_max: 5_000,
            visibility: Visibility::current(),
            activity_half_life_days: Some(30.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text asks when a `?` ends one of its sentences, not when a URL carries one.
    #[test]
    fn a_text_asks_when_a_question_mark_ends_a_sentence() {
        for text in
            ["What concert was it?", "Nice! What gave you the idea? I love it.", "He said \"why?\"", "(really?)", "Wait?!", "本当？"]
        {
            assert!(asks(text), "{text}");
        }
        for text in ["See https://example.com/?q=1 for more.", "It was Matt Patterson.", "", "a?b"] {
            assert!(!asks(text), "{text}");
        }
    }

    /// Newer ranks higher; claims as recent score alike, whatever their ids.
    #[test]
    fn equally_recent_claims_score_alike() {
        let t = |s: i64| Timestamp::from_epoch_seconds(s);
        let recent = [(ClaimId(9), t(30)), (ClaimId(3), t(20)), (ClaimId(7), t(20)), (ClaimId(1), t(20)), (ClaimId(2), t(10))];
        let scores: Vec<f64> = by_position(&recent).into_iter().map(|x| x.1).collect();
        assert_eq!(scores, [1.0, 0.8, 0.8, 0.8, 0.2]);
        assert!(by_position(&[]).is_empty());
    }
}
