#!/usr/bin/env python3
"""udpflood.py - hostile datagrams for the HTTP/3 server tests (loopback only, bounded count).

usage: udpflood.py PORT MODE COUNT
  garbage  random bytes of random sizes (1..1500), some with a long-header first byte
  initial  QUIC v1 Initial headers with random connection IDs, no token, padded to 1200 bytes
           (each one is a new "client" that never answers the server's Retry)
  badtoken the same, but carrying a forged Retry token (first byte 0xb6)
"""
import os
import random
import socket
import struct
import sys


def varint(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return struct.pack(">H", 0x4000 | n)
    return struct.pack(">I", 0x80000000 | n)


def initial(token=b""):
    dcid = os.urandom(random.randint(8, 20))
    scid = os.urandom(random.randint(0, 20))
    hdr = bytes([0xC3]) + struct.pack(">I", 1)
    hdr += bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid
    hdr += varint(len(token)) + token
    body_len = 1200 - len(hdr) - 2
    return hdr + varint(body_len) + os.urandom(body_len)


def main():
    port, mode, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    random.seed(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setblocking(False)
    sent = 0
    for i in range(count):
        if mode == "garbage":
            n = random.randint(1, 1500)
            pkt = os.urandom(n)
            if i % 3 == 0:
                pkt = bytes([0xC0 | (pkt[0] & 0x3F)]) + pkt[1:]
        elif mode == "initial":
            pkt = initial()
        else:
            pkt = initial(bytes([0xB6]) + os.urandom(60))
        try:
            s.sendto(pkt, ("127.0.0.1", port))
            sent += 1
        except BlockingIOError:
            pass
        # drain whatever the server answers (Retry, CONNECTION_CLOSE) so our buffer never fills
        try:
            while True:
                s.recv(2048)
        except BlockingIOError:
            pass
    print(sent)


main()
