# MOHID's Thomas routines in C (tests/common/mohid_reference.h), the one reference of the tests and the
# benchmarks; included by both, defined once. -ffp-contract=off: MOHID's build has no fused multiply-add.
if(NOT TARGET tridi_mohidref)
  add_library(tridi_mohidref STATIC ${PROJECT_SOURCE_DIR}/tests/common/mohid_reference.c)
  target_include_directories(tridi_mohidref PUBLIC ${PROJECT_SOURCE_DIR}/tests/common ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(tridi_mohidref PRIVATE -O2 -ffp-contract=off)
  target_link_libraries(tridi_mohidref PUBLIC OpenMP::OpenMP_C m)
endif()
