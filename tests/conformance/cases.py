"""cases.py - the 147 server cases of h2spec 2.6, one function each, named by their RFC section.

What: every behaviour h2spec checks against a server (44 generic, 95 http2, 8 hpack), written
anew on h2conf.py. Each case has h2spec's id (generic/3.1/2, http2/6.5.2/4, hpack/5.2/3) so
results can be compared with h2spec's, and the section of the RFC in force that states the
requirement: RFC 9113 (which obsoletes RFC 7540, whose numbering h2spec uses: 7540 §3.5 is 9113
§3.4, §8.1.2 became §8.2, §8.1.2.1 §8.3, §8.1.2.2 §8.2.2, §8.1.2.3 §8.3.1, §8.1.2.6 §8.1.1, §8.2
§8.4) or RFC 7541 for HPACK.

Approach: a case receives an unconnected h2conf.Conn (handshake=False cases send their own
preface), sends what the requirement is about, and returns a verifier's (passed, reason), or
raises Skip when the server's settings make it inapplicable (as h2spec does). The header blocks
built by hand (generic/5, hpack/*) are encoded here from RFC 7541's rules with the helpers in
h2conf.py, not copied from h2spec.

Rejected: generating the cases from a table of (frames, expectation) rows: a third of the cases
need a step in the middle (wait for the response to end, read the SETTINGS ACK, learn the
server's limits), and a plain function per case reads like the requirement it checks.
"""
import struct

from h2conf import (CANCEL, COMPRESSION_ERROR, CONTINUATION, DATA, FLOW_CONTROL_ERROR,
                    FRAME_SIZE_ERROR, GOAWAY, HEADERS, NO_ERROR, PING, PRIORITY, PROTOCOL_ERROR,
                    PUSH_PROMISE, REFUSED_STREAM, RST_STREAM, S_ENABLE_PUSH, S_HEADER_TABLE_SIZE,
                    S_INITIAL_WINDOW_SIZE, S_MAX_CONCURRENT_STREAMS, S_MAX_FRAME_SIZE,
                    S_MAX_HEADER_LIST_SIZE, SETTINGS, STREAM_CLOSED, WINDOW_UPDATE, F_ACK,
                    F_END_HEADERS, F_END_STREAM, F_PADDED, PREFACE, Skip, bits_to_bytes,
                    connection_error, data_length, frame_of_type, headers_frame,
                    hp_huffman_raw, hp_int, hp_str, huffman_bits, ping_ack, raw, settings_ack,
                    stream_closed_by_server, stream_error)
import hpack.huffman_constants as hc

CASES = []


class Case:
    def __init__(self, cid, rfc, desc, fn, handshake, strict):
        self.id, self.rfc, self.desc, self.fn = cid, rfc, desc, fn
        self.handshake, self.strict = handshake, strict

    @property
    def group(self):
        """h2spec's group: the id without its case number (http2/6.5.2)."""
        return self.id.rsplit("/", 1)[0]


def case(cid, rfc, desc, handshake=True, strict=False):
    def reg(fn):
        CASES.append(Case(cid, rfc, desc, fn, handshake, strict))
        return fn
    return reg


PING_DATA = b"h2conf\0\0"
ZERO8 = b"\0" * 8


def server_body_length(c):
    """How many DATA octets the server sends for the configured path (a separate connection,
    as h2spec's ServerDataLength); the flow-control cases need a body to hold back."""
    from h2conf import Conn

    probe = Conn(c.cfg)
    try:
        probe.handshake()
        probe.request(1)
        n = 0
        while True:
            ev = probe.event()
            if ev.kind != "frame":
                return 0
            if ev.sid == 1 and ev.type == DATA:
                n += len(ev.payload)
            if ev.sid == 1 and (ev.ended() or ev.type == RST_STREAM):
                return n
    finally:
        probe.close()


# ============================================================================================
# generic: the features a server must support at all
# ============================================================================================

@case("generic/1/1", "RFC 9113 §3.4", "Sends a client connection preface", handshake=False)
def g_1_1(c):
    c.send(PREFACE + raw(SETTINGS, 0, 0, struct.pack(">HI", S_INITIAL_WINDOW_SIZE, 65535)))
    ev = c.event()
    ok = ev.kind == "frame" and ev.type == SETTINGS and not ev.flags & F_ACK
    return ok, "first frame: %s" % ev


@case("generic/2/1", "RFC 9113 §5.1", "Sends a PRIORITY frame on idle stream")
def g_2_1(c):
    c.priority(1)
    c.ping(ZERO8)
    return ping_ack(c, ZERO8)


@case("generic/2/2", "RFC 9113 §5.1", "Sends a WINDOW_UPDATE frame on half-closed (remote) stream")
def g_2_2(c):
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 0))
    c.request(1)
    c.window_update(1, 1)
    return frame_of_type(c, DATA)


@case("generic/2/3", "RFC 9113 §5.1", "Sends a PRIORITY frame on half-closed (remote) stream")
def g_2_3(c):
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 0))
    c.request(1)
    c.priority(1)
    c.window_update(1, 1)
    return frame_of_type(c, DATA)


@case("generic/2/4", "RFC 9113 §5.1", "Sends a RST_STREAM frame on half-closed (remote) stream")
def g_2_4(c):
    c.request(1)
    c.rst(1, CANCEL)
    c.ping(ZERO8)
    return ping_ack(c, ZERO8, or_close=True)


@case("generic/2/5", "RFC 9113 §5.1", "Sends a PRIORITY frame on closed stream")
def g_2_5(c):
    c.request(1)
    ok, why = stream_closed_by_server(c)
    if not ok:
        return ok, why
    c.priority(1)
    c.ping(ZERO8)
    return ping_ack(c, ZERO8)


@case("generic/3.1/1", "RFC 9113 §6.1", "Sends a DATA frame")
def g_31_1(c):
    c.request(1, "POST", end_stream=False)
    c.data(1, b"test")
    return headers_frame(c, 1)


@case("generic/3.1/2", "RFC 9113 §6.1", "Sends multiple DATA frames")
def g_31_2(c):
    c.request(1, "POST", end_stream=False)
    c.data(1, b"test", end_stream=False)
    c.data(1, b"test")
    return headers_frame(c, 1)


