#!/usr/bin/env bash
# CI stage: release metadata and the Debian package.
#
#   - test/check_version.sh: one release version everywhere it is written
#   - test/validate_meta.py: META.json follows the PGXN Meta Spec 1.0.0
#   - `make dist` makes fasttime-<version>.zip holding that META.json
#   - from a clean clone of HEAD (in a temporary directory, so the .debs,
#     .buildinfo and .changes that dpkg-buildpackage writes to the parent
#     directory land there): pg_buildext updatecontrol, install the build
#     dependencies, dpkg-buildpackage -us -uc -b (which also runs the
#     regression tests against the built files), and check that there is a
#     postgresql-<v>-fasttime .deb per version `pg_buildext
#     supported-versions` names, holding the module, control file and SQL
#     script and depending on postgresql-<v>
#   - `apt-get install ./postgresql-<v>-fasttime_*.deb`, the autopkgtest
#     (debian/tests/installcheck: the regression tests against the
#     installed package, in pg_virtualenv clusters), `apt-get purge`, and a
#     check that none of the package's files are left.
#
# Installing the package replaces the fasttime files an earlier
# `make install` put into the system PostgreSQL, and purging it deletes
# them; this stage saves those files first and puts them back afterwards,
# so the system is left as it was found.  The install/test/purge part holds
# the lock FASTTIME_PG_LOCK (default /tmp/fasttime-pg15.lock), which
# other users of the system PostgreSQL can take too.
#
# Runs as root (apt-get, dpkg).  Tests what is committed: uncommitted
# changes are not in the clone.  Ends with
#   STAGE_RESULT package <passed> <failed>
set -u
cd "$(dirname "$0")/.." || exit 1
export DEBIAN_FRONTEND=noninteractive
repo=$PWD
port=${FASTTIME_CI_DEB_PORT:-55490}
lock=${FASTTIME_PG_LOCK:-/tmp/fasttime-pg15.lock}

