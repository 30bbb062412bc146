#!/usr/bin/env bash
# .ci/build-pg.sh MAJOR  -- make a PostgreSQL MAJOR version available for
# building/testing the extension, and print the path of its pg_config as the
# LAST line of stdout (all other output goes to stderr):
#
#     PG_CONFIG=$(.ci/build-pg.sh 18)
#
# Why: the CI machine is Debian 12 (bookworm), which only ships PostgreSQL 15.
# Newer majors are only reachable through Debian's own archive (the only
# package source we have), in other suites:
#   15  installed from bookworm with apt-get (postgresql-15,
#       postgresql-server-dev-15, libipc-run-perl); prints
#       /usr/lib/postgresql/15/bin/pg_config. Full server, tests can run.
#   17  only binary packages in trixie, whose server needs a newer libc than
#       bookworm's. We debootstrap a minbase Debian trixie chroot into
#       $CACHE/trixie-pg17 and install, with apt-get inside it,
#       postgresql-17 and postgresql-server-dev-17 (PGXS, pg_regress and the
#       PostgreSQL::Test TAP modules), build-essential, libipc-run-perl,
#       python3 and valgrind. Prints the chroot's pg_config as seen from
#       outside ($CACHE/trixie-pg17/usr/lib/postgresql/17/bin/pg_config): it
#       only runs inside the chroot, so run the tests with .ci/pg-chroot.sh 17
#       (or .ci/pg17-chroot.sh), which mounts what they need
#       (.ci/chroot-mounts.sh). Full server, tests can run.
#   18  only as a source package in sid: downloaded with `apt-get source
#       --download-only`, the upstream orig tarball is built (no Debian
#       patches) into $CACHE/pg18 with --enable-debug --enable-tap-tests
#       --without-icu --without-readline (plus contrib auto_explain,
#       pg_stat_statements and postgres_fdw -- t/013's async foreign scans
#       --, the TAP perl modules and pg_regress under
#       lib/pgxs/src/test/). Full server, tests can run (initdb refuses root:
#       run servers/tests as an unprivileged user).
#   19  only binary packages in experimental (no source package), whose
#       server needs sid's libc. Same as 17 with a minbase Debian sid chroot
#       in $CACHE/sid-pg19: experimental is added to its apt sources and
#       postgresql-19, postgresql-server-dev-19, postgresql-client-19,
#       libpq5 and libpq-dev are installed from experimental, the rest
#       (same list as 17) from sid. Prints
#       $CACHE/sid-pg19/usr/lib/postgresql/19/bin/pg_config; run things with
#       .ci/pg-chroot.sh 19. Full server, tests can run.
#   16  not available at all: error.
#   arm64
#       PostgreSQL 15 on aarch64, under emulation: bookworm's arm64
#       postgresql-15 and postgresql-server-dev-15 (plus build-essential,
#       libipc-run-perl, perl, python3, passwd, util-linux; no valgrind) in
#       a minbase arm64 Debian bookworm chroot in $CACHE/bookworm-arm64-pg15,
#       debootstrapped --foreign and finished inside the chroot. Its
#       binaries run through qemu-user-static (installed on the host) and a
#       binfmt_misc entry "qemu-aarch64" with the F (fix-binary) flag, so the
#       interpreter is opened at registration and works inside the chroot
#       without a copy there. The entry is registered (and binfmt_misc
#       mounted) when missing, on every run including cache hits, and left
#       in place: it only makes aarch64 ELF files runnable, which nothing
#       else on the CI machine relies on either way, and it is gone at the
#       next boot. Prints
#       $CACHE/bookworm-arm64-pg15/usr/lib/postgresql/15/bin/pg_config; run
#       things with .ci/pg-chroot.sh arm64. Full server, tests can run
#       (slowly: every instruction is emulated).
#
# The sid/trixie index files (for 18) are fetched with a private apt configuration
# (own sources.list, lists, cache and dpkg status under $CACHE/apt) so that the
# machine's own bookworm apt state is never touched. The mirror URI is read at
# run time from the machine's apt sources (the stanza serving bookworm); no
# host name is written here. Signatures are checked with the keyring named by
# that stanza (debian-archive-keyring, which also covers sid/trixie). The 17
# and 19 chroots are debootstrapped from the same mirror with the same
# keyring (their own apt sources, in the cache, name that mirror; 19's
# experimental source is checked with a copy of that keyring).
#
# Cache: $FASTTIME_CI_CACHE (default /var/cache/fasttime-ci). A version's
# result is reused as-is when its stamp file ($CACHE/pgNN/.fasttime-ci-stamp,
# holding the Debian package version and the build settings; for 17
# $CACHE/trixie-pg17/.fasttime-ci-stamp, for 19 $CACHE/sid-pg19/...) exists
# and the settings match; a cache hit needs no network. Set
# FASTTIME_CI_REFRESH=1 to look for a newer package version and rebuild if
# there is one (17, 19: apt-get upgrade inside the chroot).
# Other knobs: FASTTIME_CI_JOBS (make -j, default nproc+1),
# FASTTIME_CI_CASSERT=1 (PG18: add --enable-cassert).
# Builds happen in $CACHE/build/, never in the repository. Runs as root.
set -euo pipefail

