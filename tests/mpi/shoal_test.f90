! What the Fortran tests share: shoal's public API (include/shoal.h) and
! their inputs.
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
