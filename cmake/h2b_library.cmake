# h2b_library(NAME SOURCES src... [PUBLIC dep...] [PRIVATE dep...] [PIC])
#
# One of the project's libraries: a static library h2b_NAME with its alias h2bench::NAME, linked
# to the PUBLIC and PRIVATE dependencies given, plus the project's warnings and sanitizers in the
# build tree only (they are never part of an installed interface). PIC for a library that a
# shared object or position-independent executable links. Include roots come from h2bench::core
# (H2B_INCLUDE_ROOTS in the top-level CMakeLists.txt), so a library adds none of its own.
function(h2b_library name)
  cmake_parse_arguments(PARSE_ARGV 1 A "PIC" "" "SOURCES;PUBLIC;PRIVATE")
  add_library(h2b_${name} STATIC ${A_SOURCES})
  add_library(h2bench::${name} ALIAS h2b_${name})
  target_link_libraries(h2b_${name}
    PUBLIC ${A_PUBLIC}
    PRIVATE ${A_PRIVATE} $<BUILD_INTERFACE:h2bench::warnings>
            $<BUILD_INTERFACE:h2bench::sanitizers>)
  if(A_PIC)
    set_target_properties(h2b_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
endfunction()
