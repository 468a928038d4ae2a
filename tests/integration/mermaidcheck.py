#!/usr/bin/env python3
"""mermaidcheck.py FILE [MIN_BLOCKS] - the ```mermaid blocks of a markdown file are well formed
xychart-beta charts (what `h2bench report --summary` writes): each fence closes, each line is
one statement of the grammar subset the report uses (title, x-axis of quoted labels, y-axis,
bar of plain numbers), the bar has one value per label, and no label holds a quote, a backtick
or a control byte. Prints one line per problem; exit 1 on any, or on fewer than MIN_BLOCKS
blocks."""
import re
import sys

STR = r'"[^"`\x00-\x1f\x7f]*"'
NUM = r'-?[0-9]+(?:\.[0-9]+)?'
LINES = [
    re.compile(r'^xychart-beta( horizontal)?$'),
    re.compile(r'^    title ' + STR + '$'),
    re.compile(r'^    x-axis \[(' + STR + r'(, ' + STR + r')*)\]$'),
    re.compile(r'^    y-axis ' + STR + '$'),
    re.compile(r'^    bar \[(' + NUM + r'(, ' + NUM + r')*)\]$'),
]


def main():
    text = open(sys.argv[1], encoding='utf-8', errors='strict').read().split('\n')
    want = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    problems, blocks, i = [], 0, 0
    while i < len(text):
        if text[i] != '```mermaid':
            if text[i].startswith('```') and 'mermaid' in text[i]:
                problems.append(f'{i + 1}: odd fence {text[i]!r}')
            i += 1
            continue
        blocks += 1
        body = text[i + 1:i + 1 + len(LINES)]
        close = i + 1 + len(LINES)
        if close >= len(text) or text[close] != '```':
            problems.append(f'{i + 1}: block does not close after {len(LINES)} statements')
        labels = values = None
        for k, (line, rx) in enumerate(zip(body, LINES)):
            m = rx.match(line)
            if not m:
                problems.append(f'{i + 2 + k}: not a {rx.pattern!r} statement: {line!r}')
            elif k == 2:
                labels = re.findall(STR, m.group(1))
            elif k == 4:
                values = m.group(1).split(', ')
        if labels is not None and values is not None and len(labels) != len(values):
            problems.append(f'{i + 1}: {len(labels)} labels, {len(values)} values')
        i = close + 1
    if blocks < want:
        problems.append(f'{blocks} mermaid block(s), expected at least {want}')
    for p in problems:
        print(f'{sys.argv[1]}:{p}')
    print(f'mermaidcheck: {blocks} block(s), {len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
