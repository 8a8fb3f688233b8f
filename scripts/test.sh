#!/usr/bin/env bash
# The tests: the Rust workspace (unit, property, TCK, durability), then the Python package's tests
# (embedded and client) and the server black-box tests
# with the real clients (redis-py, falkordb-py, redis-cli, the MCP SDK, Selenium with Chromium)
# against `target/debug/engram serve` and `engram mcp`, from a pinned virtualenv in .venv. Needs
# the Rust toolchain, python3 (with venv) and, for the redis-cli, redis-benchmark, tmux and browser
# tests, Debian's redis-tools, tmux, chromium and chromium-driver (.ci/run installs them; without
# them those tests skip, saying why).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-model.sh
cargo test --workspace
cargo build -p engram-cli
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/pip install -q --disable-pip-version-check -r requirements-ci.txt
# The Python package, built in the dev profile into the same target directory as the tests above.
(cd python && VIRTUAL_ENV="$PWD/../.venv" ../.venv/bin/maturin develop -q)
.venv/bin/python -m pytest -q -p no:cacheprovider python/tests
.venv/bin/python -m pytest -q -p no:cacheprovider tests/python
