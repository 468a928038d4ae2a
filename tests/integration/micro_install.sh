#!/usr/bin/env bash
# micro_install.sh - the example of docs/micro.md, built against the INSTALLED h2bench: install
# the build tree into a temporary prefix, configure the example's two files (taken from the
# page) with find_package(h2bench), build it, run it, and check what it measures.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/install_lib.sh"

install_h2bench "$TMP/prefix"
expect_eq "cmake --install" "$?" 0
expect_eq "config installed" "$(ls "$TMP"/prefix/lib*/cmake/h2bench/h2benchConfig.cmake | wc -l)" 1
expect_eq "header installed" "$([ -f "$TMP/prefix/include/h2bench/micro.h" ] && echo yes)" yes

extract_micro_example "$TMP/example"
expect_eq "example files" "$(ls "$TMP/example" | tr '\n' ' ')" "CMakeLists.txt mybench.c "

flags=$(consumer_cflags)
san=$(build_sanitizers)
cmake -S "$TMP/example" -B "$TMP/example/build" -DCMAKE_PREFIX_PATH="$TMP/prefix" \
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS=$flags" >"$TMP/configure.log" 2>&1
rc=$?
expect_eq "configure example with find_package(h2bench)" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/configure.log" >&2
cmake --build "$TMP/example/build" >"$TMP/build.log" 2>&1
rc=$?
expect_eq "build example" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/build.log" >&2

EX=$TMP/example/build/mybench
expect_eq "example --list" "$("$EX" --list | tr '\n' ' ')" \
    "example/join4 example/count-commas/8 example/count-commas/64 "
"$EX" --forks 2 --warmup 1ms --time 20ms --epochs 3 --json "$TMP/ex.json" >"$TMP/ex.out" 2>&1
rc=$?
expect_eq "example run" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/ex.out" >&2
expect_eq "example entries" "$(jq '.micro | length' "$TMP/ex.json")" 3
expect_eq "example forks" "$(jq '.micro[0].forks' "$TMP/ex.json")" 2
if [ -z "$san" ]; then
    expect_eq "join4 allocs/op" "$(jq '.micro[0].allocs_per_op' "$TMP/ex.json")" 1
    expect_eq "join4 B/op" "$(jq '.micro[0].bytes_per_op' "$TMP/ex.json")" 25
    expect_eq "count-commas allocs/op" "$(jq '.micro[2].allocs_per_op' "$TMP/ex.json")" 0
else
    echo "skip: allocation counts (sanitizer build)"
fi
finish
