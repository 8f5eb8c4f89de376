! The program around a Fortran fragment of README.md or docs/*.md (check_docs.py puts the fragment in
! place of the marker line). Its variables stand for a model's sizes and arrays, with MOHID's types; the
! fragment's own use statements and declarations take precedence over them.
program doc_fragment
    use, intrinsic :: iso_c_binding
    use tridi
    implicit none
    integer :: nx, ny, nz, im, jm, km, istat
    integer :: ILB, IUB, JLB, JUB, KLB, KUB
    real(4), dimension(:, :, :), pointer :: D => null(), F => null(), Ti => null(), ANSWER => null()
    real(8), dimension(:, :, :), pointer :: E => null()
    real(8), dimension(:), pointer :: VECG => null(), VECW => null()
    real(8) :: h, dt
    type(tridi_context) :: ctx
contains
    subroutine snippet()
    !@snippet
    end subroutine snippet
end program doc_fragment
