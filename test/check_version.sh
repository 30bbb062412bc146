#!/usr/bin/env bash
# Check that the release version is one number everywhere it is written.
#
# The rule: the release version R = X.Y.Z is set by FASTTIME_VERSION in the
# Makefile (it names the `make dist` zip) and must be
#   - META.json "version" and provides.fasttime.version,
#   - the upstream part of the newest debian/changelog version (R-N),
# while default_version in fasttime.control is the extension's SQL version,
# which is X.Y (the major.minor of R): a patch release (X.Y.Z+1) changes no
# SQL, so it keeps the same install script fasttime--X.Y.sql, which must be
# META.json's provides.fasttime.file and in the Makefile's DATA.
#
# Prints "ok N - ..." / "not ok N - ..." lines and ends with
#   STAGE_RESULT version <passed> <failed>
set -u
cd "$(dirname "$0")/.." || exit 1

pass=0
fail=0
n=0
check() {					# check DESCRIPTION EXPECTED ACTUAL
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n - $1 ($3)"
		pass=$((pass + 1))
	else
		echo "not ok $n - $1: expected '$2', found '$3'"
		fail=$((fail + 1))
	fi
}

meta() {					# meta PYTHON-EXPRESSION-ON-m
	python3 -c 'import json, sys
m = json.load(open("META.json"))
try:
    print(eval(sys.argv[1]))
except Exception as e:
    print("<%s>" % e)' "$1" 2>&1
}

release=$(sed -n 's/^FASTTIME_VERSION[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/\1/p' Makefile)
n=$((n + 1))
if [[ "$release" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	echo "ok $n - Makefile FASTTIME_VERSION is X.Y.Z ($release)"
	pass=$((pass + 1))
else
	echo "not ok $n - Makefile FASTTIME_VERSION is not X.Y.Z: '$release'"
	fail=$((fail + 1))
fi
majmin=${release%.*}

check "META.json version" "$release" "$(meta 'm["version"]')"
check "META.json provides.fasttime.version" "$release" \
	"$(meta 'm["provides"]["fasttime"]["version"]')"

# newest entry: "fasttime (R-N) distribution; urgency=..."
deb=$(sed -n '1s/^fasttime (\([^)]*\)).*/\1/p' debian/changelog)
check "debian/changelog upstream version" "$release" "${deb%-*}"
n=$((n + 1))
if [[ "$deb" =~ ^[0-9.]+-[0-9]+$ ]]; then
	echo "ok $n - debian/changelog version is R-N ($deb)"
	pass=$((pass + 1))
else
	echo "not ok $n - debian/changelog version is not R-N: '$deb'"
	fail=$((fail + 1))
fi

default=$(sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" fasttime.control)
check "fasttime.control default_version is major.minor of $release" "$majmin" "$default"

script="fasttime--$default.sql"
check "META.json provides.fasttime.file" "$script" "$(meta 'm["provides"]["fasttime"]["file"]')"
n=$((n + 1))
if [ -f "$script" ] && grep -qE "^DATA[[:space:]]*=.*[[:space:]]$script([[:space:]]|$)" Makefile; then
	echo "ok $n - $script exists and is in the Makefile's DATA"
	pass=$((pass + 1))
else
	echo "not ok $n - $script missing, or not in the Makefile's DATA"
	fail=$((fail + 1))
fi

echo "STAGE_RESULT version $pass $fail"
[ "$fail" -eq 0 ]
