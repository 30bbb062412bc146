#!/usr/bin/env bash
# Mounts for the Debian trixie chroot that runs PostgreSQL 17 (see
# .ci/build-pg.sh 17 and .ci/pg17-chroot.sh).  Sourced, not run:
#
#   chroot_mount ROOT [REPO]   mount what the tests need inside ROOT:
#                                /proc      (proc)
#                                /sys       (read-only bind of the host's: the
#                                            extension reads the kernel's
#                                            clocksource from it, so `auto`
#                                            decides as it would on the host)
#                                /dev/shm   (a private tmpfs: PostgreSQL's
#                                            POSIX dynamic shared memory)
#                                /fasttime  (bind of REPO, read-write)
#   chroot_release ROOT        end processes still running inside ROOT and
#                              unmount everything under ROOT, deepest first;
#                              returns non-zero if a mount is left.  Safe to
#                              call repeatedly, and what a run does first, to
#                              clear whatever a killed run left behind.
#
# Never remove a chroot before chroot_release succeeded: with the binds
# live, rm -rf would go into the repository and the host's /sys.

CHROOT_REPO_DIR=/fasttime

chroot_mountpoints() {	# mount points at or under ROOT, deepest first
	local root
	root=$(readlink -f "$1")
	# field 5 of mountinfo is the mount point (octal escapes for blanks;
	# our cache path has none)
	awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo |
		sort -r
}

chroot_pids() {		# processes whose root directory is ROOT
	local root p
	root=$(readlink -f "$1")
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/}"
	done
	return 0
}

chroot_release() {
	local root=$1 pids m i
	[ -d "$root" ] || return 0
	# a server or test left running by a killed run keeps the mounts busy;
	# nothing but our runs uses this chroot (they hold its lock)
	pids=$(chroot_pids "$root")
	if [ -n "$pids" ]; then
		echo "chroot: ending processes left inside $root: $(echo $pids)" >&2
		kill -TERM $pids 2>/dev/null
		for i in 1 2 3 4 5 6 7 8 9 10; do
			pids=$(chroot_pids "$root")
			[ -z "$pids" ] && break
			sleep 1
		done
		[ -n "$pids" ] && kill -KILL $pids 2>/dev/null && sleep 1
	fi
	for m in $(chroot_mountpoints "$root"); do
		umount "$m" 2>/dev/null || umount -l "$m" ||
			echo "chroot: cannot unmount $m" >&2
	done
	[ -z "$(chroot_mountpoints "$root")" ]
}

chroot_mount() {
	local root=$1 repo=${2:-}
	chroot_release "$root" || return 1
	mkdir -p "$root/proc" "$root/sys" "$root/dev/shm" || return 1
	mount -t proc proc "$root/proc" &&
		mount --bind /sys "$root/sys" &&
		mount -o remount,bind,ro "$root/sys" &&
		mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm" || {
		chroot_release "$root"
		return 1
	}
	if [ -n "$repo" ]; then
		mkdir -p "$root$CHROOT_REPO_DIR" &&
			mount --bind "$repo" "$root$CHROOT_REPO_DIR" || {
			chroot_release "$root"
			return 1
		}
	fi
}
