#!/usr/bin/env python3
"""h1raw.py - hostile HTTP/1.1 clients against h2bench serve (raw sockets, no HTTP library).

usage: h1raw.py HOST PORT SCENARIO... ("all" runs every scenario). Prints "ok NAME" or
"FAIL NAME: why" per scenario; exits 1 if any failed. --slow-timeout must be short (1 s) for
the slow_headers scenario.
"""
import socket
import sys
import time


def conn(host, port):
    s = socket.create_connection((host, port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_response(s, deadline=5.0):
    """Reads one response (Content-Length or chunked body). Returns (status, headers, body)
    or None when the connection closed first."""
    s.settimeout(deadline)
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            return None
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    hdrs = {}
    for ln in lines[1:]:
        k, v = ln.split(b":", 1)
        hdrs[k.strip().lower().decode()] = v.strip().decode()
    if "content-length" in hdrs:
        n = int(hdrs["content-length"])
        while len(rest) < n:
            d = s.recv(65536)
            if not d:
                break
            rest += d
        return status, hdrs, rest[:n], rest[n:]
    return status, hdrs, rest, b""


def closed(s, timeout=5.0):
    s.settimeout(timeout)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def expect_reject(host, port, req, status):
    s = conn(host, port)
    s.sendall(req)
    r = read_response(s)
    if r is None:
        return "closed without a response"
    if r[0] != status:
        return "status %d, want %d" % (r[0], status)
    if r[1].get("connection") != "close":
        return "no Connection: close"
    if not closed(s):
        return "connection stayed open"
    return None


def sc_long_line(h, p):
    return expect_reject(h, p, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414)


def sc_long_line_unterminated(h, p):
    return expect_reject(h, p, b"GET /" + b"a" * 9000, 414)


def sc_big_headers(h, p):
    req = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-Pad-%d: %s\r\n" % (i, b"v" * 1000) for i in range(80)) + b"\r\n"
    return expect_reject(h, p, req, 431)


def sc_cl_te(h, p):
    req = (b"POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
    return expect_reject(h, p, req, 400)


def sc_te_cl(h, p):
    req = (b"POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
           b"Content-Length: 5\r\n\r\n0\r\n\r\n")
    return expect_reject(h, p, req, 400)


def sc_two_cl(h, p):
    req = (b"POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"
           b"hello!")
    return expect_reject(h, p, req, 400)


def sc_two_cl_same(h, p):
    req = (b"POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"
           b"hello")
    return expect_reject(h, p, req, 400)


def sc_te_gzip(h, p):
    req = b"POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
    return expect_reject(h, p, req, 501)


def sc_space_colon(h, p):
    req = b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n"
    return expect_reject(h, p, req, 400)


def sc_bare_lf(h, p):
    return expect_reject(h, p, b"GET / HTTP/1.1\nHost: x\n\n", 400)


def sc_obs_fold(h, p):
    return expect_reject(h, p, b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n", 400)


def sc_no_host(h, p):
    return expect_reject(h, p, b"GET / HTTP/1.1\r\n\r\n", 400)


def sc_version(h, p):
    return expect_reject(h, p, b"GET / HTTP/2.1\r\nHost: x\r\n\r\n", 505)


def sc_bad_chunk(h, p):
    req = b"POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
    return expect_reject(h, p, req, 400)


def sc_slow_headers(h, p):
    """One byte every 0.2 s: the head must complete within the slow-client timeout (1 s)."""
    s = conn(h, p)
    req = b"GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    t0 = time.monotonic()
    try:
        for b in req:
            s.sendall(bytes([b]))
            time.sleep(0.2)
            if time.monotonic() - t0 > 8:
                return "still open after 8 s of trickled headers"
    except (BrokenPipeError, ConnectionResetError):
        pass
    took = time.monotonic() - t0
    if not closed(s, 3):
        return "not closed"
    if took > 4:
        return "closed after %.1f s, want about 1 s" % took
    return None


def sc_idle(h, p):
    """A keep-alive connection left idle is closed by the idle timeout (1 s)."""
    s = conn(h, p)
    s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
    r = read_response(s)
    if r is None or r[0] != 200:
        return "no response"
    t0 = time.monotonic()
    if not closed(s, 5):
        return "idle connection not closed"
    if time.monotonic() - t0 < 0.5:
        return "closed too early"
    return None


REQS = (b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
        b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
        b"POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\nabcdefg"
        b"GET /bytes/300 HTTP/1.1\r\nHost: x\r\n\r\n"
        b"HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /status/204 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")


def read_all(s):
    s.settimeout(5)
    out = b""
    while True:
        d = s.recv(65536)
        if not d:
            return out
        out += d


def decode(b, heads):
    """Splits a stream of responses into (status line, headers without Date, decoded body);
    heads[i] says whether response i answers a HEAD (no body)."""
    out = []
    for is_head in heads:
        if b"\r\n\r\n" not in b:
            return out
        head, b = b.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        hdrs = [ln for ln in lines[1:] if not ln.startswith(b"Date: ")]
        body = b""
        status = int(lines[0].split(b" ")[1])
        if is_head or status in (204, 304):
            pass
        elif b"Transfer-Encoding: chunked" in hdrs:
            while True:
                size, b = b.split(b"\r\n", 1)
                n = int(size, 16)
                body += b[:n]
                b = b[n + 2:]
                if n == 0:
                    break
        else:
            n = int([ln for ln in hdrs if ln.startswith(b"Content-Length: ")][0][16:])
            body, b = b[:n], b[n:]
        out.append((lines[0], hdrs, body))
    if b:
        out.append(("trailing", b))
    return out


def sc_split(h, p):
    """The same pipelined requests sent whole, then split at every byte boundary into two
    writes: the responses must be the same (apart from Date and echo's chunk sizes)."""
    heads = [False, False, False, False, True, False]
    s = conn(h, p)
    s.sendall(REQS)
    want = decode(read_all(s), heads)
    if len(want) != 6:
        return "pipelined: %d responses, want 6" % len(want)
    if want[1][2] != b"hello world" or want[2][2] != b"7\n" or len(want[3][2]) != 300:
        return "echo, sink or bytes body wrong"
    for i in range(1, len(REQS)):
        s = conn(h, p)
        s.sendall(REQS[:i])
        time.sleep(0.002)
        s.sendall(REQS[i:])
        got = decode(read_all(s), heads)
        if got != want:
            return "split at %d: responses differ" % i
    return None


def sc_expect(h, p):
    s = conn(h, p)
    s.sendall(b"POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
    s.settimeout(5)
    d = s.recv(100)
    if not d.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"):
        return "no 100 Continue: %r" % d[:40]
    s.sendall(b"abc")
    r = read_response(s)
    if r is None or r[0] != 200 or r[2] != b"3\n":
        return "sink answer wrong"
    return None


# ---- hostile-server-h1 (hostile_h1.sh): the server runs with --idle-timeout and
# --slow-timeout far above these 10 s waits, so a close seen here is not a timer's.

FIN_WAIT = 10.0


def half_close(s):
    s.shutdown(socket.SHUT_WR)


def hx_fin_idle(h, p):
    """A response read, then the client's FIN (no Connection: close): closed at once."""
    s = conn(h, p)
    s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
    r = read_response(s)
    if r is None or r[0] != 200:
        return "no response"
    half_close(s)
    return None if closed(s, FIN_WAIT) else "still open %.0f s after the FIN" % FIN_WAIT


def hx_fin_with_request(h, p):
    """Request and FIN together: answered, then closed."""
    s = conn(h, p)
    s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
    half_close(s)
    r = read_response(s)
    if r is None or r[0] != 200 or r[2] != b"Hello, World!":
        return "request sent with the FIN not answered: %r" % (r,)
    return None if closed(s, FIN_WAIT) else "still open after the answer"


def hx_fin_delay(h, p):
    """A /delay in flight when the FIN comes: the response is finished, then closed."""
    s = conn(h, p)
    s.sendall(b"GET /delay/300 HTTP/1.1\r\nHost: x\r\n\r\n")
    half_close(s)
    r = read_response(s, FIN_WAIT)
    if r is None or r[0] != 200:
        return "in-flight /delay not answered after the FIN"
    return None if closed(s, FIN_WAIT) else "still open after the answer"


def hx_fin_pipelined(h, p):
    """Three pipelined requests (one a 1 MB body) and the FIN: all three answered in order."""
    s = conn(h, p)
    s.sendall(b"GET /bytes/1000000 HTTP/1.1\r\nHost: x\r\n\r\n"
              b"POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
              b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
    half_close(s)
    s.settimeout(FIN_WAIT)
    out = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
    got = decode(out, [False, False, False])
    want = [1000000, 2, 13]  # /bytes, /sink's "3\n", "Hello, World!"
    if [len(r[2]) if len(r) == 3 else None for r in got] != want:
        return "answers after the FIN: %r" % [(r[0], len(r[-1])) for r in got]
    return None


def hx_fin_partial(h, p):
    """Half a head, then the FIN: nothing can complete, closed without an answer."""
    s = conn(h, p)
    s.sendall(b"GET /hello HTTP/1.1\r\nHo")
    half_close(s)
    s.settimeout(FIN_WAIT)
    try:
        d = s.recv(65536)
    except socket.timeout:
        return "still open %.0f s after the FIN" % FIN_WAIT
    return None if d == b"" else "answered a partial head: %r" % d[:40]


def hx_fin_body(h, p):
    """Half a body, then the FIN: closed (the body can never complete)."""
    s = conn(h, p)
    s.sendall(b"POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
    half_close(s)
    return None if closed(s, FIN_WAIT) else "still open %.0f s after the FIN" % FIN_WAIT


def hx_fin_lockout(h, p):
    """Needs --max-connections 4: 12 clients in turn send a request, read it and close (the
    issue-29 curl repro). Every one is served, and a client after them too."""
    for i in range(12):
        s = conn(h, p)
        s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        r = read_response(s, FIN_WAIT)
        if r is None or r[0] != 200:
            return "client %d of 12 not served (connections left open)" % (i + 1)
        s.close()
    s = conn(h, p)
    s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
    r = read_response(s, FIN_WAIT)
    return None if r and r[0] == 200 else "a client after the twelve not served"


def one(h, p, req):
    s = conn(h, p)
    s.sendall(req)
    r = read_response(s)
    s.close()
    return r


def hx_absolute_form(h, p):
    """RFC 9112 3.2.2: a server MUST accept absolute-form targets."""
    for target, body in ((b"http://x/hello", b"Hello, World!"), (b"HTTP://x:80/bytes/3", b"\0\1\2"),
                         (b"https://x", b"Hello, World!")):
        r = one(h, p, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        if r is None or r[0] != 200 or r[2] != body:
            return "GET %s: %r" % (target, r and r[:3])
    r = one(h, p, b"GET http:/x/hello HTTP/1.1\r\nHost: x\r\n\r\n")
    return None if r and r[0] == 400 else "GET http:/x/hello not refused: %r" % (r and r[0])


def hx_empty_line(h, p):
    """RFC 9112 2.2: empty lines before the request line are ignored, on a new connection and
    after a request with a body."""
    r = one(h, p, b"\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
    if r is None or r[0] != 200:
        return "CRLF before the first request: %r" % (r and r[0])
    s = conn(h, p)
    s.sendall(b"POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab\r\n"
              b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    got = decode(read_all(s), [False, False])
    s.close()
    if [r[2] for r in got if len(r) == 3] != [b"2\n", b"Hello, World!"]:
        return "CRLF after a body: %r" % got
    return None


def hx_chunk_size_line(h, p):
    """After the chunk size and optional whitespace only ';' or CR may follow."""
    head = b"POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    r = one(h, p, head + b"3 garbage\r\nabc\r\n0\r\n\r\n")
    if r is None or r[0] != 400:
        return "'3 garbage' not refused: %r" % (r and r[0])
    for line in (b"3 ;ext=1", b"3\t ", b"3;x"):
        r = one(h, p, head + line + b"\r\nabc\r\n0\r\n\r\n")
        if r is None or r[0] != 200 or r[2] != b"3\n":
            return "%r refused: %r" % (line, r and r[:3])
    return None


SCENARIOS = {k[3:]: v for k, v in globals().items() if k.startswith("sc_")}
HOSTILE = {k[3:]: v for k, v in globals().items() if k.startswith("hx_")}


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    names = sys.argv[3:]
    if names == ["all"]:
        names = list(SCENARIOS)
    bad = 0
    for n in names:
        try:
            why = SCENARIOS.get(n, HOSTILE.get(n))(host, port)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            why = "exception %r" % e
        if why:
            bad += 1
            print("FAIL %s: %s" % (n, why))
        else:
            print("ok %s" % n)
        sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
