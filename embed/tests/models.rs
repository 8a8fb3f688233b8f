//! The built-in embedders against independent references: `MiniLM` against a numpy forward pass of
//! the same BERT over the same safetensors file (tokenization included), the static table against
//! `MiniLM`'s similarities, and the selection rules. Needs the model: `scripts/fetch-model.sh`.

use engram_embed::{cosine, pair_similarities, select, spearman, Embedder, MiniLm, StaticModel, HELD_PAIRS, MAX_WORD_PIECES};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn model_dir() -> PathBuf {
    let dir = engram_embed::default_model_dir();
    assert!(MiniLm::present(&dir), "no MiniLM in {}: run scripts/fetch-model.sh first", dir.display());
    dir
}

fn unit(v: &[f32]) -> bool {
    (v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4
}

#[test]
fn minilm_vectors_are_unit_deterministic_and_batch_independent() {
    let m = MiniLm::load(&model_dir()).expect("loads");
    let texts = ["AuthService streams events with Kinesis.", "A cat.", "The heart pumps blood through the body and the lungs add oxygen."];
    let batch = m.embed(&texts).expect("embeds");
    assert!(batch.iter().all(|v| v.len() == 384 && unit(v)));
    assert_eq!(batch, m.embed(&texts).expect("again"), "deterministic");
    for (t, v) in texts.iter().zip(&batch) {
        let alone = m.embed(&[t]).expect("alone");
        assert!(cosine(v, &alone[0]) > 0.99999, "padding changed {t}");
    }
}

#[test]
fn minilm_ranks_paraphrases_above_unrelated_pairs() {
    let m = MiniLm::load(&model_dir()).expect("loads");
    let sims = pair_similarities(&m).expect("embeds");
    // Pairs 0..20 are paraphrases, 20..32 pair a sentence with an unrelated one.
    let para = &sims[..20];
    let unrelated = &sims[20..32];
    let worst_para = para.iter().copied().fold(f32::MAX, f32::min);
    let best_unrelated = unrelated.iter().copied().fold(f32::MIN, f32::max);
    assert!(worst_para > best_unrelated, "paraphrase min {worst_para} vs unrelated max {best_unrelated}");
    for (i, pair) in HELD_PAIRS[20..32].iter().enumerate() {
        let p = HELD_PAIRS[..20].iter().position(|q| q.0 == pair.0).expect("left sentence has a paraphrase");
        assert!(sims[p] > unrelated[i] + 0.3, "{}", pair.0);
    }
}

#[test]
fn minilm_agrees_with_an_independent_numpy_forward_pass() {
    let dir = model_dir();
    let long = "memory ".repeat(400);
    let texts = vec![
        "AuthService streams events with Kinesis.".to_owned(),
        "How do I reset my password?!".to_owned(),
        "Café déjà vu — naïve façade".to_owned(),
        "Neurons (nerve cells) transmit electrical signals; glia support them.".to_owned(),
        "東京 is the capital of Japan".to_owned(),
        "x".to_owned(),
        long,
    ];
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/minilm_reference.py");
    // The reference runs in the venv `scripts/fetch-model.sh` makes beside the model (numpy pinned),
    // else in the system's python3.
    let venv = dir.join(".venv/bin/python");
    let python = if venv.exists() { venv } else { PathBuf::from("python3") };
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs (the reference needs numpy: scripts/fetch-model.sh makes a venv with it)");
    child.stdin.take().expect("stdin").write_all(serde_json::to_string(&texts).expect("json").as_bytes()).expect("write");
    let out = child.wait_with_output().expect("reference finishes");
    assert!(out.status.success(), "reference failed (needs numpy): {}", String::from_utf8_lossy(&out.stderr));
    let reference: serde_json::Value = serde_json::from_slice(&out.stdout).expect("reference JSON");
    let m = MiniLm::load(&dir).expect("loads");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ours = m.embed(&refs).expect("embeds");
    for (i, text) in texts.iter().enumerate() {
        let want_ids: Vec<u32> = serde_json::from_value(reference["ids"][i].clone()).expect("ids");
        assert_eq!(m.token_ids(text).expect("tokenizes"), want_ids, "tokenization of {text:?}");
        let want: Vec<f32> = serde_json::from_value(reference["vectors"][i].clone()).expect("vector");
        let c = cosine(&ours[i], &want);
        assert!(c >= 0.999, "{text:?}: cosine {c}");
    }
    assert_eq!(m.token_ids(&texts[6]).expect("tokenizes").len(), MAX_WORD_PIECES, "truncated at 256 word pieces");
}

/// The floor: `Model2Vec` reports its distilled static models keeping most of the teacher's
/// ranking quality; on these held pairs the table measured 0.85. A table below 0.75 no longer
/// tracks `MiniLM`'s ordering of related and unrelated pairs (a wrong projection or weighting
/// lands far lower: the hashing embedder, lexical only, is held below it here too).
#[test]
fn static_table_tracks_minilm() {
    let dir = model_dir();
    assert!(StaticModel::present(&dir), "no static table in {}: run scripts/fetch-model.sh first", dir.display());
    let s = StaticModel::load(&dir).expect("loads");
    let m = MiniLm::load(&dir).expect("loads");
    let v = s.embed(&["AuthService streams events", "A cat."]).expect("embeds");
    assert!(v.iter().all(|x| x.len() == s.dim() && unit(x)));
    let (a, b) = (pair_similarities(&m).expect("minilm"), pair_similarities(&s).expect("static"));
    let rho = spearman(&a, &b);
    assert!(rho >= 0.75, "static vs minilm Spearman {rho}");
    let hash = engram_embed::HashEmbedder::new(384);
    let h = pair_similarities(&hash).expect("hash");
    assert!(spearman(&a, &h) < rho, "the static table should track MiniLM better than hashing");
}

#[test]
fn selection_prefers_configured_then_minilm_then_static_then_hash() {
    let empty = tempfile::tempdir().expect("tempdir");
    let (e, why) = select(None, Some(empty.path()), 128).expect("falls back");
    assert_eq!((e.name(), e.dim()), ("hash", 128));
    assert!(why.contains("no model files"), "{why}");
    let err = select(Some("minilm"), Some(empty.path()), 384).err().expect("named but missing");
    assert!(err.to_string().contains("scripts/fetch-model.sh"), "{err}");
    assert!(select(Some("static"), Some(empty.path()), 384).is_err());
    assert!(select(Some("bert-xl"), Some(empty.path()), 384).is_err());
    let dir = model_dir();
    let (e, _) = select(None, Some(&dir), 384).expect("minilm");
    assert_eq!(e.name(), "minilm");
    // Only the static table and the tokenizer: static.
    let only_static = tempfile::tempdir().expect("tempdir");
    for f in ["static.safetensors", "tokenizer.json"] {
        std::fs::copy(dir.join(f), only_static.path().join(f)).expect("copy");
    }
    let (e, why) = select(None, Some(only_static.path()), 384).expect("static");
    assert_eq!(e.name(), "static", "{why}");
}

/// The static embedder's ASCII fast path tokenizes exactly as the `tokenizers` crate does.
#[test]
fn ascii_fast_path_tokenizes_like_the_tokenizers_crate() {
    let dir = model_dir();
    let s = StaticModel::load(&dir).expect("loads");
    let mut tok = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).expect("tokenizer");
    tok.with_padding(None);
    tok.with_truncation(None).expect("no truncation");
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet: Vec<char> =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'\"()-_/#@$%&*+=<>[]{}|\\^`~\t\n\x01".chars().collect();
    let mut texts: Vec<String> = HELD_PAIRS.iter().flat_map(|p| [p.0.to_owned(), p.1.to_owned()]).collect();
    texts.push("x".repeat(150));
    texts.push("unaffable antidisestablishmentarianism xqzvbn".into());
    for _ in 0..3000 {
        let len = (next() % 60) as usize;
        texts.push((0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect());
    }
    for t in &texts {
        let want = tok.encode(t.as_str(), false).expect("encodes");
        let got = s.token_ids(t).expect("ids");
        assert_eq!(got, want.get_ids(), "{t:?}");
    }
}
