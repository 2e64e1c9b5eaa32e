#!/usr/bin/env bash
# tests/setup.sh — install what the build and the tests need, then build and
# install lsm_am into the PostgreSQL of PG_CONFIG (the system's 15 by default;
# tests/run_all.sh --pg 18 points it at the build of tests/build_pg18.sh).
# Run as root; a second run skips the package step when nothing is missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root
ensure_packages
build_and_install
lsm_log "lsm_am installed into $("$PG_CONFIG" --pkglibdir)"
