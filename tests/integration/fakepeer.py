#!/usr/bin/env python3
"""fakepeer.py - misbehaving HTTP/2 servers for the load generator's fault tests (stdlib only).

Usage: fakepeer.py MODE [UNIX_SOCKET_PATH]
  silent  accepts connections and reads everything, but never writes: no SETTINGS, no answers
  noread  completes the handshake (SETTINGS both ways), then neither reads nor writes again
  reset   completes the handshake and answers every request's HEADERS with RST_STREAM
          (REFUSED_STREAM for odd-numbered, CANCEL for the rest)
  zerostreams  advertises SETTINGS_MAX_CONCURRENT_STREAMS 0, answers PINGs, never raises it
  zerowindow   advertises SETTINGS_INITIAL_WINDOW_SIZE 0 and never opens a window (a request
          body can never be sent); answers nothing
  push    answers every request with a PUSH_PROMISE (the client disabled push, so nghttp2 ends
          its session), then keeps the connection open and reads on
  endless answers 200 and then sends DATA on every open stream forever (until the client
          resets the stream or closes)
  short   answers 200 with content-length 100 and a 10-byte body
  badstatus  answers with ":status: abc" and END_STREAM
  split   sends everything one byte per send() (TCP_NODELAY, a short pause between bytes), so
          every frame, padding length and SETTINGS entry is split at every byte boundary; the
          answers use padding, PRIORITY, CONTINUATION, PING and WINDOW_UPDATE: 200, "hello\n"
  splitnc the same without CONTINUATION (libnghttp2 1.52, under h2load too, ends its session
          when a CONTINUATION frame arrives in pieces)
  shrink  advertises SETTINGS_INITIAL_WINDOW_SIZE 16; once a request body has filled a stream's
          window it shrinks the window to 0 (SETTINGS_INITIAL_WINDOW_SIZE 0: open windows go
          negative), 20 ms later opens it again (100000); answers 200 "ok" at the body's end
          (a request without a body is answered at once, with the same shrink between its two
          DATA frames)
  tablesize  sends SETTINGS_HEADER_TABLE_SIZE 256 mid-connection and answers with HPACK dynamic
          table size updates (0, then 4096) and incrementally indexed fields that later answers
          reference
  pingflood  completes the handshake, then never reads again and sends PINGs without end (1 MB
          at a time), so the client's PING ACKs back up (issue 29 item 5)
  trailer answers 200 "ok" and a trailer block x-t: 1 (valid)
  trailerstatus  the same with :status in the trailer block (a malformed response)
  pseudo  answers 200 with a :path pseudo-header in the response
  upper   answers 200 with an uppercase field name (Content-Type)
  connhdr answers 200 with connection: close (connection-specific, not HTTP/2's)
  goaway  waits for 4 requests in flight, sends GOAWAY with the second lowest id as
          last-stream-id, answers the 2 lowest and ignores the rest (the client must fail them:
          REFUSED_STREAM)
  grpcwrong  a gRPC echo that answers with wrong bytes: every request's HEADERS gets 200
          with content-type application/grpc, every request message comes back as soon as it
          is whole, with the last byte of its payload flipped (an empty one as an EchoMessage
          of one byte 1; left out when the client's windows lack room for it), so it still
          parses, and the request's end gets
          trailers with grpc-status 0: right lengths and statuses, wrong contents
          (load_grpc.sh, grpc_interop.sh)
  capture answers every request with 200 and no body, and prints each request's header block
          (the HEADERS and CONTINUATION fragments joined) as "block CONN N HEX": CONN counts
          the connections from 1 in accept order, N the blocks on that connection from 1
          (tests/integration/load_neutral.sh compares clients' wire bytes)
Prints "listening on http://127.0.0.1:PORT" (ephemeral port) and serves until killed; with a
second argument PATH it listens on that UNIX socket instead ("listening on unix:PATH").
"""
import socket
import struct
import sys
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST, SETTINGS, PUSH_PROMISE, PING, GOAWAY = 0, 1, 3, 4, 5, 6, 7
ACK, END_STREAM, END_HEADERS = 0x1, 0x1, 0x4
HEADER_TABLE_SIZE, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE = 1, 3, 4
CONTINUATION, WINDOW_UPDATE = 9, 8
PADDED, PRIORITY_FLAG = 0x8, 0x20
MODES = ("silent", "noread", "reset", "zerostreams", "zerowindow", "push", "endless", "short",
         "badstatus", "split", "splitnc", "shrink", "tablesize", "goaway", "pingflood", "trailer",
         "trailerstatus", "pseudo", "upper", "connhdr", "capture", "grpcwrong")
