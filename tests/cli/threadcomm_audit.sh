#!/bin/bash
# Thread communicators' audit: every function the host's mpi.h declares
# with a communicator argument is defined by libshoal (which serves it on a
# thread communicator or refuses it there, and passes any other
# communicator's to the host), or is one of those reviewed below, which
# reach the host's duplicate of the parent under a thread communicator's
# handle and mean the same there. A new host call that takes a communicator
# fails this until it is routed or reviewed.
#   threadcomm_audit.sh LIBSHOAL CC [-I<mpi include dir> ...]
set -euo pipefail
lib=$1 cc=$2
shift 2
reviewed=" MPI_Abort MPI_Comm_call_errhandler MPI_Comm_get_errhandler MPI_Comm_set_errhandler MPI_Errhandler_get
 MPI_Errhandler_set MPI_Comm_get_name MPI_Comm_set_name MPI_Comm_get_info MPI_Comm_test_inter MPI_Comm_remote_size
 MPI_Comm_remote_group MPI_Intercomm_merge MPI_Pack MPI_Pack_c MPI_Unpack MPI_Unpack_c MPI_Pack_size MPI_Pack_size_c
 MPI_Comm_attach_buffer MPI_Comm_attach_buffer_c MPI_Comm_detach_buffer MPI_Comm_detach_buffer_c
 MPI_Comm_flush_buffer MPI_Comm_iflush_buffer MPI_Comm_toint MPI_Comm_c2f MPI_DUP_FN MPI_NULL_COPY_FN MPI_NULL_DELETE_FN
 MPI_COMM_NULL_COPY_FN MPI_COMM_NULL_DELETE_FN MPI_COMM_DUP_FN "
reviewed=" $(echo $reviewed) " # one space between names
# One declaration a line, then those of int MPI_* or MPIX_* functions (not
# typedefs) with a parameter of type MPI_Comm.
declared=$(printf '#include <mpi.h>\n' | "$cc" -E "$@" -x c - | tr '\n' ' ' | tr ';' '\n' |
    grep -vE '^[[:space:]]*typedef' |
    grep -E '\bint[[:space:]]+MPIX?_[A-Za-z0-9_]+[[:space:]]*\(' |
    grep -E '[(,][[:space:]]*(const[[:space:]]+)?MPI_Comm[[:space:]]+[A-Za-z_]' |
    sed -E 's/.*\bint[[:space:]]+(MPIX?_[A-Za-z0-9_]+)[[:space:]]*\(.*/\1/' | sort -u)
if [ -z "$declared" ]; then
    echo "threadcomm_audit: no function with a communicator argument found in mpi.h" >&2
    exit 1
fi
defined=" $(nm -D --defined-only "$lib" | awk '{print $3}' | tr '\n' ' ') "
missing=0 served=0 passed=0
for name in $declared; do
    if [[ $defined == *" $name "* ]]; then
        served=$((served + 1))
    elif [[ $reviewed == *" $name "* ]]; then
        passed=$((passed + 1))
    else
        echo "threadcomm_audit: $name takes a communicator, and libshoal neither routes it nor is it reviewed" >&2
        missing=$((missing + 1))
    fi
done
echo "threadcomm_audit: $served routed by libshoal, $passed reviewed as meaning the same on the host's duplicate," \
    "$missing neither"
[ "$missing" -eq 0 ]
