! Fortran 2008 bindings (`use mpi_f08`): MPI_Init from Fortran starts
! shoal, and every collective it intercepts, called from Fortran, reaches
! shoal and gives what the host MPI gives (its C PMPI_), with MPI_IN_PLACE
! where the call has one; MPI_Finalize stops shoal. (fortran_check covers
! the `use mpi` bindings with more sizes and communicators.)
program fortran08_check
  use f08check
  implicit none
  type(MPI_Comm) :: comm, comms(2)
  integer :: np, c, k, n, root, i, crank, ierr
  integer :: dp, fcomm ! Fortran handles, for the host's references
  integer, parameter :: sizes(2) = [4099, 262147]
  double precision, allocatable :: s(:), r(:), ref(:), big(:), bref(:)
  integer, allocatable :: counts(:), displs(:)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  if (shoal_enabled() /= 1) then
    print '(a,i0,a)', 'rank ', me, ': FAIL shoal not started by MPI_Init from Fortran 2008'
    failures = failures + 1
  end if
  dp = MPI_DOUBLE_PRECISION%MPI_VAL
  comms(1) = MPI_COMM_WORLD
  call MPI_Comm_dup(MPI_COMM_WORLD, comms(2))

  do c = 1, 2
    comm = comms(c)
    fcomm = comm%MPI_VAL
    call MPI_Comm_size(comm, csize)
    call MPI_Comm_rank(comm, crank)
    allocate(counts(0:csize - 1), displs(0:csize - 1))
    call MPI_Barrier(comm)
    call expect(.true., 'MPI_Barrier')
    do k = 1, size(sizes)
      n = sizes(k)
      count = n
      root = mod(k, csize)
      allocate(s(n), r(n), ref(n), big(n * csize), bref(n * csize))
      call fill(s, crank, k)

      call MPI_Allreduce(s, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm)
      call host_allreduce(s, ref, n, dp, MPI_SUM%MPI_VAL, fcomm, ierr)
      call expect(all(r == ref), 'MPI_Allreduce')
      r = s
      call MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm)
      call expect(all(r == ref), 'MPI_Allreduce in place')

      r = s
      call host_reduce(s, ref, n, dp, MPI_MIN%MPI_VAL, root, fcomm, ierr)
      if (crank == root) then
        call MPI_Reduce(MPI_IN_PLACE, r, n, MPI_DOUBLE_PRECISION, MPI_MIN, root, comm)
      else
        call MPI_Reduce(s, r, n, MPI_DOUBLE_PRECISION, MPI_MIN, root, comm)
      end if
      call expect(crank /= root .or. all(r == ref), 'MPI_Reduce, in place at the root')

      call fill(big, crank, k + 1)
      bref = big
      call host_reduce_scatter_block(bref, ref, n, dp, MPI_SUM%MPI_VAL, fcomm, ierr)
      call MPI_Reduce_scatter_block(MPI_IN_PLACE, big, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm)
      call expect(all(big(1:n) == ref), 'MPI_Reduce_scatter_block in place')

      r = -1
      if (crank == root) r = s
      call MPI_Bcast(r, n, MPI_DOUBLE_PRECISION, root, comm)
      ref = -2
      if (crank == root) ref = s
      call host_bcast(ref, n, dp, root, fcomm, ierr)
      call expect(all(r == ref), 'MPI_Bcast')

      bref = -1
      call host_gather(s, n, dp, bref, n, dp, root, fcomm, ierr)
      big = -1
      if (crank == root) then
        big(root * n + 1:root * n + n) = s
        call MPI_Gather(MPI_IN_PLACE, n, MPI_DOUBLE_PRECISION, big, n, MPI_DOUBLE_PRECISION, root, comm)
      else
        call MPI_Gather(s, n, MPI_DOUBLE_PRECISION, big, n, MPI_DOUBLE_PRECISION, root, comm)
      end if
      call expect(crank /= root .or. all(big == bref), 'MPI_Gather, in place at the root')

      do i = 0, csize - 1
        counts(i) = n - i
        displs(i) = i * n
      end do
      call MPI_Gatherv(s, counts(crank), MPI_DOUBLE_PRECISION, big, counts, displs, MPI_DOUBLE_PRECISION, &
                       root, comm)
      call expect(crank /= root .or. all(big == bref), 'MPI_Gatherv')

      call fill(bref, root, k + 2)
      big = bref
      r = -1
      if (crank == root) then
        call MPI_Scatter(big, n, MPI_DOUBLE_PRECISION, MPI_IN_PLACE, n, MPI_DOUBLE_PRECISION, root, comm)
        r = big(root * n + 1:root * n + n)
      else
        call MPI_Scatter(big, n, MPI_DOUBLE_PRECISION, r, n, MPI_DOUBLE_PRECISION, root, comm)
      end if
      call expect(all(r == bref(crank * n + 1:crank * n + n)), 'MPI_Scatter, in place at the root')
      r = -1
      call MPI_Scatterv(big, counts, displs, MPI_DOUBLE_PRECISION, r, counts(crank), MPI_DOUBLE_PRECISION, &
                        root, comm)
      call expect(all(r(1:counts(crank)) == bref(crank * n + 1:crank * n + counts(crank))), 'MPI_Scatterv')

      call host_allgather(s, n, dp, bref, n, dp, fcomm, ierr)
      big = -1
      big(crank * n + 1:crank * n + n) = s
      call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, n, MPI_DOUBLE_PRECISION, comm)
      call expect(all(big == bref), 'MPI_Allgather in place')
      big = -1
      call MPI_Allgatherv(s, n, MPI_DOUBLE_PRECISION, big, [(n, i = 1, csize)], displs, MPI_DOUBLE_PRECISION, comm)
      call expect(all(big == bref), 'MPI_Allgatherv')

      call fill(big, crank, k + 3)
      call host_alltoall(big, n, dp, bref, n, dp, fcomm, ierr)
      call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, n, MPI_DOUBLE_PRECISION, comm)
      call expect(all(big == bref), 'MPI_Alltoall in place')
      call fill(big, crank, k + 3)
      r = -1
      deallocate(r)
      allocate(r(n * csize))
      r = -1
      call MPI_Alltoallv(big, [(n, i = 1, csize)], displs, MPI_DOUBLE_PRECISION, r, [(n, i = 1, csize)], displs, &
                         MPI_DOUBLE_PRECISION, comm)
      call expect(all(r == bref), 'MPI_Alltoallv')
      deallocate(s, r, ref, big, bref)
    end do
    deallocate(counts, displs)
  end do

  call MPI_Comm_free(comms(2))
  if (comms(2) /= MPI_COMM_NULL) failures = failures + 1
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) print '(a,i0,a,i0,a)', 'fortran08_check: ', checks, ' checks per rank, ', failures, ' failures'
  call MPI_Finalize()
  if (shoal_enabled() /= 0) failures = failures + 1
  if (failures /= 0) stop 1
end program
