// grpcpp-client.cc - a libgrpc++ client of the methods of servers/h2ref/grpc/echo.proto and
// grpc.health.v1.Health/Check (tests/integration/grpc_interop.sh): the grpc++ side of issue 35's
// "gRPC clients call h2ref", beside the python3-grpcio client (grpc_client.py), on Debian's
// libgrpc++ 1.51 synchronous stubs. Built with the grpc++ echo peer when CMake finds grpc++ and
// protobuf (servers/peers/CMakeLists.txt): build/bin/h2bench-grpcpp-client HOST:PORT.
//
// Calls unary (empty to 70000 bytes, a 4 MiB message, one byte over it), server-streaming,
// client-streaming, bidirectional (ping-pong and a burst), a call whose deadline expires, error
// statuses and the health check; checks every message's content and every status; prints one
// "ok NAME: detail" or "FAIL NAME: detail" line per check and exits 1 if any failed (2: usage).
// Every call carries a deadline, so a server that never answers fails the check, not the run.
#include "echo.grpc.pb.h"
#include "health.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kMax = 4 << 20;
int g_fails = 0;

void report(bool good, const std::string &name, const std::string &detail)
{
    std::printf("%s %s: %s\n", good ? "ok" : "FAIL", name.c_str(), detail.c_str());
    std::fflush(stdout);
    if (!good)
        g_fails++;
}

// The payloads grpc_client.py sends: byte i is (seed * 31 + i * 7) mod 256.
std::string payload(size_t n, unsigned seed)
{
    std::string s(n, '\0');
    for (size_t i = 0; i < n; i++)
        s[i] = static_cast<char>((seed * 31 + i * 7) & 0xff);
    return s;
}

// What ServerStream generates: byte i is i mod 256.
std::string pattern(size_t n)
{
    std::string s(n, '\0');
    for (size_t i = 0; i < n; i++)
        s[i] = static_cast<char>(i & 0xff);
    return s;
}

