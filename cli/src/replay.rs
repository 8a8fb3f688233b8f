//! `engram replay`: conversations in `LoCoMo`'s format (a JSON array of samples, `.gz` read as is)
//! ingested as a user's agent would, every question asked through recall, and recall scored by
//! evidence turn: recall@k, all-evidence@k, MRR and recall inside the packed context at each token
//! budget, per category, overall (categories 1–4) and for the questions of 1–4 that name a time
//! (`dated`: "in December 2023", `search::when`), with ingest and recall timings.
//!
//! Each turn is one document: the speaker (a `person`) `said` the turn (a `turn` entity named by
//! its `dia_id`: each conversation gets a database of its own), the claim's text the turn's text (and its image caption), its
//! id the `dia_id`, its valid time the session's date (plus the turn's position in seconds, so
//! turns keep their order). Documents commit in groups; texts are embedded in one call per group.
//! The questions are asked on a clock set to a day after the conversation's last turn.

use crate::fail::{bug, fail, Failure};
use engram::ingest::{Conversation, IngestDoc, IngestOptions, Turn};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Documents per commit group (as `engram ingest`).
const GROUP: usize = 256;

/// The options of `engram replay`.
pub struct ReplayArgs<'a> {
    pub file: &'a Path,
    pub embedder: Option<&'a str>,
    pub model_dir: Option<&'a Path>,
    pub budgets: &'a [usize],
    pub ks: &'a [usize],
    pub json: bool,
    pub keep: Option<&'a Path>,
    pub weights: Option<&'a [f64]>,
    pub misses: Option<&'a Path>,
}

/// Sums of one group of questions (a category, or all of 1–4).
#[derive(Default, Clone)]
struct Tally {
    n: usize,
    recall_at: Vec<f64>,
    all_at: Vec<f64>,
    mrr: f64,
    recall_budget: Vec<f64>,
}

impl Tally {
    fn new(ks: usize, budgets: usize) -> Tally {
        Tally { recall_at: vec![0.0; ks], all_at: vec![0.0; ks], recall_budget: vec![0.0; budgets], ..Tally::default() }
    }

    fn add(&mut self, other: &Tally) {
        self.n += other.n;
        self.mrr += other.mrr;
        for (a, b) in
            [(&mut self.recall_at, &other.recall_at), (&mut self.all_at, &other.all_at), (&mut self.recall_budget, &other.recall_budget)]
        {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        }
    }

    fn json(&self, ks: &[usize], budgets: &[usize]) -> Value {
        let mean = |x: f64| if self.n == 0 { 0.0 } else { (x / self.n as f64 * 10_000.0).round() / 10_000.0 };
        let mut m = Map::new();
        m.insert("n".into(), json!(self.n));
        for (i, k) in ks.iter().enumerate() {
            m.insert(format!("recall@{k}"), json!(mean(self.recall_at[i])));
            m.insert(format!("all@{k}"), json!(mean(self.all_at[i])));
        }
        m.insert("mrr".into(), json!(mean(self.mrr)));
        for (i, b) in budgets.iter().enumerate() {
            m.insert(format!("recall@budget{b}"), json!(mean(self.recall_budget[i])));
        }
        Value::Object(m)
    }
}

/// Reads the file, gunzipping a `.gz`.
fn read_samples(file: &Path) -> Result<Vec<Value>, Failure> {
    let bytes = crate::data::read(file)?;
    let text = if file.extension().is_some_and(|e| e == "gz") {
        let mut out = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut out)
            .map_err(|e| format!("{}: not gzip'd UTF-8 text: {e}", file.display()))?;
        out
    } else {
        String::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8 at byte {}", file.display(), e.utf8_error().valid_up_to()))?
    };
    let de = &mut serde_json::Deserializer::from_str(&text);
    let v: Vec<Value> = serde_path_to_error::deserialize(de).map_err(|e| format!("{}: {}: {}", file.display(), e.path(), e.inner()))?;
    Ok(v)
}

