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
#       bookworm's, so it cannot run here. We fetch postgresql-server-dev-17 +
#       postgresql-client-17 (pg_config, PGXS) + libpq-dev and `dpkg -x` them
#       under $CACHE/pg17/root. COMPILE-ONLY target. The trixie pg_config
#       binary does not run on bookworm (GLIBC_2.38) and reports /usr paths
#       anyway, so we print a small wrapper script, $CACHE/pg17/bin/pg_config,
#       answering with paths inside the extracted tree. Two local edits are
#       made to the extracted tree so that PGXS works with bookworm's
#       gcc/glibc: with_llvm=no in Makefile.global (no clang-19 bitcode) and
#       HAVE_DECL_STRLCPY/STRLCAT=0 in pg_config.h (bookworm glibc lacks them).
#   18  only as a source package in sid: downloaded with `apt-get source
#       --download-only`, the upstream orig tarball is built (no Debian
#       patches) into $CACHE/pg18 with --enable-debug --enable-tap-tests
#       --without-icu --without-readline (plus contrib auto_explain and
#       pg_stat_statements, the TAP perl modules and pg_regress under
#       lib/pgxs/src/test/). Full server, tests can run (initdb refuses root:
#       run servers/tests as an unprivileged user).
#   16  not available at all: error.
#
# The sid/trixie index files are fetched with a private apt configuration
# (own sources.list, lists, cache and dpkg status under $CACHE/apt) so that the
# machine's own bookworm apt state is never touched. The mirror URI is read at
# run time from the machine's apt sources (the stanza serving bookworm); no
# host name is written here. Signatures are checked with the keyring named by
# that stanza (debian-archive-keyring, which also covers sid/trixie).
#
# Cache: $FASTTIME_CI_CACHE (default /var/cache/fasttime-ci). A version's
# result is reused as-is when its stamp file ($CACHE/pgNN/.fasttime-ci-stamp,
# holding the Debian package version and the build settings) exists and the
# settings match; a cache hit needs no network. Set FASTTIME_CI_REFRESH=1 to
# look for a newer package version and rebuild if there is one.
# Other knobs: FASTTIME_CI_JOBS (make -j, default nproc+1),
# FASTTIME_CI_CASSERT=1 (PG18: add --enable-cassert).
# Builds happen in $CACHE/build/, never in the repository. Runs as root.
set -euo pipefail

# Everything goes to stderr; the result is written to the saved stdout (fd 3).
exec 3>&1 1>&2
umask 022

log() { echo "build-pg: $*"; }
die() { echo "build-pg: ERROR: $*"; exit 1; }

[[ $# -eq 1 && $1 =~ ^[0-9]+$ ]] || die "usage: $0 MAJOR   (15, 17 or 18)"
MAJOR=$1
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

SIDE=$CACHE/apt
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

# Serialise concurrent runs for the same major.
exec 9>"$CACHE/.lock-$MAJOR"
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

# ====================================================================== 17 ==
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }   # quote for sh
write_pg17_wrapper() {   # write_pg17_wrapper PREFIX
    local prefix=$1 root=$1/root mg bin multiarch
    bin=$root/usr/lib/postgresql/$MAJOR/bin/pg_config
    mg=$root/usr/lib/postgresql/$MAJOR/lib/pgxs/src/Makefile.global
    multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
    # Configure-time values: from the packaged Makefile.global, and the
    # version/configure strings embedded in the (unrunnable) pg_config binary.
    getvar() { sed -n "s/^$1 = //p" "$mg" | head -n1; }
    local version configure
    version=$(strings "$bin" 2>/dev/null | grep -m1 "^PostgreSQL $MAJOR\." || true)
    [[ -n $version ]] || version="PostgreSQL $(getvar VERSION)"
    configure=$(strings "$bin" 2>/dev/null | grep -m1 "^ *'--" | sed 's/^ *//; s/ *$//' || true)
    mkdir -p "$prefix/bin"
    {
        cat <<EOF
#!/bin/sh
# Generated by .ci/build-pg.sh: stand-in for the PostgreSQL $MAJOR pg_config of
# the trixie packages extracted under $root
# (the real binary needs a newer glibc and would report /usr paths).
# COMPILE-ONLY target: there is no runnable server for this version.
R=$(sq "$root")
V_CONFIGURE=$(sq "$configure")
V_CC=$(sq "$(getvar CC)")
V_CPPFLAGS=$(sq "$(getvar CPPFLAGS)")
V_CFLAGS=$(sq "$(getvar CFLAGS)")
V_CFLAGS_SL=$(sq "$(getvar CFLAGS_SL)")
V_LDFLAGS=$(sq "$(getvar LDFLAGS | sed 's/\$(LDFLAGS_INTERNAL) *//')")
V_LDFLAGS_EX=$(sq "$(getvar LDFLAGS_EX)")
V_LDFLAGS_SL=$(sq "$(sed -n 's/^LDFLAGS_SL += //p' "$mg" | head -n1)")
V_LIBS=$(sq "$(getvar LIBS)")
V_VERSION=$(sq "$version")
EOF
        cat <<'EOF'
show() {
    case "$1" in
    --bindir)            v="$R/usr/lib/postgresql/@MAJOR@/bin" ;;
    --docdir|--htmldir)  v="$R/usr/share/doc/postgresql-doc-@MAJOR@" ;;
    --includedir)        v="$R/usr/include/postgresql" ;;
    --pkgincludedir)     v="$R/usr/include/postgresql" ;;
    --includedir-server) v="$R/usr/include/postgresql/@MAJOR@/server" ;;
    --libdir)            v="$R/usr/lib/@MULTIARCH@" ;;
    --pkglibdir)         v="$R/usr/lib/postgresql/@MAJOR@/lib" ;;
    --localedir)         v="$R/usr/share/locale" ;;
    --mandir)            v="$R/usr/share/postgresql/@MAJOR@/man" ;;
    --sharedir)          v="$R/usr/share/postgresql/@MAJOR@" ;;
    --sysconfdir)        v="$R/etc/postgresql-common" ;;
    --pgxs)              v="$R/usr/lib/postgresql/@MAJOR@/lib/pgxs/src/makefiles/pgxs.mk" ;;
    --configure)  v=$V_CONFIGURE ;;
    --cc)         v=$V_CC ;;
    --cppflags)   v=$V_CPPFLAGS ;;
    --cflags)     v=$V_CFLAGS ;;
    --cflags_sl)  v=$V_CFLAGS_SL ;;
    --ldflags)    v=$V_LDFLAGS ;;
    --ldflags_ex) v=$V_LDFLAGS_EX ;;
    --ldflags_sl) v=$V_LDFLAGS_SL ;;
    --libs)       v=$V_LIBS ;;
    --version)    v=$V_VERSION ;;
    *) echo "pg_config: invalid argument: $1" >&2
       echo "Try \"pg_config --help\" for more information." >&2; return 1 ;;
    esac
}
if [ $# -eq 0 ]; then
    for o in bindir docdir htmldir includedir pkgincludedir includedir-server libdir \
             pkglibdir localedir mandir sharedir sysconfdir pgxs configure cc cppflags \
             cflags cflags_sl ldflags ldflags_ex ldflags_sl libs version; do
        show --$o; printf '%s = %s\n' "$(echo $o | tr a-z- A-Z_)" "$v"
    done
    exit 0
fi
for a in "$@"; do show "$a" || exit 1; printf '%s\n' "$v"; done
EOF
    } | sed "s/@MAJOR@/$MAJOR/g; s/@MULTIARCH@/$multiarch/g" >"$prefix/bin/pg_config"
    chmod 755 "$prefix/bin/pg_config"
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

