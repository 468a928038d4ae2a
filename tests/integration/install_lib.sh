# install_lib.sh - pieces shared by the tests that build a user's project against the INSTALLED
# h2bench (micro_install.sh, ab.sh, install.sh). Source it after lib.sh.

# install_h2bench PREFIX: cmake --install of this build tree into PREFIX (log in PREFIX.log).
install_h2bench() {
    cmake --install "$(cd "$BIN/.." && pwd)" --prefix "$1" >"$1.log" 2>&1
}

# The sanitizers this build was made with ("" for none), e.g. "address,undefined".
build_sanitizers() {
    "$H2BENCH" --version | sed -n 's/.*sanitizers \([a-z,;]*\).*/\1/p' | tr ';' ','
}

# consumer_cflags: the C flags a user's project needs to link this build's libraries (a
# sanitizer build's libraries need the same sanitizer in the consumer).
consumer_cflags() {
    local san
    san=$(build_sanitizers)
    [ -n "$san" ] && printf '%s' "-fsanitize=$san"
}

# extract_micro_example DIR: the fenced blocks "```c mybench.c" and "```cmake CMakeLists.txt"
# of docs/micro.md, as files in DIR.
extract_micro_example() {
    mkdir -p "$1"
    awk -v dir="$1" '
        /^```[a-z]+ [A-Za-z0-9_.]+$/ { file = dir "/" $2; next }
        /^```/ { file = ""; next }
        file != "" { print > file }
    ' "$SRC/docs/micro.md"
}