/// `LoCoMo`'s session time (`"1:56 pm on 8 May, 2023"`) as RFC 3339.
fn session_time(text: &str) -> Option<String> {
    const MONTHS: [&str; 12] =
        ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
    let (clock, date) = text.split_once(" on ")?;
    let (hm, half) = clock.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    match half.to_ascii_lowercase().as_str() {
        "pm" if h < 12 => h += 12,
        "am" if h == 12 => h = 0,
        "am" | "pm" => {}
        _ => return None,
    }
    let mut parts = date.split([' ', ',']).filter(|p| !p.is_empty());
    let day: u32 = parts.next()?.parse().ok()?;
    let name = parts.next()?.to_ascii_lowercase();
    let month = MONTHS.iter().position(|m| *m == name)? + 1;
    let year: u32 = parts.next()?.parse().ok()?;
    Some(format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:00Z"))
}

/// One sample's documents (the conversation ingest's, one per turn) and its turns' texts by id.
fn documents(sample: &Value, id: &str) -> Result<(Vec<IngestDoc>, HashMap<String, String>), Failure> {
    let conv = sample.get("conversation").and_then(Value::as_object).ok_or_else(|| format!("sample {id}: no `conversation` object"))?;
    let mut sessions: Vec<(u32, &Vec<Value>)> =
        conv.iter().filter_map(|(k, v)| Some((k.strip_prefix("session_")?.parse::<u32>().ok()?, v.as_array()?))).collect();
    sessions.sort_by_key(|s| s.0);
    // Each conversation has a database of its own: a turn's `dia_id` names it.
    let mut conversation = Conversation { workspace: "default".into(), id: id.to_owned(), turns: Vec::new() };
    for (n, items) in sessions {
        let when = conv.get(&format!("session_{n}_date_time")).and_then(Value::as_str).and_then(session_time);
        let base = when.as_deref().and_then(|t| engram::Timestamp::parse(t).ok());
        for (i, turn) in items.iter().enumerate() {
            let field = |k: &str| turn.get(k).and_then(Value::as_str).unwrap_or("").trim().to_owned();
            conversation.turns.push(Turn {
                id: field("dia_id"),
                speaker: field("speaker"),
                text: field("text"),
                at: base.map(|t| t.plus_seconds(i as i64).to_rfc3339()),
                image_caption: Some(field("blip_caption")).filter(|c| !c.is_empty()),
            });
        }
    }
    let docs = engram::ingest::conversation_documents(&conversation).map_err(|e| format!("sample {id}: conversation.{e}"))?;
    Ok((docs, conversation.turns.into_iter().map(|t| (t.id, t.text)).collect()))
}

/// The database of one sample (in memory, or in `keep`/`id`) and its clock's time: the questions
/// are asked a day after the conversation's last turn, so "in June" is the conversation's June,
/// not this year's.
fn sample_db(keep: Option<&Path>, id: &str, docs: &[IngestDoc]) -> Result<(engram::Database, engram::Timestamp), Failure> {
    let last = docs.iter().filter_map(|d| d.source.extracted_at.as_deref()).filter_map(|t| engram::Timestamp::parse(t).ok()).max();
    let clock: Arc<dyn engram::Clock> = match last {
        Some(t) => Arc::new(engram::ManualClock::new(t.plus_seconds(86_400))),
        None => Arc::new(engram::SystemClock),
    };
    let config = engram::Config { clock: clock.clone(), ..engram::Config::default() };
    let db = match keep {
        Some(dir) => engram::Database::open_with(dir.join(id), config, Arc::new(engram::OsVfs)).map_err(fail)?,
        None => engram::Database::with_config(config),
    };
    Ok((db, clock.now()))
}

/// The turns a question cites that its conversation has.
fn evidence_of(qa: &Value, turns: &HashMap<String, String>) -> Vec<String> {
    let cited = qa.get("evidence").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    cited.iter().filter_map(Value::as_str).map(|e| e.trim().to_owned()).filter(|e| turns.contains_key(e)).collect()
}

/// The fusion weights `--weights` gives (the defaults without it).
fn path_weights(given: Option<&[f64]>) -> Result<engram::PathWeights, Failure> {
    match given {
        None => Ok(engram::PathWeights::default()),
        Some(&[semantic, lexical, graph, recency]) if [semantic, lexical, graph, recency].iter().all(|w| w.is_finite() && *w >= 0.0) => {
            Ok(engram::PathWeights { semantic, lexical, graph, recency })
        }
        Some(_) => Err("--weights: four non-negative numbers, semantic,lexical,graph,recency".into()),
    }
}

/// `engram replay`.
pub fn run(a: &ReplayArgs<'_>) -> Result<(), Failure> {
    if a.budgets.is_empty() || a.ks.is_empty() {
        return Err("--budgets and --k need at least one value each".into());
    }
    let samples = read_samples(a.file)?;
    let (ks, budgets) = (a.ks, a.budgets);
    let weights = path_weights(a.weights)?;
    let mut by_category: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut turns_total, mut ingest_s, mut recall_ms) = (0usize, 0.0f64, Vec::new());
    let mut skipped = 0usize;
    // What a context line costs against its text: tokens summed over each question's top 10.
    let (mut line_tokens, mut text_tokens) = (0usize, 0usize);
    // One embedder for every sample: loading MiniLM once, not per conversation.
    let (embedder, embedder_why) = engram::embed::select(a.embedder, a.model_dir, 384).map_err(fail)?;
    // Speakers resolve by name; turns never resolve to one another by name similarity (their
    // names differ only in the turn number).
    let opts = IngestOptions { resolve_similarity: Some(2.0), ..IngestOptions::default() };
    let mut misses = match a.misses {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| Failure::operator(format!("--misses {}: {e}", p.display())))?,
        )),
        None => None,
    };
    for (si, sample) in samples.iter().enumerate() {
        let id = sample.get("sample_id").and_then(Value::as_str).map_or_else(|| format!("sample-{si}"), str::to_owned);
        let (docs, turns) = documents(sample, &id)?;
        let (db, now) = sample_db(a.keep, &id, &docs)?;
        db.set_embedder(embedder.clone()).map_err(fail)?;
        turns_total += docs.len();
        let t = Instant::now();
        for group in docs.chunks(GROUP) {
            for r in db.ingest_docs(group.to_vec(), &opts).map_err(fail)? {
                r.map_err(fail)?;
            }
        }
        ingest_s += t.elapsed().as_secs_f64();
        let snap = db.snapshot();
        let ws = snap.workspace("default").map_err(fail)?;
        for qa in sample.get("qa").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
            let question = qa.get("question").and_then(Value::as_str).unwrap_or("");
            let category = qa.get("category").map(|c| c.to_string().trim_matches('"').to_owned()).unwrap_or_default();
            let evidence = evidence_of(qa, &turns);
            if question.is_empty() || evidence.is_empty() {
                skipped += 1;
                continue;
            }
            let t = Instant::now();
            let mut q = engram::RecallQuery { budget: usize::MAX / 4, weights, ..engram::RecallQuery::new(question) };
            q.vector = db.embed_question(question, &ws.question_to_embed(&q).map_err(fail)?).map_err(fail)?;
            let r = ws.recall(&q).map_err(fail)?;
            recall_ms.push(t.elapsed().as_secs_f64() * 1e3);
            let ranked: Vec<&str> = r.packed.facts.iter().map(|f| f.claim_id.as_str()).collect();
            // What the context block of each budget holds: the packing recall does at that budget.
            let packed: Vec<Vec<String>> = budgets
                .iter()
                .map(|b| engram::search::context::pack(r.packed.facts.iter().cloned(), *b).facts.into_iter().map(|f| f.claim_id).collect())
                .collect();
            for f in r.packed.facts.iter().take(10) {
                if let Some(t) = &f.text {
                    line_tokens += f.tokens;
                    text_tokens += engram::search::context::count_tokens(t);
                }
            }
            // The questions of categories 1–4 that name a time ("in December 2023") also get a row.
            let dated = ["1", "2", "3", "4"].contains(&category.as_str()) && !engram::search::when::times_in(question, now).is_empty();
            if let Some(w) = misses.as_mut().filter(|_| ["1", "2", "3", "4"].contains(&category.as_str())) {
                write_miss(
                    w,
                    &Question { sample: &id, category: &category, qa, evidence: &evidence, turns: &turns },
                    &ranked,
                    &r.packed.facts,
                )
                .map_err(|e| Failure::operator(format!("--misses: {e}")))?;
            }
            for row in [Some(category), dated.then(|| "dated".to_owned())].into_iter().flatten() {
                let tally = by_category.entry(row).or_insert_with(|| Tally::new(ks.len(), budgets.len()));
                score(tally, &ranked, &packed, &evidence, ks);
            }
        }
    }
    if let Some(mut w) = misses {
        w.flush().map_err(|e| Failure::operator(format!("--misses: {e}")))?;
    }
    let mut overall = Tally::new(ks.len(), budgets.len());
    for (c, t) in &by_category {
        if ["1", "2", "3", "4"].contains(&c.as_str()) {
            overall.add(t);
        }
    }
    recall_ms.sort_by(f64::total_cmp);
    let p50 = recall_ms.get(recall_ms.len() / 2).copied().unwrap_or(0.0);
    let line_cost = if text_tokens > 0 { (line_tokens as f64 / text_tokens as f64 * 1000.0).round() / 1000.0 } else { 0.0 };
    let context = json!({"line_tokens_per_text_token": line_cost, "line_tokens_top10": line_tokens, "text_tokens_top10": text_tokens});
    let timings = json!({"ingest_s": (ingest_s * 1000.0).round() / 1000.0, "turns": turns_total,
        "turns_per_s": if ingest_s > 0.0 { (turns_total as f64 / ingest_s).round() as u64 } else { 0 }, "recall_p50_ms": (p50 * 100.0).round() / 100.0});
    if a.json {
        let cats: Map<String, Value> = by_category.iter().map(|(c, t)| (c.clone(), t.json(ks, budgets))).collect();
        let out = json!({"overall": overall.json(ks, budgets), "by_category": cats, "timings": timings, "context": context, "skipped_questions": skipped,
            "embedder": embedder_why});
        return crate::out::print(&format!("{}\n", serde_json::to_string(&out).map_err(bug)?));
    }
    eprintln!("engram: {embedder_why}");
    crate::out::print(&table(&by_category, &overall, ks, budgets, &format!(
        "ingest {turns_total} turns in {ingest_s:.2} s ({} turns/s); recall p50 {p50:.2} ms; a context line costs {line_cost} tokens per token of its text; {skipped} question(s) without a matching evidence turn skipped; overall = categories 1-4\n",
        timings["turns_per_s"]
    )))
}

