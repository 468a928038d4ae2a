#!/usr/bin/env python3
"""doctest.py - run the examples in README.md and docs/*.md and check the output they show.

What is run: a fenced block (```console) directly after a line `<!-- doctest -->` (an HTML
comment, invisible on GitHub). In it, a line starting with `$ ` is a command (a trailing `\\`
continues it on the next line); the lines up to the next `$ ` are the output the doc shows.
`<!-- doctest exit=N -->` expects the block's last command to exit N (default: every command
exits 0).

How: every command runs under `sh -c` in a fresh temporary directory holding `build` (a link to
the build tree) and links to the source tree's scenarios/, gates/, tests/ and scripts/, so
`build/bin/h2bench` and the repository paths resolve as in the docs and every output file lands
in the temporary directory. `build/bin/h2bench serve ... --port N ... &` is not run as shown: the
runner starts `h2bench serve --port 0` with the other arguments, reads the port from its
`listening on` line, and writes that port wherever the rest of the file's commands say N (as a
whole word: `:N`, `--port N`, `HOST N`); the servers live
until the end of the file and are stopped (SIGTERM, then SIGKILL) by the runner. Any other
command ending in `&` is an error in the doc. Each command has 120 s.

What is checked: the exit code, and the shape of the output. Each shown line, with runs of
blanks collapsed and numbers, durations, sizes, dates, commit hashes and ports masked, must
match an output line of the command, in order (the command may print lines the doc leaves out;
a shown line `...` marks such an elision).
A mismatch names FILE:LINE of the shown line and prints what the command printed.

Not marked, and why: examples that need several machines or a scheduler (mpirun across hosts,
docs/distributed.md), GitHub Actions workflows (docs/gates.md), runs longer than a few seconds
(whole scenario matrices, `gate --calibrate`, `ab` which builds two revisions), and peers this
machine may lack; those are covered by the integration tests instead.

Usage: doctest.py BUILD_DIR SOURCE_DIR FILE.md... ; exit 0 all passed, 1 a check failed,
2 usage or a malformed example, 77 nothing to check (no marked block in the files).
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!-- doctest(?: exit=(\d+))? -->\s*$")
SERVE = re.compile(r"^build/bin/h2bench serve(?P<args>.*?)\s*&\s*$")
LINKS = ("scenarios", "gates", "tests", "scripts")

_MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d[-:]\d\d[-:]\d\d(?:\.\d+)?Z?"), "<DATE>"),
    (re.compile(r"\d{8}T\d{6}Z"), "<DATE>"),
    # after "commit ", always a hash: 12 hex digits can all be decimal ones (249390053681)
    (re.compile(r"(?<=commit )[0-9a-f]{7,40}(?:-dirty)?\b"), "<HASH>"),
    # all digits: a number; "-dirty" is how a build from a tree with local changes says so
    (re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{7,40}(?:-dirty)?\b"), "<HASH>"),
    (re.compile(r"\d+(?:\.\d+)?(?:ns|us|µs|ms|s|min|KB|MB|GB|B|KiB|MiB|GiB)\b"), "<Q>"),
    (re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"), "<N>"),
]


def shape(line):
    s = " ".join(line.split())
    for rx, tok in _MASKS:
        s = rx.sub(tok, s)
    return s


class Example:
    def __init__(self, path, line, exit_code):
        self.path, self.line, self.exit = path, line, exit_code
        self.cmds = []  # [cmd_text, cmd_line, [(line_no, text)]]


def parse(path):
    """Marked blocks of one file; raises ValueError naming file:line on a malformed one."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```console":
            raise ValueError(f"{path}:{i + 2}: expected ```console after the doctest marker")
        ex = Example(path, i + 1, int(m.group(1)) if m.group(1) else None)
        i += 2
        while i < len(lines) and lines[i].strip() != "```":
            ln = lines[i]
            if ln.startswith("$ "):
                start, cmd = i + 1, ln[2:]
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd[:-1] + " " + lines[i].strip()
                ex.cmds.append([cmd, start, []])
            elif ex.cmds:
                ex.cmds[-1][2].append((i + 1, ln))
            elif ln.strip():
                raise ValueError(f"{path}:{i + 1}: output before the first $ command")
            i += 1
        if i >= len(lines):
            raise ValueError(f"{path}:{ex.line}: the doctest block is not closed")
        if not ex.cmds:
            raise ValueError(f"{path}:{ex.line}: a doctest block without a $ command")
        out.append(ex)
        i += 1
    return out


