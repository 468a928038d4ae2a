#!/usr/bin/env bash
# serve_crowd.sh - 4,000 connections that ping every 2 s (issue 13 defect 9's crowd) against
# h2bench serve: a fresh client is still answered within 1 s each second, no crowd connection
# is dropped, and the server exits 0. h2raw.py raises its own RLIMIT_NOFILE; the server raises
# its own to --max-connections + 128.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
RAW="python3 $(dirname "$0")/h2raw.py"

start_serve crowd --threads 2 || { finish; exit; }
$RAW 127.0.0.1 "$(url_port "$SERVE_URL")" ping_crowd >"$TMP/crowd.out" 2>&1; rc=$?
cat "$TMP/crowd.out"
expect_eq "ping crowd" "$rc" 0
stop_serve "$SERVE_PID"; rc=$?
expect_eq "crowd server exit" "$rc" 0
finish
