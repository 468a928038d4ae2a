# h2b_write_if_changed(PATH TEXT): writes TEXT to PATH only when it differs from what is there,
# so generated sources that did not change do not trigger recompilation. For cmake -P scripts.
function(h2b_write_if_changed path text)
  if(EXISTS ${path})
    file(READ ${path} old)
  else()
    set(old "")
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${path} "${text}")
  endif()
endfunction()
