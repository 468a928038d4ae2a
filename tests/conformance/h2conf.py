"""h2conf.py - the connection, frame and verification layer of the offline conformance suite.

What: a client connection to an HTTP/2 server (h2c with prior knowledge, or TLS with ALPN h2)
that sends frames, well-formed or deliberately broken, and waits for what the server answers:
the "events" (a frame, the connection closed, a timeout) that the verifiers below judge.

Approach: well-formed frames are built with Debian's python3-hyperframe and header blocks
with python3-hpack (one encoder per connection, so the dynamic table is shared across the
blocks of a connection as on a real one); broken frames are written as raw bytes. Frames
received are parsed with hyperframe; a frame hyperframe refuses is kept as a raw record so a
misbehaving server is reported, not a crash of the suite. Each read waits at most `timeout`
seconds (h2spec's default is 2 s), and a timeout or a close ends the connection for the case.

The verifiers follow h2spec's pass conditions (a connection error passes on a GOAWAY with an
expected code or on the connection closing; a stream error also on a RST_STREAM), with one
deliberate difference: a GOAWAY or RST_STREAM that carries a code outside the expected set fails
the case at once (RFC 9113 names the code; h2spec lets it pass if the connection closes
afterwards). `lenient=True` restores h2spec's behaviour for comparisons.

Rejected: python3-h2's state machine (it refuses to send most of the broken sequences these
cases need), and threads per case (cases are short; one at a time keeps the server's view
simple and the output ordered).
"""
import socket
import ssl
import struct
import time

import hpack
import hpack.huffman_constants as hc
from hyperframe import frame as hf

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = range(10)
TYPE_NAMES = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING",
              "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"]
F_END_STREAM, F_ACK, F_END_HEADERS, F_PADDED, F_PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20

ERRORS = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
          "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
          "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY",
          "HTTP_1_1_REQUIRED"]
(NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, SETTINGS_TIMEOUT, STREAM_CLOSED,
 FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR) = range(10)

S_HEADER_TABLE_SIZE, S_ENABLE_PUSH, S_MAX_CONCURRENT_STREAMS, S_INITIAL_WINDOW_SIZE, \
    S_MAX_FRAME_SIZE, S_MAX_HEADER_LIST_SIZE = range(1, 7)
DEFAULT_WINDOW = 65535
DEFAULT_FRAME_SIZE = 16384


def err_name(code):
    return ERRORS[code] if 0 <= code < len(ERRORS) else "0x%x" % code


class Skip(Exception):
    """The case does not apply to this server (h2spec's skipped)."""


class Fail(Exception):
    """The case cannot go on (for example the handshake did not complete)."""


class Config:
    def __init__(self, host, port, tls=False, path="/", timeout=2.0, max_header_len=4000,
                 lenient=False):
        self.host, self.port, self.tls, self.path = host, port, tls, path
        self.timeout, self.max_header_len, self.lenient = timeout, max_header_len, lenient

    @property
    def authority(self):
        default = 443 if self.tls else 80
        host = "[%s]" % self.host if ":" in self.host else self.host
        return host if self.port == default else "%s:%d" % (host, self.port)