@case("generic/3.1/3", "RFC 9113 §6.1", "Sends a DATA frame with padding")
def g_31_3(c):
    c.request(1, "POST", end_stream=False)
    c.data(1, b"test", pad=5)
    return headers_frame(c, 1)


@case("generic/3.2/1", "RFC 9113 §6.2", "Sends a HEADERS frame")
def g_32_1(c):
    c.request(1)
    return headers_frame(c, 1)


@case("generic/3.2/2", "RFC 9113 §6.2", "Sends a HEADERS frame with padding")
def g_32_2(c):
    c.headers(1, c.encode(c.common_headers()), pad=8)
    return headers_frame(c, 1)


@case("generic/3.2/3", "RFC 9113 §6.2", "Sends a HEADERS frame with priority")
def g_32_3(c):
    c.headers(1, c.encode(c.common_headers()), priority=(0, 255, False))
    return headers_frame(c, 1)


def _priority_then_request(c, psid, dep, weight, excl):
    c.priority(psid, dep, weight, excl)
    c.request(1)
    return headers_frame(c, 1)


@case("generic/3.3/1", "RFC 9113 §6.3", "Sends a PRIORITY frame with priority 1")
def g_33_1(c):
    return _priority_then_request(c, 1, 0, 0, False)


@case("generic/3.3/2", "RFC 9113 §6.3", "Sends a PRIORITY frame with priority 256")
def g_33_2(c):
    return _priority_then_request(c, 1, 0, 255, False)


@case("generic/3.3/3", "RFC 9113 §6.3", "Sends a PRIORITY frame with stream dependency")
def g_33_3(c):
    return _priority_then_request(c, 3, 1, 0, False)


@case("generic/3.3/4", "RFC 9113 §6.3", "Sends a PRIORITY frame with exclusive")
def g_33_4(c):
    return _priority_then_request(c, 1, 0, 0, True)


@case("generic/3.3/5", "RFC 9113 §6.3",
      "Sends a PRIORITY frame for an idle stream, then send a HEADER frame for a lower stream ID")
def g_33_5(c):
    return _priority_then_request(c, 3, 0, 255, False)


@case("generic/3.4/1", "RFC 9113 §6.4", "Sends a RST_STREAM frame")
def g_34_1(c):
    c.request(1, end_stream=False)
    c.rst(1, CANCEL)
    c.ping(ZERO8)
    return ping_ack(c, ZERO8, or_close=True)


@case("generic/3.5/1", "RFC 9113 §6.5", "Sends a SETTINGS frame")
def g_35_1(c):
    c.settings_frame((S_HEADER_TABLE_SIZE, 4096), (S_ENABLE_PUSH, 1),
                     (S_MAX_CONCURRENT_STREAMS, 100), (S_INITIAL_WINDOW_SIZE, 65535),
                     (S_MAX_FRAME_SIZE, 16384), (S_MAX_HEADER_LIST_SIZE, 100))
    return settings_ack(c)


@case("generic/3.7/1", "RFC 9113 §6.7", "Sends a PING frame")
def g_37_1(c):
    c.ping(PING_DATA)
    return ping_ack(c, PING_DATA)


@case("generic/3.8/1", "RFC 9113 §6.8", "Sends a GOAWAY frame")
def g_38_1(c):
    c.goaway(0, NO_ERROR, b"h2conf")
    c.ping(PING_DATA)
    return ping_ack(c, PING_DATA, or_close=True)


@case("generic/3.9/1", "RFC 9113 §6.9", "Sends a WINDOW_UPDATE frame with stream ID 0")
def g_39_1(c):
    c.window_update(0, 1)
    c.ping(ZERO8)
    return ping_ack(c, ZERO8)


@case("generic/3.9/2", "RFC 9113 §6.9", "Sends a WINDOW_UPDATE frame with stream ID 1")
def g_39_2(c):
    c.request(1)
    c.window_update(1, 1)
    return headers_frame(c, 1)


@case("generic/3.10/1", "RFC 9113 §6.10", "Sends a CONTINUATION frame")
def g_310_1(c):
    block = c.encode(c.common_headers())
    c.headers(1, block[:5], end_headers=False)
    c.continuation(1, block[5:])
    return headers_frame(c, 1)


@case("generic/3.10/2", "RFC 9113 §6.10", "Sends multiple CONTINUATION frames")
def g_310_2(c):
    block = c.encode(c.common_headers())
    c.headers(1, block[:5], end_headers=False)
    c.continuation(1, block[5:10], end_headers=False)
    c.continuation(1, block[10:])
    return headers_frame(c, 1)


@case("generic/4/1", "RFC 9113 §8.1", "Sends a GET request")
def g_4_1(c):
    c.request(1)
    return headers_frame(c, 1)


@case("generic/4/2", "RFC 9113 §8.1", "Sends a HEAD request")
def g_4_2(c):
    c.request(1, "HEAD")
    return headers_frame(c, 1)


@case("generic/4/3", "RFC 9113 §8.1", "Sends a POST request")
def g_4_3(c):
    c.request(1, "POST", end_stream=False)
    c.data(1, b"test")
    return headers_frame(c, 1)


@case("generic/4/4", "RFC 9113 §8.1", "Sends a POST request with trailers")
def g_4_4(c):
    c.request(1, "POST", end_stream=False, extra=[("trailer", "x-test")])
    c.data(1, b"test", end_stream=False)
    c.headers(1, c.encode([("x-test", "ok")]))
    return headers_frame(c, 1)


# generic/5: each HPACK representation once, appended to an ordinary request's block.
UA = 58  # RFC 7541 Appendix A: "user-agent", empty value


def _hpack_request(c, rep, prefix=b""):
    c.headers(1, prefix + c.encode(c.common_headers()) + rep)
    return headers_frame(c, 1)


@case("generic/5/1", "RFC 7541 §6.1", "Sends a indexed header field representation")
def g_5_1(c):
    return _hpack_request(c, hp_int(UA, 7, 0x80))