uint64_t fnv1a(const std::string &data, uint64_t h = 0xcbf29ce484222325ull)
{
    for (unsigned char c : data)
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

void deadline(grpc::ClientContext *ctx, int ms)
{
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
}

std::string status_text(const grpc::Status &st)
{
    return std::to_string(static_cast<int>(st.error_code())) + " " + st.error_message();
}

h2bench::EchoMessage echo_msg(const std::string &p)
{
    h2bench::EchoMessage m;
    m.set_payload(p);
    return m;
}

void unary(h2bench::Echo::Stub *stub)
{
    std::string bad;
    for (size_t n : {0, 1, 100, 16384, 70000}) {
        grpc::ClientContext ctx;
        deadline(&ctx, 30000);
        h2bench::EchoMessage res;
        std::string p = payload(n, static_cast<unsigned>(n));
        grpc::Status st = stub->Unary(&ctx, echo_msg(p), &res);
        if (!st.ok() || res.payload() != p)
            bad +=
                " " + std::to_string(n) + (st.ok() ? " (differs)" : " (" + status_text(st) + ")");
    }
    report(bad.empty(), "unary", bad.empty() ? "5 sizes echoed byte for byte" : "sizes" + bad);

    // 4 MiB, the largest message the servers take: 1 tag + 4-byte varint + payload
    h2bench::EchoMessage big = echo_msg(payload(kMax - 5, 3));
    {
        grpc::ClientContext ctx;
        deadline(&ctx, 120000);
        h2bench::EchoMessage res;
        grpc::Status st = stub->Unary(&ctx, big, &res);
        bool same = st.ok() && res.payload() == big.payload();
        report(big.ByteSizeLong() == kMax && same, "unary-4MiB",
               "message " + std::to_string(big.ByteSizeLong()) + " bytes " +
                   (same      ? "echoed"
                    : st.ok() ? "differs"
                              : status_text(st)));
    }
    // one byte more: the server refuses it with RESOURCE_EXHAUSTED
    {
        grpc::ClientContext ctx;
        deadline(&ctx, 120000);
        h2bench::EchoMessage res;
        grpc::Status st = stub->Unary(&ctx, echo_msg(payload(kMax - 4, 3)), &res);
        report(st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED, "unary-over-max",
               status_text(st));
    }
}

void server_stream(h2bench::Echo::Stub *stub)
{
    const struct {
        uint32_t count, size;
    } cases[] = {{5, 1000}, {3, 100000}, {0, 10}, {200, 0}};
    for (const auto &c : cases) {
        grpc::ClientContext ctx;
        deadline(&ctx, 60000);
        h2bench::StreamRequest req;
        req.set_count(c.count);
        req.set_size(c.size);
        auto r = stub->ServerStream(&ctx, req);
        const std::string want = pattern(c.size);
        h2bench::EchoMessage m;
        uint32_t got = 0, same = 0;
        while (r->Read(&m)) {
            got++;
            same += m.payload() == want;
        }
        grpc::Status st = r->Finish();
        report(st.ok() && got == c.count && same == got,
               "server-stream-" + std::to_string(c.count) + "x" + std::to_string(c.size),
               std::to_string(got) + " messages, " + std::to_string(same) + " of the pattern, " +
                   status_text(st));
    }
    // an error status: more messages than the service answers
    grpc::ClientContext ctx;
    deadline(&ctx, 30000);
    h2bench::StreamRequest req;
    req.set_count(2000000);
    req.set_size(1);
    auto r = stub->ServerStream(&ctx, req);
    h2bench::EchoMessage m;
    uint32_t got = 0;
    while (r->Read(&m))
        got++;
    grpc::Status st = r->Finish();
    report(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT && got == 0,
           "server-stream-too-many", std::to_string(got) + " messages, " + status_text(st));
}

// Client streaming through the asynchronous stub: the synchronous ClientWriter::Finish of
// libgrpc++ 1.51 aborts the process (an assertion) when the answer is not one message that
// parses, and a check must fail, not crash the client.
void client_stream(h2bench::Echo::Stub *stub)
{
    for (bool empty : {false, true}) {
        grpc::ClientContext ctx;
        // a server that answers several messages leaves the status unread until the deadline
        deadline(&ctx, 10000);
        grpc::CompletionQueue cq;
        h2bench::StreamSummary sum;
        void *tag;
        bool ok = false;
        auto w = stub->AsyncClientStream(&ctx, &sum, &cq, nullptr);
        bool alive = cq.Next(&tag, &ok) && ok; // the call started
        std::string wire;
        uint64_t n = 0;
        if (!empty)
            for (size_t len : {0, 5, 1000, 40000, 3, 20000}) {
                h2bench::EchoMessage m = echo_msg(payload(len, static_cast<unsigned>(len)));
                wire += m.SerializeAsString();
                n++;
                if (alive) {
                    w->Write(m, nullptr);
                    alive = cq.Next(&tag, &ok) && ok;
                }
            }
        if (alive) {
            w->WritesDone(nullptr);
            cq.Next(&tag, &ok);
        }
        grpc::Status st(grpc::StatusCode::UNKNOWN, "the call did not finish");
        w->Finish(&st, nullptr);
        bool finished = cq.Next(&tag, &ok) && ok;
        cq.Shutdown();
        while (cq.Next(&tag, &ok))
            ;
        bool good = finished && st.ok() && sum.messages() == n && sum.bytes() == wire.size() &&
                    sum.fnv1a() == fnv1a(wire);
        char detail[160];
        std::snprintf(
            detail, sizeof detail, "messages %llu bytes %llu fnv %llx (want %llu %zu %llx)",
            static_cast<unsigned long long>(sum.messages()),
            static_cast<unsigned long long>(sum.bytes()),
            static_cast<unsigned long long>(sum.fnv1a()), static_cast<unsigned long long>(n),
            wire.size(), static_cast<unsigned long long>(fnv1a(wire)));
        report(good, empty ? "client-stream-empty" : "client-stream",
               std::string(detail) + ", " + status_text(st));
    }
}

void bidi(h2bench::Echo::Stub *stub)
{
    { // ping-pong: each message goes after the previous echo came back; none is empty, so a
        // server that flips each DATA frame's last byte (fakepeer.py grpcwrong) flips payload
        // bytes and the wrong echo comes back at once, not at the deadline
        grpc::ClientContext ctx;
        deadline(&ctx, 60000);
        auto s = stub->Bidi(&ctx);
        int same = 0, sent = 0;
        h2bench::EchoMessage m;
        for (unsigned i = 0; i < 20; i++) {
            std::string p = payload(1 + i * 997, i);
            if (!s->Write(echo_msg(p)))
                break;
            sent++;
            if (!s->Read(&m))
                break;
            same += m.payload() == p;
        }
        s->WritesDone();
        while (s->Read(&m))
            same = -1000; // an echo nobody asked for
        grpc::Status st = s->Finish();
        report(st.ok() && same == 20, "bidi-pingpong",
               std::to_string(same < 0 ? 0 : same) + " of " + std::to_string(sent) +
                   " messages echoed in order, " + status_text(st));
    }
    { // a burst: every message written before any is read
        grpc::ClientContext ctx;
        deadline(&ctx, 60000);
        auto s = stub->Bidi(&ctx);
        std::vector<std::string> sent;
        for (unsigned n = 0; n < 60000; n += 3001) {
            sent.push_back(payload(n, n));
            if (!s->Write(echo_msg(sent.back())))
                break;
        }
        s->WritesDone();
        size_t got = 0, same = 0;
        h2bench::EchoMessage m;
        while (s->Read(&m)) {
            same += got < sent.size() && m.payload() == sent[got];
            got++;
        }
        grpc::Status st = s->Finish();
        report(st.ok() && got == sent.size() && same == got, "bidi-burst",
               std::to_string(same) + " of " + std::to_string(got) + " messages (sent " +
                   std::to_string(sent.size()) + "), " + status_text(st));
    }
}

// A bidi call held open past its 300 ms deadline: its one echo comes back, then
// DEADLINE_EXCEEDED.
void deadline_call(h2bench::Echo::Stub *stub)
{
    grpc::ClientContext ctx;
    deadline(&ctx, 300);
    auto s = stub->Bidi(&ctx);
    std::vector<std::string> got;
    h2bench::EchoMessage m;
    if (s->Write(echo_msg("first")))
        while (s->Read(&m))
            got.push_back(m.payload());
    grpc::Status st = s->Finish();
    report(st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && got.size() == 1 &&
               got[0] == "first",
           "deadline", status_text(st) + " after " + std::to_string(got.size()) + " message(s)");
}

void health(grpc::health::v1::Health::Stub *stub)
{
    using grpc::health::v1::HealthCheckRequest;
    using grpc::health::v1::HealthCheckResponse;
    std::string detail;
    bool good = true;
    for (const char *svc : {"", "h2bench.Echo"}) {
        grpc::ClientContext ctx;
        deadline(&ctx, 10000);
        HealthCheckRequest req;
        req.set_service(svc);
        HealthCheckResponse res;
        grpc::Status st = stub->Check(&ctx, req, &res);
        good = good && st.ok() && res.status() == HealthCheckResponse::SERVING;
        detail += std::string(detail.empty() ? "" : ", ") + "'" + svc + "' " + status_text(st) +
                  " status " + std::to_string(static_cast<int>(res.status()));
    }
    report(good, "health", detail);
    grpc::ClientContext ctx;
    deadline(&ctx, 10000);
    HealthCheckRequest req;
    req.set_service("nope");
    HealthCheckResponse res;
    grpc::Status st = stub->Check(&ctx, req, &res);
    report(st.error_code() == grpc::StatusCode::NOT_FOUND, "health-unknown", status_text(st));
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2 || !argv[1][0]) {
        std::fprintf(stderr, "usage: h2bench-grpcpp-client HOST:PORT\n");
        return 2;
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMax + 64);
    args.SetMaxSendMessageSize(kMax + 64);
    std::shared_ptr<grpc::Channel> ch =
        grpc::CreateCustomChannel(argv[1], grpc::InsecureChannelCredentials(), args);
    auto echo = h2bench::Echo::NewStub(ch);
    auto hc = grpc::health::v1::Health::NewStub(ch);
    unary(echo.get());
    server_stream(echo.get());
    client_stream(echo.get());
    bidi(echo.get());
    deadline_call(echo.get());
    health(hc.get());
    return g_fails ? 1 : 0;
}
