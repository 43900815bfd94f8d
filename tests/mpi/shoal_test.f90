! What the Fortran tests share: shoal's public API (include/shoal.h), the
! host MPI's own collectives for references and the reset of
! shoal_last_choice (fortran_support.c), and their inputs. Handles are
! Fortran integers (`use mpi_f08`: their %MPI_VAL).
module shoal_test
  use iso_c_binding
  implicit none
  interface
    ! 1 when the last collective went to shoal, 0 when to the host MPI.
    integer(c_int) function shoal_last_choice(algorithm, lane) bind(C, name='shoal_last_choice')
      import :: c_int, c_ptr
      type(c_ptr), value :: algorithm, lane
    end function
    integer(c_int) function shoal_enabled() bind(C, name='shoal_enabled')
      import :: c_int
    end function
    subroutine forget_last_choice() bind(C, name='forget_last_choice')
    end subroutine

    ! The host MPI's result: PMPI_ in C (MPICH's Fortran PMPI_ bindings call
    ! the C MPI_ functions, which are shoal's).
    subroutine host_allreduce(s, r, count, datatype, op, comm, ierr) bind(C, name='host_allreduce')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: count, datatype, op, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_reduce(s, r, count, datatype, op, root, comm, ierr) bind(C, name='host_reduce')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: count, datatype, op, root, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_reduce_scatter_block(s, r, count, datatype, op, comm, ierr) &
        bind(C, name='host_reduce_scatter_block')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: count, datatype, op, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_scan(s, r, count, datatype, op, comm, ierr) bind(C, name='host_scan')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: count, datatype, op, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_exscan(s, r, count, datatype, op, comm, ierr) bind(C, name='host_exscan')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: count, datatype, op, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_reduce_scatter(s, r, rcounts, datatype, op, comm, ierr) bind(C, name='host_reduce_scatter')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: rcounts(*), datatype, op, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_bcast(buf, count, datatype, root, comm, ierr) bind(C, name='host_bcast')
      type(*), dimension(*) :: buf
      integer, intent(in) :: count, datatype, root, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_gather(s, scount, stype, r, rcount, rtype, root, comm, ierr) bind(C, name='host_gather')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: scount, stype, rcount, rtype, root, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_gatherv(s, scount, stype, r, rcounts, displs, rtype, root, comm, ierr) &
        bind(C, name='host_gatherv')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: scount, stype, rcounts(*), displs(*), rtype, root, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_allgather(s, scount, stype, r, rcount, rtype, comm, ierr) bind(C, name='host_allgather')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: scount, stype, rcount, rtype, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_allgatherv(s, scount, stype, r, rcounts, displs, rtype, comm, ierr) &
        bind(C, name='host_allgatherv')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: scount, stype, rcounts(*), displs(*), rtype, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_scatter(s, scount, stype, r, rcount, rtype, root, comm, ierr) bind(C, name='host_scatter')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: scount, stype, rcount, rtype, root, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_scatterv(s, scounts, displs, stype, r, rcount, rtype, root, comm, ierr) &
        bind(C, name='host_scatterv')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: scounts(*), displs(*), stype, rcount, rtype, root, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_alltoall(s, scount, stype, r, rcount, rtype, comm, ierr) bind(C, name='host_alltoall')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: scount, stype, rcount, rtype, comm
      integer, intent(out) :: ierr
    end subroutine
    subroutine host_alltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm, ierr) &
        bind(C, name='host_alltoallv')
      type(*), dimension(*), intent(in) :: s
      type(*), dimension(*) :: r
      integer, intent(in) :: scounts(*), sdispls(*), stype, rcounts(*), rdispls(*), rtype, comm
      integer, intent(out) :: ierr
    end subroutine
  end interface
contains
  ! Distinct, exactly representable values per rank and salt: sums of a few
  ! stay exact, so results compare with ==.
  subroutine fill(x, rank, salt)
    double precision, intent(out) :: x(:)
    integer, intent(in) :: rank, salt
    integer :: i
    do i = 1, size(x)
      x(i) = dble(mod(i * 7 + rank * 13 + salt * 29, 101) - 50) + 0.25d0 * rank
    end do
  end subroutine
end module