def _literal(pattern, prefix_bits, name, value, huffman):
    """A literal field line: pattern 0x40 (incremental indexing, 6-bit index), 0x00 (without
    indexing) or 0x10 (never indexed), both 4-bit; name is a static index or a new name."""
    if isinstance(name, int):
        return hp_int(name, prefix_bits, pattern) + hp_str(value, huffman)
    return bytes([pattern]) + hp_str(name, huffman) + hp_str(value, huffman)


_LITERALS = [
    ("generic/5/2", 0x40, 6, UA, False, "§6.2.1",
     "Sends a literal header field with incremental indexing - indexed name"),
    ("generic/5/3", 0x40, 6, UA, True, "§6.2.1",
     "Sends a literal header field with incremental indexing - indexed name (with Huffman coding)"),
    ("generic/5/4", 0x40, 6, "x-test", False, "§6.2.1",
     "Sends a literal header field with incremental indexing - new name"),
    ("generic/5/5", 0x40, 6, "x-test", True, "§6.2.1",
     "Sends a literal header field with incremental indexing - new name (with Huffman coding)"),
    ("generic/5/6", 0x00, 4, UA, False, "§6.2.2",
     "Sends a literal header field without indexing - indexed name"),
    ("generic/5/7", 0x00, 4, UA, True, "§6.2.2",
     "Sends a literal header field without indexing - indexed name (with Huffman coding)"),
    ("generic/5/8", 0x00, 4, "x-test", False, "§6.2.2",
     "Sends a literal header field without indexing - new name"),
    ("generic/5/9", 0x00, 4, "x-test", True, "§6.2.2",
     "Sends a literal header field without indexing - new name (huffman encoded)"),
    ("generic/5/10", 0x10, 4, UA, False, "§6.2.3",
     "Sends a literal header field never indexed - indexed name"),
    ("generic/5/11", 0x10, 4, UA, True, "§6.2.3",
     "Sends a literal header field never indexed - indexed name (huffman encoded)"),
    ("generic/5/12", 0x10, 4, "x-test", False, "§6.2.3",
     "Sends a literal header field never indexed - new name"),
    ("generic/5/13", 0x10, 4, "x-test", True, "§6.2.3",
     "Sends a literal header field never indexed - new name (huffman encoded)"),
]

for _cid, _pat, _bits, _name, _huff, _sec, _desc in _LITERALS:
    def _mk(pat=_pat, bits=_bits, name=_name, huff=_huff):
        return lambda c: _hpack_request(c, _literal(pat, bits, name, "h2conf", huff))
    case(_cid, "RFC 7541 " + _sec, _desc)(_mk())


@case("generic/5/14", "RFC 7541 §6.3", "Sends a dynamic table size update")
def g_5_14(c):
    c.enc.header_table_size = 128  # the encoder emits the update at the start of its next block
    c.request(1)
    return headers_frame(c, 1)


@case("generic/5/15", "RFC 7541 §6.3", "Sends multiple dynamic table size update")
def g_5_15(c):
    # Two updates (128, then back to 4096) open the connection's first block; the table is
    # still empty, so the encoder's view of it stays right.
    return _hpack_request(c, b"", prefix=hp_int(128, 5, 0x20) + hp_int(4096, 5, 0x20))


# ============================================================================================
# http2: RFC 9113's requirements
# ============================================================================================

@case("http2/3.5/1", "RFC 9113 §3.4", "Sends client connection preface", handshake=False)
def h_35_1(c):
    return g_1_1(c)


@case("http2/3.5/2", "RFC 9113 §3.4", "Sends invalid connection preface", handshake=False)
def h_35_2(c):
    c.send(b"INVALID CONNECTION PREFACE\r\n\r\n")
    return connection_error(c, PROTOCOL_ERROR)


UNKNOWN_TYPE = 0x16


@case("http2/4.1/1", "RFC 9113 §4.1", "Sends a frame with unknown type")
def h_41_1(c):
    c.send(raw(UNKNOWN_TYPE, 0, 0, ZERO8))
    c.ping(ZERO8)
    return ping_ack(c, ZERO8)


@case("http2/4.1/2", "RFC 9113 §4.1", "Sends a frame with undefined flag")
def h_41_2(c):
    c.send(raw(PING, 0x16, 0, ZERO8))  # 0x16: bits PING does not define (and no ACK)
    return frame_of_type(c, PING)


@case("http2/4.1/3", "RFC 9113 §4.1", "Sends a frame with reserved field bit")
def h_41_3(c):
    c.send(raw(PING, 0x16, 0x80000000, ZERO8))  # R bit set, stream 0
    return frame_of_type(c, PING)


@case("http2/4.2/1", "RFC 9113 §4.2", "Sends a DATA frame with 2^14 octets in length")
def h_42_1(c):
    c.request(1, "POST", end_stream=False)
    c.data(1, b"x" * c.max_frame_size())
    return headers_frame(c, 1)


@case("http2/4.2/2", "RFC 9113 §4.2",
      "Sends a large size DATA frame that exceeds the SETTINGS_MAX_FRAME_SIZE")
def h_42_2(c):
    c.request(1, "POST", end_stream=False)
    c.data(1, b"x" * (c.max_frame_size() + 1))
    return stream_error(c, FRAME_SIZE_ERROR)


@case("http2/4.2/3", "RFC 9113 §4.2",
      "Sends a large size HEADERS frame that exceeds the SETTINGS_MAX_FRAME_SIZE")
def h_42_3(c):
    block = c.encode(c.common_headers() + c.dummy_headers(5))
    c.headers(1, block)
    return connection_error(c, FRAME_SIZE_ERROR)


@case("http2/4.3/1", "RFC 9113 §4.3", "Sends invalid header block fragment")
def h_43_1(c):
    # A literal with incremental indexing that ends before its name's length.
    c.send(raw(HEADERS, F_END_STREAM | F_END_HEADERS, 1, b"\x40"))
    return connection_error(c, COMPRESSION_ERROR)


def _interleaved_priority(c):
    c.headers(1, c.encode(c.common_headers()), end_stream=False, end_headers=False)
    c.priority(1)
    c.continuation(1, c.encode(c.dummy_headers(1)))
    return connection_error(c, PROTOCOL_ERROR)