/// Ranks a miss is judged at: an evidence turn below this rank, or absent, makes its question a miss.
const MISS_RANK: usize = 10;

/// One question of a sample, as `--misses` writes it.
struct Question<'a> {
    sample: &'a str,
    category: &'a str,
    qa: &'a Value,
    evidence: &'a [String],
    turns: &'a HashMap<String, String>,
}

/// Writes `q` to `w` as one JSON line when some of its evidence is not in recall's top
/// `MISS_RANK`: each evidence turn with its text and rank (1-based; null when recall did not
/// return it), then recall's top `MISS_RANK` facts.
fn write_miss(w: &mut dyn Write, q: &Question<'_>, ranked: &[&str], facts: &[engram::search::context::Fact]) -> std::io::Result<()> {
    let rank = |e: &str| ranked.iter().position(|x| *x == e).map(|p| p + 1);
    if q.evidence.iter().all(|e| rank(e).is_some_and(|r| r <= MISS_RANK)) {
        return Ok(());
    }
    let evidence: Vec<Value> =
        q.evidence.iter().map(|e| json!({"turn": e, "rank": rank(e), "text": q.turns.get(e).map_or("", String::as_str)})).collect();
    let top: Vec<Value> = facts
        .iter()
        .take(MISS_RANK)
        .enumerate()
        .map(|(i, f)| json!({"rank": i + 1, "turn": f.claim_id, "score": f.score, "text": f.text}))
        .collect();
    let line = json!({"sample": q.sample, "category": q.category, "question": q.qa.get("question"), "answer": q.qa.get("answer"),
        "evidence": evidence, "top": top});
    writeln!(w, "{line}")
}

