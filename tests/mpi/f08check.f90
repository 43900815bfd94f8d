! What the `use mpi_f08` tests share: their failure accounting, and the
! check that a call reached shoal with the expected result.
module f08check
  use mpi_f08
  use shoal_test
  implicit none
  integer :: failures = 0, checks = 0, me = 0, count = 0, csize = 1
contains
  ! The call just made reached shoal (on several ranks; alone, it has
  ! nothing to plan) and its result equals the reference. Then shoal's last
  ! choice is forgotten, so the next call cannot inherit it.
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    logical :: reached
    reached = csize == 1 .or. shoal_last_choice(c_null_ptr, c_null_ptr) == 1
    checks = checks + 1
    if (.not. (ok .and. reached)) then
      failures = failures + 1
      if (failures <= 20) print '(a,i0,3a,i0,2(a,l1))', 'rank ', me, ': FAIL ', what, ' count ', count, &
        ' result ok ', ok, ' reached shoal ', reached
    end if
    call forget_last_choice()
  end subroutine
end module
