#!/usr/bin/python3
"""grpc_raw.py - gRPC requests no gRPC library sends, framed by hand (tests/integration/
grpc_interop.sh): malformed message prefixes, lengths over the limit, a message cut by the
request's end, a wrong content-type, a reset mid-message, a missing te, deadlines the server
itself must enforce, and trailers-only answers.

Usage: grpc_raw.py HOST PORT

Each case opens a connection, sends its request and reads until the stream ends; it checks the
:status, the grpc-status (in trailers, or in a trailers-only HEADERS) and where it came from.
Afterwards a unary call on the same connection must still succeed when the case leaves the
connection usable. Prints "ok NAME: detail" or "FAIL NAME: detail"; exits 1 if anything failed.
"""
import socket
import struct
import sys
import time

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, WINUP = 0, 1, 3, 4, 6, 7, 8
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
HOST, PORT = sys.argv[1], int(sys.argv[2])
FAILS = 0


def report(good, name, detail):
    global FAILS
    print(("ok " if good else "FAIL ") + name + ": " + detail, flush=True)
    if not good:
        FAILS += 1


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + \
        payload


def msg(body, flag=0, length=None):
    return bytes([flag]) + struct.pack(">I", len(body) if length is None else length) + body


def echo_msg(payload):
    """EchoMessage{payload}: tag 1, length-delimited (payload under 128 bytes)."""
    assert len(payload) < 128
    return b"\x0a" + bytes([len(payload)]) + payload


class Conn:
    def __init__(self):
        self.s = socket.create_connection((HOST, PORT), timeout=10)
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.buf = b""
        self.next_id = 1
        self.s.sendall(PREFACE + frame(SETTINGS, 0, 0) +
                       frame(WINUP, 0, 0, struct.pack(">I", 1 << 24)))

    def headers(self, path, ct="application/grpc", extra=(), end=False, te=True):
        sid = self.next_id
        self.next_id += 2
        h = [(":method", "POST"), (":scheme", "http"), (":path", path),
             (":authority", "localhost")]
        if ct is not None:
            h.append(("content-type", ct))
        if te:
            h.append(("te", "trailers"))
        h.extend(extra)
        self.s.sendall(frame(HEADERS, END_HEADERS | (END_STREAM if end else 0), sid,
                             self.enc.encode(h)))
        return sid

    def data(self, sid, payload, end=True):
        self.s.sendall(frame(DATA, END_STREAM if end else 0, sid, payload))

    def read_frame(self):
        while len(self.buf) < 9:
            b = self.s.recv(65536)
            if not b:
                return None
            self.buf += b
        n = int.from_bytes(self.buf[:3], "big")
        while len(self.buf) < 9 + n:
            b = self.s.recv(65536)
            if not b:
                return None
            self.buf += b
        f = (self.buf[3], self.buf[4], int.from_bytes(self.buf[5:9], "big") & 0x7FFFFFFF,
             self.buf[9:9 + n])
        self.buf = self.buf[9 + n:]
        return f

    def response(self, sid, limit=10.0):
        """Until stream sid ends: (blocks of headers, DATA bytes, reset code or None, ended)."""
        blocks, body, rst = [], b"", None
        end = time.monotonic() + limit
        self.s.settimeout(limit)
        while time.monotonic() < end:
            try:
                f = self.read_frame()
            except socket.timeout:
                break
            if f is None:
                break
            t, fl, fid, p = f
            if t == SETTINGS and not fl & ACK:
                self.s.sendall(frame(SETTINGS, ACK, 0))
            if t == PING and not fl & ACK:
                self.s.sendall(frame(PING, ACK, 0, p))
            fields = dict(self.dec.decode(p)) if t == HEADERS else None  # every block: the table
            if fid != sid:
                continue
            if t == HEADERS:
                blocks.append(fields)
            elif t == DATA:
                body += p
                if p:
                    self.s.sendall(frame(WINUP, 0, sid, struct.pack(">I", len(p))))
            elif t == RST:
                rst = int.from_bytes(p, "big")
                return blocks, body, rst, True
            if t in (HEADERS, DATA) and fl & END_STREAM:
                return blocks, body, rst, True
        return blocks, body, rst, False

    def close(self):
        self.s.close()


