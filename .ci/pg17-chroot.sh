#!/usr/bin/env bash
# .ci/pg17-chroot.sh [COMMAND [ARGS...]]  -- run COMMAND (default:
# test/run_all.sh) against PostgreSQL 17 inside the cached Debian trixie
# chroot that `.ci/build-pg.sh 17` provides (created on first use, ~1 min;
# reused with no network afterwards).  So the whole suite for 17 is
#
#     .ci/pg17-chroot.sh                 # = test/run_all.sh, in the chroot
#     .ci/pg17-chroot.sh test/stage_regress.sh
#
# Why a chroot: bookworm has no PostgreSQL 17, and trixie's server needs
# trixie's libc.  Inside, PostgreSQL 17, its -dev files, the TAP modules,
# gcc, valgrind and python3 are trixie's packages.
#
# For the command's duration the repository (the clone this script is in)
# is bind-mounted at /fasttime inside the chroot, and /proc, /sys (read-only:
# the extension reads the kernel clocksource there) and /dev/shm are
# mounted (.ci/chroot-mounts.sh); COMMAND runs in /fasttime with
# PG_CONFIG=/usr/lib/postgresql/17/bin/pg_config and a clean environment
# plus the caller's FT_* and PG_TEST_* variables.  Everything is unmounted
# when the command ends, fails or is interrupted; mounts or processes left
# by a run that was killed outright are cleared by the next run.  Runs are
# serialised (they share the chroot).  Exits with COMMAND's status.
# Runs as root (chroot, mount).
set -u
cd "$(dirname "$0")/.."
repo=$(pwd)
MAJOR=17
CACHE=${FASTTIME_CI_CACHE:-/var/cache/fasttime-ci}
[ "$(id -u)" = 0 ] || { echo "pg17-chroot: must run as root (chroot, mount)" >&2; exit 1; }
mkdir -p "$CACHE"

# one run at a time: runs share the chroot's mounts (build-pg.sh takes this
# lock too before it touches the chroot, unless told we hold it)
exec 8>"$CACHE/.lock-$MAJOR-chroot"
flock 8
export FASTTIME_CI_CHROOT_LOCKED=1

pgc=$(.ci/build-pg.sh $MAJOR | tail -n 1)
root=${pgc%/usr/lib/postgresql/$MAJOR/bin/pg_config}
if [ -z "$pgc" ] || [ "$root" = "$pgc" ] || [ ! -x "$pgc" ]; then
	echo "pg17-chroot: no PostgreSQL $MAJOR chroot (.ci/build-pg.sh $MAJOR failed)" >&2
	exit 1
fi

. .ci/chroot-mounts.sh
trap 'chroot_release "$root" || echo "pg17-chroot: WARNING: mounts left under $root" >&2' EXIT
# the EXIT trap also runs when we are interrupted
trap 'exit 130' INT
trap 'exit 143' TERM HUP
if ! chroot_mount "$root" "$repo"; then
	echo "pg17-chroot: cannot mount /proc, /sys, /dev/shm, $repo in $root" >&2
	exit 1
fi

envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
	LANG=C.UTF-8 TERM=${TERM:-dumb}
	PG_CONFIG=/usr/lib/postgresql/$MAJOR/bin/pg_config)
for v in $(compgen -e | grep -E '^(FT_|PG_TEST_)'); do
	envs+=("$v=${!v}")
done
[ $# -gt 0 ] || set -- test/run_all.sh
# 8>&-: the command (and a server it leaves behind) must not inherit the
# lock, or after a killed run the next one would wait for that leftover
# instead of ending it
chroot "$root" /usr/bin/env -i "${envs[@]}" /bin/bash -c \
	'cd "$0" && exec "$@"' "$CHROOT_REPO_DIR" "$@" 8>&-