# Everything goes to stderr; the result is written to the saved stdout (fd 3).
exec 3>&1 1>&2
umask 022

log() { echo "build-pg: $*"; }
die() { echo "build-pg: ERROR: $*"; exit 1; }

[[ $# -eq 1 && ( $1 =~ ^[0-9]+$ || $1 == arm64 || $1 == src15 ) ]] ||
    die "usage: $0 MAJOR|arm64|src15   (15, 17, 18, 19; arm64 = 15 on aarch64; src15 = 15's source tarball)"
# KEY names the locks; MAJOR is the PostgreSQL major version
KEY=$1
MAJOR=$1
[[ $KEY == arm64 || $KEY == src15 ]] && MAJOR=15
CACHE=${FASTTIME_CI_CACHE:-/var/cache/fasttime-ci}
JOBS=${FASTTIME_CI_JOBS:-$(( $(nproc) + 1 ))}
REFRESH=${FASTTIME_CI_REFRESH:-0}
[[ $(id -u) -eq 0 ]] || die "must run as root (installs packages)"
mkdir -p "$CACHE"
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

result() { echo "$1" >&3; exit 0; }

# ---------------------------------------------------------------- host apt --
HOST_APT_UPDATED=0
host_install() {   # install bookworm packages that are missing
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' \
            || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    log "installing from the system's apt sources: ${missing[*]}"
    if [[ $HOST_APT_UPDATED -eq 0 ]]; then
        apt-get -o DPkg::Lock::Timeout=600 update -qq
        HOST_APT_UPDATED=1
    fi
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ------------------------------------------------------- private sid/trixie --
# Print "URI KEYRING" of the system source that serves bookworm (main archive,
# not -security), from deb822 *.sources files or one-line sources.list files.
system_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] || continue
        awk '
            function flush() {
                if (uris != "" && types ~ /(^| )deb( |$)/ && suites ~ /(^| )bookworm( |$)/) {
                    split(uris, u, " "); print u[1], (sb == "" ? "-" : sb); found = 1; exit
                }
                uris = ""; suites = ""; types = ""; sb = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            tolower($1) == "uris:"      { $1 = ""; uris = $0; sub(/^ +/, "", uris) }
            tolower($1) == "suites:"    { $1 = ""; suites = $0 " " }
            tolower($1) == "types:"     { $1 = ""; types = $0 " " }
            tolower($1) == "signed-by:" { sb = $2 }
            END { if (!found) flush() }
        ' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f $f ]] || continue
        awk '$1 == "deb" {
                 i = 2; sb = "-"
                 if ($2 ~ /^\[/) {
                     for (; i <= NF; i++) {
                         if ($i ~ /signed-by=/) { sb = $i; sub(/.*signed-by=/, "", sb); sub(/\]$/, "", sb) }
                         if ($i ~ /\]$/) { i++; break }
                     }
                 }
                 if ($(i + 1) == "bookworm") { print $i, sb; exit }
             }' "$f"
    done
}

# set_side DIR: the private apt state in DIR (the sid/trixie one for 18,
# another for bookworm's sources)
set_side() {
SIDE=$1
SIDE_OPTS=(
    -o "Dir::Etc::SourceList=$SIDE/sources.list"
    -o Dir::Etc::SourceParts=/dev/null
    -o Dir::Etc::Preferences=/dev/null
    -o Dir::Etc::PreferencesParts=/dev/null
    -o "Dir::State::Lists=$SIDE/lists"
    -o "Dir::State::Status=$SIDE/status"
    -o "Dir::State::extended_states=$SIDE/extended_states"
    -o "Dir::Cache=$SIDE/cache"
    -o Dir::Cache::pkgcache=pkgcache.bin
    -o Dir::Cache::srcpkgcache=srcpkgcache.bin
    -o APT::Sandbox::User=root
    -o Acquire::Languages=none
)
}
set_side "$CACHE/apt"
side_apt_get()   { apt-get   "${SIDE_OPTS[@]}" "$@"; }
side_apt_cache() { apt-cache "${SIDE_OPTS[@]}" "$@"; }

