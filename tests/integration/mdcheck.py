#!/usr/bin/env python3
"""mdcheck.py - checks that a markdown file cannot have been taken over by the names in it
(issue 29 item 6). Usage: mdcheck.py FILE [NEEDLE...]

Fails (exit 1, one line per problem) when, outside code spans (CommonMark: a backtick run
closed by a run of the same length), a '<' or a backtick is not backslash-escaped, when a
control byte other than a newline appears, or when a table row has another number of cell
separators (unescaped '|', in code spans too, as GFM counts them) than its table's header.
A fenced code block (```mermaid, from report --summary) is literal text and is skipped; one
left open fails.
Each NEEDLE must appear in the file (so the hostile names were rendered at all). Prints
"checked N lines, M table rows".
"""
import sys



def outside_spans(line):
    """The line without its code spans (CommonMark: a backtick run that a backslash does not
    escape, closed by the next run of the same length); an unclosed run stays as text."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "\\":
            out.append(line[i:i + 2])
            i += 2
            continue
        if line[i] != "`":
            out.append(line[i])
            i += 1
            continue
        j = i
        while j < len(line) and line[j] == "`":
            j += 1
        fence, k = j - i, j
        close = -1
        while k < len(line):
            if line[k] == "`":
                m = k
                while m < len(line) and line[m] == "`":
                    m += 1
                if m - k == fence:
                    close = m
                    break
                k = m
            else:
                k += 1
        if close < 0:
            out.append(line[i:j])
            i = j
        else:
            i = close
    return "".join(out)


def unescaped(line, ch):
    n, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        n += line[i] == ch
        i += 1
    return n


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    bad, rows, header, fence = [], 0, None, None
    for no, line in enumerate(text.split("\n"), 1):
        for ch in line:
            if ord(ch) < 0x20 or ord(ch) == 0x7F:
                bad.append("%d: control byte %r" % (no, ch))
        # a fenced code block (```lang ... ```) is literal text: only its closing fence counts
        if fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        if line.startswith("```"):
            fence = "`" * (len(line) - len(line.lstrip("`")))
            continue
        outside = outside_spans(line)
        for ch in "<`":
            if unescaped(outside, ch):
                bad.append("%d: unescaped %r outside code spans: %s" % (no, ch, line))
        if line.startswith("|"):
            pipes = unescaped(line, "|")
            if header is None:
                header = pipes
            elif pipes != header:
                bad.append("%d: %d cell separators, the header has %d: %s" % (no, pipes, header, line))
            rows += 1
        else:
            header = None
    if fence is not None:
        bad.append("a fenced code block is not closed")
    for needle in sys.argv[2:]:
        if needle not in text:
            bad.append("the name %r was not rendered" % needle)
    for b in bad:
        print("FAIL " + b)
    print("checked %d lines, %d table rows" % (text.count("\n") + 1, rows))
    return 1 if bad or rows == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
