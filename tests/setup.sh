#!/usr/bin/env bash
# tests/setup.sh — install what the build and the tests need, then build and
# install lsm_am into the system PostgreSQL 15.  Run as root; a second run
# skips the package step when nothing is missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root
ensure_packages
build_and_install
lsm_log "lsm_am installed into $("$PG_CONFIG" --pkglibdir)"