def _interleaved_headers(c):
    c.headers(1, c.encode(c.common_headers()), end_stream=False, end_headers=False)
    c.headers(3, c.encode(c.common_headers()))
    c.continuation(1, c.encode(c.dummy_headers(1)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/4.3/2", "RFC 9113 §4.3", "Sends a PRIORITY frame while sending the header blocks")
def h_43_2(c):
    return _interleaved_priority(c)


@case("http2/4.3/3", "RFC 9113 §4.3",
      "Sends a HEADERS frame to another stream while sending the header blocks")
def h_43_3(c):
    return _interleaved_headers(c)


# ---- 5.1 stream states ----------------------------------------------------------------------

@case("http2/5.1/1", "RFC 9113 §5.1", "idle: Sends a DATA frame")
def h_51_1(c):
    c.data(1, b"test")
    # RFC 9113 §5.1 says connection error PROTOCOL_ERROR, §6.1 stream error STREAM_CLOSED.
    return stream_error(c, PROTOCOL_ERROR, STREAM_CLOSED)


@case("http2/5.1/2", "RFC 9113 §5.1", "idle: Sends a RST_STREAM frame")
def h_51_2(c):
    c.rst(1, CANCEL)
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/3", "RFC 9113 §5.1", "idle: Sends a WINDOW_UPDATE frame")
def h_51_3(c):
    c.window_update(1, 100)
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/4", "RFC 9113 §5.1", "idle: Sends a CONTINUATION frame")
def h_51_4(c):
    c.continuation(1, c.encode(c.common_headers()))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1/5", "RFC 9113 §5.1", "half closed (remote): Sends a DATA frame")
def h_51_5(c):
    c.request(1)
    c.data(1, b"test")
    return stream_error(c, STREAM_CLOSED)


@case("http2/5.1/6", "RFC 9113 §5.1", "half closed (remote): Sends a HEADERS frame")
def h_51_6(c):
    c.request(1)
    c.request(1)
    return stream_error(c, STREAM_CLOSED)


@case("http2/5.1/7", "RFC 9113 §5.1", "half closed (remote): Sends a CONTINUATION frame")
def h_51_7(c):
    block = c.encode(c.common_headers())
    c.headers(1, block)
    c.continuation(1, block)
    return stream_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.1/8", "RFC 9113 §5.1", "closed: Sends a DATA frame after sending RST_STREAM frame")
def h_51_8(c):
    c.request(1, end_stream=False)
    c.rst(1, CANCEL)
    c.data(1, b"test")
    return stream_error(c, STREAM_CLOSED)


@case("http2/5.1/9", "RFC 9113 §5.1",
      "closed: Sends a HEADERS frame after sending RST_STREAM frame")
def h_51_9(c):
    c.request(1, end_stream=False)
    c.rst(1, CANCEL)
    c.request(1)
    return stream_error(c, STREAM_CLOSED)


@case("http2/5.1/10", "RFC 9113 §5.1",
      "closed: Sends a CONTINUATION frame after sending RST_STREAM frame")
def h_51_10(c):
    c.request(1, end_stream=False)
    c.rst(1, CANCEL)
    c.continuation(1, c.encode(c.dummy_headers(1)))
    return stream_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


def _after_close(c):
    c.request(1)
    ok, why = stream_closed_by_server(c)
    if not ok:
        raise Skip("the response to stream 1 did not end: " + why)


@case("http2/5.1/11", "RFC 9113 §5.1", "closed: Sends a DATA frame")
def h_51_11(c):
    _after_close(c)
    c.data(1, b"test")
    return stream_error(c, STREAM_CLOSED)


@case("http2/5.1/12", "RFC 9113 §5.1", "closed: Sends a HEADERS frame")
def h_51_12(c):
    _after_close(c)
    c.request(1)
    return connection_error(c, STREAM_CLOSED)


@case("http2/5.1/13", "RFC 9113 §5.1", "closed: Sends a CONTINUATION frame")
def h_51_13(c):
    _after_close(c)
    c.continuation(1, c.encode(c.dummy_headers(1)))
    return connection_error(c, STREAM_CLOSED, PROTOCOL_ERROR)


@case("http2/5.1.1/1", "RFC 9113 §5.1.1", "Sends even-numbered stream identifier")
def h_511_1(c):
    c.request(2)
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1.1/2", "RFC 9113 §5.1.1",
      "Sends stream identifier that is numerically smaller than previous")
def h_511_2(c):
    c.request(5)
    c.request(3)
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/5.1.2/1", "RFC 9113 §5.1.2",
      "Sends HEADERS frames that causes their advertised concurrent stream limit to be exceeded")
def h_512_1(c):
    limit = c.settings.get(S_MAX_CONCURRENT_STREAMS)
    if limit is None:
        raise Skip("the server advertises no SETTINGS_MAX_CONCURRENT_STREAMS (unlimited)")
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 0))  # responses cannot finish, streams stay open
    block = c.encode(c.common_headers())
    c.send(b"".join(raw(HEADERS, F_END_STREAM | F_END_HEADERS, 1 + 2 * i, block)
                    for i in range(limit + 1)))
    return stream_error(c, PROTOCOL_ERROR, REFUSED_STREAM)


@case("http2/5.3.1/1", "RFC 9113 §5.3.1", "Sends HEADERS frame that depends on itself")
def h_531_1(c):
    c.headers(1, c.encode(c.common_headers()), priority=(1, 255, False))
    return stream_error(c, PROTOCOL_ERROR)


@case("http2/5.3.1/2", "RFC 9113 §5.3.1", "Sends PRIORITY frame that depend on itself")
def h_531_2(c):
    c.priority(1, dep=1)
    return stream_error(c, PROTOCOL_ERROR)


@case("http2/5.4.1/1", "RFC 9113 §5.4.1", "Sends an invalid PING frame for connection close")
def h_541_1(c):
    c.send(raw(PING, 0, 3, ZERO8))
    while True:
        ev = c.event()
        if ev.kind == "closed":
            return True, "connection closed (%s)" % c.trace()
        if ev.kind == "timeout":
            return False, "expected the connection to close, got %s" % c.trace()


