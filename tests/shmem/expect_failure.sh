#!/usr/bin/env bash
# usage: expect_failure.sh LIMIT REGEX COMMAND...
# Passes when COMMAND ends within LIMIT seconds with a non-zero status and
# its output (stdout and stderr) has a line matching REGEX: a misuse is
# reported, not survived, crashed through or hung on.
# Where it can, it runs COMMAND with a /dev/shm of its own (a tmpfs in a
# private mount namespace, gone with it): a job that ends by MPI_Abort
# leaves the host MPI's segments behind (MPICH's mpich_shm_*, Open MPI's
# sm_segment.*), and those must not outlive the test. MPICH 5's Hydra also
# leaves the topology file it writes to /tmp (hydra_hwloc_xmlfile_*) when
# the job is aborted: the ones this run made are removed.
set -u
limit=$1 regex=$2; shift 2
private=()
if command -v unshare >/dev/null 2>&1 && unshare -m sh -c 'mount -t tmpfs tmpfs /dev/shm' 2>/dev/null; then
    private=(unshare -m sh -c 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$@"' private)
fi
hydra_files() { ls /tmp/hydra_hwloc_xmlfile_* 2>/dev/null; }
hydra_before=$(hydra_files)
start=$(date +%s)
out=$(timeout -k 5 "$limit" "${private[@]}" "$@" 2>&1); rc=$?
elapsed=$(( $(date +%s) - start ))
for f in $(hydra_files); do
    grep -qxF -- "$f" <<<"$hydra_before" || rm -f -- "$f"
done
printf '%s\n' "$out" | head -20
# By the clock: mpirun itself exits 137 when a rank died of SIGKILL.
if [ $elapsed -ge "$limit" ]; then echo "expect_failure: hung (killed after ${limit}s)"; exit 1; fi
if [ $rc -eq 0 ]; then echo "expect_failure: the job claims success"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$out"; then echo "expect_failure: no line matches /$regex/"; exit 1; fi
echo "expect_failure: ended with status $rc and the message"
exit 0