pass=0
fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
finish() {
	echo "STAGE_RESULT package $pass $fail"
	exit 0
}
add_stage() {					# add_stage LOGFILE: add its STAGE_RESULT
	local line p f
	line=$(grep '^STAGE_RESULT ' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		notok "$(basename "$1") printed no result"
		return
	fi
	read -r _ _ p f <<<"$line"
	pass=$((pass + p))
	fail=$((fail + f))
}

tmp=$(mktemp -d /tmp/fasttime-pkg.XXXXXX)
# the build-time tests' server (user postgres) reads the built files
chmod 755 "$tmp"
pkgs=()
purge_pending=
cleanup() {
	# interrupted between install and purge: do not leave the package
	[ -n "$purge_pending" ] && apt-get purge -y -qq "${pkgs[@]}" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# tools this stage uses beyond the build dependencies (installed below)
need=()
for t in python3:python3 unzip:unzip dpkg-buildpackage:dpkg-dev git:git; do
	command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
		apt-get install -y --no-install-recommends "${need[@]}"
fi

echo "== release version and META.json"
test/check_version.sh | tee "$tmp/version.log"
add_stage "$tmp/version.log"
test/validate_meta.py META.json | tee "$tmp/meta.log"
add_stage "$tmp/meta.log"

echo "== clean clone of $(git rev-parse --short HEAD)"
src=$tmp/fasttime
if git clone -q --no-local "$repo" "$src" && git -C "$src" checkout -q --detach "$(git rev-parse HEAD)"; then
	ok "clone"
else
	notok "clone"
	finish
fi
release=$(sed -n 's/^FASTTIME_VERSION[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/\1/p' "$src/Makefile")
debver=$(sed -n '1s/^fasttime (\([^)]*\)).*/\1/p' "$src/debian/changelog")
arch=$(dpkg --print-architecture)

echo "== make dist"
if (cd "$src" && make -s dist PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config) &&
	[ -f "$src/fasttime-$release.zip" ] &&
	unzip -p "$src/fasttime-$release.zip" "fasttime-$release/META.json" |
		grep -q "\"version\": \"$release\""; then
	ok "make dist: fasttime-$release.zip with fasttime-$release/META.json"
else
	notok "make dist: fasttime-$release.zip with fasttime-$release/META.json"
fi
rm -f "$src/fasttime-$release.zip"

echo "== build dependencies and dpkg-buildpackage"
versions=$(cd "$src" && pg_buildext supported-versions | xargs)
echo "PostgreSQL versions to package: ${versions:-none}"
if [ -z "$versions" ]; then
	notok "pg_buildext supported-versions names no version"
	finish
fi
(cd "$src" && pg_buildext updatecontrol)
if (cd "$src" && apt-get build-dep -y -qq ./ >"$tmp/build-dep.log" 2>&1); then
	ok "build dependencies installed"
else
	cat "$tmp/build-dep.log"
	notok "build dependencies installed"
	finish
fi
if (cd "$src" && PGPORT=$port dpkg-buildpackage -us -uc -b >"$tmp/build.log" 2>&1); then
	grep -E '^(test |ok |not ok |### |dpkg-deb: building)' "$tmp/build.log"
	ok "dpkg-buildpackage -us -uc -b (with the build-time installcheck)"
else
	tail -n 80 "$tmp/build.log"
	notok "dpkg-buildpackage -us -uc -b (with the build-time installcheck)"
	finish
fi

debs=()
for v in $versions; do
	deb=$tmp/postgresql-$v-fasttime_${debver}_$arch.deb
	if [ ! -f "$deb" ]; then
		notok "postgresql-$v-fasttime_${debver}_$arch.deb built"
		continue
	fi
	debs+=("$deb")
	files=$(dpkg-deb -c "$deb" | awk '{print $6}')
	depends=$(dpkg-deb -f "$deb" Depends)
	missing=""
	for f in "./usr/lib/postgresql/$v/lib/fasttime.so" \
		"./usr/share/postgresql/$v/extension/fasttime.control" \
		"./usr/share/postgresql/$v/extension/fasttime--${release%.*}.sql"; do
		grep -qxF "$f" <<<"$files" || missing+=" $f"
	done
	if [ -z "$missing" ] && [[ "$depends" =~ (^|, )postgresql-$v( |,|$) ]]; then
		ok "$(basename "$deb"): module, control file, SQL script; Depends: $depends"
	else
		notok "$(basename "$deb"): missing:${missing:- nothing}; Depends: $depends"
	fi
done
[ ${#debs[@]} -gt 0 ] || finish

echo "== install, autopkgtest, purge (holding $lock)"
# the autopkgtest runs in a source tree without build products, as
# autopkgtest itself would unpack it
testsrc=$tmp/testsrc
mkdir "$testsrc" && git -C "$src" archive HEAD | tar -x -C "$testsrc"
exec 8>"$lock"
flock 8
# the fasttime files of an earlier `make install` (owned by no package),
# saved to be put back after the purge
saved=()
for v in $versions; do
	for f in /usr/lib/postgresql/$v/lib/fasttime.so \
		/usr/lib/postgresql/$v/lib/bitcode/fasttime.index.bc \
		/usr/lib/postgresql/$v/lib/bitcode/fasttime \
		/usr/share/postgresql/$v/extension/fasttime.control \
		/usr/share/postgresql/$v/extension/fasttime--*.sql; do
		[ -e "$f" ] && ! dpkg -S "$f" >/dev/null 2>&1 && saved+=("${f#/}")
	done
done
[ ${#saved[@]} -gt 0 ] && tar -C / -cf "$tmp/saved.tar" "${saved[@]}"
for deb in "${debs[@]}"; do pkgs+=("$(dpkg-deb -f "$deb" Package)"); done
purge_pending=1
if apt-get install -y -qq "${debs[@]}" >"$tmp/install.log" 2>&1; then
	ok "apt-get install ${debs[*]##*/}"
	installed=1
else
	cat "$tmp/install.log"
	notok "apt-get install ${debs[*]##*/}"
	installed=
fi
if [ -n "$installed" ]; then
	for p in "${pkgs[@]}"; do
		dpkg -L "$p" >>"$tmp/pkgfiles"
		if out=$(dpkg --verify "$p" 2>&1) && [ -z "$out" ]; then
			ok "$p installed, files as packaged (dpkg --verify)"
		else
			notok "$p installed, files as packaged (dpkg --verify): $out"
		fi
	done
	# debian/tests/installcheck as autopkgtest runs it
	(cd "$testsrc" && PGPORT=$port debian/tests/installcheck) >"$tmp/installcheck.log" 2>&1
	rc=$?
	cat "$tmp/installcheck.log"
	# pg_regress: "test NAME ... ok|FAILED" (15) or "ok N - NAME" /
	# "not ok N - NAME" (16+)
	p=$(grep -cE '(\.\.\. ok|^ok [0-9]+ )' "$tmp/installcheck.log")
	f=$(grep -cE '(\.\.\. FAILED|^not ok [0-9]+ )' "$tmp/installcheck.log")
	ntests=$(ls "$testsrc"/sql/*.sql | wc -l)
	nver=$(wc -w <<<"$versions")
	if [ $((p + f)) -lt $((ntests * nver)) ]; then
		f=$((ntests * nver - p))
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	echo "installed-package regression tests: $p passed, $f failed (exit $rc)"
	pass=$((pass + p))
	fail=$((fail + f))
fi
apt-get purge -y -qq "${pkgs[@]}" >"$tmp/purge.log" 2>&1 || cat "$tmp/purge.log"
purge_pending=
left=""
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv '^not-installed$' &&
		left+=" package:$p"
done
if [ -f "$tmp/pkgfiles" ]; then
	while read -r f; do
		[ -f "$f" ] && left+=" $f"
	done <"$tmp/pkgfiles"
fi
if [ -z "$left" ]; then
	ok "apt-get purge ${pkgs[*]}: nothing left"
else
	notok "apt-get purge ${pkgs[*]}: left:$left"
fi
# put back what an earlier `make install` had installed
if [ -f "$tmp/saved.tar" ]; then
	tar -C / --no-overwrite-dir -xf "$tmp/saved.tar"
	echo "restored the files of the earlier make install:" "${saved[@]/#//}"
fi
flock -u 8
finish
