#!/usr/bin/env bash
# The README's test command: set up the machine, run every test; ends with a table of wall time
# per phase and `N passed, N failed, K skipped` (K: document checks skipped for want of the
# hardware documents).
set -euo pipefail
cd "$(dirname "$0")/.."
setup_start=$(date +%s%N)
bash scripts/setup.sh
setup_ms=$(( ($(date +%s%N) - setup_start) / 1000000 ))
# The set-up row of the phase table.
XTASK_SETUP_SECONDS=$(printf '%d.%03d' $((setup_ms / 1000)) $((setup_ms % 1000)))
export XTASK_SETUP_SECONDS
exec cargo xtask test