@case("http2/5.4.1/2", "RFC 9113 §5.4.1", "Sends an invalid PING frame to receive GOAWAY frame",
      strict=True)
def h_541_2(c):
    c.send(raw(PING, 0, 3, ZERO8))
    ok, why = frame_of_type(c, GOAWAY)
    if ok:
        ev = [e for e in c.seen if e.kind == "frame" and e.type == GOAWAY][0]
        return ev.code == PROTOCOL_ERROR, str(ev)
    return ok, why


@case("http2/5.5/1", "RFC 9113 §5.5", "Sends an unknown extension frame")
def h_55_1(c):
    c.send(raw(UNKNOWN_TYPE, 0, 0, ZERO8))
    c.ping(ZERO8)
    return ping_ack(c, ZERO8)


@case("http2/5.5/2", "RFC 9113 §5.5",
      "Sends an unknown extension frame in the middle of a header block")
def h_55_2(c):
    c.headers(1, c.encode(c.common_headers()), end_headers=False)
    c.send(raw(UNKNOWN_TYPE, 0, 0, ZERO8))
    return connection_error(c, PROTOCOL_ERROR)


# ---- 6.x frame definitions ------------------------------------------------------------------

@case("http2/6.1/1", "RFC 9113 §6.1", "Sends a DATA frame with 0x0 stream identifier")
def h_61_1(c):
    c.send(raw(DATA, F_END_STREAM, 0, b"test"))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.1/2", "RFC 9113 §6.1",
      'Sends a DATA frame on the stream that is not in "open" or "half-closed (local)" state')
def h_61_2(c):
    c.request(1, "POST")
    c.data(1, b"test")
    return stream_error(c, STREAM_CLOSED)


@case("http2/6.1/3", "RFC 9113 §6.1", "Sends a DATA frame with invalid pad length")
def h_61_3(c):
    c.request(1, "POST", end_stream=False, extra=[("content-length", "4")])
    # Pad Length 6 in a 5-octet payload: padding longer than the frame.
    c.send(raw(DATA, F_PADDED | F_END_STREAM, 1, b"\x06Test"))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/1", "RFC 9113 §6.2",
      "Sends a HEADERS frame without the END_HEADERS flag, and a PRIORITY frame")
def h_62_1(c):
    return _interleaved_priority(c)


@case("http2/6.2/2", "RFC 9113 §6.2",
      "Sends a HEADERS frame to another stream while sending a HEADERS frame")
def h_62_2(c):
    return _interleaved_headers(c)


@case("http2/6.2/3", "RFC 9113 §6.2", "Sends a HEADERS frame with 0x0 stream identifier")
def h_62_3(c):
    c.send(raw(HEADERS, F_END_STREAM | F_END_HEADERS, 0, c.encode(c.common_headers())))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.2/4", "RFC 9113 §6.2", "Sends a HEADERS frame with invalid pad length")
def h_62_4(c):
    block = c.encode(c.common_headers())
    # Pad Length one more than what follows it.
    c.send(raw(HEADERS, F_PADDED | F_END_STREAM | F_END_HEADERS, 1,
               bytes([len(block) + 1]) + block))
    return stream_error(c, PROTOCOL_ERROR)


@case("http2/6.3/1", "RFC 9113 §6.3", "Sends a PRIORITY frame with 0x0 stream identifier")
def h_63_1(c):
    c.send(raw(PRIORITY, 0, 0, struct.pack(">IB", 0, 255)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.3/2", "RFC 9113 §6.3", "Sends a PRIORITY frame with a length other than 5 octets")
def h_63_2(c):
    c.request(1)
    c.send(raw(PRIORITY, 0, 1, b"\x80\x00\x00\x01"))
    return stream_error(c, FRAME_SIZE_ERROR)


@case("http2/6.4/1", "RFC 9113 §6.4", "Sends a RST_STREAM frame with 0x0 stream identifier")
def h_64_1(c):
    c.rst(0, CANCEL)
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.4/2", "RFC 9113 §6.4", "Sends a RST_STREAM frame on a idle stream")
def h_64_2(c):
    c.rst(1, CANCEL)
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.4/3", "RFC 9113 §6.4",
      "Sends a RST_STREAM frame with a length other than 4 octets")
def h_64_3(c):
    c.request(1)
    c.send(raw(RST_STREAM, 0, 1, b"\x00\x00\x00"))
    return stream_error(c, FRAME_SIZE_ERROR)


@case("http2/6.5/1", "RFC 9113 §6.5", "Sends a SETTINGS frame with ACK flag and payload")
def h_65_1(c):
    c.send(raw(SETTINGS, F_ACK, 0, b"\x00"))
    return connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.5/2", "RFC 9113 §6.5",
      "Sends a SETTINGS frame with a stream identifier other than 0x0")
def h_65_2(c):
    c.send(raw(SETTINGS, 0, 1, struct.pack(">HI", S_MAX_CONCURRENT_STREAMS, 100)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5/3", "RFC 9113 §6.5",
      "Sends a SETTINGS frame with a length other than a multiple of 6 octets")
def h_65_3(c):
    c.send(raw(SETTINGS, 0, 0, b"\x00\x03\x00"))
    return stream_error(c, PROTOCOL_ERROR, FRAME_SIZE_ERROR)


@case("http2/6.5.2/1", "RFC 9113 §6.5.2",
      "SETTINGS_ENABLE_PUSH (0x2): Sends the value other than 0 or 1")
def h_652_1(c):
    c.settings_frame((S_ENABLE_PUSH, 2))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/2", "RFC 9113 §6.5.2",
      "SETTINGS_INITIAL_WINDOW_SIZE (0x4): Sends the value above the maximum flow control "
      "window size")
def h_652_2(c):
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 1 << 31))
    return connection_error(c, FLOW_CONTROL_ERROR)


@case("http2/6.5.2/3", "RFC 9113 §6.5.2",
      "SETTINGS_MAX_FRAME_SIZE (0x5): Sends the value below the initial value")
def h_652_3(c):
    c.settings_frame((S_MAX_FRAME_SIZE, 16383))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/4", "RFC 9113 §6.5.2",
      "SETTINGS_MAX_FRAME_SIZE (0x5): Sends the value above the maximum allowed frame size")
