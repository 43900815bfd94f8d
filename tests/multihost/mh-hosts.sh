#!/usr/bin/env bash
# mh-hosts.sh: separate "hosts" on one machine, made of Linux namespaces.
#
#   mh-hosts.sh N1 N2 ... -- COMMAND [args...]   hosts for N1, N2, ... ranks; run COMMAND; tear down
#   mh-hosts.sh --sweep                           remove what runs killed with SIGKILL left behind
#
# Host i (named mh1, mh2, ...) is a network namespace of its own with a veth
# link into a hub namespace, whose bridge joins all hosts on one private
# subnet (MH_SUBNET, default 10.213.77.0/24; host i is .i). The root
# namespace's network is never touched. Each host also has its own UTS
# namespace (hostname mhI), IPC namespace, and mount namespace with a private
# tmpfs on /dev/shm and a generated /etc/hosts naming every host. The rest of
# the file system is shared, as a cluster's nodes share theirs, /tmp included
# (a build tree may live there); TMPDIR names a folder of the host's own in
# the run's state folder, where the MPIs' session files go.
# One idle "holder" process per host keeps these namespaces alive, so that
# everything started on a host shares one hostname and one /dev/shm, however
# many times it is entered.
#
# COMMAND runs in the root namespace with these variables set:
#   MH_AGENT      launch agent: `$MH_AGENT [options] HOST COMMAND...` runs
#                 COMMAND on HOST, as ssh would (the words joined and given to
#                 /bin/sh, in a clean environment); both MPIs' rsh launchers
#                 use it; leading ssh-style options are ignored
#   MH_HOSTS      mh1:N1,mh2:N2,...   MH_HOSTNAMES  mh1 mh2 ...
#   MH_COUNTS     N1 N2 ...           MH_NP         N1+N2+...
#   MH_SUBNET     the hosts' subnet   MH_STATE      this run's state folder
# A launcher is started on the first host with `$MH_AGENT mh1 mpirun ...`
# (mh-mpirun.sh does that).
#
# Exit status: COMMAND's; 77 where the namespaces cannot be made here (not
# root, no CAP_NET_ADMIN/CAP_SYS_ADMIN, no ip/unshare/nsenter, no veth or
# bridge support), with the reason on stderr.
#
# Teardown (every process in the run's namespaces, the namespaces, the state
# folder under /run; the mounts go with the last process inside) happens on
# exit, on failure and on SIGINT/SIGTERM/SIGHUP. If this script is killed
# with SIGKILL, a watcher in a session of its own (so that a signal to the
# test's process group does not reach it) notices within a second and tears
# down; and every start sweeps the namespaces of runs whose owner is gone.
set -euo pipefail

prefix=shoalmh
state_root=/run
subnet=${MH_SUBNET:-10.213.77.0/24}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$here/$(basename "${BASH_SOURCE[0]}")

say() { echo "mh-hosts: $*" >&2; }

# The start time of a process (clock ticks since boot): with the pid, it
# names an owner uniquely even after its pid is reused.
start_time() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }           # fields after the command name
    set -- $stat
    echo "${20}"                # field 22 of the full line
}

# Is the run of owner pid $1 (started at $2, if known) still alive?
owner_alive() {
    local now
    now=$(start_time "$1") || return 1
    [ -z "${2:-}" ] || [ "$now" = "$2" ]
}

# Every namespace of the run of owner $1.
run_namespaces() {
    ip netns list 2>/dev/null | awk -v p="^$prefix-$1-" '$1 ~ p {print $1}'
}

# Tears down the run of owner $1: kills what runs in its namespaces (TERM,
# then KILL), deletes them and its state folder. Idempotent.
teardown_run() {
    local owner=$1 ns pids round
    local -a spaces
    mapfile -t spaces < <(run_namespaces "$owner")
    for round in 1 2 3 4 5 6 7 8 9 10; do
        pids=""
        for ns in "${spaces[@]}"; do
            pids+=" $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
        done
        [ -n "${pids// /}" ] || break
        if [ "$round" -le 3 ]; then
            kill -TERM $pids 2>/dev/null || true
        else
            kill -KILL $pids 2>/dev/null || true
        fi
        sleep 0.3
    done
    for ns in "${spaces[@]}"; do
        ip netns delete "$ns" 2>/dev/null || true
    done
    rm -rf "${state_root:?}/$prefix-$owner"
}

