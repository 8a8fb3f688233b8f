//! Tidy checks over the source tree (as rust-analyzer's `tidy.rs` does): every Rust file opens with
//! a `//!` doc saying what it is for, no `dbg!` is left behind, every `unsafe` block carries a
//! `// Safety:` comment, and the crate dependency arrows point the way `ARCHITECTURE.md` says.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace root").to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for krate in ["engine", "storage", "embed", "query", "server", "cli", "bench", "tests"] {
        rust_files(&root().join(krate), &mut files);
    }
    assert!(files.len() > 10, "found only {} files", files.len());
    files
}

#[test]
fn every_file_starts_with_a_module_doc() {
    for f in all_sources() {
        let text = std::fs::read_to_string(&f).expect("readable source");
        assert!(text.starts_with("//!"), "{} must start with a `//!` doc comment", f.display());
    }
}

#[test]
fn no_dbg_and_unsafe_is_explained() {
    let dbg = ["dbg", "!("].concat();
    let unsafe_block = ["unsafe", " {"].concat();
    for f in all_sources() {
        let text = std::fs::read_to_string(&f).expect("readable source");
        assert!(!text.contains(&dbg), "{} contains a debug macro", f.display());
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.contains(&unsafe_block) {
                let before = &lines[i.saturating_sub(4)..i];
                assert!(
                    before.iter().any(|l| l.contains("Safety:")),
                    "{}:{} unsafe block without a `// Safety:` comment",
                    f.display(),
                    i + 1
                );
            }
        }
    }
}

/// The dependency arrows: `storage`, `embed` and `query` are leaves, `engine` uses them, `server`
/// and `cli` use `engine`, only `cli` depends on `server` (for `engram serve`), nothing on `cli`.
#[test]
fn dependency_arrows_point_one_way() {
    let forbidden: &[(&str, &[&str])] = &[
        ("storage", &["engram", "engram-query", "engram-server", "engram-cli", "engram-embed"]),
        ("embed", &["engram", "engram-storage", "engram-query", "engram-server", "engram-cli"]),
        ("query", &["engram", "engram-storage", "engram-server", "engram-cli"]),
        ("engine", &["engram-server", "engram-cli"]),
        ("server", &["engram-storage", "engram-query", "engram-embed", "engram-cli"]),
        ("cli", &["engram-storage", "engram-query", "engram-embed"]),
    ];
    for (krate, banned) in forbidden {
        let Ok(manifest) = std::fs::read_to_string(root().join(krate).join("Cargo.toml")) else { continue };
        let deps: Vec<&str> = manifest
            .split("\n[")
            .filter(|s| s.contains("dependencies]"))
            .flat_map(|s| s.lines().skip(1))
            .filter_map(|l| l.split(['=', '.']).next())
            .map(str::trim)
            .collect();
        for b in *banned {
            assert!(!deps.contains(b), "{krate} must not depend on {b}");
        }
    }
}

/// An embedded user who turns the default features off compiles no model runtime and no ontology
/// parser: `cargo tree -p engram -e normal --no-default-features` lists none of them.
#[test]
fn the_engine_without_default_features_pulls_no_models_or_ontology_parsers() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = std::process::Command::new(cargo)
        .args(["tree", "-p", "engram", "-e", "normal", "--no-default-features", "--prefix", "none", "--offline"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    let crates: std::collections::BTreeSet<&str> = tree.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(crates.contains("engram") && crates.contains("engram-embed"), "{tree}");
    for banned in ["candle", "tokenizers", "safetensors", "fastobo", "oxrdf", "oxrdfio", "flate2"] {
        let found: Vec<&&str> = crates.iter().filter(|c| **c == banned || c.starts_with(&format!("{banned}-"))).collect();
        assert!(found.is_empty(), "{banned}: {found:?} in the engine's tree without default features");
    }
}

/// Code above the read surface (the ontology tools, the report, recall's fusion and packing)
/// reads the snapshot only through the catalog, scans, expand iterator and column accessors, so
/// scopes and visibility apply to it as to every other reader. Each exception says why.
#[test]
fn consumers_of_the_read_surface_read_no_raw_columns() {
    const EXCEPTIONS: &[(&str, &str)] =
        &[("ontology/hierarchy.rs", "its closure walk reads the per-predicate adjacency directly: a traversal kernel, as read/khop.rs")];
    let src = root().join("engine/src");
    let mut files = Vec::new();
    rust_files(&src.join("ontology"), &mut files);
    rust_files(&src.join("exec"), &mut files);
    files.extend(["report.rs", "search/recall.rs", "search/context.rs"].map(|f| src.join(f)));
    let tables = ["entities", "claims", "catalog", "bitmaps", "graph", "evidence"];
    let mut found = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        if EXCEPTIONS.iter().any(|(x, _)| *x == rel) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            if tables.iter().any(|t| line.contains(&format!("st.{t}"))) {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "raw column reads outside the state's modules:\n{}", found.join("\n"));
}

/// The engine's layers, lowest first. A module imports (`crate::…` in code, tests aside) only from
/// its own layer or lower ones, and never through the crate root's re-exports, so no import
/// circle can form (`python3 ../shared/tools/modcycles.py engine/src` says 0).
const ENGINE_LAYERS: &[&[&str]] = &[
    &["ids", "time", "temporal", "spatial", "value", "model", "normalize", "limits", "pmap", "error", "settings", "tags", "pii"],
    &["index"],
    &["state"],
    &["read", "stats"],
    &["search"],
    &["write"],
    &["persist"],
    &["db", "reaper"],
    &["io", "ontology", "report", "exec"],
];

#[test]
fn engine_imports_point_down_the_layers() {
    let src = root().join("engine/src");
    let layer_of = |m: &str| ENGINE_LAYERS.iter().position(|l| l.contains(&m));
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "lib.rs" {
            continue;
        }
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs").to_owned();
        let Some(mine) = layer_of(&top) else {
            found.push(format!("{rel}: module `{top}` is in no layer of ENGINE_LAYERS"));
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '{').collect();
                match layer_of(&name) {
                    Some(theirs) if theirs > mine => found.push(format!("{rel}:{}: `{top}` imports the higher `{name}`", n + 1)),
                    Some(_) => {}
                    None => found.push(format!("{rel}:{}: `crate::{name}` goes through the crate root's re-exports", n + 1)),
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