def h_652_4(c):
    c.settings_frame((S_MAX_FRAME_SIZE, 1 << 24))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.5.2/5", "RFC 9113 §6.5.2", "Sends a SETTINGS frame with unknown identifier")
def h_652_5(c):
    c.settings_frame((0xFF, 1))
    c.ping(ZERO8)
    return ping_ack(c, ZERO8)


def _settings_acked(c, *pairs):
    c.settings_frame(*pairs)
    ok, why = settings_ack(c)
    if not ok:
        raise Skip("no SETTINGS ACK: " + why)


def _need_body(c, n):
    got = server_body_length(c)
    if got < n:
        raise Skip("the response to %s has %d body octets, the case needs %d"
                   % (c.cfg.path, got, n))


@case("http2/6.5.3/1", "RFC 9113 §6.5.3", "Sends multiple values of SETTINGS_INITIAL_WINDOW_SIZE")
def h_653_1(c):
    _need_body(c, 1)
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 100), (S_INITIAL_WINDOW_SIZE, 1))
    ok, why = settings_ack(c)
    if not ok:
        return ok, why
    c.request(1)
    return data_length(c, 1)


@case("http2/6.5.3/2", "RFC 9113 §6.5.3", "Sends a SETTINGS frame without ACK flag")
def h_653_2(c):
    c.settings_frame((S_ENABLE_PUSH, 0))
    return settings_ack(c)


@case("http2/6.7/1", "RFC 9113 §6.7", "Sends a PING frame")
def h_67_1(c):
    c.ping(PING_DATA)
    return ping_ack(c, PING_DATA)


@case("http2/6.7/2", "RFC 9113 §6.7", "Sends a PING frame with ACK")
def h_67_2(c):
    c.ping(b"invalid\0", ack=True)  # an ACK nobody asked for must not be answered
    c.ping(PING_DATA)
    return ping_ack(c, PING_DATA)


@case("http2/6.7/3", "RFC 9113 §6.7",
      "Sends a PING frame with a stream identifier field value other than 0x0")
def h_67_3(c):
    c.send(raw(PING, 0, 1, ZERO8))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.7/4", "RFC 9113 §6.7", "Sends a PING frame with a length field value other than 8")
def h_67_4(c):
    c.send(raw(PING, 0, 0, b"\0" * 6))
    return connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.8/1", "RFC 9113 §6.8",
      "Sends a GOAWAY frame with a stream identifier other than 0x0")
def h_68_1(c):
    c.send(raw(GOAWAY, 0, 1, ZERO8))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.9/1", "RFC 9113 §6.9",
      "Sends a WINDOW_UPDATE frame with a flow control window increment of 0")
def h_69_1(c):
    c.window_update(0, 0)
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.9/2", "RFC 9113 §6.9",
      "Sends a WINDOW_UPDATE frame with a flow control window increment of 0 on a stream")
def h_69_2(c):
    c.request(1, end_stream=False)
    c.window_update(1, 0)
    return stream_error(c, PROTOCOL_ERROR)


@case("http2/6.9/3", "RFC 9113 §6.9",
      "Sends a WINDOW_UPDATE frame with a length other than 4 octets")
def h_69_3(c):
    c.send(raw(WINDOW_UPDATE, 0, 0, b"\x00\x00\x01"))
    return connection_error(c, FRAME_SIZE_ERROR)


@case("http2/6.9.1/1", "RFC 9113 §6.9.1",
      "Sends SETTINGS frame to set the initial window size to 1 and sends HEADERS frame")
def h_691_1(c):
    _need_body(c, 1)
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 1))
    ok, why = settings_ack(c)
    if not ok:
        return ok, why
    c.request(1)
    return data_length(c, 1)


@case("http2/6.9.1/2", "RFC 9113 §6.9.1",
      "Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1")
def h_691_2(c):
    c.window_update(0, 0x7FFFFFFF)
    c.window_update(0, 0x7FFFFFFF)
    ok, why = frame_of_type(c, GOAWAY)
    if not ok:
        return ok, why
    ev = [e for e in c.seen if e.kind == "frame" and e.type == GOAWAY][0]
    return ev.code == FLOW_CONTROL_ERROR, str(ev)


@case("http2/6.9.1/3", "RFC 9113 §6.9.1",
      "Sends multiple WINDOW_UPDATE frames increasing the flow control window to above 2^31-1 "
      "on a stream")
def h_691_3(c):
    c.request(1, end_stream=False)
    c.window_update(1, 0x7FFFFFFF)
    c.window_update(1, 0x7FFFFFFF)
    while True:
        ev = c.event()
        if ev.kind != "frame":
            return False, "expected RST_STREAM(FLOW_CONTROL_ERROR), got %s" % c.trace()
        if ev.type == RST_STREAM:
            return ev.sid == 1 and ev.code == FLOW_CONTROL_ERROR, str(ev)
        if ev.type == GOAWAY:
            return False, "expected RST_STREAM(FLOW_CONTROL_ERROR), got %s" % ev


@case("http2/6.9.2/1", "RFC 9113 §6.9.2",
      "Changes SETTINGS_INITIAL_WINDOW_SIZE after sending HEADERS frame")
def h_692_1(c):
    _need_body(c, 1)
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 0))
    ok, why = settings_ack(c)
    if not ok:
        return ok, why
    c.request(1)
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 1))
    return data_length(c, 1)


@case("http2/6.9.2/2", "RFC 9113 §6.9.2", "Sends a SETTINGS frame for window size to be negative")
def h_692_2(c):
    _need_body(c, 5)
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 3))
    ok, why = settings_ack(c)
    if not ok:
        return ok, why
    c.request(1)
    ok, why = frame_of_type(c, DATA)  # 3 octets: the stream window is now 0
    if not ok:
        return ok, why
    c.settings_frame((S_INITIAL_WINDOW_SIZE, 2))  # window 0 - 1 = -1
    ok, why = settings_ack(c)
    if not ok:
        return ok, why
    c.window_update(1, 2)  # -1 + 2 = 1: exactly one more octet may be sent
    return data_length(c, 1)


