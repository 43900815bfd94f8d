! A Fortran program that knows nothing of shoal (mpif.h, built without it):
! with libshoal in LD_PRELOAD and SHOAL_VERBOSE=1, its collectives are
! logged as shoal's; their results, in place or not, match the host's
! (its C PMPI_, through the test support: MPICH's Fortran PMPI_ bindings
! call the C MPI_ functions, which are shoal's under LD_PRELOAD).
program plain_fortran
  use shoal_test, only : host_allreduce
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 100000
  integer :: ierr, me, i
  double precision :: a(n), b(n), ref(n)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  do i = 1, n
    a(i) = dble(mod(i + 5 * me, 17)) - 8.5d0
  end do
  call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call host_allreduce(a, ref, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(b /= ref)) then
    print '(a,i0,a)', 'rank ', me, ': FAIL allreduce differs from the host MPI'
    stop 1
  end if
  call MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(a /= ref)) then
    print '(a,i0,a)', 'rank ', me, ': FAIL allreduce in place differs from the host MPI'
    stop 1
  end if
  call MPI_Finalize(ierr)
end program
