#!/usr/bin/env python3
"""fakepeer.py - misbehaving HTTP/2 servers for the load generator's fault tests (stdlib only).

Usage: fakepeer.py MODE
  silent  accepts connections and reads everything, but never writes: no SETTINGS, no answers
  noread  completes the handshake (SETTINGS both ways), then neither reads nor writes again
  reset   completes the handshake and answers every request's HEADERS with RST_STREAM
          (REFUSED_STREAM for odd-numbered, CANCEL for the rest)
Prints "listening on http://127.0.0.1:PORT" (ephemeral port) and serves until killed.
"""
import socket
import struct
import sys
import threading

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADERS, RST, SETTINGS, PING, GOAWAY = 1, 3, 4, 6, 7
ACK = 0x1
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


def serve(mode, sock):
    try:
        if mode == "silent":
            while sock.recv(65536):
                pass
            return
        sock.sendall(frame(SETTINGS, 0, 0))
        for ftype, flags, sid, payload in frames(sock):
            if ftype == SETTINGS and not flags & ACK:
                sock.sendall(frame(SETTINGS, ACK, 0))
                if mode == "noread":
                    threading.Event().wait()  # hold the connection open, read nothing more
            elif ftype == PING and not flags & ACK:
                sock.sendall(frame(PING, ACK, 0, payload))
            elif ftype == HEADERS and mode == "reset":
                code = REFUSED_STREAM if sid % 4 == 1 else CANCEL
                sock.sendall(frame(RST, 0, sid, struct.pack(">I", code)))
    except (EOFError, OSError):
        pass
    finally:
        sock.close()


def main():
    mode = sys.argv[1]
    if mode not in ("silent", "noread", "reset"):
        sys.exit("fakepeer.py: unknown mode " + mode)
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