/// The human table: a row per category, then overall, then `footer`.
fn table(by_category: &BTreeMap<String, Tally>, overall: &Tally, ks: &[usize], budgets: &[usize], footer: &str) -> String {
    use std::fmt::Write as _;
    let mut out = format!("{:<10} {:>5}", "category", "n");
    for k in ks {
        let _ = write!(out, " {:>9} {:>7}", format!("recall@{k}"), format!("all@{k}"));
    }
    let _ = write!(out, " {:>6}", "mrr");
    for b in budgets {
        let _ = write!(out, " {:>10}", format!("@{b}tok"));
    }
    out.push('\n');
    let rows = by_category.iter().map(|(c, t)| (c.as_str(), t)).chain([("overall", overall)]);
    for (name, t) in rows {
        let v = t.json(ks, budgets);
        let at = |key: String| v[key].as_f64().unwrap_or(0.0);
        let _ = write!(out, "{name:<10} {:>5}", t.n);
        for k in ks {
            let _ = write!(out, " {:>9.3} {:>7.3}", at(format!("recall@{k}")), at(format!("all@{k}")));
        }
        let _ = write!(out, " {:>6.3}", at("mrr".to_owned()));
        for b in budgets {
            let _ = write!(out, " {:>10.3}", at(format!("recall@budget{b}")));
        }
        out.push('\n');
    }
    out + footer
}

