#!/usr/bin/env bash
# Stage: TAP tests (t/*.pl, PostgreSQL::Test::Cluster) against the
# PostgreSQL that PG_CONFIG names, with the fasttime that stage_build
# installed there.  Also builds a FAULT_INJECTION=1 fasttime into a private
# installation (test/fault/private_install.sh; never the system one) for
# the tests that need fact or tick faults, and hands it to them as
# FT_FAULT_INSTALL; test/stage_no_faults.sh must reject that build.
#
# initdb and postgres refuse root, so as root the tests run as FT_TEST_USER
# (default postgres) in a temporary directory that user owns.
#
#   test/stage_tap.sh                      all of t/*.pl
#   FT_TAP_TESTS="t/002_parallel.pl" test/stage_tap.sh
#   FT_TAP_EXCLUDE="t/012_profiled_consistency.pl" test/stage_tap.sh
#                                          all but these (CI, for time)
#   FT_TAP_FAULT_ROOT=/tmp/x FT_TAP_NO_FAULT_BUILD=1 test/stage_tap.sh
#                                          reuse a private fault build
#   FT_TICK_SOURCE=worker test/stage_tap.sh
#                                          every preloading server starts
#                                          with the tick worker (t/lib/FtTest.pm),
#                                          so profiled runs take its ticks
#
# Ends with "STAGE_RESULT tap <passed> <failed>", counting TAP test points
# (a skipped or TODO point counts as passed); a test file that dies or
# breaks its plan without a failed point counts as one failure, and so
# does a failed fault build (the fault tests then skip).
set -u
cd "$(dirname "$0")/.."
src=$(pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}
export PG_CONFIG
FT_TEST_USER=${FT_TEST_USER:-postgres}
pg_major=$("$PG_CONFIG" --version 2>/dev/null | sed 's/^[^0-9]*\([0-9]*\).*/\1/')
fault_root=${FT_TAP_FAULT_ROOT:-/tmp/ft-tap-fault-root-$pg_major}

extra_fail=0
bindir=$("$PG_CONFIG" --bindir) || { echo "not ok - $PG_CONFIG does not run"; echo "STAGE_RESULT tap 0 1"; exit 0; }
pkglibdir=$("$PG_CONFIG" --pkglibdir)
pgxssrc=$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")
perldir=$pgxssrc/test/perl
# Cluster::init runs "pg_regress --config-auth", which only matters on Windows
pg_regress=$pgxssrc/test/regress/pg_regress
[ -x "$pg_regress" ] || pg_regress=/bin/true
if [ ! -f "$perldir/PostgreSQL/Test/Cluster.pm" ]; then
	echo "not ok - no PostgreSQL::Test modules in $perldir (server built without --enable-tap-tests?)"
	echo "STAGE_RESULT tap 0 1"
	exit 0
fi
if [ ! -f "$pkglibdir/fasttime.so" ]; then
	echo "not ok - fasttime is not installed in $pkglibdir (run test/stage_build.sh first)"
	echo "STAGE_RESULT tap 0 1"
	exit 0
fi
if ! perl -MIPC::Run -e 1 2>/dev/null; then
	echo "not ok - Perl module IPC::Run missing (apt-get install libipc-run-perl)"
	echo "STAGE_RESULT tap 0 1"
	exit 0
fi
if [ "$(id -u)" = 0 ] && ! id "$FT_TEST_USER" >/dev/null 2>&1; then
	useradd --system --create-home "$FT_TEST_USER"
fi

# ---- the fault-injection build, privately ---------------------------------
fault_install=
. test/fault/private_install.sh
if [ -z "${FT_TAP_NO_FAULT_BUILD:-}" ]; then
	echo "# building FAULT_INJECTION=1 into $fault_root"
	t0=$(date +%s)
	if FT_SYSTEM_PG_CONFIG=$PG_CONFIG ft_private_install "$fault_root" FAULT_INJECTION=1; then
		echo "# fault build ready in $(($(date +%s) - t0)) s"
		# the product's check (stage_no_faults.sh) must see what it looks for
		test/stage_no_faults.sh "$fault_root$pkglibdir/fasttime.so" >/dev/null
		if [ $? -eq 1 ]; then
			echo "# stage_no_faults.sh rejects the fault build, as it must"
		else
			echo "not ok - stage_no_faults.sh does not reject the fault build"
			extra_fail=$((extra_fail + 1))
		fi
	else
		echo "not ok - fault-injection build into $fault_root failed: fault tests will skip"
		extra_fail=$((extra_fail + 1))
	fi
