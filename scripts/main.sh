#!/usr/bin/env bash
# The README's main command: set up the machine, build everything, print register coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec cargo xtask main
