#!/usr/bin/env bash
# The README's test command: set up the machine, run every test; ends with
# `N passed, N failed, K skipped` (K: document checks skipped for want of the hardware documents).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec cargo xtask test
