//! Durable-commit and replay figures, measured beside this disk's own write+fdatasync rate in the
//! same run: `cargo run --release -p engram-bench --bin durable [-- --seconds S --dir DIR]`.
//! With `--data DIR` (workload CSVs) it also bulk-loads them into a durable database, checkpoints,
//! and times reopening from the snapshot. With `--base DIR` the commits go to a database that
//! already holds that workload's data (bulk-loaded as a snapshot first), so their cost is
//! measured at that scale. Under fsync policy `always` each commit measurement follows the
//! group-commit floor at the same writer count (`engram_bench::floor`: the same durability with no
//! engine work), and reports its rate as `vs_floor`. Prints one JSON line per measurement.

#[path = "workloads/load.rs"]
#[allow(dead_code)] // Reason: shared with the workloads harness, which uses all of it.
mod load;

/// On mimalloc, like the `engram` binary that serves these commits (and the other harnesses).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use engram::{AddClaim, Database, EntityId, WriteBatch};
use serde_json::json;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Command-line arguments.
#[derive(Parser, Debug)]
struct Args {
    /// Seconds per measurement.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Folder to work in (a fresh temporary folder inside it is used and removed).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
    /// Writer counts to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 16])]
    writers: Vec<usize>,
    /// Fsync policy of the commit measurements: `always`, `batch` or `never`.
    #[arg(long, default_value = "always")]
    fsync: String,
    /// Workload data folder (from gen.py) for the checkpoint and reopen figures.
    #[arg(long)]
    data: Option<std::path::PathBuf>,
    /// Workload data folder (from gen.py) loaded into the commit database (written as a snapshot)
    /// before the commit measurements (e.g. the M data: the commits then copy-on-write a
    /// 5M-claim state).
    #[arg(long)]
    base: Option<std::path::PathBuf>,
    /// Keep the database written by the commit measurements (its path is printed), so that its
    /// WAL can be replayed again, e.g. by `engram stats` under a profiler.
    #[arg(long)]
    keep: bool,
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

/// `a / b` to two decimals (0 when `b` is 0).
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        (a as f64 / b as f64 * 100.0).round() / 100.0
    }
}

/// Microseconds of process CPU per commit, when the CPU time is known.
fn cpu_us_per_commit(cpu_seconds: Option<f64>, commits: u64) -> Option<f64> {
    cpu_seconds.map(|c| (c * 1e6 / commits.max(1) as f64).round())
}

/// Runs the group-commit floor (`engram_bench::floor`) with `threads` writers; prints its line and
/// returns its rate.
fn measure_floor(dir: &std::path::Path, threads: usize, span: Duration) -> std::io::Result<f64> {
    let cpu0 = engram_bench::process_cpu_seconds();
    let f = engram_bench::floor::run(dir, threads, span)?;
    let cpu = engram_bench::process_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    let lat = &f.latencies_us;
    println!(
        "{}",
        json!({"measure": "group_commit_floor", "threads": threads, "ops_per_s": f.rate().round(), "commits_per_fsync": ratio(f.commits, f.syncs),
               "cpu_us_per_commit": cpu_us_per_commit(cpu, f.commits), "p50_us": pct(lat, 0.5).round(), "p99_us": pct(lat, 0.99).round(), "max_us": lat.last().copied().unwrap_or(0.0).round()})
    );
    Ok(f.rate())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let base = args.dir.unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::tempdir_in(base)?;
    let span = Duration::from_secs_f64(args.seconds);

    // The disk: 128-byte append + fdatasync, one thread.
    let mut f = std::fs::File::create(tmp.path().join("raw"))?;
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < span {
        f.write_all(&[7u8; 128])?;
        f.sync_data()?;
        n += 1;
    }
    let raw = n as f64 / t0.elapsed().as_secs_f64();
    println!("{}", json!({"measure": "disk_write_fdatasync", "threads": 1, "ops_per_s": raw.round()}));

    // engram: one-claim durable commits (fsync policy `always`).
    let fsync = engram::settings::parse_fsync(&args.fsync).ok_or("--fsync: expected always, never or batch:MILLISECONDS")?;
    let config = engram::Config { fsync, ..engram::Config::default() };
    let db = Database::open_with(tmp.path().join("db"), config, Arc::new(engram::OsVfs))?;
    if let Some(base) = &args.base {
        let t0 = Instant::now();
        // Written as a snapshot, as `engram import` does: no WAL record, so no automatic
        // checkpoint of the whole state runs in the background while the commits are timed.
        db.bulk_load_checkpointed(load::read_dir(base).map_err(|e| e.to_string())?)?;
        let (entities, claims, _) = db.snapshot().counts();
        println!(
            "{}",
            json!({"measure": "base_loaded", "entities": entities, "claims": claims, "seconds": (t0.elapsed().as_secs_f64() * 1000.0).round() / 1000.0})
        );
    }
    let (first, logged_from) = (db.snapshot().counts().0 as u32, db.snapshot().version());
    let mut setup = WriteBatch::new("default");
    for i in 0..1000 {
        setup.upsert_entity(&format!("e{i}"), "thing", &format!("E{i}"));
    }
    db.write(&setup)?;
    for &threads in &args.writers {
        // The machine's own group-commit rate at this writer count, just before engram's.
        let floor = if fsync == engram::FsyncPolicy::Always { Some(measure_floor(tmp.path(), threads, span)?) } else { None };
        measure_commits(&db, first, threads, span, Baselines { disk: raw, floor }, &args.fsync);
    }
    let records = db.snapshot().version() - logged_from;
    db.wait_for_merge(); // a background merge holds a handle (and so the folder lock) until it ends
    drop(db);
    let t0 = Instant::now();
    let db = Database::open(tmp.path().join("db"))?;
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(db.snapshot().version(), records + logged_from);
    // With a base, the open also reads its snapshot: `records_per_s` then understates the replay.
    println!(
        "{}",
        json!({"measure": "wal_replay", "records": records, "after_snapshot": args.base.is_some(), "seconds": (secs * 1000.0).round() / 1000.0, "records_per_s": (records as f64 / secs).round()})
    );
    drop(db);
    if args.keep {
        let kept = tmp.keep();
        println!("{}", json!({"measure": "kept", "path": kept.join("db")}));
        return Ok(());
    }
    if let Some(data) = args.data {
        let bulk = load::read_dir(&data).map_err(|e| e.to_string())?;
        let path = tmp.path().join("big");
        let db = Database::open(&path)?;
        let t0 = Instant::now();
        db.bulk_load(&bulk)?;
        let load_s = t0.elapsed().as_secs_f64();
        drop(bulk);
        let t0 = Instant::now();
        db.checkpoint()?;
        let checkpoint_s = t0.elapsed().as_secs_f64();
        let claims = db.snapshot().counts().1;
        db.wait_for_merge();
        drop(db);
        let t0 = Instant::now();
        let db = Database::open(&path)?;
        let open_s = t0.elapsed().as_secs_f64();
        assert_eq!(db.snapshot().counts().1, claims);
        let snap_bytes: u64 = std::fs::read_dir(&path)?
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "snap"))
            .map(|e| e.metadata().map_or(0, |m| m.len()))
            .sum();
        println!(
            "{}",
            json!({"measure": "durable_bulk_checkpoint_reopen", "claims": claims, "bulk_load_logged_s": (load_s * 1000.0).round() / 1000.0,
                   "checkpoint_s": (checkpoint_s * 1000.0).round() / 1000.0, "snapshot_mb": (snap_bytes as f64 / 1_048_576.0).round(),
                   "reopen_from_snapshot_s": (open_s * 1000.0).round() / 1000.0})
        );
    }
    Ok(())
}

