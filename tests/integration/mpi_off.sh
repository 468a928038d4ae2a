#!/usr/bin/env bash
# mpi_off.sh - a build configured with -DH2B_MPI=OFF has no MPI: `h2bench load --mpi` says it is
# unavailable and exits 2, and so does a rank of such a build started by mpirun (it must not run
# the whole job's load once per rank). Builds the h2bench target alone in a scratch tree, also
# with -DH2B_URING=OFF (a machine without liburing-dev): `serve --io uring` falls back to epoll,
# says why and serves; so does `floor-serve --io uring`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
. "$(dirname "$0")/floor_lib.sh"
# The scratch build is Release whatever the build under test is: in a sanitizer build's suite it
# would only repeat the release suite's run of this test.
"$H2BENCH" --version | grep -q sanitizers && skip "sanitizer build: the release suite builds without MPI"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_plm=isolated OMPI_MCA_btl_vader_single_copy_mechanism=none
# Unoptimised (build type None): what is checked here does not depend on -O, and the build
# costs 30 CPU-s instead of 55.
cmake -S "$SRC" -B "$TMP/b" -DH2B_MPI=OFF -DH2B_URING=OFF -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=None \
    >"$TMP/configure.log" 2>&1
expect_eq "configures without MPI" "$?" 0
cmake --build "$TMP/b" --target h2bench -j 2 >"$TMP/build.log" 2>&1
expect_eq "builds without MPI" "$?" 0
NOMPI=$TMP/b/bin/h2bench
expect_eq "no MPI library linked" "$(ldd "$NOMPI" | grep -c libmpi)" 0

"$NOMPI" load --mpi -n 10 http://127.0.0.1:9/ >"$TMP/out" 2>"$TMP/err"
expect_eq "--mpi without MPI exits 2" "$?" 2
expect_match "says it is unavailable" "$(cat "$TMP/err")" '--mpi is unavailable: this h2bench was built without MPI'
expect_eq "sent nothing" "$(grep -c 'starting benchmark' "$TMP/out")" 0

mpirun --oversubscribe -np 2 "$NOMPI" load -n 10 http://127.0.0.1:9/ >"$TMP/out" 2>"$TMP/err"
expect_match "a rank of a no-MPI build fails" "$?" '^[1-9]'
expect_match "and says why" "$(cat "$TMP/err")" 'started by mpirun, but MPI is unavailable'

# Without liburing: no liburing linked; --io uring is the epoll loop, said before the ready line.
expect_eq "no liburing linked" "$(ldd "$NOMPI" | grep -c liburing)" 0
H2BENCH=$NOMPI H2B_TEST_IO= start_serve nouring --io uring --threads 1 || { finish; exit; }
expect_eq "io line" "$(grep '^io:' "$TMP/nouring.out")" \
    'io: epoll (io_uring unavailable: this build has no liburing (install liburing-dev and reconfigure))'
expect_eq "served on the fallback" "$(curl -s --http2-prior-knowledge "$SERVE_URL/hello")" "Hello, World!"
expect_eq "/stats io" "$(curl -s --http2-prior-knowledge "$SERVE_URL/stats" | jq -r .io)" epoll
"$NOMPI" load --io uring -n 100 -c 2 "$SERVE_URL/hello" >"$TMP/nul.out" 2>"$TMP/nul.err"
expect_eq "load --io uring without liburing: one line" "$(cat "$TMP/nul.err")" \
    'h2bench load: --io uring: this build has no liburing (install liburing-dev and reconfigure); using epoll'
expect_match "load --io uring without liburing: every request" "$(cat "$TMP/nul.out")" '100 succeeded'
stop_serve "$SERVE_PID"
expect_eq "SIGTERM exit" "$?" 0
H2BENCH=$NOMPI start_floor_as fl --io uring --request-bytes 20 --response-bytes 40
expect_eq "floor-serve io line" "$(grep '^io:' "$TMP/fl.out")" \
    'io: epoll (io_uring unavailable: this build has no liburing (install liburing-dev and reconfigure))'
"$NOMPI" load --raw 20:40 -n 100 -c 2 "$FLOOR_URL/" >"$TMP/fl.load" 2>&1
expect_match "floor-serve served on the fallback" "$(cat "$TMP/fl.load")" '100 succeeded'
kill -TERM "$FLOOR_PID"
wait "$FLOOR_PID"
expect_eq "floor-serve SIGTERM exit" "$?" 0
finish
