! MPI-4's large-count Fortran bindings (`use mpi_f08` with counts of kind
! MPI_COUNT_KIND and displacements of kind MPI_ADDRESS_KIND): MPICH's call
! the C MPI_*_c functions, so every collective shoal intercepts must reach
! shoal this way too, and give what the host MPI's classic call gives (its C
! PMPI_). Built where the host's mpi_f08 has these bindings (MPICH 4).
program fortran08_large_check
  use f08check
  implicit none
  integer, parameter :: ck = MPI_COUNT_KIND, ak = MPI_ADDRESS_KIND
  integer :: root, i, k, n, ierr
  integer :: dp, world ! Fortran handles, for the host's references
  integer(ck) :: nc
  integer, parameter :: sizes(2) = [4099, 262147]
  double precision, allocatable :: s(:), r(:), ref(:), big(:), bref(:)
  integer, allocatable :: counts(:), displs(:)
  integer(ck), allocatable :: wcounts(:)
  integer(ak), allocatable :: wdispls(:)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, csize)
  dp = MPI_DOUBLE_PRECISION%MPI_VAL
  world = MPI_COMM_WORLD%MPI_VAL
  call forget_last_choice()
  allocate(counts(0:csize - 1), displs(0:csize - 1), wcounts(0:csize - 1), wdispls(0:csize - 1))

  do k = 1, size(sizes)
    n = sizes(k)
    nc = n
    count = n
    root = mod(k, csize)
    allocate(s(n), r(n), ref(n), big(n * csize), bref(n * csize))
    call fill(s, me, k)
    do i = 0, csize - 1
      counts(i) = n - i
      displs(i) = i * n
    end do
    wcounts = counts
    wdispls = displs

    call MPI_Allreduce(s, r, nc, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call host_allreduce(s, ref, n, dp, MPI_SUM%MPI_VAL, world, ierr)
    call expect(all(r == ref), 'MPI_Allreduce (large count)')

    r = -1
    call MPI_Reduce(s, r, nc, MPI_DOUBLE_PRECISION, MPI_MAX, root, MPI_COMM_WORLD)
    call host_reduce(s, ref, n, dp, MPI_MAX%MPI_VAL, root, world, ierr)
    call expect(me /= root .or. all(r == ref), 'MPI_Reduce (large count)')

    call fill(big, me, k + 1)
    call MPI_Reduce_scatter_block(big, r, nc, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call host_reduce_scatter_block(big, ref, n, dp, MPI_SUM%MPI_VAL, world, ierr)
    call expect(all(r == ref), 'MPI_Reduce_scatter_block (large count)')

    r = -1
    if (me == root) r = s
    call MPI_Bcast(r, nc, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD)
    ref = -2
    if (me == root) ref = s
    call host_bcast(ref, n, dp, root, world, ierr)
    call expect(all(r == ref), 'MPI_Bcast (large count)')

    call host_gather(s, n, dp, bref, n, dp, root, world, ierr)
    big = -1
    call MPI_Gather(s, nc, MPI_DOUBLE_PRECISION, big, nc, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD)
    call expect(me /= root .or. all(big == bref), 'MPI_Gather (large count)')
    big = -1
    bref = -1 ! the blocks leave gaps: both sides start alike
    call host_gatherv(s, counts(me), dp, bref, counts, displs, dp, root, world, ierr)
    call MPI_Gatherv(s, wcounts(me), MPI_DOUBLE_PRECISION, big, wcounts, wdispls, MPI_DOUBLE_PRECISION, root, &
                     MPI_COMM_WORLD)
    call expect(me /= root .or. all(big == bref), 'MPI_Gatherv (large count)')

    call host_allgather(s, n, dp, bref, n, dp, world, ierr)
    big = -1
    call MPI_Allgather(s, nc, MPI_DOUBLE_PRECISION, big, nc, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    call expect(all(big == bref), 'MPI_Allgather (large count)')
    bref = -1
    call host_allgatherv(s, counts(me), dp, bref, counts, displs, dp, world, ierr)
    big = -1
    call MPI_Allgatherv(s, wcounts(me), MPI_DOUBLE_PRECISION, big, wcounts, wdispls, MPI_DOUBLE_PRECISION, &
                        MPI_COMM_WORLD)
    call expect(all(big == bref), 'MPI_Allgatherv (large count)')

    call fill(big, root, k + 2)
    r = -1
    ref = -2
    call MPI_Scatter(big, nc, MPI_DOUBLE_PRECISION, r, nc, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD)
    call host_scatter(big, n, dp, ref, n, dp, root, world, ierr)
    call expect(all(r == ref), 'MPI_Scatter (large count)')
    r = -1
    ref = -1
    call MPI_Scatterv(big, wcounts, wdispls, MPI_DOUBLE_PRECISION, r, wcounts(me), MPI_DOUBLE_PRECISION, root, &
                      MPI_COMM_WORLD)
    call host_scatterv(big, counts, displs, dp, ref, counts(me), dp, root, world, ierr)
    call expect(all(r == ref), 'MPI_Scatterv (large count)')

    call fill(big, me, k + 3)
    call host_alltoall(big, n, dp, bref, n, dp, world, ierr)
    deallocate(r)
    allocate(r(n * csize))
    r = -1
    call MPI_Alltoall(big, nc, MPI_DOUBLE_PRECISION, r, nc, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    call expect(all(r == bref), 'MPI_Alltoall (large count)')
    r = -1
    wcounts = n
    call MPI_Alltoallv(big, wcounts, wdispls, MPI_DOUBLE_PRECISION, r, wcounts, wdispls, MPI_DOUBLE_PRECISION, &
                       MPI_COMM_WORLD)
    call expect(all(r == bref), 'MPI_Alltoallv (large count)')
    deallocate(s, r, ref, big, bref)
  end do

  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) print '(a,i0,a,i0,a)', 'fortran08_large_check: ', checks, ' checks per rank, ', failures, ' failures'
  call MPI_Finalize()
  if (failures /= 0) stop 1
end program