/// Adds one question's scores: `ranked` is recall's whole ordering (claim ids), `packed` the
/// claims in the context block of each budget.
fn score(t: &mut Tally, ranked: &[&str], packed: &[Vec<String>], evidence: &[String], ks: &[usize]) {
    let want: HashSet<&str> = evidence.iter().map(String::as_str).collect();
    let found_in =
        |ids: &mut dyn Iterator<Item = &str>| ids.filter(|id| want.contains(id)).collect::<HashSet<_>>().len() as f64 / want.len() as f64;
    t.n += 1;
    for (i, k) in ks.iter().enumerate() {
        let share = found_in(&mut ranked.iter().take(*k).copied());
        t.recall_at[i] += share;
        t.all_at[i] += if share >= 1.0 { 1.0 } else { 0.0 };
    }
    if let Some(pos) = ranked.iter().position(|x| want.contains(x)) {
        t.mrr += 1.0 / (pos + 1) as f64;
    }
    for (i, ids) in packed.iter().enumerate() {
        t.recall_budget[i] += found_in(&mut ids.iter().map(String::as_str));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_times_parse() {
        assert_eq!(session_time("1:56 pm on 8 May, 2023").as_deref(), Some("2023-05-08T13:56:00Z"));
        assert_eq!(session_time("12:05 am on 20 January, 2024").as_deref(), Some("2024-01-20T00:05:00Z"));
        assert_eq!(session_time("12:30 pm on 1 June, 2023").as_deref(), Some("2023-06-01T12:30:00Z"));
        assert_eq!(session_time("soon"), None);
    }

    #[test]
    fn scores_count_evidence_by_rank_and_budget() {
        let mut t = Tally::new(2, 2);
        let ranked = ["a", "x", "b"];
        let packed = vec![vec!["a".to_owned(), "x".to_owned()], vec!["a".to_owned(), "x".to_owned(), "b".to_owned()]];
        score(&mut t, &ranked, &packed, &["a".into(), "b".into()], &[1, 3]);
        assert_eq!((t.recall_at.clone(), t.all_at.clone()), (vec![0.5, 1.0], vec![0.0, 1.0]));
        assert!((t.mrr - 1.0).abs() < 1e-9);
        assert_eq!(t.recall_budget, vec![0.5, 1.0]);
    }
}
