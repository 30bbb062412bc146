#!/usr/bin/env bash
# .ci/pg-chroot.sh MAJOR [COMMAND [ARGS...]]  -- run COMMAND (default:
# test/run_all.sh) against PostgreSQL MAJOR inside the cached Debian chroot
# that `.ci/build-pg.sh MAJOR` provides (17: trixie, 19: sid with
# experimental's PostgreSQL, arm64: bookworm's PostgreSQL 15 for aarch64,
# run under qemu-user emulation; created on first use, a few minutes;
# reused with no network afterwards).  So the whole suite for 17 is
#
#     .ci/pg-chroot.sh 17                # = test/run_all.sh, in the chroot
#     .ci/pg-chroot.sh 17 test/stage_regress.sh
#     .ci/pg-chroot.sh arm64 test/stage_unit.sh    # aarch64, emulated
#
# (.ci/pg17-chroot.sh [COMMAND...] is .ci/pg-chroot.sh 17 [COMMAND...].)
#
# Why a chroot: bookworm has neither PostgreSQL 17 nor 19, and their
# servers need a newer libc (trixie's, sid's).  Inside, PostgreSQL, its
# -dev files, the TAP modules, gcc, valgrind and python3 are that suite's
# packages.  The chroot is found through the pg_config path build-pg.sh
# prints ($CACHE/SUITE-pgMAJOR/usr/lib/postgresql/MAJOR/bin/pg_config).
#
# For the command's duration the repository (the clone this script is in)
# is bind-mounted at /fasttime inside the chroot, and /proc, /sys (read-only:
# the extension reads the kernel clocksource there) and /dev/shm are
# mounted (.ci/chroot-mounts.sh); COMMAND runs in /fasttime with
# PG_CONFIG=/usr/lib/postgresql/MAJOR/bin/pg_config and a clean environment
# plus the caller's FT_* and PG_TEST_* variables.  Everything is unmounted
# when the command ends, fails or is interrupted; mounts or processes left
# by a run that was killed outright are cleared by the next run.  Runs are
# serialised per MAJOR (they share the chroot).  Exits with COMMAND's status.
# Runs as root (chroot, mount).
set -u
cd "$(dirname "$0")/.."
repo=$(pwd)
if [ $# -lt 1 ] || ! [[ $1 =~ ^([0-9]+|arm64)$ ]]; then
	echo "usage: $0 MAJOR|arm64 [COMMAND [ARGS...]]   (MAJOR: 17 or 19; arm64: 15 on aarch64)" >&2
	exit 2
fi
# KEY names the chroot (and its lock) for build-pg.sh; MAJOR is the
# PostgreSQL version in it
KEY=$1
MAJOR=$1
[ "$KEY" = arm64 ] && MAJOR=15
shift
CACHE=${FASTTIME_CI_CACHE:-/var/cache/fasttime-ci}
[ "$(id -u)" = 0 ] || { echo "pg-chroot: must run as root (chroot, mount)" >&2; exit 1; }
mkdir -p "$CACHE"

# one run at a time: runs share the chroot's mounts (build-pg.sh takes this
# lock too before it touches the chroot, unless told we hold it)
exec 8>"$CACHE/.lock-$KEY-chroot"
flock 8
export FASTTIME_CI_CHROOT_LOCKED=1

pgc=$(.ci/build-pg.sh "$KEY" | tail -n 1)
root=${pgc%/usr/lib/postgresql/$MAJOR/bin/pg_config}
if [ -z "$pgc" ] || [ "$root" = "$pgc" ] || [ ! -x "$pgc" ]; then
	echo "pg-chroot: no PostgreSQL $MAJOR chroot (.ci/build-pg.sh $KEY failed or gives no chroot)" >&2
	exit 1
fi

. .ci/chroot-mounts.sh
trap 'chroot_release "$root" || echo "pg-chroot: WARNING: mounts left under $root" >&2' EXIT
# the EXIT trap also runs when we are interrupted
trap 'exit 130' INT
trap 'exit 143' TERM HUP
if ! chroot_mount "$root" "$repo"; then
	echo "pg-chroot: cannot mount /proc, /sys, /dev/shm, $repo in $root" >&2
	exit 1
fi

# A source tarball for test/stage_pgregress.sh named by a host path: the
# chroot sees the repository only, so one outside it is copied into the
# chroot (kept there, replaced when it differs) and named by its path
# inside.
if [ -n "${FT_PG_SOURCE_TARBALL:-}" ] && [ -f "$FT_PG_SOURCE_TARBALL" ]; then
	src_tar=$(readlink -f "$FT_PG_SOURCE_TARBALL")
	case $src_tar in
	"$repo"/*) FT_PG_SOURCE_TARBALL=$CHROOT_REPO_DIR/${src_tar#"$repo"/} ;;
	*)
		mkdir -p "$root/var/tmp/fasttime-src"
		dest=/var/tmp/fasttime-src/$(basename "$src_tar")
		cmp -s "$src_tar" "$root$dest" || cp "$src_tar" "$root$dest" || {
			echo "pg-chroot: cannot copy $src_tar into $root" >&2
			exit 1
		}
		FT_PG_SOURCE_TARBALL=$dest
		;;
	esac
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