# Removes the namespaces and state folders of runs whose owner is gone.
sweep() {
    local owner started
    local -A owners=()
    for owner in $(ip netns list 2>/dev/null | sed -n "s/^$prefix-\([0-9][0-9]*\)-.*/\1/p"); do
        owners[$owner]=1
    done
    for dir in "$state_root/$prefix"-*; do
        [ -d "$dir" ] || continue
        owner=${dir##*/$prefix-}
        [[ $owner =~ ^[0-9]+$ ]] && owners[$owner]=1
    done
    for owner in "${!owners[@]}"; do
        started=$(cut -d' ' -f2 "$state_root/$prefix-$owner/owner" 2>/dev/null || true)
        if ! owner_alive "$owner" "$started"; then
            say "removing what run $owner left behind"
            teardown_run "$owner"
        fi
    done
}

# Watcher: waits for the owner to end, then tears its run down.
if [ "${1:-}" = "--watch" ]; then
    owner=$2 started=$3
    while owner_alive "$owner" "$started" && [ -d "$state_root/$prefix-$owner" ]; do
        sleep 0.5
    done
    [ -d "$state_root/$prefix-$owner" ] && teardown_run "$owner"
    exit 0
fi

if [ "${1:-}" = "--sweep" ]; then
    sweep
    exit 0
fi

# ------------------------------------------------------------- arguments
counts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    [[ $1 =~ ^[1-9][0-9]*$ ]] || { say "not a rank count: $1"; exit 2; }
    counts+=("$1")
    shift
done
if [ $# -lt 2 ] || [ ${#counts[@]} -lt 1 ]; then
    echo "usage: mh-hosts.sh N1 N2 ... -- COMMAND [args...] | mh-hosts.sh --sweep" >&2
    exit 2
fi
shift
if ! [[ $subnet =~ ^([0-9]+\.[0-9]+\.[0-9]+)\.0/24$ ]]; then
    say "MH_SUBNET must be a /24 ending in .0, not $subnet"
    exit 2
fi
net3=${BASH_REMATCH[1]}

skip() { say "$*: the multi-host tests are skipped"; exit 77; }

for tool in ip unshare nsenter mount setsid; do
    command -v "$tool" >/dev/null 2>&1 || skip "no '$tool' command"
done
[ "$(id -u)" = 0 ] || skip "network namespaces need root (CAP_NET_ADMIN and CAP_SYS_ADMIN), running as uid $(id -u)"
[ -d "$state_root" ] && [ -w "$state_root" ] || skip "$state_root is not writable"

# ------------------------------------------------------------------ set up
sweep

me=$$
state=$state_root/$prefix-$me
hub=$prefix-$me-hub
mkdir -m 700 "$state"
echo "$me $(start_time $me)" >"$state/owner"

cmd_pid=""
watcher=""
cleanup() {
    local rc=$?
    trap '' INT TERM HUP
    trap - EXIT
    [ -z "$cmd_pid" ] || kill -TERM "$cmd_pid" 2>/dev/null || true
    teardown_run "$me"
    [ -z "$watcher" ] || kill "$watcher" 2>/dev/null || true
    exit "$rc"
}
on_signal() {
    say "$1: tearing the hosts down"
    exit $((128 + $2))
}
trap cleanup EXIT
trap 'on_signal SIGINT 2' INT
trap 'on_signal SIGTERM 15' TERM
trap 'on_signal SIGHUP 1' HUP

setsid "$self" --watch "$me" "$(start_time $me)" </dev/null >/dev/null 2>&1 &
watcher=$!

# Runs a set-up step; where it fails in the first host's set-up, the machine
# cannot do this at all (skip), later it is an error.
probing=1
step() {
    local out
    if ! out=$("$@" 2>&1); then
        if [ $probing = 1 ]; then
            skip "cannot set up a network namespace here ('$*': ${out:-failed})"
        fi
        say "'$*' failed: $out"
        exit 1
    fi
}

hosts_file=$state/hosts
{
    echo "127.0.0.1 localhost"
    for i in "${!counts[@]}"; do
        echo "$net3.$((i + 1)) mh$((i + 1))"
    done
} >"$hosts_file"

step ip netns add "$hub"
step ip -n "$hub" link set lo up
step ip -n "$hub" link add br0 type bridge
step ip -n "$hub" link set br0 up

# The holder of host $1's namespaces: sets the hostname, mounts /dev/shm
# and /etc/hosts, says it is ready, then idles.
holder_script='
    set -e
    printf %s "$1" >/proc/sys/kernel/hostname
    mount -t tmpfs -o mode=1777 tmpfs /dev/shm
    mount --bind "$2" /etc/hosts
    : >"$3"
    exec sleep infinity'

for i in "${!counts[@]}"; do
    n=$((i + 1))
    name=mh$n
    ns=$prefix-$me-h$n
    mkdir -m 1777 "$state/tmp-$name"
    step ip netns add "$ns"
    step ip -n "$ns" link set lo up
    # Link-local IPv6 addresses would only offer the MPIs more interfaces to try.
    ip netns exec "$ns" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6' 2>/dev/null || true
    step ip -n "$hub" link add "$name" type veth peer name eth0 netns "$ns"
    step ip -n "$hub" link set "$name" master br0 up
    step ip -n "$ns" addr add "$net3.$n/24" dev eth0
    step ip -n "$ns" link set eth0 up
    ip netns exec "$ns" unshare --uts --ipc --mount --propagation private \
        sh -c "$holder_script" holder "$name" "$hosts_file" "$state/ready-$name" \
        </dev/null >"$state/holder-$name.log" 2>&1 &
    echo $! >"$state/holder-$name"
    for _ in $(seq 100); do
        [ -e "$state/ready-$name" ] && break
        if ! kill -0 "$(cat "$state/holder-$name")" 2>/dev/null; then
            [ $probing = 1 ] && skip "cannot give a host its own hostname, /dev/shm and /etc/hosts ($(cat "$state/holder-$name.log"))"
            say "the holder of $name ended: $(cat "$state/holder-$name.log")"
            exit 1
        fi
        sleep 0.1
    done
    [ -e "$state/ready-$name" ] || { say "$name was not ready after 10 s"; exit 1; }
    probing=0
done

# The launch agent: `agent [options] HOST COMMAND...`, as ssh would run it.
agent=$state/agent
cat >"$agent" <<EOF
#!/usr/bin/env bash
# Launch agent of multi-host run $me (written by mh-hosts.sh): runs a command
# on one of its hosts, as ssh would: leading options are ignored, the
# remaining words are joined and given to /bin/sh, in a clean environment
# (TMPDIR: a folder of the host's own in the run's state folder),
# inside the host's network, UTS, IPC and mount namespaces.
state=$state
EOF
cat >>"$agent" <<'EOF'
while [ $# -gt 0 ]; do
    case $1 in
        -[bcDEeFIiJLlmOoPpQRSWw]) shift 2 ;;   # ssh options that take a value
        -*) shift ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "agent: usage: agent [options] HOST COMMAND..." >&2
    exit 255
fi
host=$1
shift
if ! holder=$(cat "$state/holder-$host" 2>/dev/null); then
    echo "agent: no host '$host' in this run (${state##*/})" >&2
    exit 255
fi
wd=$PWD
[ -d "$wd" ] || wd=/
exec nsenter --target "$holder" --net --uts --ipc --mount --wd="$wd" -- \
    env -i HOME="${HOME:-/root}" USER="${USER:-root}" LOGNAME="${LOGNAME:-root}" SHELL=/bin/sh \
    TMPDIR="$state/tmp-$host" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/sh -c "$*"
EOF
chmod 755 "$agent"

# Every host reaches every other.
for i in "${!counts[@]}"; do
    for j in "${!counts[@]}"; do
        [ "$i" = "$j" ] && continue
        # A connection to a closed port is refused at once where the host is
        # reachable (no listener, no ping needed), and times out where not.
        out=$("$agent" "mh$((i + 1))" "timeout 3 bash -c 'exec 3<>/dev/tcp/mh$((j + 1))/9' 2>&1" || true)
        if [[ $out != *refused* ]]; then
            say "mh$((i + 1)) cannot reach mh$((j + 1)): ${out:-timed out}"
            exit 1
        fi
    done
done

np=0
hosts=""
names=""
for i in "${!counts[@]}"; do
    np=$((np + counts[i]))
    hosts+="${hosts:+,}mh$((i + 1)):${counts[i]}"
    names+="${names:+ }mh$((i + 1))"
done
export MH_AGENT=$agent MH_HOSTS=$hosts MH_HOSTNAMES=$names MH_COUNTS="${counts[*]}" MH_NP=$np \
       MH_SUBNET=$subnet MH_STATE=$state

# ------------------------------------------------------------- the command
# In the background, so that a signal reaches the trap at once.
set +e
"$@" &
cmd_pid=$!
wait "$cmd_pid"
rc=$?
cmd_pid=""
exit $rc
