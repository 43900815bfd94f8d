! Fortran bindings (`use mpi`): every collective shoal intercepts, called
! from Fortran, must reach shoal (shoal_last_choice) and give what the host
! MPI gives for the same inputs (its C PMPI_: MPICH's Fortran PMPI_ bindings
! call the C MPI_ functions, that is shoal), with and without
! MPI_IN_PLACE, on MPI_COMM_WORLD, a dup and an odd-sized split; an invalid
! argument returns the host's error code; MPI_Comm_free nulls the handle.
module fcheck
  use mpi
  use shoal_test
  implicit none
  integer :: failures = 0, checks = 0, me = 0
  character(len=64) :: where = ''
contains
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (.not. ok) then
      failures = failures + 1
      if (failures <= 20) print '(a,i0,5a)', 'rank ', me, ': FAIL ', what, ' (', trim(where), ')'
    end if
  end subroutine

  ! The call just made with data on a communicator of several ranks was
  ! shoal's. Then shoal's last choice is forgotten, so the next call cannot
  ! inherit it.
  subroutine handled(comm, n, what)
    integer, intent(in) :: comm, n
    character(len=*), intent(in) :: what
    integer :: size, ierr
    call MPI_Comm_size(comm, size, ierr)
    if (size > 1 .and. n > 0) call expect(shoal_last_choice(c_null_ptr, c_null_ptr) == 1, what // ' reached shoal')
    call forget_last_choice()
  end subroutine
end module

program fortran_check
  use fcheck
  implicit none
  integer, parameter :: nsizes = 5
  integer, parameter :: sizes(nsizes) = [0, 1, 7, 4099, 262147]
  integer :: ierr, np, comms(3), ncomms, c, comm, csize, crank, k, n, ns, root, i, j, provided
  integer :: dup, split, rc_shoal, rc_host, class_shoal, class_host
  double precision, allocatable :: s(:), r(:), ref(:), big(:)
  integer, allocatable :: counts(:), displs(:), rcounts(:), rdispls(:), is(:), ir(:), iref(:)
  integer, allocatable :: pairs(:, :), rpairs(:, :), refpairs(:, :)
  logical, allocatable :: ls(:), lr(:), lref(:)

  ! MPI_Init_thread's entry point; SINGLE, because at FUNNELED Open MPI 4.1's
  ! tcp transport trips ThreadSanitizer's lock-order check in build/tsan.
  call MPI_Init_thread(MPI_THREAD_SINGLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call expect(ierr == MPI_SUCCESS, 'MPI_Init_thread')
  call expect(shoal_enabled() == 1, 'shoal started by MPI_Init_thread from Fortran')

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(me, 2), np - me, split, ierr)
  comms = [MPI_COMM_WORLD, dup, split]
  ncomms = 3

  do c = 1, ncomms
    comm = comms(c)
    call MPI_Comm_size(comm, csize, ierr)
    call MPI_Comm_rank(comm, crank, ierr)
    allocate(counts(0:csize - 1), displs(0:csize - 1), rcounts(0:csize - 1), rdispls(0:csize - 1))
    call MPI_Barrier(comm, ierr)
    call handled(comm, 1, 'MPI_Barrier')

    do k = 1, nsizes
      n = sizes(k)
      write(where, '(a,i0,a,i0,a,i0)') 'comm ', c, ' of ', csize, ' ranks, count ', n
      allocate(s(max(n, 1)), r(max(n, 1)), ref(max(n, 1)))
      call fill(s(1:n), crank, k)

      ! ---- reductions ----
      r = -1; ref = -2
      call MPI_Allreduce(s, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call handled(comm, n, 'MPI_Allreduce')
      call host_allreduce(s, ref, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call expect(all(r(1:n) == ref(1:n)), 'MPI_Allreduce SUM')
      r(1:n) = s(1:n)
      call MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call handled(comm, n, 'MPI_Allreduce in place')
      call expect(all(r(1:n) == ref(1:n)), 'MPI_Allreduce SUM in place')

      allocate(is(max(n, 1)), ir(max(n, 1)), iref(max(n, 1)))
      is(1:n) = int(s(1:n) * 4)
      call MPI_Allreduce(is, ir, n, MPI_INTEGER, MPI_BXOR, comm, ierr)
      call host_allreduce(is, iref, n, MPI_INTEGER, MPI_BXOR, comm, ierr)
      call expect(all(ir(1:n) == iref(1:n)), 'MPI_Allreduce INTEGER BXOR')

      allocate(pairs(2, max(n, 1)), rpairs(2, max(n, 1)), refpairs(2, max(n, 1)))
      pairs(1, 1:n) = mod(is(1:n), 5)
      pairs(2, 1:n) = crank
      call MPI_Allreduce(pairs, rpairs, n, MPI_2INTEGER, MPI_MAXLOC, comm, ierr)
      call handled(comm, n, 'MPI_Allreduce MAXLOC')
      call host_allreduce(pairs, refpairs, n, MPI_2INTEGER, MPI_MAXLOC, comm, ierr)
      call expect(all(rpairs(:, 1:n) == refpairs(:, 1:n)), 'MPI_Allreduce 2INTEGER MAXLOC')
      deallocate(pairs, rpairs, refpairs)

      allocate(ls(max(n, 1)), lr(max(n, 1)), lref(max(n, 1)))
      ls(1:n) = mod(is(1:n), 3) == 0
      call MPI_Allreduce(ls, lr, n, MPI_LOGICAL, MPI_LOR, comm, ierr)
      call host_allreduce(ls, lref, n, MPI_LOGICAL, MPI_LOR, comm, ierr)
      call expect(all(lr(1:n) .eqv. lref(1:n)), 'MPI_Allreduce LOGICAL LOR')
      deallocate(ls, lr, lref)

      do root = 0, csize - 1, max(csize - 1, 1)
        r = -1; ref = -2
        call MPI_Reduce(s, r, n, MPI_DOUBLE_PRECISION, MPI_MAX, root, comm, ierr)
        call handled(comm, n, 'MPI_Reduce')
        call host_reduce(s, ref, n, MPI_DOUBLE_PRECISION, MPI_MAX, root, comm, ierr)
        if (crank == root) call expect(all(r(1:n) == ref(1:n)), 'MPI_Reduce MAX')
        r(1:n) = s(1:n)
        if (crank == root) then
          call MPI_Reduce(MPI_IN_PLACE, r, n, MPI_DOUBLE_PRECISION, MPI_MAX, root, comm, ierr)
          call expect(all(r(1:n) == ref(1:n)), 'MPI_Reduce MAX in place')
        else
          call MPI_Reduce(s, r, n, MPI_DOUBLE_PRECISION, MPI_MAX, root, comm, ierr)
        end if
        call handled(comm, n, 'MPI_Reduce in place')
      end do
      deallocate(is, ir, iref)

      ! Scan and exscan, in rank order; rank 0's exscan result is undefined.
      ! shoal takes them up to 8 KiB a rank (1024 doubles), the host above.
      ns = merge(n, 0, n <= 1024)
      r = -1; ref = -2
      call MPI_Scan(s, r, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
      call handled(comm, ns, 'MPI_Scan')
      call host_scan(s, ref, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
      call expect(all(r(1:n) == ref(1:n)), 'MPI_Scan MAX')
      r(1:n) = s(1:n)
      call MPI_Scan(MPI_IN_PLACE, r, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
      call handled(comm, ns, 'MPI_Scan in place')
      call expect(all(r(1:n) == ref(1:n)), 'MPI_Scan MAX in place')
      r = -1; ref = -2
      call MPI_Exscan(s, r, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
      call handled(comm, ns, 'MPI_Exscan')
      call host_exscan(s, ref, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
      if (crank > 0) call expect(all(r(1:n) == ref(1:n)), 'MPI_Exscan MAX')

      allocate(big(max(n * csize, 1)))
      call fill(big(1:n * csize), crank, k + 1)
      r = -1; ref = -2
      call MPI_Reduce_scatter_block(big, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call handled(comm, n, 'MPI_Reduce_scatter_block')
      call host_reduce_scatter_block(big, ref, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call expect(all(r(1:n) == ref(1:n)), 'MPI_Reduce_scatter_block')
      call MPI_Reduce_scatter_block(MPI_IN_PLACE, big, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call handled(comm, n, 'MPI_Reduce_scatter_block in place')
      call expect(all(big(1:n) == ref(1:n)), 'MPI_Reduce_scatter_block in place')
      ! Uneven blocks: n - j elements for rank j.
      do j = 0, csize - 1
        rcounts(j) = max(n - j, 0)
      end do
      call fill(big(1:n * csize), crank, k + 5)
      r = -1; ref = -2
      call MPI_Reduce_scatter(big, r, rcounts, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call handled(comm, sum(rcounts), 'MPI_Reduce_scatter')
      call host_reduce_scatter(big, ref, rcounts, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call expect(all(r(1:rcounts(crank)) == ref(1:rcounts(crank))), 'MPI_Reduce_scatter')
      call MPI_Reduce_scatter(MPI_IN_PLACE, big, rcounts, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
      call handled(comm, sum(rcounts), 'MPI_Reduce_scatter in place')
      call expect(all(big(1:rcounts(crank)) == ref(1:rcounts(crank))), 'MPI_Reduce_scatter in place')
      deallocate(big)

      ! ---- bcast, gather, scatter ----
      allocate(big(max(n * csize, 1)))
      do root = 0, csize - 1, max(csize - 1, 1)
        if (crank == root) then
          r(1:n) = s(1:n)
        else
          r = -1
        end if
        call MPI_Bcast(r, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
        call handled(comm, n, 'MPI_Bcast')
        ref = r
        if (crank /= root) ref = -2
        call host_bcast(ref, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
        call expect(all(r(1:n) == ref(1:n)), 'MPI_Bcast')

        big = -1
        call MPI_Gather(s, n, MPI_DOUBLE_PRECISION, big, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
        call handled(comm, n, 'MPI_Gather')
        if (crank == root) then
          call expect(check_gathered(big, n, csize, k), 'MPI_Gather')
          big = -1
          big(root * n + 1:root * n + n) = s(1:n)
          call MPI_Gather(MPI_IN_PLACE, n, MPI_DOUBLE_PRECISION, big, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
          call expect(check_gathered(big, n, csize, k), 'MPI_Gather in place')
        else
          call MPI_Gather(s, n, MPI_DOUBLE_PRECISION, big, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
        end if
        call handled(comm, n, 'MPI_Gather in place')

        ! gatherv: rank i sends n + i elements, placed with gaps of 3.
        call v_layout(counts, displs, n, csize)
        call fill(s(1:n), crank, k)
        deallocate(big, ref)
        allocate(big(displs(csize - 1) + counts(csize - 1) + 1), ref(displs(csize - 1) + counts(csize - 1) + 1))
        if (size(s) < counts(crank)) call grow(s, counts(crank))
        call fill(s(1:counts(crank)), crank, k)
        big = -1; ref = -1
        call MPI_Gatherv(s, counts(crank), MPI_DOUBLE_PRECISION, big, counts, displs, MPI_DOUBLE_PRECISION, &
                         root, comm, ierr)
        call handled(comm, n, 'MPI_Gatherv')
        call host_gatherv(s, counts(crank), MPI_DOUBLE_PRECISION, ref, counts, displs, MPI_DOUBLE_PRECISION, &
                          root, comm, ierr)
        if (crank == root) call expect(all(big == ref), 'MPI_Gatherv')
        big = -1
        if (crank == root) then
          big(displs(root) + 1:displs(root) + counts(root)) = s(1:counts(root))
          call MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DOUBLE_PRECISION, big, counts, displs, MPI_DOUBLE_PRECISION, &
                           root, comm, ierr)
          call expect(all(big == ref), 'MPI_Gatherv in place')
        else
          call MPI_Gatherv(s, counts(crank), MPI_DOUBLE_PRECISION, big, counts, displs, MPI_DOUBLE_PRECISION, &
                           root, comm, ierr)
        end if
        call handled(comm, n, 'MPI_Gatherv in place')

        ! scatter from the same layout: the root's big holds every block.
        call fill(ref, root, k + 2)
        big = ref
        r = -1
        call MPI_Scatter(big, n, MPI_DOUBLE_PRECISION, r, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
        call handled(comm, n, 'MPI_Scatter')
        call expect(all(r(1:n) == ref(crank * n + 1:crank * n + n)), 'MPI_Scatter')
        if (crank == root) then
          call MPI_Scatter(big, n, MPI_DOUBLE_PRECISION, MPI_IN_PLACE, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
          call expect(all(big == ref), 'MPI_Scatter in place leaves the root''s buffer')
        else
          r = -1
          call MPI_Scatter(big, n, MPI_DOUBLE_PRECISION, r, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
          call expect(all(r(1:n) == ref(crank * n + 1:crank * n + n)), 'MPI_Scatter, root in place')
        end if
        call handled(comm, n, 'MPI_Scatter in place')
        s = -1
        call MPI_Scatterv(big, counts, displs, MPI_DOUBLE_PRECISION, s, counts(crank), MPI_DOUBLE_PRECISION, &
                          root, comm, ierr)
        call handled(comm, n, 'MPI_Scatterv')
        call expect(all(s(1:counts(crank)) == ref(displs(crank) + 1:displs(crank) + counts(crank))), 'MPI_Scatterv')
        if (crank == root) then
          call MPI_Scatterv(big, counts, displs, MPI_DOUBLE_PRECISION, MPI_IN_PLACE, 0, MPI_DOUBLE_PRECISION, &
                            root, comm, ierr)
        else
          s = -1
          call MPI_Scatterv(big, counts, displs, MPI_DOUBLE_PRECISION, s, counts(crank), MPI_DOUBLE_PRECISION, &
                            root, comm, ierr)
          call expect(all(s(1:counts(crank)) == ref(displs(crank) + 1:displs(crank) + counts(crank))), &
                      'MPI_Scatterv, root in place')
        end if
        call handled(comm, n, 'MPI_Scatterv in place')
        deallocate(big, ref)
        allocate(big(max(n * csize, 1)), ref(max(n, 1)))
        call fill(s(1:n), crank, k)
      end do

      ! ---- allgather(v), alltoall(v) ----
      big = -1
      call MPI_Allgather(s, n, MPI_DOUBLE_PRECISION, big, n, MPI_DOUBLE_PRECISION, comm, ierr)
      call handled(comm, n, 'MPI_Allgather')
      call expect(check_gathered(big, n, csize, k), 'MPI_Allgather')
      big = -1
      big(crank * n + 1:crank * n + n) = s(1:n)
      call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, n, MPI_DOUBLE_PRECISION, comm, ierr)
      call handled(comm, n, 'MPI_Allgather in place')
      call expect(check_gathered(big, n, csize, k), 'MPI_Allgather in place')

      call v_layout(counts, displs, n, csize)
      deallocate(big, ref)
      allocate(big(displs(csize - 1) + counts(csize - 1) + 1), ref(displs(csize - 1) + counts(csize - 1) + 1))
      if (size(s) < counts(crank)) call grow(s, counts(crank))
      call fill(s(1:counts(crank)), crank, k)
      big = -1; ref = -1
      call MPI_Allgatherv(s, counts(crank), MPI_DOUBLE_PRECISION, big, counts, displs, MPI_DOUBLE_PRECISION, &
                          comm, ierr)
      call handled(comm, n, 'MPI_Allgatherv')
      call host_allgatherv(s, counts(crank), MPI_DOUBLE_PRECISION, ref, counts, displs, MPI_DOUBLE_PRECISION, &
                           comm, ierr)
      call expect(all(big == ref), 'MPI_Allgatherv')
      big = -1
      big(displs(crank) + 1:displs(crank) + counts(crank)) = s(1:counts(crank))
      call MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, counts, displs, MPI_DOUBLE_PRECISION, &
                          comm, ierr)
      call handled(comm, n, 'MPI_Allgatherv in place')
      call expect(all(big == ref), 'MPI_Allgatherv in place')
      deallocate(big, ref)

      allocate(big(max(n * csize, 1)), ref(max(n * csize, 1)))
      call fill(big(1:n * csize), crank, k + 3)
      deallocate(r)
      allocate(r(max(n * csize, 1)))
      r = -1; ref = -2
      call MPI_Alltoall(big, n, MPI_DOUBLE_PRECISION, r, n, MPI_DOUBLE_PRECISION, comm, ierr)
      call handled(comm, n, 'MPI_Alltoall')
      call host_alltoall(big, n, MPI_DOUBLE_PRECISION, ref, n, MPI_DOUBLE_PRECISION, comm, ierr)
      call expect(all(r(1:n * csize) == ref(1:n * csize)), 'MPI_Alltoall')
      call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, n, MPI_DOUBLE_PRECISION, comm, ierr)
      call handled(comm, n, 'MPI_Alltoall in place')
      call expect(all(big(1:n * csize) == ref(1:n * csize)), 'MPI_Alltoall in place')
      deallocate(big, ref, r)

      ! alltoallv: ranks i and j exchange n + mod(i + j, 3) elements each way.
      do i = 0, csize - 1
        counts(i) = n + mod(i + crank, 3)
      end do
      displs(0) = 1
      rdispls(0) = 2
      do i = 1, csize - 1
        displs(i) = displs(i - 1) + counts(i - 1) + 1
        rdispls(i) = rdispls(i - 1) + counts(i - 1) + 2
      end do
      rcounts = counts
      allocate(big(displs(csize - 1) + counts(csize - 1) + 1), r(rdispls(csize - 1) + rcounts(csize - 1) + 2))
      allocate(ref(size(r)))
      call fill(big, crank, k + 4)
      r = -1; ref = -1
      call MPI_Alltoallv(big, counts, displs, MPI_DOUBLE_PRECISION, r, rcounts, rdispls, MPI_DOUBLE_PRECISION, &
                         comm, ierr)
      call handled(comm, n, 'MPI_Alltoallv')
      call host_alltoallv(big, counts, displs, MPI_DOUBLE_PRECISION, ref, rcounts, rdispls, &
                          MPI_DOUBLE_PRECISION, comm, ierr)
      call expect(all(r == ref), 'MPI_Alltoallv')
      do j = 0, csize - 1
        r(rdispls(j) + 1:rdispls(j) + rcounts(j)) = big(displs(j) + 1:displs(j) + counts(j))
      end do
      call MPI_Alltoallv(MPI_IN_PLACE, counts, displs, MPI_DATATYPE_NULL, r, rcounts, rdispls, &
                         MPI_DOUBLE_PRECISION, comm, ierr)
      call handled(comm, n, 'MPI_Alltoallv in place')
      call expect(all(r == ref), 'MPI_Alltoallv in place')
      deallocate(big, r, ref, s)
    end do
    deallocate(counts, displs, rcounts, rdispls)
  end do

  ! An invalid argument: the host's error code comes back through ierr.
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN, ierr)
  allocate(s(4), r(4))
  s = 1
  ! (Not allreduce: MPICH 4.0 corrupts its heap on a negative count there.)
  call MPI_Bcast(s, 4, MPI_DOUBLE_PRECISION, -1, dup, rc_shoal)
  call host_bcast(s, 4, MPI_DOUBLE_PRECISION, -1, dup, rc_host)
  ! (Classes: MPICH makes a new code for every error it reports.)
  call MPI_Error_class(rc_shoal, class_shoal, ierr)
  call MPI_Error_class(rc_host, class_host, ierr)
  call expect(rc_shoal /= MPI_SUCCESS .and. class_shoal == class_host, 'root -1 returns the host''s error class')

  call MPI_Comm_free(dup, ierr)
  call expect(ierr == MPI_SUCCESS .and. dup == MPI_COMM_NULL, 'MPI_Comm_free nulls the handle')
  call MPI_Comm_free(split, ierr)

  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a,i0,a,i0,a)', 'fortran_check: ', checks, ' checks per rank, ', failures, ' failures'
  call MPI_Finalize(ierr)
  call expect(shoal_enabled() == 0, 'shoal stopped by MPI_Finalize from Fortran')
  if (failures /= 0) stop 1

contains
  ! Block p of n elements is rank p's fill(.., k).
  logical function check_gathered(buf, n, csize, k)
    double precision, intent(in) :: buf(:)
    integer, intent(in) :: n, csize, k
    double precision :: want(max(n, 1))
    integer :: p
    check_gathered = .true.
    do p = 0, csize - 1
      call fill(want(1:n), p, k)
      check_gathered = check_gathered .and. all(buf(p * n + 1:p * n + n) == want(1:n))
    end do
  end function

  ! Rank i's block holds n + i elements and starts 3 elements after the last.
  subroutine v_layout(counts, displs, n, csize)
    integer, intent(inout) :: counts(0:), displs(0:)
    integer, intent(in) :: n, csize
    integer :: i
    counts(0) = n
    displs(0) = 0
    do i = 1, csize - 1
      counts(i) = n + i
      displs(i) = displs(i - 1) + counts(i - 1) + 3
    end do
  end subroutine

  subroutine grow(x, n)
    double precision, allocatable, intent(inout) :: x(:)
    integer, intent(in) :: n
    deallocate(x)
    allocate(x(n))
  end subroutine
end program