fi
priv_pg_config=$(FT_SYSTEM_PG_CONFIG=$PG_CONFIG ft_private_pg_config "$fault_root")
if [ -x "$priv_pg_config" ] && [ -f "$("$priv_pg_config" --pkglibdir)/fasttime.so" ]; then
	fault_install=$(dirname "$(dirname "$priv_pg_config")")
fi

# ---- run the tests as the unprivileged user -------------------------------
work=$(mktemp -d /tmp/ft-tap.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r t "$work/t"
mkdir "$work/test"
cp test/tsc_explained.py "$work/test/"
chmod -R a+rX "$work"
[ "$(id -u)" = 0 ] && chown -R "$FT_TEST_USER" "$work"
# the witness of the machine's own TSC jumps (test/tsc_watch.c), for the
# tests' "no WARNING" checks (FtTest::ft_no_warning)
. test/cluster.sh
ft_tsc_watch_start "$work"

tests=()
for f in ${FT_TAP_TESTS:-t/*.pl}; do
	case " ${FT_TAP_EXCLUDE:-} " in
	*" t/$(basename "$f") "*) echo "# left out (FT_TAP_EXCLUDE): t/$(basename "$f")"; continue ;;
	esac
	tests+=("$work/t/$(basename "$f")")
done

as_user() {
	if [ "$(id -u)" = 0 ]; then runuser -u "$FT_TEST_USER" -- "$@"; else "$@"; fi
}
[ -n "${FT_TICK_SOURCE:-}" ] && echo "# servers start with fasttime.tick_source = $FT_TICK_SOURCE (FT_TICK_SOURCE)"
t0=$(date +%s)
out=$work/prove.out
(cd "$work" && as_user env PATH="$bindir:$PATH" PERL5LIB="$perldir${PERL5LIB:+:$PERL5LIB}" \
	TESTDIR="$work" PG_REGRESS="$pg_regress" FT_FAULT_INSTALL="$fault_install" \
	FT_SRCDIR="$src" FT_TSC_WATCH_LOG="$FT_TSC_WATCH_LOG" PG_TEST_TIMEOUT_DEFAULT=60 \
	prove -v --timer "${tests[@]}") >"$out" 2>&1
cat "$out"
echo "# prove took $(($(date +%s) - t0)) s"

# a failing TODO point is an expected failure: prove passes it, so do we
passed=$(( $(grep -cE '^ok [0-9]+' "$out") + $(grep -E '^not ok [0-9]+' "$out" | grep -c '# TODO') ))
failed=$(grep -E '^not ok [0-9]+' "$out" | grep -vc '# TODO')
# a file that died, or whose plan does not match, without a failed point
# (prove's summary: "FILE (Wstat: W ... Failed: 0)" then indented details;
# a passing TODO point is listed there too but is no failure)
dubious=$(awk '
	/\.pl +\(Wstat: / { flush(); f = ($0 ~ /Failed: 0\)$/); w = ($0 !~ /Wstat: 0 /); p = 0; next }
	/^  Parse errors:/ { p = 1 }
	function flush() { if (f && (w || p)) n++; f = 0 }
	END { flush(); print n + 0 }' "$out")
failed=$((failed + dubious + extra_fail))

# help whoever reads a failure: the end of each failing file's log
if [ "$failed" -gt 0 ]; then
	for f in "$work"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] || continue
		grep -q '^not ok\|Dubious\|died' "$f" 2>/dev/null || continue
		echo "# ---- tail of $(basename "$f")"
		tail -n 40 "$f" | sed 's/^/# /'
	done
fi
echo "STAGE_RESULT tap $passed $failed"
