#!/usr/bin/env bash
# package.sh - the Debian package: `cpack -G DEB` from this build tree (what
# `make -f Makefile.ci package` runs) makes h2bench_VERSION_amd64.deb with Depends from
# dpkg-shlibdeps; `apt-get install ./h2bench_*.deb` installs it (no network: its dependencies are
# the libraries this build linked, already installed); /usr/bin/h2bench runs, reads its shipped
# scenarios from /usr/share/h2bench, and docs/micro.md's example builds against the installed
# headers and library with pkg-config and with find_package; `apt-get remove h2bench` takes
# the binary away. Root only (it installs into /usr); a sanitizer build skips (its binaries
# need the sanitizer runtimes; the release suite checks the package). An h2bench package that
# was installed before the test is left alone: the test skips.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/install_lib.sh"

san=$(build_sanitizers)
[ -z "$san" ] || skip "sanitizer build ($san): the release suite checks the package"
[ "$(id -u)" = 0 ] || skip "installing a package needs root"
for tool in cpack dpkg-deb dpkg-shlibdeps apt-get pkg-config; do
    command -v "$tool" >/dev/null || skip "$tool missing (Makefile.ci PACKAGES: dpkg-dev)"
done
if dpkg-query -W -f='${Status}' h2bench 2>/dev/null | grep -q 'install ok installed'; then
    skip "an h2bench package is already installed: the test does not replace it"
fi
BUILD=$(cd "$BIN/.." && pwd)
VERSION=$("$H2BENCH" --version | sed -n 's/^h2bench \([0-9.]*\) .*/\1/p')

# The package, from this build tree's artifacts (CPack installs them into its staging area).
start=$(date +%s)
(cd "$TMP" && cpack --config "$BUILD/CPackConfig.cmake" -G DEB -B "$TMP/pkg") >"$TMP/cpack.log" 2>&1
rc=$?
expect_eq "cpack -G DEB" "$rc" 0
[ "$rc" -eq 0 ] || { tail -30 "$TMP/cpack.log" >&2; finish; exit; }
echo "cpack took $(($(date +%s) - start)) s"
DEB=$TMP/pkg/h2bench_${VERSION}_amd64.deb
expect_eq "package file name" "$(ls "$TMP/pkg"/*.deb)" "$DEB"
depends=$(dpkg-deb -f "$DEB" Depends)
for lib in libc6 libnghttp2-14 libssl3 libjansson4; do
    expect_match "Depends names $lib" "$depends" "(^|, )$lib( |,|$)"
done
expect_eq "package installs under /usr" \
    "$(dpkg-deb -c "$DEB" | awk '{print $6}' | grep -c -e '^./usr/bin/h2bench$' \
        -e '^./usr/include/h2bench/micro.h$' -e '^./usr/share/h2bench/scenarios/quick.json$')" 3

# Installed: apt-get resolves Depends against what is installed.
trap 'apt-get remove -y h2bench >/dev/null 2>&1; dpkg --purge h2bench >/dev/null 2>&1; cleanup' EXIT
apt-get install -y --no-install-recommends "$DEB" >"$TMP/install.log" 2>&1
rc=$?
expect_eq "apt-get install ./h2bench_*.deb" "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$TMP/install.log" >&2
expect_match "h2bench --version" "$(/usr/bin/h2bench --version 2>&1)" "^h2bench $VERSION "
(cd "$TMP" && /usr/bin/h2bench run /usr/share/h2bench/scenarios/quick.json --dry-run) \
    >"$TMP/dry.out" 2>&1
rc=$?
expect_eq "run --dry-run of a shipped scenario" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/dry.out" >&2

# A user's benchmark against the installed headers and library: pkg-config, then find_package.
extract_micro_example "$TMP/example"
cc -O2 -o "$TMP/pc-bench" "$TMP/example/mybench.c" $(pkg-config --cflags --libs h2bench) \
    >"$TMP/pc.log" 2>&1
rc=$?
expect_eq "build with pkg-config h2bench" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/pc.log" >&2
expect_eq "pkg-config build runs" "$("$TMP/pc-bench" --list 2>&1 | head -1)" "example/join4"
cmake -S "$TMP/example" -B "$TMP/example/build" -DCMAKE_BUILD_TYPE=Release >"$TMP/cm.log" 2>&1 &&
    cmake --build "$TMP/example/build" >>"$TMP/cm.log" 2>&1
rc=$?
expect_eq "build with find_package(h2bench)" "$rc" 0
[ "$rc" -eq 0 ] || tail -30 "$TMP/cm.log" >&2
"$TMP/example/build/mybench" --filter 'join4' --forks 1 --warmup 1ms --time 10ms --epochs 1 \
    --json "$TMP/ex.json" >"$TMP/ex.out" 2>&1
expect_eq "the example measures" "$(jq -r '.micro[0].name' "$TMP/ex.json" 2>&1)" "example/join4"

# Removed: the binary goes with the package.
apt-get remove -y h2bench >"$TMP/remove.log" 2>&1
expect_eq "apt-get remove h2bench" "$?" 0
expect_eq "binary gone" "$(test -e /usr/bin/h2bench && echo present || echo gone)" gone
expect_eq "package not installed" \
    "$(dpkg-query -W -f='${Status}' h2bench 2>/dev/null | grep -c 'install ok installed')" 0
dpkg --purge h2bench >/dev/null 2>&1 # no trace in dpkg's records either
trap cleanup EXIT
finish
