#!/usr/bin/env python3
"""banned.py - fails when a C file calls a banned function (STYLE.md rule 10).

Usage: banned.py FILE...   (Makefile.ci format-check passes every tracked .c and .h)

Banned: sprintf strcpy strcat strtok atoi gets system popen. Comments, string and character
literals are blanked first (line breaks kept, so line numbers stay right), so prose such as
"Rejected: system(...)" and test inputs such as "plot system(\\"id\\")" do not count; a call
is the name as a whole word followed by '('.
"""
import re
import sys

BANNED = ("sprintf", "strcpy", "strcat", "strtok", "atoi", "gets", "system", "popen")
CALL = re.compile(r"\b(" + "|".join(BANNED) + r")\s*\(")


def blank(text):
    """Replaces comments and literals with spaces, keeping newlines."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def main(paths):
    bad = 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            code = blank(f.read())
        for lineno, line in enumerate(code.split("\n"), 1):
            for m in CALL.finditer(line):
                print(f"{path}:{lineno}:{m.start() + 1}: banned function {m.group(1)}()")
                bad += 1
    if bad:
        print(f"banned: {bad} call(s) of banned functions (STYLE.md rule 10)", file=sys.stderr)
        return 1
    print(f"banned: {len(paths)} files clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