def raw(ftype, flags, sid, payload=b"", length=None):
    """A frame as bytes, any field allowed (length defaults to the payload's)."""
    n = len(payload) if length is None else length
    return struct.pack(">I", n)[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


# ---- HPACK primitives (RFC 7541 §5.1, §5.2) for the representations the cases build by hand --

def hp_int(value, prefix_bits, first=0):
    """An HPACK integer with an N-bit prefix; first holds the representation's pattern bits."""
    top = (1 << prefix_bits) - 1
    if value < top:
        return bytes([first | value])
    out = bytearray([first | top])
    value -= top
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def huffman_bits(text):
    """(bits, nbits) of the Huffman codes of text, no padding."""
    bits = nbits = 0
    for ch in text.encode():
        bits = (bits << hc.REQUEST_CODES_LENGTH[ch]) | hc.REQUEST_CODES[ch]
        nbits += hc.REQUEST_CODES_LENGTH[ch]
    return bits, nbits


def bits_to_bytes(bits, nbits, pad_one=True):
    """Pads the bit string to a whole byte, with 1s (the EOS prefix, RFC 7541 §5.2) or 0s."""
    pad = (-nbits) % 8
    bits = (bits << pad) | (((1 << pad) - 1) if pad_one else 0)
    return (bits).to_bytes((nbits + pad) // 8, "big")


def hp_str(text, huffman=False):
    """A string literal: H bit, 7-bit prefix length, octets."""
    if huffman:
        data = bits_to_bytes(*huffman_bits(text))
        return hp_int(len(data), 7, 0x80) + data
    data = text.encode()
    return hp_int(len(data), 7) + data


def hp_huffman_raw(data):
    """A Huffman string literal whose octets are given as they are (broken encodings)."""
    return hp_int(len(data), 7, 0x80) + data


# ---- events ------------------------------------------------------------------------------------

class Event:
    """A frame received. kind is 'frame'; CLOSED and TIMEOUT are the other two events."""

    def __init__(self, kind, ftype=None, flags=0, sid=0, payload=b"", frame=None):
        self.kind, self.type, self.flags, self.sid = kind, ftype, flags, sid
        self.payload, self.frame = payload, frame
        self.code = None  # GOAWAY / RST_STREAM error code
        self.headers = None  # decoded response header list (HEADERS)
        if kind != "frame":
            return
        if ftype == GOAWAY and len(payload) >= 8:
            self.code = struct.unpack(">I", payload[4:8])[0]
        elif ftype == RST_STREAM and len(payload) == 4:
            self.code = struct.unpack(">I", payload)[0]

    @property
    def name(self):
        if self.kind != "frame":
            return self.kind
        return TYPE_NAMES[self.type] if self.type < len(TYPE_NAMES) else "type 0x%x" % self.type

    def ended(self):
        return self.kind == "frame" and self.type in (DATA, HEADERS) and self.flags & F_END_STREAM

    def __str__(self):
        if self.kind != "frame":
            return self.kind
        s = "%s(sid=%d" % (self.name, self.sid)
        if self.code is not None:
            s += ", %s" % err_name(self.code)
        if self.type == DATA:
            s += ", len=%d" % len(self.payload)
        if self.type in (SETTINGS, PING) and self.flags & F_ACK:
            s += ", ACK"
        if self.headers:
            status = [v for k, v in self.headers if k == ":status"]
            if status:
                s += ", :status %s" % status[0]
        if self.type in (DATA, HEADERS) and self.flags & F_END_STREAM:
            s += ", END_STREAM"
        return s + ")"


CLOSED = Event("closed")
TIMEOUT = Event("timeout")


class Conn:
    def __init__(self, cfg):
        self.cfg = cfg
        self.closed = False
        self.buf = b""
        self.seen = []  # every event, for the reason text
        self.settings = {}  # the server's SETTINGS
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.dec.max_header_list_size = 1 << 24
        self.pending = {}  # sid -> header block fragments until END_HEADERS
        self.window = DEFAULT_WINDOW  # connection window we granted, refilled as DATA arrives
        self.auto_window = True
        try:
            sock = socket.create_connection((cfg.host, cfg.port), timeout=max(cfg.timeout, 2))
        except OSError as e:
            raise Fail("cannot connect to %s:%d: %s" % (cfg.host, cfg.port, e))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if cfg.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE  # the servers under test use self-signed certificates
            ctx.set_alpn_protocols(["h2"])
            try:
                sock = ctx.wrap_socket(sock, server_hostname=cfg.host)
            except (OSError, ssl.SSLError) as e:
                raise Fail("TLS handshake failed: %s" % e)
            if sock.selected_alpn_protocol() != "h2":
                raise Fail("ALPN did not select h2 (got %r)" % sock.selected_alpn_protocol())
        self.sock = sock

    # ---- sending -----------------------------------------------------------------------------

    def send(self, data):
        if isinstance(data, hf.Frame):
            data = data.serialize()
        try:
            self.sock.sendall(data)
        except OSError:
            pass  # the server may have closed already; what it sent before still gets read

    def encode(self, headers):
        return self.enc.encode(headers)

    def common_headers(self, method="GET"):
        return [(":method", method), (":scheme", "https" if self.cfg.tls else "http"),
                (":path", self.cfg.path), (":authority", self.cfg.authority)]

    def dummy_headers(self, n):
        v = "x" * self.cfg.max_header_len
        return [("x-dummy%d" % i, v) for i in range(n)]

    def headers(self, sid, block, end_stream=True, end_headers=True, pad=None, priority=None):
        f = hf.HeadersFrame(sid, data=block)
        if end_stream:
            f.flags.add("END_STREAM")
        if end_headers:
            f.flags.add("END_HEADERS")
        if pad is not None:
            f.flags.add("PADDED")
            f.pad_length = pad
        if priority is not None:
            dep, weight, excl = priority
            f.flags.add("PRIORITY")
            f.depends_on, f.stream_weight, f.exclusive = dep, weight, excl
        self.send(f)

    def request(self, sid, method="GET", end_stream=True, extra=()):
        self.headers(sid, self.encode(self.common_headers(method) + list(extra)), end_stream)

    def data(self, sid, payload, end_stream=True, pad=None):
        f = hf.DataFrame(sid, data=payload)
        if end_stream:
            f.flags.add("END_STREAM")
        if pad is not None:
            f.flags.add("PADDED")
            f.pad_length = pad
        self.send(f)

    def continuation(self, sid, block, end_headers=True):
        self.send(raw(CONTINUATION, F_END_HEADERS if end_headers else 0, sid, block))

    def priority(self, sid, dep=0, weight=255, exclusive=False):
        self.send(hf.PriorityFrame(sid, depends_on=dep, stream_weight=weight, exclusive=exclusive))

    def rst(self, sid, code=CANCEL):
        self.send(raw(RST_STREAM, 0, sid, struct.pack(">I", code)))

    def settings_frame(self, *pairs):
        self.send(raw(SETTINGS, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs)))

    def ping(self, data=b"\0" * 8, ack=False):
        self.send(raw(PING, F_ACK if ack else 0, 0, data))

    def window_update(self, sid, incr):
        self.send(raw(WINDOW_UPDATE, 0, sid, struct.pack(">I", incr)))

    def goaway(self, last=0, code=NO_ERROR, debug=b""):
        self.send(raw(GOAWAY, 0, 0, struct.pack(">II", last, code) + debug))

    # ---- receiving ---------------------------------------------------------------------------

    def _parse(self, head, body):
        ftype, flags = head[3], head[4]
        sid = struct.unpack(">I", head[5:9])[0] & 0x7FFFFFFF
        frame = None
        try:
            frame, _ = hf.Frame.parse_frame_header(memoryview(head))
            frame.parse_body(memoryview(body))
        except Exception:  # hyperframe refuses a malformed frame: keep it raw
            frame = None
        ev = Event("frame", ftype, flags, sid, body, frame)
        if ftype == DATA and frame is not None:
            ev.payload = bytes(frame.data)
        if ftype in (HEADERS, CONTINUATION) and (frame is not None or ftype == CONTINUATION):
            frag = bytes(frame.data) if frame is not None else body
            self.pending.setdefault(sid, []).append(frag)
            if flags & F_END_HEADERS:
                block = b"".join(self.pending.pop(sid))
                try:
                    ev.headers = [(k.decode() if isinstance(k, bytes) else k,
                                   v.decode() if isinstance(v, bytes) else v)
                                  for k, v in self.dec.decode(block, raw=True)]
                except Exception:
                    ev.headers = None
        return ev

    def event(self, timeout=None):
        """The next event: a frame, CLOSED or TIMEOUT (both end the connection for the case)."""
        if self.closed:
            return CLOSED
        wait = self.cfg.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            if len(self.buf) >= 9:
                n = int.from_bytes(self.buf[:3], "big")
                if len(self.buf) >= 9 + n:
                    head, body = self.buf[:9], self.buf[9 : 9 + n]
                    self.buf = self.buf[9 + n :]
                    ev = self._parse(head, body)
                    self._auto(ev)
                    self.seen.append(ev)
                    return ev
            left = deadline - time.monotonic()
            if left <= 0:
                self.closed = True
                self.seen.append(TIMEOUT)
                return TIMEOUT
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except (socket.timeout, ssl.SSLWantReadError):
                continue
            except (OSError, ssl.SSLError):
                chunk = b""
            if not chunk:
                self.closed = True
                self.seen.append(CLOSED)
                return CLOSED
            self.buf += chunk

    def _auto(self, ev):
        """ACKs the server's SETTINGS and keeps the connection window open, as h2spec does."""
        if ev.type == SETTINGS and not ev.flags & F_ACK:
            for i in range(0, len(ev.payload) - 5, 6):
                k, v = struct.unpack(">HI", ev.payload[i : i + 6])
                self.settings[k] = v
            self.send(raw(SETTINGS, F_ACK, 0))
        elif ev.type == DATA and self.auto_window and ev.payload:
            self.window -= len(ev.payload)
            if self.window < DEFAULT_WINDOW // 2:
                self.window_update(0, DEFAULT_WINDOW - self.window)
                self.window = DEFAULT_WINDOW

    def handshake(self, settings=((S_INITIAL_WINDOW_SIZE, DEFAULT_WINDOW),)):
        """Preface and SETTINGS; returns once the server's SETTINGS and its ACK of ours came."""
        self.send(PREFACE + raw(SETTINGS, 0, 0,
                                b"".join(struct.pack(">HI", k, v) for k, v in settings)))
        got_settings = got_ack = False
        while not (got_settings and got_ack):
            ev = self.event()
            if ev.kind != "frame":
                raise Fail("handshake: %s before the server's SETTINGS and ACK (%s)"
                           % (ev.kind, self.trace()))
            if ev.type == SETTINGS:
                if ev.flags & F_ACK:
                    got_ack = True
                else:
                    got_settings = True
        self.seen.clear()

    def max_frame_size(self):
        return self.settings.get(S_MAX_FRAME_SIZE, DEFAULT_FRAME_SIZE)

    def trace(self, limit=6):
        evs = [str(e) for e in self.seen]
        if len(evs) > limit:
            evs = evs[: limit - 1] + ["... %d more" % (len(evs) - limit)]
        return ", ".join(evs) if evs else "nothing"

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---- verifiers: each returns (passed, reason) ----------------------------------------------------

def _codes(codes):
    return "/".join(err_name(c) for c in codes)


def _error(c, types, what, codes):
    """Waits for one of the frame types with an error code in codes, or the connection closing."""
    wrong = None
    while True:
        ev = c.event()
        if ev is CLOSED:
            if wrong is not None:
                return c.cfg.lenient, "%s, then closed" % wrong
            return True, "connection closed (%s)" % c.trace()
        if ev is TIMEOUT:
            return False, "expected %s(%s) or close, got %s" % (what, _codes(codes), c.trace())
        if ev.type in types:
            if ev.code in codes:
                return True, str(ev)
            wrong = "%s, expected %s" % (ev, _codes(codes))
            if not c.cfg.lenient:
                return False, wrong


def connection_error(c, *codes):
    """GOAWAY with one of codes, or the connection closed (RFC 9113 §5.4.1)."""
    return _error(c, (GOAWAY,), "GOAWAY", codes)


def stream_error(c, *codes):
    """RST_STREAM or GOAWAY with one of codes, or the connection closed (RFC 9113 §5.4.2)."""
    return _error(c, (GOAWAY, RST_STREAM), "RST_STREAM/GOAWAY", codes)


def headers_frame(c, sid):
    """A HEADERS frame (the response) on stream sid."""
    while True:
        ev = c.event()
        if ev.kind != "frame":
            return False, "expected HEADERS on stream %d, got %s" % (sid, c.trace())
        if ev.type == HEADERS:
            return ev.sid == sid, str(ev)
        if ev.type == GOAWAY or (ev.type == RST_STREAM and ev.sid == sid):
            return False, "expected HEADERS on stream %d, got %s" % (sid, ev)


def ping_ack(c, data, or_close=False):
    """A PING with ACK echoing data (or, with or_close, the connection closed)."""
    while True:
        ev = c.event()
        if ev is CLOSED and or_close:
            return True, "connection closed (%s)" % c.trace()
        if ev.kind != "frame":
            return False, "expected PING ACK, got %s" % c.trace()
        if ev.type == PING:
            if ev.flags & F_ACK and ev.payload == data:
                return True, "PING ACK with the same data"
            if not or_close:
                return False, "PING flags=0x%x data=%r, expected ACK of %r" % (ev.flags,
                                                                              ev.payload, data)
        if ev.type == GOAWAY and not or_close:
            return False, "expected PING ACK, got %s" % ev


def settings_ack(c):
    while True:
        ev = c.event()
        if ev.kind != "frame":
            return False, "expected SETTINGS ACK, got %s" % c.trace()
        if ev.type == SETTINGS:
            return bool(ev.flags & F_ACK), str(ev)
        if ev.type == GOAWAY:
            return False, "expected SETTINGS ACK, got %s" % ev


def frame_of_type(c, ftype):
    while True:
        ev = c.event()
        if ev.kind != "frame":
            return False, "expected %s, got %s" % (TYPE_NAMES[ftype], c.trace())
        if ev.type == ftype:
            return True, str(ev)
        if ev.type == GOAWAY:
            return False, "expected %s, got %s" % (TYPE_NAMES[ftype], ev)


def stream_closed_by_server(c):
    """The response ended: END_STREAM on DATA/HEADERS, or RST_STREAM(NO_ERROR)."""
    while True:
        ev = c.event()
        if ev.kind != "frame":
            return False, "expected the response to end, got %s" % c.trace()
        if ev.ended() or (ev.type == RST_STREAM and ev.code == NO_ERROR):
            return True, str(ev)
        if ev.type == GOAWAY or ev.type == RST_STREAM:
            return False, "expected the response to end, got %s" % ev


def data_length(c, n):
    """The first DATA frame carries exactly n octets (flow control at work)."""
    while True:
        ev = c.event()
        if ev.kind != "frame":
            return False, "expected DATA of length %d, got %s" % (n, c.trace())
        if ev.type == DATA:
            return len(ev.payload) == n, str(ev)
        if ev.type == GOAWAY or ev.type == RST_STREAM:
            return False, "expected DATA of length %d, got %s" % (n, ev)