REFUSED_STREAM, CANCEL = 7, 8


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def frames(sock):
    """Yields (type, flags, stream id, payload) after consuming the client preface."""
    if read_exact(sock, len(PREFACE)) != PREFACE:
        return
    while True:
        head = read_exact(sock, 9)
        length = struct.unpack(">I", b"\0" + head[:3])[0]
        sid = struct.unpack(">I", head[5:9])[0] & 0x7FFFFFFF
        yield head[3], head[4], sid, read_exact(sock, length)


def literal(index, value):
    """HPACK literal header field without indexing, name from the static table (index < 15
    fits the 4-bit prefix; content-length is 28 = 15 + 13), value raw (no Huffman)."""
    head = bytes([index]) if index < 15 else bytes([0x0F, index - 15])
    return head + bytes([len(value)]) + value


STATUS_200 = b"\x88"  # indexed :status 200
PUSH_BLOCK = b"\x82\x86\x84" + literal(1, b"fake")  # GET, http, /, :authority fake


def settings(*pairs):
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


class Conn:
    """One accepted connection; send() is atomic per call (the endless writer shares it)."""

    def __init__(self, sock, bytewise=False):
        self.sock, self.lock, self.stop, self.streams = sock, threading.Lock(), threading.Event(), set()
        self.bytewise = bytewise
        if bytewise:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, data):
        with self.lock:
            if not self.bytewise:
                self.sock.sendall(data)
                return
            for i in range(len(data)):
                self.sock.sendall(data[i:i + 1])
                time.sleep(0.0002)


def split_answer(sid, continuation):
    """200 with content-length 6 and "hello\n": HEADERS padded with PRIORITY (then
    CONTINUATION), a PING and a WINDOW_UPDATE, then padded DATA."""
    pad = 3
    head = bytes([pad]) + struct.pack(">IB", 0, 15) + STATUS_200
    if continuation:
        block = (frame(HEADERS, PADDED | PRIORITY_FLAG, sid, head + b"\0" * pad) +
                 frame(CONTINUATION, END_HEADERS, sid, literal(28, b"6")))
    else:
        block = frame(HEADERS, PADDED | PRIORITY_FLAG | END_HEADERS, sid,
                      head + literal(28, b"6") + b"\0" * pad)
    return (block + frame(PING, 0, 0, b"pingpong") + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1)) +
            frame(DATA, PADDED | END_STREAM, sid, bytes([2]) + b"hello\n" + b"\0\0"))


def shrink_then_open(conn):
    conn.send(settings((INITIAL_WINDOW_SIZE, 0)))
    time.sleep(0.02)
    conn.send(settings((INITIAL_WINDOW_SIZE, 100000)))


def tablesize_answer(conn, sid):
    """Cycles through: a size update to 0 then 4096 and an indexed insert of x-fake; then a
    reference to it (index 62)."""
    n = conn.answers = getattr(conn, "answers", 0) + 1
    if n == 3:
        conn.send(settings((HEADER_TABLE_SIZE, 256)))
    if n % 2 == 1:
        block = b"\x20\x3f\xe1\x1f" + STATUS_200 + b"\x40\x06x-fake\x01" + bytes([48 + n % 10])
    else:
        block = STATUS_200 + b"\xbe"
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, sid, block))


def endless_writer(conn):
    """Sends 16 KiB of DATA on every open stream each millisecond (about 16 MB/s per stream)."""
    chunk = b"x" * 16384
    while not conn.stop.is_set():
        try:
            for sid in list(conn.streams):
                conn.send(frame(DATA, 0, sid, chunk))
        except OSError:
            return
        conn.stop.wait(0.001)


PRINT_LOCK = threading.Lock()


def capture(conn, sid, flags, payload, block):
    """capture mode: collects a request's header block and answers 200 once it is whole."""
    if flags & PADDED:
        payload = payload[1:len(payload) - payload[0]]
    if flags & PRIORITY_FLAG:
        payload = payload[5:]
    block += payload
    if not flags & END_HEADERS:
        return block
    conn.blocks = getattr(conn, "blocks", 0) + 1
    with PRINT_LOCK:
        print("block %d %d %s" % (conn.number, conn.blocks, block.hex()), flush=True)
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, sid, STATUS_200))
    return b""


