#!/usr/bin/env bash
# .ci/pg17-chroot.sh [COMMAND [ARGS...]]  -- kept for existing callers: the
# same as `.ci/pg-chroot.sh 17 [COMMAND [ARGS...]]` (run COMMAND, default
# test/run_all.sh, against PostgreSQL 17 in the cached Debian trixie
# chroot; see .ci/pg-chroot.sh).
exec "$(dirname "$0")/pg-chroot.sh" 17 "$@"