side_apt_update() {
    local line uri keyring arch
    line=$(system_mirror | head -n1)
    [[ -n $line ]] || die "no apt source serving bookworm found in /etc/apt"
    read -r uri keyring <<<"$line"
    [[ $keyring == - || ! -f $keyring ]] && keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    [[ -f $keyring ]] || die "keyring $keyring missing (package debian-archive-keyring)"
    arch=$(dpkg --print-architecture)
    mkdir -p "$SIDE/lists/partial" "$SIDE/cache/archives/partial"
    touch "$SIDE/status"
    cat >"$SIDE/sources.list" <<EOF
deb-src [signed-by=$keyring] $uri sid main
deb [arch=$arch signed-by=$keyring] $uri trixie main
EOF
    log "updating private apt lists (sid sources, trixie binaries) from the system mirror"
    side_apt_get update -qq
}

# ----------------------------------------------------------------- helpers --
stamp_ok() {   # stamp_ok PREFIX SETTINGS -> 0 if a complete matching build exists
    local st=$1/.fasttime-ci-stamp
    [[ -f $st ]] && grep -qxF "settings=$2" "$st"
}
stamp_version() { sed -n 's/^version=//p' "$1/.fasttime-ci-stamp" 2>/dev/null || true; }
write_stamp() {   # write_stamp PREFIX VERSION SETTINGS
    printf 'major=%s\nversion=%s\nsettings=%s\nbuilt=%s\n' \
        "$MAJOR" "$2" "$3" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$1/.fasttime-ci-stamp"
}

selftest_pgxs() {   # compile a trivial extension with PG_CONFIG=$1
    local pgc=$1 d
    mkdir -p "$CACHE/build"
    d=$(mktemp -d "$CACHE/build/selftest.XXXXXX")
    cat >"$d/ft_selftest.c" <<'EOF'
#include "postgres.h"
#include "fmgr.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "portability/instr_time.h"
PG_MODULE_MAGIC;
PG_FUNCTION_INFO_V1(ft_selftest);
Datum ft_selftest(PG_FUNCTION_ARGS) { PG_RETURN_INT32(1); }
EOF
    printf 'MODULES = ft_selftest\nPG_CONFIG ?= pg_config\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n' >"$d/Makefile"
    if ! make -C "$d" -s PG_CONFIG="$pgc" >"$d/log" 2>&1 || [[ ! -f $d/ft_selftest.so ]]; then
        cat "$d/log"; die "self-test: trivial PGXS extension did not build with $pgc"
    fi
    rm -rf "$d"
}

# Serialise concurrent runs for the same major (arm64 apart).
exec 9>"$CACHE/.lock-$KEY"
flock 9

# ====================================================================== 15 ==
do_system() {
    local pkgs=(postgresql-"$MAJOR" postgresql-server-dev-"$MAJOR" libipc-run-perl gcc make)
    # (in bookworm, contrib is part of postgresql-15; -contrib-15 is virtual)
    if apt-cache show postgresql-contrib-"$MAJOR" 2>/dev/null | grep -q '^Package:'; then
        pkgs+=(postgresql-contrib-"$MAJOR")
    fi
    host_install "${pkgs[@]}"
    local pgc=/usr/lib/postgresql/$MAJOR/bin/pg_config
    [[ -x $pgc ]] || die "$pgc missing after install"
    log "using system PostgreSQL $("$pgc" --version)"
    result "$pgc"
}

