#!/usr/bin/env bash
# Stage: build warning-free (-Wall -Wextra -Werror) and install.
# FT_NO_INSTALL=1 only compiles (for versions we have headers but no
# server for).
set -u
cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-pg_config}
WFLAGS="-Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers"
make -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
if make -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS="$WFLAGS" && \
	{ [ -n "${FT_NO_INSTALL:-}" ] || make -s PG_CONFIG="$PG_CONFIG" install >/dev/null; }; then
	echo "ok: build with $WFLAGS${FT_NO_INSTALL:+ (not installed)}, against $("$PG_CONFIG" --version)"
	echo "STAGE_RESULT build 1 0"
else
	echo "not ok: build or install failed"
	echo "STAGE_RESULT build 0 1"
fi