def status_of(blocks):
    """(:status, grpc-status, trailers-only?) of a response's header blocks."""
    if not blocks:
        return None, None, False
    st = blocks[0].get(":status")
    gs = blocks[-1].get("grpc-status")
    return st, gs, len(blocks) == 1 and gs is not None


def unary_ok(c):
    sid = c.headers("/h2bench.Echo/Unary")
    m = msg(echo_msg(b"after"))
    c.data(sid, m)
    blocks, body, rst, done = c.response(sid)
    return done and status_of(blocks)[1] == "0" and body == m


def case(name, send, want_status, want_grpc, trailers_only=None, usable=True, detail=""):
    c = Conn()
    try:
        sid = send(c)
        blocks, body, rst, done = c.response(sid)
        st, gs, to = status_of(blocks)
        good = done and st == want_status and gs == want_grpc
        if trailers_only is not None:
            good = good and to == trailers_only
        if usable:
            good = good and unary_ok(c)
        report(good, name, "%s:status %s grpc-status %s%s%s" %
               (detail, st, gs, " trailers-only" if to else "",
                " reset %s" % rst if rst is not None else "") + ("" if done else " (no end)"))
    finally:
        c.close()


def main():
    def compressed(c):
        sid = c.headers("/h2bench.Echo/Unary")
        c.data(sid, msg(echo_msg(b"x"), flag=1))
        return sid

    def bad_flag(c):
        sid = c.headers("/h2bench.Echo/Unary")
        c.data(sid, msg(echo_msg(b"x"), flag=0x80))
        return sid

    def over_limit(c):
        sid = c.headers("/h2bench.Echo/Bidi")
        c.data(sid, msg(b"", length=(4 << 20) + 1), end=False)  # only the prefix: never read
        return sid

    def lying_length(c):  # the prefix claims more than the body holds
        sid = c.headers("/h2bench.Echo/ClientStream")
        c.data(sid, msg(echo_msg(b"short"), length=1000))
        return sid

    def cut_prefix(c):  # the request ends inside a prefix
        sid = c.headers("/h2bench.Echo/Bidi")
        c.data(sid, msg(echo_msg(b"ab")) + b"\x00\x00")
        return sid

    def two_unary(c):
        sid = c.headers("/h2bench.Echo/Unary")
        c.data(sid, msg(echo_msg(b"a")) + msg(echo_msg(b"b")))
        return sid

    def no_message(c):
        return c.headers("/h2bench.Echo/Unary", end=True)

    def split_prefix(c):  # one message split in 1-byte DATA frames: still echoed
        sid = c.headers("/h2bench.Echo/Unary")
        m = msg(echo_msg(b"split"))
        for i, b in enumerate(m):
            c.data(sid, bytes([b]), end=i == len(m) - 1)
        return sid

    def no_te(c):
        sid = c.headers("/h2bench.Echo/Unary", te=False)
        c.data(sid, msg(echo_msg(b"x")))
        return sid

    def text_ct(c):
        sid = c.headers("/h2bench.Echo/Unary", ct="text/plain")
        c.data(sid, msg(echo_msg(b"x")))
        return sid

    def no_ct(c):
        sid = c.headers("/h2bench.Echo/Unary", ct=None)
        c.data(sid, msg(echo_msg(b"x")))
        return sid

    def proto_ct(c):  # application/grpc+proto is gRPC's too
        sid = c.headers("/h2bench.Echo/Unary", ct="application/grpc+proto")
        c.data(sid, msg(echo_msg(b"x")))
        return sid

    def unknown(c):  # answered at the headers, before the request ends
        return c.headers("/no.Such/Method")

    def bad_timeout(c):
        sid = c.headers("/h2bench.Echo/Unary", extra=[("grpc-timeout", "soon")])
        c.data(sid, msg(echo_msg(b"x")))
        return sid

    def deadline(c):  # a Bidi call that never ends: the server's own timer answers
        sid = c.headers("/h2bench.Echo/Bidi", extra=[("grpc-timeout", "200m")])
        c.data(sid, msg(echo_msg(b"x")), end=False)
        return sid

    def deadline_cstream(c):  # half a message, then silence
        sid = c.headers("/h2bench.Echo/ClientStream", extra=[("grpc-timeout", "150000u")])
        c.data(sid, msg(echo_msg(b"hello"))[:4], end=False)
        return sid

    def bad_proto(c):  # a StreamRequest that is not protobuf: a truncated varint
        sid = c.headers("/h2bench.Echo/ServerStream")
        c.data(sid, msg(b"\x08\xff"))
        return sid

    def health_big(c):
        sid = c.headers("/grpc.health.v1.Health/Check")
        svc = b"s" * 100
        c.data(sid, msg(b"\x0a" + bytes([len(svc)]) + svc))
        return sid

    def get_method(c):
        sid = c.next_id
        c.next_id += 2
        h = [(":method", "GET"), (":scheme", "http"), (":path", "/h2bench.Echo/Unary"),
             (":authority", "localhost"), ("content-type", "application/grpc")]
        c.s.sendall(frame(HEADERS, END_HEADERS | END_STREAM, sid, c.enc.encode(h)))
        return sid

    case("compressed-flag", compressed, "200", "12")
    case("unknown-flag-bits", bad_flag, "200", "13")
    case("length-over-limit", over_limit, "200", "8", detail="Bidi, prefix only: ")
    case("length-lies", lying_length, "200", "13", trailers_only=True)
    case("request-ends-in-prefix", cut_prefix, "200", "13", detail="one message echoed, then ")
    case("two-messages-unary", two_unary, "200", "13")
    case("no-message-unary", no_message, "200", "13", trailers_only=True)
    case("split-1-byte-frames", split_prefix, "200", "0", trailers_only=False)
    case("missing-te", no_te, "200", "0", detail="accepted, as grpc-go: ")
    case("content-type-text", text_ct, "415", None)
    case("content-type-missing", no_ct, "415", None)
    case("content-type-grpc+proto", proto_ct, "200", "0")
    case("unknown-method", unknown, "200", "12", trailers_only=True)
    case("malformed-grpc-timeout", bad_timeout, "200", "13", trailers_only=True)
    case("bad-protobuf", bad_proto, "200", "13", trailers_only=True)
    case("health-request-over-64-bytes", health_big, "200", "3", trailers_only=True)
    case("get-method", get_method, "405", None)

    # deadlines the server enforces: no client library involved
    for name, fn, want_to in (("deadline-bidi", deadline, False),
                              ("deadline-mid-message", deadline_cstream, True)):
        t0 = time.monotonic()
        c = Conn()
        sid = fn(c)
        blocks, body, rst, done = c.response(sid, limit=5)
        took = time.monotonic() - t0
        st, gs, to = status_of(blocks)
        good = done and st == "200" and gs == "4" and to == want_to and took < 4
        good = good and unary_ok(c)
        report(good, name, "grpc-status %s after %.2f s, %d echo bytes%s" %
               (gs, took, len(body), " reset %s" % rst if rst is not None else ""))
        c.close()

    # a stream reset mid-message: the connection goes on
    c = Conn()
    sid = c.headers("/h2bench.Echo/Bidi")
    c.data(sid, msg(b"\x0a\x10" + b"x" * 8, ), end=False)
    c.s.sendall(frame(RST, 0, sid, struct.pack(">I", 8)))
    report(unary_ok(c), "reset-mid-message", "a unary call on the same connection succeeds")
    c.close()

    # unary on a trailing grpc-status 0 twice on one connection: the indexed field decodes
    c = Conn()
    good = all(unary_ok(c) for _ in range(3))
    report(good, "status-indexed", "three calls, grpc-status 0 each time")
    c.close()
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