# ================================================================ 17, 19 ==
# A minbase Debian chroot with that suite's PostgreSQL (trixie's 17, whose
# server needs trixie's libc; experimental's 19 on a sid userland, as it
# needs sid's libc), so the server cannot run on bookworm directly.
# Provisioned in two resumable steps, each recorded in the chroot:
# debootstrap (marker .fasttime-ci-debootstrap), then apt-get install inside
# it (stamp).  Run things in it with .ci/pg-chroot.sh MAJOR, which mounts
# /proc, /sys, /dev/shm and the repository around the command.
CHROOT_PKGS=(build-essential libipc-run-perl perl python3 valgrind passwd util-linux)
# A foreign-architecture chroot (arm64): CHROOT_ARCH is debootstrap's
# --arch, CHROOT_DIR the directory under $CACHE (default SUITE-pgMAJOR).
CHROOT_ARCH=
CHROOT_DIR=
# chroot_pg SUITE EXTRA_SUITE APT_OPTIONS PGPKG...
#   SUITE        debootstrapped into $CACHE/SUITE-pgMAJOR
#   EXTRA_SUITE  "" or a second suite of the same mirror added to the
#                chroot's apt sources (same keyring as debootstrap's, copied
#                into the chroot), for PGPKGs named PKG/EXTRA_SUITE
#   APT_OPTIONS  "" or blank-separated apt -o settings for every apt-get
#                run in the chroot
#   PGPKG...     the PostgreSQL packages; CHROOT_PKGS come from SUITE
chroot_pg() {
    local suite=$1 extra=$2 aptset=$3; shift 3
    local root=$CACHE/${CHROOT_DIR:-$suite-pg$MAJOR}
    local pkgs=("$@" "${CHROOT_PKGS[@]}")
    local aopts=() o
    for o in $aptset; do aopts+=(-o "$o"); done
    local settings="chroot=$suite,minbase"
    [[ -n $CHROOT_ARCH ]] && settings+=",arch=$CHROOT_ARCH"
    [[ -n $extra ]] && settings+=";extra=$extra"
    [[ -n $aptset ]] && settings+=";apt-options=$aptset"
    settings+=";packages=${pkgs[*]}"
    local pgc=/usr/lib/postgresql/$MAJOR/bin/pg_config
    if stamp_ok "$root" "$settings" && [[ $REFRESH != 1 ]]; then
        log "cache hit: PostgreSQL $MAJOR $(stamp_version "$root") in the $suite chroot $root"
        result "$root$pgc"
    fi
    # .ci/pg-chroot.sh holds this lock already when it calls us
    if [[ -z ${FASTTIME_CI_CHROOT_LOCKED:-} ]]; then
        exec 8>"$CACHE/.lock-$KEY-chroot"
        flock 8
    fi
    . "$(dirname "$0")/chroot-mounts.sh"
    chroot_release "$root" || die "mounts left under $root that cannot be unmounted"
    local line uri keyring
    line=$(system_mirror | head -n1)
    [[ -n $line ]] || die "no apt source serving bookworm found in /etc/apt"
    read -r uri keyring <<<"$line"
    [[ $keyring == - || ! -f $keyring ]] && keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    if [[ ! -f $root/.fasttime-ci-debootstrap ]]; then
        host_install debootstrap
        # an unfinished debootstrap: start over (no mounts are left, checked above)
        rm -rf --one-file-system "$root"
        local t0=$SECONDS dlog=$CACHE/debootstrap-$KEY.log
        if [[ -z $CHROOT_ARCH ]]; then
            log "debootstrap --variant=minbase $suite $root (from the system mirror)"
            debootstrap --variant=minbase --keyring="$keyring" "$suite" "$root" "$uri" \
                >"$dlog" 2>&1 ||
                { tail -n 30 "$dlog"; die "debootstrap failed (log: $dlog)"; }
        else
            # first stage unpacks on the host; the second runs the
            # foreign package scripts inside, through binfmt_misc
            log "debootstrap --arch=$CHROOT_ARCH --foreign --variant=minbase $suite $root (from the system mirror), then its second stage inside, emulated"
            { debootstrap --arch="$CHROOT_ARCH" --foreign --variant=minbase \
                  --keyring="$keyring" "$suite" "$root" "$uri" &&
              chroot "$root" /debootstrap/debootstrap --second-stage 8>&- 9>&-; } \
                >"$dlog" 2>&1 ||
                { tail -n 30 "$dlog"; die "debootstrap failed (log: $dlog)"; }
        fi
        log "debootstrap done in $((SECONDS - t0))s"
        echo "$uri $suite minbase${CHROOT_ARCH:+ $CHROOT_ARCH}" >"$root/.fasttime-ci-debootstrap"
    fi
    if [[ -n $extra ]]; then
        # (rewritten on every provisioning run: the mirror is the system's
        # current one, as for debootstrap)
        mkdir -p "$root/etc/apt/keyrings"
        cp "$keyring" "$root/etc/apt/keyrings/fasttime-ci-archive.gpg"
        echo "deb [signed-by=/etc/apt/keyrings/fasttime-ci-archive.gpg] $uri $extra main" \
            >"$root/etc/apt/sources.list.d/fasttime-ci-$extra.list"
    fi
    # Package scripts must not start services in the chroot (a postmaster
    # left running would keep its mounts busy) and no "main" cluster is
    # wanted: the tests make their own.
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    mkdir -p "$root/etc/postgresql-common"
    echo "create_main_cluster = false" >"$root/etc/postgresql-common/createcluster.conf"
    trap 'chroot_release "$root"' EXIT
    chroot_mount "$root" || die "cannot mount /proc, /sys, /dev/shm in $root"
    # (nothing started in the chroot may keep our locks, fds 8 and 9)
    inside() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
               HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@" 8>&- 9>&-; }
    log "apt-get install in the chroot: ${pkgs[*]}"
    inside apt-get "${aopts[@]}" update -qq || die "apt-get update in the chroot failed"
    [[ $REFRESH == 1 ]] && { inside apt-get "${aopts[@]}" -y -qq upgrade >/dev/null || die "upgrade failed"; }
    inside apt-get "${aopts[@]}" install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null ||
        die "apt-get install in the chroot failed"
    inside apt-get clean
    # Sanity checks on what the tests need (paths inside the chroot).
    local lib=/usr/lib/postgresql/$MAJOR/lib f
    for f in $pgc /usr/lib/postgresql/$MAJOR/bin/{postgres,initdb,pg_ctl,psql,pgbench} \
             $lib/auto_explain.so $lib/pgxs/src/makefiles/pgxs.mk \
             $lib/pgxs/src/test/regress/pg_regress \
             $lib/pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm \
             /usr/bin/gcc /usr/bin/make /usr/bin/python3 /usr/bin/prove \
             /usr/sbin/useradd /usr/sbin/runuser; do
        [[ -e $root$f ]] || die "chroot incomplete: $f missing"
    done
    if [[ " ${pkgs[*]} " == *" valgrind "* ]]; then
        [[ -e $root/usr/bin/valgrind ]] || die "chroot incomplete: /usr/bin/valgrind missing"
    fi
    if [[ -n $CHROOT_ARCH ]]; then
        [[ $(inside dpkg --print-architecture) == "$CHROOT_ARCH" ]] ||
            die "chroot $root is not $CHROOT_ARCH"
    fi
    # pg_stat_statements: required if the server package ships it
    if inside dpkg-query -L postgresql-"$MAJOR" | grep -q '/pg_stat_statements\.so$'; then
        [[ -e $root$lib/pg_stat_statements.so ]] || die "chroot incomplete: $lib/pg_stat_statements.so missing"
    else
        log "note: postgresql-$MAJOR ships no pg_stat_statements.so"
    fi
    inside perl -MIPC::Run -e 1 || die "chroot incomplete: IPC::Run"
    inside "$pgc" --version
    local ver
    ver=$(inside dpkg-query -W -f='${Version}' postgresql-"$MAJOR")
    chroot_release "$root" || die "cannot unmount under $root"
    trap - EXIT
    write_stamp "$root" "$ver" "$settings"
    log "PostgreSQL $MAJOR ($ver) ready in the $suite chroot $root"
    result "$root$pgc"
}

