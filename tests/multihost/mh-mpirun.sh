#!/usr/bin/env bash
# mh-mpirun.sh: runs an MPI program across the hosts mh-hosts.sh made.
#
#   mh-mpirun.sh --mpi openmpi|mpich [--launcher PATH] [--env NAME=VALUE]... [--] PROGRAM [ARGS...]
#
# Run from the COMMAND of mh-hosts.sh (it reads MH_AGENT, MH_HOSTS, MH_NP and
# MH_SUBNET): starts the launcher on the first host through the launch agent;
# the launcher reaches the other hosts through the same agent, as it would
# through ssh. Ranks get the block layout of MH_HOSTS (mh1:2,mh2:2: ranks 0-1
# on mh1, 2-3 on mh2) and nothing of this shell's environment (the agent
# starts everything with a clean one, as ssh does): every variable the
# program needs is given with --env, which the launcher passes to every rank.
#
#   Open MPI: mpirun --host mh1:2,mh2:2 -np 4 --mca plm_rsh_agent AGENT, the
#             tcp BTL between hosts (vader within one) and the runtime's own
#             traffic on the hosts' subnet; -x NAME=VALUE. Where the hosts'
#             ranks together outnumber the machine's cores, idle ranks yield
#             the core (mpi_yield_when_idle): each host believes it has the
#             machine's cores to itself, so Open MPI would not see that the
#             hosts together oversubscribe them, and busy polling makes a
#             run 30 to 50 times slower on 2 cores. Where every rank has a
#             core, Open MPI polls as it would on a cluster.
#   MPICH:    mpiexec -launcher rsh -launcher-exec AGENT -hosts mh1:2,mh2:2 -n 4;
#             -genv NAME VALUE; UCX (Debian's MPICH is ch4:ucx) on eth0 only:
#             it would also offer peers its loopback address, which on
#             another host is that host's own.
set -euo pipefail

mpi=""
launcher=""
envs=()
while [ $# -gt 0 ]; do
    case $1 in
        --mpi) mpi=$2; shift 2 ;;
        --launcher) launcher=$2; shift 2 ;;
        --env)
            [[ $2 == *=* ]] || { echo "mh-mpirun: --env wants NAME=VALUE, not $2" >&2; exit 2; }
            envs+=("$2"); shift 2 ;;
        --) shift; break ;;
        -*) echo "mh-mpirun: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ $# -lt 1 ] || [ -z "$mpi" ]; then
    echo "usage: mh-mpirun.sh --mpi openmpi|mpich [--launcher PATH] [--env NAME=VALUE]... PROGRAM [ARGS...]" >&2
    exit 2
fi
for v in MH_AGENT MH_HOSTS MH_NP MH_SUBNET; do
    [ -n "${!v:-}" ] || { echo "mh-mpirun: $v is not set: run me under mh-hosts.sh" >&2; exit 2; }
done
first_host=${MH_HOSTS%%:*}

args=()
case $mpi in
    openmpi)
        launcher=${launcher:-mpirun.openmpi}
        args=(--allow-run-as-root --oversubscribe --bind-to none
              --host "$MH_HOSTS" -np "$MH_NP"
              --mca plm_rsh_agent "$MH_AGENT"
              --mca pml ob1 --mca btl self,vader,tcp
              --mca btl_tcp_if_include "$MH_SUBNET" --mca oob_tcp_if_include "$MH_SUBNET")
        [ "$MH_NP" -le "$(nproc)" ] || args+=(--mca mpi_yield_when_idle 1)
        for e in "${envs[@]}"; do
            args+=(-x "$e")
        done
        ;;
    mpich)
        launcher=${launcher:-mpiexec.mpich}
        args=(-launcher rsh -launcher-exec "$MH_AGENT" -hosts "$MH_HOSTS" -n "$MH_NP" -genv UCX_NET_DEVICES eth0)
        for e in "${envs[@]}"; do
            args+=(-genv "${e%%=*}" "${e#*=}")
        done
        ;;
    *) echo "mh-mpirun: --mpi must be openmpi or mpich, not $mpi" >&2; exit 2 ;;
esac

# The agent joins its words for /bin/sh, as ssh does: quote each one.
printf -v line '%q ' "$launcher" "${args[@]}" "$@"
exec "$MH_AGENT" "$first_host" "$line"
