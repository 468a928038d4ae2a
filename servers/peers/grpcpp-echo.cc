// grpcpp-echo.cc - the libgrpc++ peer (servers/peers/peers.json "grpcpp"): the methods of
// servers/h2ref/grpc/echo.proto and grpc.health.v1.Health/Check (Debian's grpc-proto), with the
// answers h2ref gives (docs/serve.md, "gRPC"), on Debian's libgrpc++ 1.51 synchronous server.
// Built by CMake from the repository's .proto with protoc and grpc_cpp_plugin when the packages
// are installed (servers/peers/CMakeLists.txt): build/bin/h2bench-grpcpp-echo HOST PORT THREADS.
// Prints "listening on http://HOST:PORT" when ready (PORT 0: the one the kernel chose); SIGTERM
// or SIGINT shuts it down.
#include "echo.grpc.pb.h"
#include "health.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

constexpr int kMax = 4 << 20;

class Echo final : public h2bench::Echo::Service {
    grpc::Status Unary(grpc::ServerContext *, const h2bench::EchoMessage *req,
                       h2bench::EchoMessage *res) override
    {
        *res = *req;
        return grpc::Status::OK;
    }

    grpc::Status ServerStream(grpc::ServerContext *, const h2bench::StreamRequest *req,
                              grpc::ServerWriter<h2bench::EchoMessage> *w) override
    {
        if (req->count() > 1000000 || req->size() > kMax - 16)
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                "count over 1000000 or size over 4194288");
        h2bench::EchoMessage m;
        std::string *p = m.mutable_payload();
        p->resize(req->size());
        for (uint32_t i = 0; i < req->size(); i++)
            (*p)[i] = static_cast<char>(i & 0xff);
        for (uint32_t i = 0; i < req->count(); i++)
            if (!w->Write(m))
                break;
        return grpc::Status::OK;
    }

    grpc::Status ClientStream(grpc::ServerContext *, grpc::ServerReader<h2bench::EchoMessage> *r,
                              h2bench::StreamSummary *res) override
    {
        uint64_t n = 0, bytes = 0, h = 0xcbf29ce484222325ull;
        h2bench::EchoMessage m;
        std::string wire;
        while (r->Read(&m)) {
            wire.clear();
            m.SerializeToString(&wire); // the message's bytes as sent (one field: canonical)
            n++;
            bytes += wire.size();
            for (unsigned char c : wire)
                h = (h ^ c) * 0x100000001b3ull;
        }
        res->set_messages(n);
        res->set_bytes(bytes);
        res->set_fnv1a(h);
        return grpc::Status::OK;
    }

    grpc::Status Bidi(grpc::ServerContext *,
                      grpc::ServerReaderWriter<h2bench::EchoMessage, h2bench::EchoMessage> *s) override
    {
        h2bench::EchoMessage m;
        while (s->Read(&m))
            if (!s->Write(m))
                break;
        return grpc::Status::OK;
    }
};

class Health final : public grpc::health::v1::Health::Service {
    grpc::Status Check(grpc::ServerContext *, const grpc::health::v1::HealthCheckRequest *req,
                       grpc::health::v1::HealthCheckResponse *res) override
    {
        if (!req->service().empty() && req->service() != "h2bench.Echo")
            return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service");
        res->set_status(grpc::health::v1::HealthCheckResponse::SERVING);
        return grpc::Status::OK;
    }
};

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

} // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: h2bench-grpcpp-echo HOST PORT THREADS\n");
        return 2;
    }
    char *end = nullptr;
    long port = std::strtol(argv[2], &end, 10);
    long threads = std::strtol(argv[3], nullptr, 10);
    if (!end || *end || port < 0 || port > 65535 || threads < 1 || threads > 1024) {
        std::fprintf(stderr, "h2bench-grpcpp-echo: bad PORT or THREADS\n");
        return 2;
    }
    Echo echo;
    Health health;
    int bound = 0;
    grpc::ServerBuilder b;
    b.AddListeningPort(std::string(argv[1]) + ":" + argv[2], grpc::InsecureServerCredentials(),
                       &bound);
    b.RegisterService(&echo);
    b.RegisterService(&health);
    b.SetMaxReceiveMessageSize(kMax);
    b.SetMaxSendMessageSize(kMax + 64);
    b.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, static_cast<int>(threads));
    b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    std::unique_ptr<grpc::Server> server = b.BuildAndStart();
    if (!server || bound == 0) {
        std::fprintf(stderr, "h2bench-grpcpp-echo: cannot listen on %s:%s\n", argv[1], argv[2]);
        return 1;
    }
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    std::printf("listening on http://%s:%d\n", argv[1], bound);
    std::fflush(stdout);
    while (!g_stop)
        usleep(100000);
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    return 0;
}
