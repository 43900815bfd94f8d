"""An mpi4py program run with libshoal preloaded (LD_PRELOAD): shoal must take
its collectives and give the results computed here without MPI.

  mpiexec -np 2 -x LD_PRELOAD=.../libshoal.so python mpi4py_check.py \
      [--library-version TEXT] [--naive-reduce]

Checks, on COMM_WORLD and a dup of it:
  - comm.Allreduce on numpy buffers (int64 sum, float64 sum, int32 max) from
    8 B to 4 MiB: shoal's choice (shoal_last_choice, read through ctypes from
    the preloaded library) and the values;
  - comm.Bcast of a numpy buffer from the last rank;
  - the pickle-based comm.allreduce, comm.bcast and comm.allgather of Python
    objects. mpi4py's lower-case allreduce reduces by point-to-point messages
    (its rc option fast_reduce, on by default), which no PMPI library sees:
    there only its result is checked. With --naive-reduce (fast_reduce off)
    it gathers every rank's pickle with MPI_Allgather(v) and reduces locally:
    shoal must take that call.
Before each checked call, an allreduce with a user-defined op on COMM_SELF
(always the host MPI's) sets shoal_last_choice to 0, so a 1 afterwards comes
from that call. Needs SHOAL_COMM_WARMUP=0 (a communicator's first integer
collectives would otherwise go to the host MPI). Exits 77 (skipped) where
mpi4py or numpy is not installed for this Python.
"""

import ctypes
import sys

naive = "--naive-reduce" in sys.argv
try:
    import mpi4py

    if naive:
        mpi4py.rc.fast_reduce = False
    import numpy as np
    from mpi4py import MPI
except ImportError as e:
    print(f"mpi4py_check: skipped, {e} (make deps installs mpi4py and numpy into the wheel environments)")
    sys.exit(77)

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
errors = []


def fail(what):
    errors.append(f"rank {rank}: {what}")


want_version = None
if "--library-version" in sys.argv:
    want_version = sys.argv[sys.argv.index("--library-version") + 1]
version = MPI.Get_library_version()
if want_version and want_version not in version:
    fail(f"mpi4py runs under {version.splitlines()[0]!r}, not the tree's MPI {want_version!r}")

lib = ctypes.CDLL(None)  # the process's global symbols: the preloaded libshoal's
try:
    enabled = lib.shoal_enabled
    last_choice = lib.shoal_last_choice
except AttributeError:
    print("mpi4py_check: libshoal is not loaded (LD_PRELOAD)")
    sys.exit(1)
last_choice.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]
last_choice.restype = ctypes.c_int
if enabled() != 1:
    fail("shoal_enabled() is not 1")


def first_of(a, b, datatype):
    pass  # b keeps its own value: any result will do, the host MPI runs it


user_op = MPI.Op.Create(first_of, commute=True)


def forget():
    x = np.zeros(1, dtype=np.int32)
    y = np.zeros(1, dtype=np.int32)
    MPI.COMM_SELF.Allreduce(x, y, op=user_op)
    if last_choice(None, None) != 0:
        fail("an allreduce with a user-defined op left shoal_last_choice at 1")


def choice():
    algo, lane = ctypes.c_char_p(), ctypes.c_char_p()
    took = last_choice(ctypes.byref(algo), ctypes.byref(lane))
    return took, f"{algo.value.decode()} over {lane.value.decode()}"


taken = {}


def expect_shoal(what):
    took, how = choice()
    if not took:
        fail(f"{what} went to the host MPI, not shoal")
    else:
        taken[what.split()[0]] = how


def inputs(r, n, dtype):
    # Distinct per rank and element; exact in float64 (small integers).
    i = np.arange(n, dtype=np.int64)
    return ((i * 7 + r * 1000003) % 65521 - 30000).astype(dtype)


dup = comm.Dup()
for c, name in ((comm, "world"), (dup, "dup")):
    n = 1
    while n * 8 <= 4 << 20:
        for dtype, op, npop in ((np.int64, MPI.SUM, np.add), (np.float64, MPI.SUM, np.add), (np.int32, MPI.MAX, np.maximum)):
            send = inputs(rank, n, dtype)
            recv = np.empty_like(send)
            forget()
            c.Allreduce(send, recv, op=op)
            expect_shoal(f"Allreduce of {n} {np.dtype(dtype).name} on {name}")
            want = inputs(0, n, dtype)
            for r in range(1, size):
                want = npop(want, inputs(r, n, dtype))
            if not np.array_equal(recv, want):
                fail(f"Allreduce of {n} {np.dtype(dtype).name} ({op}) on {name}: wrong values")
        buf = inputs(rank, n, np.float64)
        forget()
        c.Bcast(buf, root=size - 1)
        expect_shoal(f"Bcast of {n} float64 on {name}")
        if not np.array_equal(buf, inputs(size - 1, n, np.float64)):
            fail(f"Bcast of {n} float64 on {name}: wrong values")
        n *= 8

    # Pickle-based: Python objects.
    obj = {"rank": rank, "squares": [rank * rank + k for k in range(50)]}
    forget()
    got = c.bcast(obj if rank == 0 else None, root=0)
    expect_shoal(f"bcast (pickled) on {name}")
    if got != {"rank": 0, "squares": list(range(50))}:
        fail(f"bcast (pickled) on {name}: wrong object")
    forget()
    got = c.allgather((rank, "x" * rank))
    expect_shoal(f"allgather (pickled) on {name}")
    if got != [(r, "x" * r) for r in range(size)]:
        fail(f"allgather (pickled) on {name}: wrong list")
    value = rank * 10 + 3
    forget()
    got = c.allreduce(value, op=MPI.SUM)
    if got != sum(r * 10 + 3 for r in range(size)):
        fail(f"allreduce (pickled) on {name}: {got}")
    if naive:
        expect_shoal(f"allreduce (pickled, through allgather) on {name}")
    got = c.allreduce(np.full(5, rank + 1.5), op=MPI.SUM)
    if not np.array_equal(got, np.full(5, sum(r + 1.5 for r in range(size)))):
        fail(f"allreduce (pickled numpy array) on {name}: {got}")
dup.Free()
user_op.Free()

all_errors = comm.gather(errors, root=0)
if rank == 0:
    flat = [e for es in all_errors for e in es]
    for e in flat[:20]:
        print("mpi4py_check:", e)
    print(f"mpi4py_check: mpi4py {mpi4py.__version__}, numpy {np.__version__}, {size} ranks, "
          f"fast_reduce {'off' if naive else 'on'}, under {version.splitlines()[0].strip()}")
    for what, how in sorted(taken.items()):
        print(f"mpi4py_check: shoal took {what} (the last: {how})")
    print(f"mpi4py_check: {len(flat)} errors")
sys.exit(1 if comm.allreduce(len(errors), op=MPI.SUM) else 0)
