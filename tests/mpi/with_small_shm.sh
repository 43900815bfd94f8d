#!/bin/sh
# usage: with_small_shm.sh SIZE COMMAND [args...]
# Runs COMMAND with a /dev/shm of its own, a tmpfs of SIZE in a private mount
# namespace (gone with the command, and everything in it). Exits 77, which
# CTest reads as skipped, where no such namespace can be made (no unshare,
# or no right to mount).
size=$1
shift
if ! command -v unshare >/dev/null 2>&1 || ! unshare -m true 2>/dev/null; then
    echo "with_small_shm: cannot make a private mount namespace here: skipped"
    exit 77
fi
exec unshare -m sh -c '
    if ! mount -t tmpfs -o "size=$0,mode=1777" tmpfs /dev/shm 2>/dev/null; then
        echo "with_small_shm: cannot mount a tmpfs on /dev/shm here: skipped"
        exit 77
    fi
    exec "$@"' "$size" "$@"
