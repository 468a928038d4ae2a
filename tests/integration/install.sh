#!/usr/bin/env bash
# install.sh - the install stands on its own. This build tree is installed into a prefix; then the
# source and build trees are hidden and the prefix is moved elsewhere. No installed file of a Release build names the copy or its
# build tree, and PREFIX/bin/h2bench runs PREFIX/share/h2bench/scenarios/quick.json (and
# matrix.json, with peers) --dry-run from outside any source tree, reading the peers from
# PREFIX/share/h2bench relative to itself (with the installed peers.json gone it fails naming
# that file). A user benchmark on the micro API (docs/micro.md's example) builds with
# `pkg-config h2bench` and with `find_package(h2bench 0.2)`, the package leaks no PkgConfig::
# target names into the user's project, and the version rule (SameMinorVersion while 0.x) holds.
#
# Hiding: as root, the script re-runs itself in a mount namespace of its own (unshare -m) and
# mounts empty tmpfs over the source and build trees, so nothing it starts can read them while
# other tests, outside that namespace, keep using them. Without unshare (not root), it installs a
# copy of the sources configured like this build instead (build type, sanitizers, compiler, H3,
# MPI; no tests) and renames the copy away: the same checks, but a second build of the project
# (about 55 CPU-s), which is what CI paid before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/install_lib.sh"

# In a sanitizer build this test would build the whole project a second time with the same
# sanitizers (minutes of CI) to check what does not depend on them: the install's layout,
# relocation, pkg-config and find_package are the same in every build, and the release suite
# checks them; the code the installed binary runs is the code build-asan's runs in every other
# test.
san=$("$H2BENCH" --version | sed -n 's/.*sanitizers \([a-z,;]*\).*/\1/p' | tr ';' ',')
[ -z "$san" ] || skip "sanitizer build ($san): the release suite checks the install"

# cache_value NAME: NAME's value in the CMake cache of the build under test.
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$BIN/../CMakeCache.txt"; }

if [ -z "${H2B_INSTALL_NS:-}" ] && unshare -m --propagation private true 2>/dev/null; then
    trap - EXIT
    rm -rf "$TMP"
    exec unshare -m --propagation private env H2B_INSTALL_NS=1 bash "$0" "$@"
fi
flags=$(consumer_cflags)
san=$(build_sanitizers)
build_type=$(cache_value CMAKE_BUILD_TYPE):$(cache_value H2B_SANITIZE)
peers_src=$(ls "$SRC/servers/peers" | tr '\n' ' ')
extract_micro_example "$TMP/example"
if [ -n "${H2B_INSTALL_NS:-}" ]; then
    src=$(cd "$SRC" && pwd) build=$(cd "$BIN/.." && pwd)
    install_h2bench "$TMP/prefix"
    rc=$?
    expect_eq "install this build tree" "$rc" 0
    [ "$rc" -eq 0 ] || tail -40 "$TMP/prefix.log" >&2
    # The sources and the build tree out of sight (this namespace only), the prefix elsewhere.
    # The build tree first: it is often inside the sources, and would be out of reach after.
    mount -t tmpfs -o size=1m,mode=0755 h2b-hidden "$build" &&
        mount -t tmpfs -o size=1m,mode=0755 h2b-hidden "$src"
    expect_eq "source and build trees hidden" \
        "$(ls "$src/CMakeLists.txt" "$build/CMakeCache.txt" "$BIN/h2bench" 2>/dev/null)" ""
else
    mkdir -p "$TMP/src"
    tar -C "$SRC" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$TMP/src" -xf -
    cmake -S "$TMP/src" -B "$TMP/build" -DBUILD_TESTING=OFF \
        "-DCMAKE_BUILD_TYPE=$(cache_value CMAKE_BUILD_TYPE)" \
        "-DCMAKE_C_COMPILER=$(cache_value CMAKE_C_COMPILER)" \
        "-DH2B_SANITIZE=$(cache_value H2B_SANITIZE)" "-DH2B_H3=$(cache_value H2B_H3)" \
        "-DH2B_MPI=$(cache_value H2B_MPI)" >"$TMP/copy.log" 2>&1 &&
        cmake --build "$TMP/build" -j2 >>"$TMP/copy.log" 2>&1 &&
        cmake --install "$TMP/build" --prefix "$TMP/prefix" >>"$TMP/copy.log" 2>&1
    rc=$?
    expect_eq "configure, build and install a copy of the sources" "$rc" 0
    [ "$rc" -eq 0 ] || tail -40 "$TMP/copy.log" >&2
    src=$TMP/src build=$TMP/build
    mv "$TMP/src" "$TMP/src.hidden"
    mv "$TMP/build" "$TMP/build.hidden"
fi
mv "$TMP/prefix" "$TMP/moved"
P=$TMP/moved
unset H2B_PEERS_DIR
# Debug information and sanitizer metadata name their sources by design (that is how a debugger
# or a report finds them), so the check holds for optimised builds without either.
case $build_type in
Release: | MinSizeRel:)
    expect_eq "no installed file names the source or build tree" \
        "$(grep -rlF -e "$src" -e "$build" "$P")" ""
    ;;
esac
expect_eq "scenarios installed" "$([ -f "$P/share/h2bench/scenarios/quick.json" ] && echo yes)" yes
expect_eq "peers installed" "$(ls "$P/share/h2bench/peers" | tr '\n' ' ')" \
    "$peers_src"