@case("http2/6.9.2/3", "RFC 9113 §6.9.2",
      "Sends a SETTINGS_INITIAL_WINDOW_SIZE settings with an exceeded maximum window size value")
def h_692_3(c):
    c.send(raw(SETTINGS, 0, 0, struct.pack(">HI", S_INITIAL_WINDOW_SIZE, 0x80000000)))
    return connection_error(c, FLOW_CONTROL_ERROR)


@case("http2/6.10/1", "RFC 9113 §6.10",
      "Sends multiple CONTINUATION frames preceded by a HEADERS frame")
def h_610_1(c):
    c.headers(1, c.encode(c.common_headers()), end_headers=False)
    dummy = c.dummy_headers(1)
    c.continuation(1, c.encode(dummy), end_headers=False)
    c.continuation(1, c.encode(dummy))
    return headers_frame(c, 1)


@case("http2/6.10/2", "RFC 9113 §6.10",
      "Sends a CONTINUATION frame followed by any frame other than CONTINUATION")
def h_610_2(c):
    c.headers(1, c.encode(c.common_headers("POST")), end_stream=False, end_headers=False)
    c.continuation(1, c.encode(c.dummy_headers(1)), end_headers=False)
    c.data(1, b"test")
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/3", "RFC 9113 §6.10", "Sends a CONTINUATION frame with 0x0 stream identifier")
def h_610_3(c):
    c.headers(1, c.encode(c.common_headers()), end_headers=False)
    c.continuation(0, c.encode(c.dummy_headers(1)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/4", "RFC 9113 §6.10",
      "Sends a CONTINUATION frame preceded by a HEADERS frame with END_HEADERS flag")
def h_610_4(c):
    c.request(1)
    c.continuation(1, c.encode(c.dummy_headers(1)))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/5", "RFC 9113 §6.10",
      "Sends a CONTINUATION frame preceded by a CONTINUATION frame with END_HEADERS flag")
def h_610_5(c):
    c.headers(1, c.encode(c.common_headers()), end_headers=False)
    dummy = c.dummy_headers(1)
    c.continuation(1, c.encode(dummy))
    c.continuation(1, c.encode(dummy))
    return connection_error(c, PROTOCOL_ERROR)


@case("http2/6.10/6", "RFC 9113 §6.10", "Sends a CONTINUATION frame preceded by a DATA frame")
def h_610_6(c):
    c.headers(1, c.encode(c.common_headers("POST")), end_stream=False, end_headers=False)
    c.data(1, b"test")
    dummy = c.dummy_headers(1)
    c.continuation(1, c.encode(dummy), end_headers=False)
    c.continuation(0, c.encode(dummy))
    return connection_error(c, PROTOCOL_ERROR)


# ---- 7 error codes --------------------------------------------------------------------------

@case("http2/7/1", "RFC 9113 §7", "Sends a GOAWAY frame with unknown error code")
def h_7_1(c):
    c.goaway(0, 0xFF)
    c.ping(PING_DATA)
    return ping_ack(c, PING_DATA, or_close=True)


@case("http2/7/2", "RFC 9113 §7", "Sends a RST_STREAM frame with unknown error code")
def h_7_2(c):
    c.request(1, "POST", end_stream=False)
    c.rst(1, 0xFF)
    c.ping(ZERO8)
    return ping_ack(c, ZERO8, or_close=True)


# ---- 8 HTTP semantics -----------------------------------------------------------------------

@case("http2/8.1/1", "RFC 9113 §8.1", "Sends a second HEADERS frame without the END_STREAM flag")
def h_81_1(c):
    c.request(1, "POST", end_stream=False)
    c.data(1, b"test", end_stream=False)
    c.headers(1, c.encode([("x-test", "ok")]), end_stream=False)
    return stream_error(c, PROTOCOL_ERROR)


def _malformed(c, headers):
    c.headers(1, c.encode(headers))
    return stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2/1", "RFC 9113 §8.2.1",
      "Sends a HEADERS frame that contains the header field name in uppercase letters")
def h_812_1(c):
    return _malformed(c, c.common_headers() + [("X-TEST", "ok")])


@case("http2/8.1.2.1/1", "RFC 9113 §8.3",
      "Sends a HEADERS frame that contains a unknown pseudo-header field")
def h_8121_1(c):
    return _malformed(c, c.common_headers() + [(":test", "ok")])


@case("http2/8.1.2.1/2", "RFC 9113 §8.3",
      "Sends a HEADERS frame that contains the pseudo-header field defined for response")
def h_8121_2(c):
    return _malformed(c, c.common_headers() + [(":status", "200")])


@case("http2/8.1.2.1/3", "RFC 9113 §8.1",
      "Sends a HEADERS frame that contains a pseudo-header field as trailers")
def h_8121_3(c):
    c.request(1, "POST", end_stream=False)
    c.data(1, b"test", end_stream=False)
    c.headers(1, c.encode([(":method", "POST")]), end_stream=False)
    return stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.1/4", "RFC 9113 §8.3",
      "Sends a HEADERS frame that contains a pseudo-header field that appears in a header block "
      "after a regular header field")
def h_8121_4(c):
    return _malformed(c, [("x-test", "ok")] + c.common_headers())


@case("http2/8.1.2.2/1", "RFC 9113 §8.2.2",
      "Sends a HEADERS frame that contains the connection-specific header field")
def h_8122_1(c):
    return _malformed(c, c.common_headers() + [("connection", "keep-alive")])


@case("http2/8.1.2.2/2", "RFC 9113 §8.2.2",
      'Sends a HEADERS frame that contains the TE header field with any value other than '
      '"trailers"')
def h_8122_2(c):
    return _malformed(c, c.common_headers() + [("trailers", "test"), ("te", "trailers, deflate")])


def _pseudo(c, drop=None, dup=None, empty_path=False):
    h = c.common_headers()
    if empty_path:
        h = [(k, "" if k == ":path" else v) for k, v in h]
    if drop:
        h = [(k, v) for k, v in h if k != drop]
    if dup:
        h = h + [(k, v) for k, v in h if k == dup]
    return _malformed(c, h)


@case("http2/8.1.2.3/1", "RFC 9113 §8.3.1",
      'Sends a HEADERS frame with empty ":path" pseudo-header field')
