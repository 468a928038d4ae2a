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
Prints "listening on http://127.0.0.1:PORT" (ephemeral port) and serves until killed; with a
second argument PATH it listens on that UNIX socket instead ("listening on unix:PATH").
"""
import socket
import struct
import sys
import threading

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST, SETTINGS, PUSH_PROMISE, PING, GOAWAY = 0, 1, 3, 4, 5, 6, 7
ACK, END_STREAM, END_HEADERS = 0x1, 0x1, 0x4
MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE = 3, 4
MODES = ("silent", "noread", "reset", "zerostreams", "zerowindow", "push", "endless", "short",
         "badstatus")
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

    def __init__(self, sock):
        self.sock, self.lock, self.stop, self.streams = sock, threading.Lock(), threading.Event(), set()

    def send(self, data):
        with self.lock:
            self.sock.sendall(data)


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


def serve(mode, sock):
    conn = Conn(sock)
    send = conn.send
    try:
        if mode == "silent":
            while sock.recv(65536):
                pass
            return
        if mode == "zerostreams":
            send(settings((MAX_CONCURRENT_STREAMS, 0)))
        elif mode == "zerowindow":
            send(settings((INITIAL_WINDOW_SIZE, 0)))
        else:
            send(frame(SETTINGS, 0, 0))
        if mode == "endless":
            threading.Thread(target=endless_writer, args=(conn,), daemon=True).start()
        for ftype, flags, sid, payload in frames(sock):
            if ftype == SETTINGS and not flags & ACK:
                send(frame(SETTINGS, ACK, 0))
                if mode == "noread":
                    threading.Event().wait()  # hold the connection open, read nothing more
            elif ftype == PING and not flags & ACK:
                send(frame(PING, ACK, 0, payload))
            elif ftype == RST:
                conn.streams.discard(sid)
            elif ftype != HEADERS:
                continue
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
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve, args=(mode, conn), daemon=True).start()


if __name__ == "__main__":
    main()