do_pg17() {   # trixie's packages
    chroot_pg trixie "" "" postgresql-"$MAJOR" postgresql-server-dev-"$MAJOR"
}

# 19 is in experimental only (binary packages, no source package) and needs
# sid's libc: a sid chroot with experimental added.  Only the PostgreSQL
# packages (and libpq, which server-dev wants at least as new) are taken
# from experimental, by PKG/experimental: `-t experimental` would pull
# experimental's perl too, which does not resolve.  The mirror's sid and
# experimental Release files are past their Valid-Until, hence
# Acquire::Check-Valid-Until=false (signatures are still checked).
do_pg19() {
    local x=experimental
    chroot_pg sid "$x" "Acquire::Check-Valid-Until=false" \
        postgresql-"$MAJOR"/$x postgresql-server-dev-"$MAJOR"/$x \
        postgresql-client-"$MAJOR"/$x libpq5/$x libpq-dev/$x
}

# =================================================================== arm64 ==
# PostgreSQL 15 on aarch64: bookworm's own arm64 packages, in an arm64
# bookworm chroot run by qemu-user-static.  No valgrind (the sanitize stage
# does not run under emulation).
BINFMT_AARCH64=/usr/lib/binfmt.d/qemu-aarch64.conf
ensure_binfmt_aarch64() {   # register qemu-aarch64 (with the F flag) if missing
    local bm=/proc/sys/fs/binfmt_misc line
    host_install qemu-user-static
    if [[ ! -e $bm/register ]]; then
        log "mounting binfmt_misc on $bm"
        mount -t binfmt_misc binfmt_misc "$bm" || die "cannot mount binfmt_misc"
    fi
    if [[ -e $bm/qemu-aarch64 ]]; then
        grep -q '^enabled' "$bm/qemu-aarch64" || echo 1 >"$bm/qemu-aarch64"
        grep -q '^flags:.*F' "$bm/qemu-aarch64" ||
            die "binfmt_misc entry qemu-aarch64 exists without the F flag: it will not work inside a chroot"
        return 0
    fi
    # the package's systemd-binfmt line is already in the register format
    line=$(grep -m1 '^:qemu-aarch64:' "$BINFMT_AARCH64") ||
        die "$BINFMT_AARCH64 missing (package qemu-user-static)"
    [[ ${line##*:} == *F* ]] || line+=F
    log "registering qemu-aarch64 with binfmt_misc (flags ${line##*:})"
    echo "$line" >"$bm/register" || die "cannot register qemu-aarch64 with binfmt_misc"
}

do_arm64() {
    ensure_binfmt_aarch64
    CHROOT_ARCH=arm64
    CHROOT_DIR=bookworm-arm64-pg$MAJOR
    CHROOT_PKGS=(build-essential libipc-run-perl perl python3 passwd util-linux)
    chroot_pg bookworm "" "" postgresql-"$MAJOR" postgresql-server-dev-"$MAJOR"
}

# ====================================================================== 18 ==
CONTRIB_MODULES=(auto_explain pg_stat_statements postgres_fdw)
do_pg18() {
    local prefix=$CACHE/pg$MAJOR
    local cfg=(--prefix="$prefix" --enable-debug --enable-tap-tests --without-icu --without-readline)
    [[ ${FASTTIME_CI_CASSERT:-0} == 1 ]] && cfg+=(--enable-cassert)
    local settings="configure=${cfg[*]:1};contrib=${CONTRIB_MODULES[*]}"
    if stamp_ok "$prefix" "$settings" && [[ $REFRESH != 1 ]]; then
        log "cache hit: PostgreSQL $MAJOR $(stamp_version "$prefix") in $prefix"
        result "$prefix/bin/pg_config"
    fi
    host_install gcc make libc6-dev bison flex perl zlib1g-dev pkg-config \
        libipc-run-perl bzip2 xz-utils
    local srcpkg=postgresql-$MAJOR ver
    side_apt_update
    ver=$(side_apt_cache showsrc "$srcpkg" | awk '/^Version:/ {print $2}' | sort -V | tail -n1)
    [[ -n $ver ]] || die "source package $srcpkg not found in sid"
    if stamp_ok "$prefix" "$settings" && [[ $(stamp_version "$prefix") == "$ver" ]]; then
        log "cache hit (still current): $ver"; result "$prefix/bin/pg_config"
    fi
    local srcdir=$CACHE/src/$srcpkg-$ver
    mkdir -p "$srcdir"
    log "downloading source package $srcpkg $ver"
    (cd "$srcdir" && side_apt_get source -qq --download-only "$srcpkg=$ver")
    local upstream=${ver#*:}; upstream=${upstream%-*}
    local orig
    orig=$(ls "$srcdir/${srcpkg}_${upstream}".orig.tar.* 2>/dev/null | head -n1 || true)
    [[ -n $orig ]] || die "no orig tarball downloaded in $srcdir"

    local build=$CACHE/build/pg$MAJOR
    rm -rf "$build" "$prefix"; mkdir -p "$build"
    log "unpacking $(basename "$orig")"
    tar -xf "$orig" -C "$build" --strip-components=1
    local t0=$SECONDS logf=$CACHE/build/pg$MAJOR.log
    log "configure ${cfg[*]} (log: $logf)"
    run() { "$@" >>"$logf" 2>&1 || { tail -n 60 "$logf"; die "failed: $* (see $logf)"; }; }
    : >"$logf"
    cd "$build"
    run ./configure "${cfg[@]}"
    log "make -j$JOBS"
    run make -j"$JOBS"
    run make install
    local m
    for m in "${CONTRIB_MODULES[@]}"; do
        run make -C contrib/"$m" -j"$JOBS"
        run make -C contrib/"$m" install
    done
    cd /
    # Sanity checks on what the tests need.
    local pkglib
    pkglib=$("$prefix/bin/pg_config" --pkglibdir)
    for f in "$prefix/bin/postgres" "$prefix/bin/initdb" "$prefix/bin/pg_ctl" \
             "$("$prefix/bin/pg_config" --pgxs)" "$pkglib/auto_explain.so" \
             "$pkglib/pgxs/src/test/regress/pg_regress" \
             "$pkglib/pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm"; do
        [[ -e $f ]] || die "build incomplete: $f missing"
    done
    "$prefix/bin/postgres" --version
    selftest_pgxs "$prefix/bin/pg_config"
    write_stamp "$prefix" "$ver" "$settings"
    rm -rf "$build"
    log "PostgreSQL $MAJOR ($ver) built in $((SECONDS - t0))s into $prefix"
    result "$prefix/bin/pg_config"
}

# ================================================================ src15 ==
# The upstream source tarball of bookworm's PostgreSQL 15, for
# test/stage_pgregress.sh (PostgreSQL's own regression suite): the newest
# orig tarball of source package postgresql-15 that the system mirror's
# bookworm and bookworm-updates serve (the security archive's pool is not
# on every mirror, so that version may be older than the installed server's;
# the suite is compared between runs on one server, never with its expected
# files), downloaded with a private apt state ($CACHE/apt-bookworm-src) into
# $CACHE/src/postgresql-15-VERSION/. A cached tarball is reused with no
# network (FASTTIME_CI_REFRESH=1 looks again). Prints its path.
do_src_system() {
    local srcpkg=postgresql-$MAJOR cached line uri keyring v upstream orig
    cached=$(ls "$CACHE"/src/"$srcpkg"-*/"$srcpkg"_*.orig.tar.* 2>/dev/null | sort -V | tail -n1 || true)
    if [[ -n $cached && $REFRESH != 1 ]]; then
        log "cache hit: $cached"; result "$cached"
    fi
    line=$(system_mirror | head -n1)
    [[ -n $line ]] || die "no apt source serving bookworm found in /etc/apt"
    read -r uri keyring <<<"$line"
    [[ $keyring == - || ! -f $keyring ]] && keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    set_side "$CACHE/apt-bookworm-src"
    mkdir -p "$SIDE/lists/partial" "$SIDE/cache/archives/partial"
    touch "$SIDE/status"
    cat >"$SIDE/sources.list" <<EOF
deb-src [signed-by=$keyring] $uri bookworm main
deb-src [signed-by=$keyring] $uri bookworm-updates main
EOF
    log "updating private apt lists (bookworm sources) from the system mirror"
    side_apt_get update -qq
    for v in $(side_apt_cache showsrc "$srcpkg" | awk '/^Version:/ {print $2}' | sort -Vr); do
        mkdir -p "$CACHE/src/$srcpkg-$v"
        log "downloading source package $srcpkg $v"
        if (cd "$CACHE/src/$srcpkg-$v" && side_apt_get source -qq --download-only "$srcpkg=$v"); then
            upstream=${v#*:}; upstream=${upstream%-*}
            orig=$(ls "$CACHE/src/$srcpkg-$v/${srcpkg}_${upstream}".orig.tar.* 2>/dev/null | head -n1 || true)
            [[ -n $orig ]] && result "$orig"
        fi
        rm -rf "${CACHE:?}/src/$srcpkg-$v"
    done
    die "no source tarball of $srcpkg could be downloaded"
}

case $KEY in
    src15) do_src_system ;;
    arm64) do_arm64 ;;
    15)  do_system ;;
    17)  do_pg17 ;;
    18)  do_pg18 ;;
    19)  do_pg19 ;;
    16)  die "PostgreSQL 16 is not available from any reachable Debian suite" ;;
    *)   die "unsupported major version $MAJOR (supported: 15, 17, 18, 19)" ;;
esac