GRPC_HEAD = STATUS_200 + literal(31, b"application/grpc")  # content-type
GRPC_OK = b"\x00" + bytes([11]) + b"grpc-status" + bytes([1]) + b"0"  # literal, new name


class Windows:
    """grpcwrong: the client's flow-control windows for what this server sends (RFC 9113 6.9)."""

    def __init__(self):
        self.initial, self.conn, self.stream = 65535, 65535, {}

    def update(self, ftype, sid, payload):
        if ftype == SETTINGS:
            for i in range(0, len(payload) - 5, 6):
                k, v = struct.unpack(">HI", payload[i:i + 6])
                if k == INITIAL_WINDOW_SIZE:
                    for s in self.stream:
                        self.stream[s] += v - self.initial
                    self.initial = v
        elif ftype == WINDOW_UPDATE:
            inc = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
            if sid == 0:
                self.conn += inc
            elif sid in self.stream:
                self.stream[sid] += inc

    def take(self, sid, n):
        """True (and the windows spent) when n bytes of sid's DATA may go now."""
        if n > self.conn or n > self.stream.setdefault(sid, self.initial):
            return False
        self.conn -= n
        self.stream[sid] -= n
        return True


def grpc_wrong(conn, win, bufs, ftype, flags, sid, payload):
    """grpcwrong's answer to one frame of the client's (SETTINGS and PING are serve()'s); bufs
    holds each stream's request bytes not yet a whole message."""
    out = b""
    if ftype == HEADERS:
        win.stream[sid] = win.initial
        bufs[sid] = b""
        out += frame(HEADERS, END_HEADERS, sid, GRPC_HEAD)
    elif ftype == DATA and sid in bufs:
        if payload:  # the request body's bytes are consumed: give them back to the client
            inc = struct.pack(">I", len(payload))
            out += frame(WINDOW_UPDATE, 0, 0, inc) + frame(WINDOW_UPDATE, 0, sid, inc)
        buf = bufs[sid] + payload
        while len(buf) >= 5 and len(buf) >= 5 + struct.unpack(">I", buf[1:5])[0]:
            n = struct.unpack(">I", buf[1:5])[0]
            msg, buf = buf[5:5 + n], buf[5 + n:]
            msg = msg[:-1] + bytes([msg[-1] ^ 1]) if msg else b"\x0a\x01\x01"
            msg = b"\0" + struct.pack(">I", len(msg)) + msg
            if win.take(sid, len(msg)):
                for i in range(0, len(msg), 16384):
                    out += frame(DATA, 0, sid, msg[i:i + 16384])
        bufs[sid] = buf
    if ftype in (HEADERS, DATA) and flags & END_STREAM and sid in bufs:
        out += frame(HEADERS, END_HEADERS | END_STREAM, sid, GRPC_OK)
        win.stream.pop(sid, None)
        del bufs[sid]
    if out:
        conn.send(out)