def h_8123_1(c):
    return _pseudo(c, empty_path=True)


@case("http2/8.1.2.3/2", "RFC 9113 §8.3.1",
      'Sends a HEADERS frame that omits ":method" pseudo-header field')
def h_8123_2(c):
    return _pseudo(c, drop=":method")


@case("http2/8.1.2.3/3", "RFC 9113 §8.3.1",
      'Sends a HEADERS frame that omits ":scheme" pseudo-header field')
def h_8123_3(c):
    return _pseudo(c, drop=":scheme")


@case("http2/8.1.2.3/4", "RFC 9113 §8.3.1",
      'Sends a HEADERS frame that omits ":path" pseudo-header field')
def h_8123_4(c):
    return _pseudo(c, drop=":path")


@case("http2/8.1.2.3/5", "RFC 9113 §8.3.1",
      'Sends a HEADERS frame with duplicated ":method" pseudo-header field')
def h_8123_5(c):
    return _pseudo(c, dup=":method")


@case("http2/8.1.2.3/6", "RFC 9113 §8.3.1",
      'Sends a HEADERS frame with duplicated ":scheme" pseudo-header field')
def h_8123_6(c):
    return _pseudo(c, dup=":scheme")


@case("http2/8.1.2.3/7", "RFC 9113 §8.3.1",
      'Sends a HEADERS frame with duplicated ":path" pseudo-header field')
def h_8123_7(c):
    return _pseudo(c, dup=":path")


@case("http2/8.1.2.6/1", "RFC 9113 §8.1.1",
      'Sends a HEADERS frame with the "content-length" header field which does not equal the DATA '
      'frame payload length')
def h_8126_1(c):
    c.request(1, "POST", end_stream=False, extra=[("content-length", "1")])
    c.data(1, b"test")
    return stream_error(c, PROTOCOL_ERROR)


@case("http2/8.1.2.6/2", "RFC 9113 §8.1.1",
      'Sends a HEADERS frame with the "content-length" header field which does not equal the sum '
      'of the multiple DATA frames payload length')
def h_8126_2(c):
    c.request(1, "POST", end_stream=False, extra=[("content-length", "1")])
    c.data(1, b"test", end_stream=False)
    c.data(1, b"test")
    return stream_error(c, PROTOCOL_ERROR)


@case("http2/8.2/1", "RFC 9113 §8.4", "Sends a PUSH_PROMISE frame")
def h_82_1(c):
    c.send(raw(PUSH_PROMISE, F_END_HEADERS, 1,
               struct.pack(">I", 3) + c.encode(c.common_headers())))
    return connection_error(c, PROTOCOL_ERROR)


# ============================================================================================
# hpack: RFC 7541's decoder requirements
# ============================================================================================

def _bad_block(c, rep, prefix=b""):
    """An ordinary request block with rep after it (rep may be a function of the connection,
    called once the request's fields are encoded)."""
    block = c.encode(c.common_headers())
    c.headers(1, prefix + block + (rep(c) if callable(rep) else rep))
    return connection_error(c, COMPRESSION_ERROR)


def _first_invalid_index(c):
    """One past the last entry: 61 static entries plus what the encoder has put in the dynamic
    table so far (the server's copy of the table holds the same entries)."""
    return 61 + len(c.enc.header_table.dynamic_entries) + 1


@case("hpack/2.3.3/1", "RFC 7541 §2.3.3",
      "Sends a indexed header field representation with invalid index")
def p_233_1(c):
    return _bad_block(c, lambda c: hp_int(_first_invalid_index(c), 7, 0x80))


@case("hpack/2.3.3/2", "RFC 7541 §2.3.3",
      "Sends a literal header field representation with invalid index")
def p_233_2(c):
    return _bad_block(c, lambda c: hp_int(_first_invalid_index(c), 6, 0x40) + hp_str(""))


@case("hpack/4.2/1", "RFC 7541 §4.2", "Sends a dynamic table size update at the end of header block")
def p_42_1(c):
    return _bad_block(c, hp_int(1, 5, 0x20))


def _huffman_literal(value_octets):
    """A literal without indexing, new name "x-test", with the given Huffman value octets."""
    return b"\x00" + hp_str("x-test") + hp_huffman_raw(value_octets)


@case("hpack/5.2/1", "RFC 7541 §5.2",
      "Sends a Huffman-encoded string literal representation with padding longer than 7 bits")
def p_52_1(c):
    return _bad_block(c, _huffman_literal(bits_to_bytes(*huffman_bits("test")) + b"\xff"))


@case("hpack/5.2/2", "RFC 7541 §5.2",
      "Sends a Huffman-encoded string literal representation padded by zero")
def p_52_2(c):
    bits, n = huffman_bits("test")  # 20 bits: 4 bits of padding, here zeros instead of ones
    assert n % 8
    return _bad_block(c, _huffman_literal(bits_to_bytes(bits, n, pad_one=False)))


@case("hpack/5.2/3", "RFC 7541 §5.2",
      "Sends a Huffman-encoded string literal representation containing the EOS symbol")
def p_52_3(c):
    bits, n = huffman_bits("t")
    bits = (bits << hc.REQUEST_CODES_LENGTH[256]) | hc.REQUEST_CODES[256]  # EOS in the middle
    n += hc.REQUEST_CODES_LENGTH[256]
    sb, sn = huffman_bits("s")
    bits, n = (bits << sn) | sb, n + sn
    return _bad_block(c, _huffman_literal(bits_to_bytes(bits, n)))


@case("hpack/6.1/1", "RFC 7541 §6.1", "Sends a indexed header field representation with index 0")
def p_61_1(c):
    return _bad_block(c, hp_int(0, 7, 0x80))


@case("hpack/6.3/1", "RFC 7541 §6.3",
      "Sends a dynamic table size update larger than the value of SETTINGS_HEADER_TABLE_SIZE")
def p_63_1(c):
    limit = c.settings.get(S_HEADER_TABLE_SIZE, 4096)
    return _bad_block(c, b"", prefix=hp_int(limit + 1, 5, 0x20))


assert len(CASES) == 147, len(CASES)
assert len({k.id for k in CASES}) == 147
