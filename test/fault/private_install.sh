#!/usr/bin/env bash
# A private PostgreSQL installation holding a test build of fasttime
# (fault injection, sanitizers), so that such a build never lands in the
# system PostgreSQL that everyone else's tests load.
#
# PostgreSQL's binaries find their share and lib directories relative to
# their own location, so a copy of the installation's bin, lib and share
# directories under ROOT (same layout) is a complete, independent
# installation.  fasttime is then built from a snapshot of the working tree
# and installed into it with DESTDIR=ROOT.
#
# Sourced:
#   . test/fault/private_install.sh
#   ft_private_install ROOT [make variables...]   # e.g. FAULT_INJECTION=1
#   export PG_CONFIG=$(ft_private_pg_config ROOT) # then source test/cluster.sh
# Or run:
#   test/fault/private_install.sh ROOT [make variables...]
#     prints the private pg_config path on its last line.
#
# Make variables are passed to both make and make install, e.g.
#   FAULT_INJECTION=1
#   PG_CFLAGS="-fsanitize=undefined -fno-sanitize-recover=all"
# The system pg_config (PG_CONFIG, default pg_config) is only read.

ft_private_pg_config() {
	local root=$1 sys=${FT_SYSTEM_PG_CONFIG:-${PG_CONFIG:-pg_config}}
	echo "$root$("$sys" --bindir)/pg_config"
}

ft_private_install() {
	local root=$1
	shift
	local sys=${FT_SYSTEM_PG_CONFIG:-${PG_CONFIG:-pg_config}}
	local srcroot
	srcroot=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	local bindir pkglibdir sharedir incdir d
	bindir=$("$sys" --bindir) || return 1
	pkglibdir=$("$sys" --pkglibdir)
	sharedir=$("$sys" --sharedir)
	# the server headers too, so that a private installation can itself be
	# the base of another (a fault build for TAP tests run against one)
	incdir=$("$sys" --includedir-server)

	case "$root" in
		/tmp/?*) ;;
		*) echo "ft_private_install: ROOT must be under /tmp (got '$root')" >&2; return 1 ;;
	esac
	rm -rf "$root" "$root.src"
	for d in "$bindir" "$pkglibdir" "$sharedir" "$incdir"; do
		mkdir -p "$root$(dirname "$d")"
		cp -a "$d" "$root$d" || return 1
	done
	# whatever fasttime the system has is not ours
	rm -f "$root$pkglibdir"/fasttime.so "$root$sharedir"/extension/fasttime*

	# snapshot of the working tree, without build products
	mkdir -p "$root.src"
	(cd "$srcroot" && tar --exclude=.git --exclude='*.o' --exclude='*.bc' \
		--exclude='*.so' --exclude='test/unit/build*' --exclude=results \
		--exclude=regression.diffs --exclude=regression.out -cf - .) |
		tar -C "$root.src" -xf - || return 1

	if ! make -s -C "$root.src" PG_CONFIG="$sys" "$@" >"$root.build.log" 2>&1; then
		cat "$root.build.log" >&2
		return 1
	fi
	make -s -C "$root.src" PG_CONFIG="$sys" DESTDIR="$root" "$@" install \
		>>"$root.build.log" 2>&1 || { cat "$root.build.log" >&2; return 1; }

	# the private installation must see itself, not the system's
	local priv
	priv=$(ft_private_pg_config "$root")
	if [ "$("$priv" --pkglibdir)" != "$root$pkglibdir" ] ||
		[ ! -f "$root$pkglibdir/fasttime.so" ]; then
		echo "ft_private_install: $priv does not relocate to $root" >&2
		return 1
	fi
	chmod -R a+rX "$root"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	[ $# -ge 1 ] || { echo "usage: $0 ROOT [make variables...]" >&2; exit 2; }
	ft_private_install "$@" || exit 1
	ft_private_pg_config "$1"
fi