def serve(mode, sock, number=0):
    conn = Conn(sock, bytewise=mode.startswith("split"))
    conn.number = number
    pending_block = b""  # capture: a header block awaiting its CONTINUATION
    send = conn.send
    body = {}  # shrink: request body bytes per stream
    pending = []  # goaway: streams in flight
    win, bufs = Windows(), {}  # grpcwrong
    try:
        if mode == "silent":
            while sock.recv(65536):
                pass
            return
        if mode == "zerostreams":
            send(settings((MAX_CONCURRENT_STREAMS, 0)))
        elif mode == "zerowindow":
            send(settings((INITIAL_WINDOW_SIZE, 0)))
        elif mode == "shrink":
            send(settings((INITIAL_WINDOW_SIZE, 16)) + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 20)))
        else:
            send(frame(SETTINGS, 0, 0))
        if mode == "endless":
            threading.Thread(target=endless_writer, args=(conn,), daemon=True).start()
        for ftype, flags, sid, payload in frames(sock):
            if mode == "grpcwrong" and not flags & ACK:
                win.update(ftype, sid, payload)
            if ftype == SETTINGS and not flags & ACK:
                send(frame(SETTINGS, ACK, 0))
                if mode == "noread":
                    threading.Event().wait()  # hold the connection open, read nothing more
                if mode == "pingflood":
                    burst = frame(PING, 0, 0, b"floodfld") * (1 << 16)  # 1.1 MB
                    while True:  # until the client closes (OSError ends the thread)
                        send(burst)
            elif ftype == PING and not flags & ACK:
                send(frame(PING, ACK, 0, payload))
            elif mode == "grpcwrong":
                grpc_wrong(conn, win, bufs, ftype, flags, sid, payload)
            elif ftype == RST:
                conn.streams.discard(sid)
            elif ftype == DATA and mode == "shrink":
                before = body.get(sid, 0)
                body[sid] = before + len(payload)
                if before < 16 <= body[sid]:
                    shrink_then_open(conn)
                if flags & END_STREAM:
                    send(frame(HEADERS, END_HEADERS, sid, STATUS_200 + literal(28, b"2")) +
                         frame(DATA, END_STREAM, sid, b"ok"))
            elif mode == "capture" and ftype in (HEADERS, CONTINUATION):
                pending_block = capture(conn, sid, flags if ftype == HEADERS else flags & END_HEADERS,
                                        payload, pending_block)
            elif ftype != HEADERS:
                continue
            elif mode.startswith("split"):
                send(split_answer(sid, mode == "split"))
            elif mode == "shrink":
                if flags & END_STREAM:  # no body: shrink between the two halves of the answer
                    send(frame(HEADERS, END_HEADERS, sid, STATUS_200 + literal(28, b"2")) +
                         frame(DATA, 0, sid, b"o"))
                    shrink_then_open(conn)
                    send(frame(DATA, END_STREAM, sid, b"k"))
            elif mode == "tablesize":
                tablesize_answer(conn, sid)
            elif mode == "goaway":
                pending.append(sid)
                if len(pending) == 4:  # GOAWAY first: no new request can slip in between
                    out = frame(GOAWAY, 0, 0, struct.pack(">II", pending[1], 0))
                    for s in pending[:2]:
                        out += (frame(HEADERS, END_HEADERS, s, STATUS_200 + literal(28, b"2")) +
                                frame(DATA, END_STREAM, s, b"ok"))
                    send(out)
            elif mode == "reset":
                code = REFUSED_STREAM if sid % 4 == 1 else CANCEL
                send(frame(RST, 0, sid, struct.pack(">I", code)))
            elif mode == "push":
                send(frame(PUSH_PROMISE, END_HEADERS, sid, struct.pack(">I", sid + 1) + PUSH_BLOCK))
            elif mode == "endless":
                send(frame(HEADERS, END_HEADERS, sid, STATUS_200))
                conn.streams.add(sid)
            elif mode == "short":
                send(frame(HEADERS, END_HEADERS, sid, STATUS_200 + literal(28, b"100")) +
                     frame(DATA, END_STREAM, sid, b"0123456789"))
            elif mode in ("trailer", "trailerstatus"):
                trailer = b"\x00" + bytes([3]) + b"x-t" + bytes([1]) + b"1"  # literal, new name
                if mode == "trailerstatus":
                    trailer = STATUS_200 + trailer
                send(frame(HEADERS, END_HEADERS, sid, STATUS_200 + literal(28, b"2")) +
                     frame(DATA, 0, sid, b"ok") + frame(HEADERS, END_HEADERS | END_STREAM, sid, trailer))
            elif mode in ("pseudo", "upper", "connhdr"):
                extra = {"pseudo": literal(4, b"/x"),
                         "upper": b"\x00" + bytes([12]) + b"Content-Type" + bytes([1]) + b"x",
                         "connhdr": b"\x00" + bytes([10]) + b"connection" + bytes([5]) + b"close"}[mode]
                send(frame(HEADERS, END_HEADERS, sid, STATUS_200 + extra + literal(28, b"2")) +
                     frame(DATA, END_STREAM, sid, b"ok"))
            elif mode == "badstatus":
                send(frame(HEADERS, END_HEADERS | END_STREAM, sid, literal(8, b"abc")))
    except (EOFError, OSError):
        pass
    finally:
        conn.stop.set()
        sock.close()


def main():
    mode = sys.argv[1]
    if mode not in MODES:
        sys.exit("fakepeer.py: unknown mode " + mode)
    if len(sys.argv) > 2:  # a UNIX socket path instead of a TCP port
        lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lsock.bind(sys.argv[2])
        lsock.listen(128)
        print("listening on unix:%s" % sys.argv[2], flush=True)
    else:
        lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(128)
        print("listening on http://127.0.0.1:%d" % lsock.getsockname()[1], flush=True)
    accepted = 0
    while True:
        conn, _ = lsock.accept()
        accepted += 1
        threading.Thread(target=serve, args=(mode, conn, accepted), daemon=True).start()


if __name__ == "__main__":
    main()