/// Rates measured beside engram's in the same run.
#[derive(Clone, Copy)]
struct Baselines {
    /// The disk: 128-byte append + fdatasync per second, one thread.
    disk: f64,
    /// The group-commit floor at the same writer count (policy `always` only).
    floor: Option<f64>,
}

/// One-claim commits from `threads` writers for `span` among entities `first..first + 1000`;
/// prints one JSON line.
fn measure_commits(db: &Database, first: u32, threads: usize, span: Duration, base: Baselines, fsync: &str) {
    let stop = Arc::new(AtomicBool::new(false));
    let stats0 = db.commit_stats();
    let cpu0 = engram_bench::process_cpu_seconds();
    let t0 = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut lat = Vec::new();
                let mut i = t as u32;
                while !stop.load(Ordering::Relaxed) {
                    let mut b = WriteBatch::new("default");
                    b.add_claim(AddClaim::new(EntityId(first + i % 1000), "mentions", EntityId(first + (i * 7 + 1) % 1000)));
                    let s = Instant::now();
                    db.write(&b).expect("durable commit");
                    lat.push(s.elapsed().as_secs_f64() * 1e6);
                    i += threads as u32;
                }
                lat
            })
        })
        .collect();
    std::thread::sleep(span);
    stop.store(true, Ordering::Relaxed);
    let mut lat: Vec<f64> = handles.into_iter().flat_map(|h| h.join().expect("writer thread")).collect();
    let secs = t0.elapsed().as_secs_f64();
    let cpu = engram_bench::process_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    lat.sort_by(f64::total_cmp);
    let rate = lat.len() as f64 / secs;
    let stats = db.commit_stats();
    let (commits, groups, fsyncs) = (stats.commits - stats0.commits, stats.groups - stats0.groups, stats.fsyncs - stats0.fsyncs);
    // The serial phases of a commit cycle, in microseconds per fsync (per group without fsyncs).
    let cycles = if fsyncs > 0 { fsyncs } else { groups.max(1) };
    let phase = |a: u64, b: u64| ((a - b) as f64 / 1000.0 / cycles as f64 * 10.0).round() / 10.0;
    let phases = json!({"apply": phase(stats.apply_ns, stats0.apply_ns), "wal_write": phase(stats.wal_write_ns, stats0.wal_write_ns),
                        "fsync": phase(stats.fsync_ns, stats0.fsync_ns), "acks": phase(stats.ack_ns, stats0.ack_ns),
                        "cycle": (secs * 1e6 / cycles as f64).round()});
    println!(
        "{}",
        json!({"measure": "durable_single_claim_commits", "threads": threads, "fsync": fsync, "ops_per_s": rate.round(),
               "vs_disk": (rate / base.disk * 100.0).round() / 100.0, "vs_floor": base.floor.map(|f| (rate / f * 100.0).round() / 100.0), "p50_us": pct(&lat, 0.5).round(), "p99_us": pct(&lat, 0.99).round(), "max_us": lat.last().copied().unwrap_or(0.0).round(),
               "commits_per_group": ratio(commits, groups), "commits_per_fsync": ratio(commits, fsyncs),
               "cpu_us_per_commit": cpu_us_per_commit(cpu, lat.len() as u64), "cpu_share": cpu.map(|c| (c / secs * 100.0).round() / 100.0),
               "us_per_cycle": phases})
    );
}
