//! Ontology figures on the real data of `../shared/data`: import of UBERON (cellxgene JSON) and
//! of `WordNet` 3.0 nouns (as engram term JSON lines), descendants of top-level UBERON classes with
//! distances, and a full profile build of UBERON.
//! `cargo run --release -p engram-bench --bin ontology [-- --data ../shared/data --runs 5]`.
//! Prints one JSON line per measurement; times are medians of `--runs`.

/// On mimalloc, like the workloads harness (see there why).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use engram::ontology::{self, Format, ProfileConfig, Profiles, Relations};
use engram::{Database, Visibility};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Command-line arguments.
#[derive(Parser, Debug)]
struct Args {
    /// The shared data folder.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Runs per import measurement (the median is printed).
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

/// Parse + import into a fresh in-memory database, and into a fresh durable folder (fsync
/// `always`, checkpoint included); medians in seconds.
fn time_import(
    text: &str,
    format: Format,
    name: &str,
    runs: usize,
) -> Result<(f64, f64, f64, ontology::ImportReport), Box<dyn std::error::Error>> {
    let (mut parse, mut mem, mut disk) = (Vec::new(), Vec::new(), Vec::new());
    let mut report = None;
    for _ in 0..runs {
        let t = Instant::now();
        let doc = ontology::detect::parse(text.as_bytes(), format, name)?;
        parse.push(t.elapsed().as_secs_f64());
        let db = Database::in_memory();
        let t = Instant::now();
        let doc2 = ontology::detect::parse(text.as_bytes(), format, name)?;
        report = Some(ontology::import_ontology(&db, "default", &doc2)?);
        mem.push(t.elapsed().as_secs_f64());
        let dir = tempfile::tempdir()?;
        let t = Instant::now();
        let db = Database::open(dir.path().join("db"))?;
        ontology::import_ontology(&db, "default", &doc)?;
        db.checkpoint()?;
        db.wait_for_merge();
        disk.push(t.elapsed().as_secs_f64() + parse.last().copied().unwrap_or(0.0));
    }
    Ok((median(parse), median(mem), median(disk), report.ok_or("no runs")?))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if let Some(d) = &args.data {
        std::env::set_var("ENGRAM_SHARED_DATA", d);
    }
    let runs = args.runs.max(1);

    let uberon = engram_tests::read_shared("obo-cxg/UBERON-cxg-v2026-04-01.json.gz");
    let (parse, mem, disk, r) = time_import(&uberon, Format::CxgJson, "uberon", runs)?;
    println!(
        "{}",
        json!({"measure": "import_uberon_json", "terms": r.terms, "edges": r.is_a, "parse_s": parse, "parse_and_import_s": mem,
               "durable_with_checkpoint_s": disk, "target_s": 2.0})
    );

    let (wordnet, synsets, links) = engram_tests::wordnet_nouns_jsonl(&engram_tests::read_shared("wordnet/dict/data.noun.gz"));
    let (parse, mem, disk, r) = time_import(&wordnet, Format::TermsJsonl, "wordnet", runs)?;
    assert_eq!((r.terms, r.is_a), (synsets, links));
    println!(
        "{}",
        json!({"measure": "import_wordnet_nouns", "terms": r.terms, "edges": r.is_a, "parse_s": parse, "parse_and_import_s": mem,
               "durable_with_checkpoint_s": disk, "target_s": 3.0})
    );

    let db = Database::in_memory();
    let doc = ontology::detect::parse(uberon.as_bytes(), Format::CxgJson, "uberon")?;
    ontology::import_ontology(&db, "default", &doc)?;
    db.compact();
    let snap = db.snapshot();
    let ws = snap.workspace("default")?;
    let v = Visibility::default();
    let is_a = Relations::is_a();
    // Top-level classes: live terms with no parent, by descendant count.
    let mut tops: Vec<(usize, String)> = Vec::new();
    for t in doc.terms.iter().filter(|t| t.parents.is_empty() && !t.obsolete) {
        let e = ws.entity_id(&t.id).ok_or("imported")?;
        tops.push((ws.descendants_over(e, &is_a, &v)?.len(), t.id.clone()));
    }
    tops.sort_unstable_by(|a, b| b.cmp(a));
    for (n, id) in tops.iter().take(3) {
        let e = ws.entity_id(id).ok_or("imported")?;
        let mut times = Vec::new();
        for _ in 0..300 {
            let t = Instant::now();
            let d = ws.descendants_over(e, &is_a, &v)?;
            times.push(t.elapsed().as_secs_f64() * 1e6);
            assert_eq!(d.len(), *n);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{}",
            json!({"measure": "uberon_descendants", "term": id, "descendants": n, "p50_us": pct(&times, 0.5), "p99_us": pct(&times, 0.99), "target_p50_us": 1000})
        );
    }

    let mut times = Vec::new();
    let mut count = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let p = Profiles::build(&ws, ProfileConfig::default())?;
        times.push(t.elapsed().as_secs_f64());
        count = p.len();
    }
    println!("{}", json!({"measure": "uberon_profiles_build", "profiles": count, "seconds": median(times), "target_s": 5.0}));
    Ok(())
}