cd "$TMP" || exit 1
"$P/bin/h2bench" run "$P/share/h2bench/scenarios/quick.json" --dry-run >"$TMP/dry.out" 2>&1
rc=$?
expect_eq "installed, moved: run quick.json --dry-run" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/dry.out" >&2
expect_match "the dry run lists the cells" "$(cat "$TMP/dry.out")" '^quick: [0-9]+ cells'
# matrix.json has peer targets (nghttpd, h2o): their definitions come from the installed share.
"$P/bin/h2bench" run "$P/share/h2bench/scenarios/matrix.json" --dry-run >"$TMP/dry2.out" 2>&1
expect_eq "installed, moved: run matrix.json (peers) --dry-run" "$?" 0
mv "$P/share/h2bench/peers/peers.json" "$TMP/peers.json"
"$P/bin/h2bench" run "$P/share/h2bench/scenarios/matrix.json" --dry-run >"$TMP/nopeers.out" 2>&1
expect_match "without the installed peers.json: it fails" "$?" '^[1-9]'
expect_match "it names the installed file, not the sources" "$(cat "$TMP/nopeers.out")" \
    "^$P/bin/../share/h2bench/peers/peers.json: cannot open"
mv "$TMP/peers.json" "$P/share/h2bench/peers/peers.json"

# pkg-config h2bench: version, then the example compiled and linked with nothing else.
export PKG_CONFIG_PATH=$(dirname "$(ls "$P"/lib*/pkgconfig/h2bench.pc "$P"/lib/*/pkgconfig/h2bench.pc 2>/dev/null | head -1)")
expect_eq "pkg-config --modversion h2bench" "$(pkg-config --modversion h2bench)" 0.2.0
# shellcheck disable=SC2046
cc $flags -o "$TMP/pc-bench" "$TMP/example/mybench.c" $(pkg-config --cflags --libs h2bench) \
    >"$TMP/pc-build.log" 2>&1
rc=$?
expect_eq "build the example with pkg-config h2bench" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/pc-build.log" >&2
expect_eq "pkg-config build --list" "$("$TMP/pc-bench" --list | tr '\n' ' ')" \
    "example/join4 example/count-commas/8 example/count-commas/64 "
"$TMP/pc-bench" --filter join4 --forks 1 --warmup 1ms --time 20ms --epochs 2 \
    --json "$TMP/pc.json" >"$TMP/pc.out" 2>&1
expect_eq "pkg-config build runs" "$?" 0
if [ -z "$san" ]; then
    expect_eq "pkg-config build counts allocations (join4 allocs/op)" \
        "$(jq '.micro[0].allocs_per_op' "$TMP/pc.json")" 1
fi

# find_package(h2bench 0.2) in a project that also imports jansson under its own
# PkgConfig::JANSSON, as a user of jansson would: h2bench must not define any PkgConfig:: name.
mkdir -p "$TMP/user"
cp "$TMP/example/mybench.c" "$TMP/user/"
cat >"$TMP/user/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.21)
project(userbench LANGUAGES C)
find_package(h2bench 0.2 REQUIRED)
foreach(t PkgConfig::JANSSON PkgConfig::NGHTTP2 PkgConfig::OPENSSL)
  if(TARGET ${t})
    message(FATAL_ERROR "find_package(h2bench) defined ${t} in the user's project")
  endif()
endforeach()
find_package(PkgConfig REQUIRED)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
add_executable(mybench mybench.c)
target_link_libraries(mybench PRIVATE h2bench::micro PkgConfig::JANSSON)
CM
cmake -S "$TMP/user" -B "$TMP/user/build" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_C_FLAGS=$flags" >"$TMP/user-conf.log" 2>&1
rc=$?
expect_eq "configure with find_package(h2bench 0.2) beside the user's PkgConfig::JANSSON" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/user-conf.log" >&2
cmake --build "$TMP/user/build" >"$TMP/user-build.log" 2>&1
rc=$?
expect_eq "build the user project" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/user-build.log" >&2
expect_eq "user project --list" "$("$TMP/user/build/mybench" --list | head -1)" example/join4
expect_eq "the exported targets name no PkgConfig:: target" \
    "$(cat "$P"/lib*/cmake/h2bench/h2benchTargets*.cmake "$P"/lib/*/cmake/h2bench/h2benchTargets*.cmake 2>/dev/null | grep -c 'PkgConfig::')" 0

# Version compatibility: SameMinorVersion while 0.x (a minor release may change the API).
mkdir -p "$TMP/ver"
cat >"$TMP/ver/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.21)
project(ver LANGUAGES C)
find_package(h2bench ${WANT} QUIET)
if(h2bench_FOUND)
  message(STATUS "h2bench_FOUND=1 ${h2bench_VERSION}")
else()
  message(STATUS "h2bench_FOUND=0")
endif()
CM
for want in 0.2 0.2.0 0.1 0.3 1.0; do
    rm -rf "$TMP/ver/build"
    found=$(cmake -S "$TMP/ver" -B "$TMP/ver/build" -DCMAKE_PREFIX_PATH="$P" -DWANT=$want 2>&1 |
        sed -n 's/^-- h2bench_FOUND=\([A-Za-z0-9]*\).*/\1/p')
    case $want in 0.2 | 0.2.0) exp=1 ;; *) exp=0 ;; esac
    expect_eq "find_package(h2bench $want) found" "$found" "$exp"
done
finish