class Runner:
    def __init__(self, build, src):
        self.build, self.src = os.path.abspath(build), os.path.abspath(src)
        self.servers, self.ports, self.failures, self.ran = [], {}, 0, 0

    def fail(self, where, msg, output=None):
        self.failures += 1
        print(f"{where}: {msg}")
        if output is not None:
            for ln in output.splitlines()[:40]:
                print(f"    | {ln}")

    def subst(self, text):
        for shown, real in self.ports.items():
            text = re.sub(r"(?<![\w.])%s(?![\w.])" % shown, str(real), text)
        return text

    def start_server(self, ex, cmd, line, shown):
        args = cmd.group("args").split()
        port = None
        if "--port" in args:
            k = args.index("--port")
            if k + 1 >= len(args):
                raise ValueError(f"{ex.path}:{line}: --port without a value")
            port = args[k + 1]
            del args[k:k + 2]
        p = subprocess.Popen([os.path.join(self.build, "bin", "h2bench"), "serve", "--port", "0"]
                             + args, cwd=self.tmp, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.servers.append(p)
        first = p.stdout.readline()  # the ready line, or EOF if it died
        m = re.search(r":(\d+)\s*$", first)
        if not m:
            self.fail(f"{ex.path}:{line}", "serve did not print its listening line", first)
            return
        if port is not None:
            self.ports[port] = int(m.group(1))
        self.check_lines(ex, line, shown, first, 0, None)

    def check_lines(self, ex, line, shown, output, rc, want_rc):
        self.ran += 1
        if want_rc is not None and rc != want_rc:
            self.fail(f"{ex.path}:{line}", f"exit {rc}, the doc expects {want_rc}", output)
            return
        got = [shape(self.unsubst(x)) for x in output.splitlines()]
        k = 0
        for no, text in shown:
            if text.strip() in ("", "...", "…"):
                continue  # an elision in the doc
            want = shape(text)
            while k < len(got) and got[k] != want:
                k += 1
            if k == len(got):
                self.fail(f"{ex.path}:{no}", f"shown line not in the output: {text.strip()}",
                          output)
                return
            k += 1

    def unsubst(self, text):
        for shown, real in self.ports.items():
            text = re.sub(r"\b%d\b" % real, shown, text)
        return text

    @staticmethod
    def missing_tools(ex):
        """The programs an example's commands start (first word of each pipeline stage) that
        are not on PATH; build/bin/... is the build tree's and always there."""
        missing = []
        for cmd, _, _ in ex.cmds:
            try:
                words = shlex.split(cmd.rstrip("& "))
            except ValueError:
                continue
            starts = [0] + [k + 1 for k, w in enumerate(words) if w in ("|", "&&", ";")]
            for k in starts:
                w = words[k] if k < len(words) else ""
                if w and "/" not in w and "=" not in w and shutil.which(w) is None:
                    if w not in missing:
                        missing.append(w)
        return missing

    def run_file(self, path, examples):
        self.tmp = tempfile.mkdtemp(prefix="h2b-doctest-")
        try:
            os.symlink(self.build, os.path.join(self.tmp, "build"))
            for d in LINKS:
                os.symlink(os.path.join(self.src, d), os.path.join(self.tmp, d))
            for ex in examples:
                missing = self.missing_tools(ex)
                if missing:
                    print(f"{path}:{ex.line}: skipped, not installed here: {', '.join(missing)}")
                    continue
                for n, (cmd, line, shown) in enumerate(ex.cmds):
                    serve = SERVE.match(cmd)
                    if serve:
                        self.start_server(ex, serve, line, shown)
                        continue
                    if cmd.rstrip().endswith("&"):
                        raise ValueError(f"{path}:{line}: only `h2bench serve ... &` may run "
                                         "in the background")
                    last = n == len(ex.cmds) - 1
                    want = ex.exit if (last and ex.exit is not None) else 0
                    try:
                        r = subprocess.run(["sh", "-c", self.subst(cmd)], cwd=self.tmp,
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           text=True, timeout=120, errors="replace")
                        self.check_lines(ex, line, shown, r.stdout, r.returncode, want)
                    except subprocess.TimeoutExpired:
                        self.fail(f"{path}:{line}", "did not finish in 120 s")
        finally:
            for p in self.servers:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(timeout=5)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    p.wait()
                p.stdout.close()
            self.servers, self.ports = [], {}
            shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    if len(sys.argv) < 4:
        print("usage: doctest.py BUILD_DIR SOURCE_DIR FILE.md...", file=sys.stderr)
        return 2
    build, src, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    if os.environ.get("H2B_DOC_SKIP"):
        # The examples show a Release build's output (a sanitizer build's measurements are
        # refused by gate and compare, and callgrind cannot run it).
        print("doctest: skipped:", os.environ["H2B_DOC_SKIP"])
        return 77
    runner = Runner(build, src)
    try:
        parsed = [(f, parse(f)) for f in files]
        for f, examples in parsed:
            if examples:
                runner.run_file(f, examples)
    except (ValueError, OSError) as e:
        print(e)
        return 2
    if runner.ran == 0:
        print("doctest: no marked example in", " ".join(files))
        return 77
    print(f"doctest: {runner.ran} command(s) checked, {runner.failures} failure(s)")
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main())
