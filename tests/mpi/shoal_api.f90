! shoal's public API (include/shoal.h) as the Fortran tests call it.
module shoal_api
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
end module
