#!/usr/bin/python3
"""grpc_client.py - a python3-grpcio client of the gRPC methods in servers/h2ref/grpc/echo.proto
and grpc.health.v1.Health/Check (tests/integration/grpc_interop.sh).

Usage: grpc_client.py HOST:PORT STUBDIR [peer]

With "peer" the server is a gRPC library's (servers/peers/): the call with gzip compression is
expected to succeed, as gRPC libraries decompress (h2ref answers it UNIMPLEMENTED).

STUBDIR holds echo_pb2.py and health_pb2.py (protoc --python_out). Calls every method, checks
every message's content and every status, and prints "ok NAME: detail" or "FAIL NAME: detail";
exits 1 if anything failed. No grpc_tools: the calls are made with the channel's generic
methods and the generated messages' serializers.
"""
import sys
import threading

import grpc

sys.path.insert(0, sys.argv[2])
import echo_pb2  # noqa: E402
import health_pb2  # noqa: E402

TARGET = sys.argv[1]
PEER = len(sys.argv) > 3 and sys.argv[3] == "peer"
MAX = 4 << 20
FAILS = 0


def report(good, name, detail):
    global FAILS
    print(("ok " if good else "FAIL ") + name + ": " + detail, flush=True)
    if not good:
        FAILS += 1


def pattern(n):
    return bytes(i & 0xFF for i in range(256)) * (n // 256) + bytes(range(n % 256))


def fnv1a(data, h=0xCBF29CE484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def payload(n, seed):
    return bytes((seed * 31 + i * 7) & 0xFF for i in range(n))


def methods(ch):
    E = echo_pb2
    return {
        "unary": ch.unary_unary("/h2bench.Echo/Unary", E.EchoMessage.SerializeToString,
                                E.EchoMessage.FromString),
        "sstream": ch.unary_stream("/h2bench.Echo/ServerStream",
                                   E.StreamRequest.SerializeToString, E.EchoMessage.FromString),
        "cstream": ch.stream_unary("/h2bench.Echo/ClientStream", E.EchoMessage.SerializeToString,
                                   E.StreamSummary.FromString),
        "bidi": ch.stream_stream("/h2bench.Echo/Bidi", E.EchoMessage.SerializeToString,
                                 E.EchoMessage.FromString),
        "health": ch.unary_unary("/grpc.health.v1.Health/Check",
                                 health_pb2.HealthCheckRequest.SerializeToString,
                                 health_pb2.HealthCheckResponse.FromString),
    }


def code_of(fn):
    try:
        fn()
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as e:
        return e.code(), e.details() or ""


def main():
    opts = [("grpc.max_receive_message_length", MAX + 64),
            ("grpc.max_send_message_length", MAX + 64)]
    ch = grpc.insecure_channel(TARGET, options=opts)
    m = methods(ch)
    E = echo_pb2

    # unary, sizes from empty to 70000 bytes (several DATA frames)
    bad = []
    for n in (0, 1, 100, 16384, 70000):
        p = payload(n, n)
        r = m["unary"](E.EchoMessage(payload=p), timeout=30)
        if r.payload != p:
            bad.append(n)
    report(not bad, "unary", "5 sizes echoed byte for byte" if not bad else "differ: %s" % bad)

    # a 4 MiB message (the largest the server takes: prefix excluded, 4194304 bytes)
    p = payload(MAX - 5, 3)  # 1 tag + 4-byte length varint + payload = 4194304
    msg = E.EchoMessage(payload=p)
    size = msg.ByteSize()
    r = m["unary"](msg, timeout=120)
    report(size == MAX and r.payload == p, "unary-4MiB",
           "message %d bytes echoed" % size if r.payload == p else "payload differs")

    # one byte more: RESOURCE_EXHAUSTED
    code, det = code_of(lambda: m["unary"](E.EchoMessage(payload=payload(MAX - 4, 3)),
                                           timeout=120))
    report(code == grpc.StatusCode.RESOURCE_EXHAUSTED, "unary-over-max",
           "%s %s" % (code, det))

    # server streaming: count messages of size pattern bytes
    for count, sz in ((5, 1000), (3, 100000), (0, 10), (200, 0)):
        got = list(m["sstream"](E.StreamRequest(count=count, size=sz), timeout=60))
        good = len(got) == count and all(g.payload == pattern(sz) for g in got)
        report(good, "server-stream-%dx%d" % (count, sz),
               "%d messages of the pattern" % len(got))

    code, det = code_of(lambda: list(m["sstream"](E.StreamRequest(count=2000000, size=1),
                                                  timeout=30)))
    report(code == grpc.StatusCode.INVALID_ARGUMENT, "server-stream-too-many", "%s" % code)

    # client streaming: the summary of what was sent
    msgs = [E.EchoMessage(payload=payload(n, n)) for n in (0, 5, 1000, 40000, 3, 20000)]
    wire = b"".join(x.SerializeToString() for x in msgs)
    r = m["cstream"](iter(msgs), timeout=60)
    good = r.messages == len(msgs) and r.bytes == len(wire) and r.fnv1a == fnv1a(wire)
    report(good, "client-stream", "messages %d bytes %d fnv %x" % (r.messages, r.bytes, r.fnv1a))
    r = m["cstream"](iter([]), timeout=30)
    report(r.messages == 0 and r.bytes == 0 and r.fnv1a == fnv1a(b""), "client-stream-empty",
           "messages %d" % r.messages)

    # bidi: ping-pong (each message sent after the previous reply came back), then a burst
    sent = []
    replies = []
    turn = threading.Semaphore(1)

    def pingpong():
        for i in range(20):
            turn.acquire()
            p = payload(i * 997, i)
            sent.append(p)
            yield E.EchoMessage(payload=p)

    for r in m["bidi"](pingpong(), timeout=60):
        replies.append(r.payload)
        turn.release()
    report(replies == sent, "bidi-pingpong", "%d of %d messages echoed in order" %
           (sum(a == b for a, b in zip(replies, sent)), len(sent)))
    burst = [E.EchoMessage(payload=payload(n, n)) for n in range(0, 60000, 3001)]
    got = [r.payload for r in m["bidi"](iter(burst), timeout=60)]
    report(got == [b.payload for b in burst], "bidi-burst", "%d messages" % len(got))

    # health
    S = health_pb2.HealthCheckResponse.SERVING
    r1 = m["health"](health_pb2.HealthCheckRequest(service=""), timeout=10)
    r2 = m["health"](health_pb2.HealthCheckRequest(service="h2bench.Echo"), timeout=10)
    report(r1.status == S and r2.status == S, "health", "SERVING for '' and h2bench.Echo")
    code, _ = code_of(lambda: m["health"](health_pb2.HealthCheckRequest(service="nope"),
                                          timeout=10))
    report(code == grpc.StatusCode.NOT_FOUND, "health-unknown", "%s" % code)

    # unknown methods, of a known service and of an unknown one
    for path in ("/h2bench.Echo/Nope", "/other.Service/Call", "/grpc.health.v1.Health/Watch"):
        fn = ch.unary_unary(path, lambda b: b, lambda b: b)
        code, det = code_of(lambda: fn(b"\x0a\x01x", timeout=10))
        report(code == grpc.StatusCode.UNIMPLEMENTED, "unknown-method " + path,
               "%s %s" % (code, det))

    # compression: grpc-encoding gzip is refused with UNIMPLEMENTED
    code, det = code_of(lambda: m["unary"](E.EchoMessage(payload=b"x" * 1000), timeout=10,
                                           compression=grpc.Compression.Gzip))
    want = grpc.StatusCode.OK if PEER else grpc.StatusCode.UNIMPLEMENTED
    report(code == want, "compressed", "%s %s" % (code, det))

    # deadline: a bidi call that stays open past its deadline ends DEADLINE_EXCEEDED
    hold = threading.Event()

    def slow():
        yield E.EchoMessage(payload=b"first")
        hold.wait(5)

    got = []

    def run():
        for r in m["bidi"](slow(), timeout=0.3):
            got.append(r.payload)

    code, det = code_of(run)
    hold.set()
    report(code == grpc.StatusCode.DEADLINE_EXCEEDED and got == [b"first"], "deadline",
           "%s after %d message(s)" % (code, len(got)))

    # many concurrent unary calls on one channel (one connection)
    errs = []

    def worker(k):
        try:
            for i in range(25):
                p = payload(100 + i, k)
                if m["unary"](E.EchoMessage(payload=p), timeout=30).payload != p:
                    errs.append("differ")
        except grpc.RpcError as e:
            errs.append(str(e.code()))

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    report(not errs, "concurrent", "8 threads x 25 calls" if not errs else ", ".join(errs[:3]))

    ch.close()
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