do_pg17() {
    local prefix=$CACHE/pg$MAJOR settings="debs=server-dev,client,libpq-dev;wrapper=2"
    if stamp_ok "$prefix" "$settings" && [[ $REFRESH != 1 ]]; then
        log "cache hit: PostgreSQL $MAJOR headers $(stamp_version "$prefix") in $prefix"
        result "$prefix/bin/pg_config"
    fi
    host_install gcc make libc6-dev
    side_apt_update
    local ver pkgs=(postgresql-server-dev-"$MAJOR" postgresql-client-"$MAJOR" libpq-dev)
    ver=$(side_apt_cache policy postgresql-server-dev-"$MAJOR" | awk '/Candidate:/ {print $2}')
    [[ -n $ver && $ver != "(none)" ]] || die "postgresql-server-dev-$MAJOR not found in trixie"
    if stamp_ok "$prefix" "$settings" && [[ $(stamp_version "$prefix") == "$ver" ]]; then
        log "cache hit (still current): $ver"; result "$prefix/bin/pg_config"
    fi
    local debs=$CACHE/debs/pg$MAJOR-$ver
    mkdir -p "$debs"
    (cd "$debs" && side_apt_get download -qq "${pkgs[@]}")
    rm -rf "$prefix"; mkdir -p "$prefix/root"
    local f
    for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix/root"; done
    local root=$prefix/root
    # No clang-19 here: don't emit LLVM bitcode in PGXS builds.
    sed -i 's/^with_llvm\t*[ =].*/with_llvm\t= no/' \
        "$root/usr/lib/postgresql/$MAJOR/lib/pgxs/src/Makefile.global"
    # trixie's glibc declares strlcpy/strlcat, bookworm's does not: let port.h
    # declare them (PostgreSQL's own implementation is in the server binary).
    sed -i -E 's/^#define HAVE_DECL_(STRLCPY|STRLCAT) 1$/#define HAVE_DECL_\1 0/' \
        "$root/usr/include/postgresql/$MAJOR/server/pg_config.h" \
        "$root/usr/include/postgresql/pg_config.h"
    write_pg17_wrapper "$prefix"
    selftest_pgxs "$prefix/bin/pg_config"
    write_stamp "$prefix" "$ver" "$settings"
    log "PostgreSQL $MAJOR ($ver) headers/PGXS ready in $root (compile-only)"
    result "$prefix/bin/pg_config"
}

# ====================================================================== 18 ==
CONTRIB_MODULES=(auto_explain pg_stat_statements)
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

case $MAJOR in
    15)  do_system ;;
    17)  do_pg17 ;;
    18)  do_pg18 ;;
    16)  die "PostgreSQL 16 is not available from any reachable Debian suite" ;;
    *)   die "unsupported major version $MAJOR (supported: 15, 17, 18)" ;;
esac
