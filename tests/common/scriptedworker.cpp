// SPDX-License-Identifier: GPL-3.0-or-later
//
// A stand-in for rankdeck-worker that speaks the real wire protocol (core/wire/wireprotocol.h)
// and the real launch contract (torchrun environment, MASTER_PORT=0 on rank 0, the control
// channel on stdin) without libtorch, so that the run controller's state machine and failure
// policy can be tested in seconds and deterministically. It really binds the store port on
// rank 0 and the other ranks really connect to it, so a wrong port fails the test.
//
// Flags: --steps N  --step-delay-ms N  --lines-per-step N
//        --fail-rank R --fail-at STEP --fail MODE   (MODE: exit:N  error  peer-error  kill
//                                                    hang  silent  before-store)
//        --ts-offset-ms N   (the failure event claims to be N ms older/younger)
//        --ignore-stop      (ignore `stop` and SIGTERM: the launcher must SIGKILL)
//        --spawn-child      (start a child process in the rank's group)
//        --fail-unless-resume  (fail at --fail-at unless --resume was passed)
//        --peer-echo        (rank 0 reports "Connection closed by peer" when another rank dies,
//                            like Gloo; --peer-ts-offset-ms N shifts that report's timestamp)
//        --resume --control-stdin --run-dir DIR …  (accepted; other worker flags are ignored)
#include "wire/wireprotocol.h"

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using rankdeck::wire::WireEventWriter;
namespace ev = rankdeck::wire::event;

std::mutex g_out;
std::atomic<bool> g_stop{false};
std::atomic<bool> g_silent{false};
std::atomic<long> g_step{0};
std::atomic<bool> g_dump{false};
int g_rank = 0;

long long nowUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void emit(const std::string &line)
{
    std::lock_guard<std::mutex> lock(g_out);
    const char *p = line.data();
    size_t left = line.size();
    while (left > 0) {
        const ssize_t n = ::write(1, p, left);
        if (n <= 0)
            return;
        p += n;
        left -= size_t(n);
    }
}

void say(const std::string &text)
{
    emit(text + "\n");
}

std::string arg(int argc, char **argv, const char *name, const char *fallback = "")
{
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return fallback;
}

bool flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0)
            return true;
    return false;
}

int envInt(const char *name, int fallback)
{
    const char *v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

void sendStacks(const char *reason)
{
    emit(WireEventWriter(ev::Stacks, g_rank, nowUs())
             .addString("reason", reason)
             .addString("stack", "thread 1 (main):\n#0 0x1 in scripted::waitForPeers() at "
                                 "scriptedworker.cpp:1 [scriptedworker]")
             .line());
}

} // namespace

int main(int argc, char **argv)
{
    g_rank = envInt("RANK", -1);
    const int world = envInt("WORLD_SIZE", -1);
    const char *portEnv = std::getenv("MASTER_PORT");
    if (g_rank < 0 || world < 1 || !portEnv || !std::getenv("MASTER_ADDR") ||
        !std::getenv("RANKDECK_RUN_ID") || !std::getenv("LOCAL_RANK") ||
        !std::getenv("GROUP_RANK")) {
        std::fprintf(stderr, "scriptedworker: torchrun environment incomplete\n");
        return 2;
    }
    const int steps = std::atoi(arg(argc, argv, "--steps", "5").c_str());
    const int delayMs = std::atoi(arg(argc, argv, "--step-delay-ms", "20").c_str());
    const int linesPerStep = std::atoi(arg(argc, argv, "--lines-per-step", "1").c_str());
    const int failRank = std::atoi(arg(argc, argv, "--fail-rank", "-1").c_str());
    const int failAt = std::atoi(arg(argc, argv, "--fail-at", "-1").c_str());
    const std::string failMode = arg(argc, argv, "--fail", "");
    const long long tsOffsetUs = std::atoll(arg(argc, argv, "--ts-offset-ms", "0").c_str()) * 1000;
    const bool ignoreStop = flag(argc, argv, "--ignore-stop");
    const bool failUnlessResume = flag(argc, argv, "--fail-unless-resume");
    const bool resumed = flag(argc, argv, "--resume");
    const bool iFail = g_rank == failRank && !(failUnlessResume && resumed);

    if (ignoreStop)
        std::signal(SIGTERM, SIG_IGN);
    // Like the real worker: SIGUSR1 asks for a stack dump (an atomic store is signal-safe).
    std::signal(SIGUSR1, [](int) { g_dump = true; });
    if (flag(argc, argv, "--spawn-child")) {
        if (::fork() == 0) {
            ::execlp("sleep", "sleep", "300", static_cast<char *>(nullptr));
            _exit(127);
        }
    }

    emit(WireEventWriter(ev::Hello, g_rank, nowUs())
             .addInt("proto", 1)
             .addString("host", "scripted")
             .addInt("pid", ::getpid())
             .addInt("local_rank", envInt("LOCAL_RANK", 0))
             .addInt("world_size", world)
             .addString("device", "cpu")
             .addString("backend", "gloo")
             .addString("task", "scripted")
             .addInt("total_steps", steps)
             .line());
    say("rank " + std::to_string(g_rank) + " MASTER_PORT=" + portEnv +
        " RUN=" + std::getenv("RANKDECK_RUN_ID"));

    // Control channel and heartbeats, like the real worker.
    std::thread([] {
        std::string line;
        char c;
        while (::read(0, &c, 1) == 1) {
            if (c != '\n') {
                line += c;
                continue;
            }
            if (line == "stop")
                g_stop = true;
            else if (line == "dump-stacks")
                g_dump = true;
            line.clear();
        }
        g_stop = true; // end of stdin: the launcher is gone
    }).detach();
    std::thread([] {
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            if (g_dump.exchange(false))
                sendStacks("dump-stacks");
            if (!g_silent)
                emit(WireEventWriter(ev::Heartbeat, g_rank, nowUs())
                         .addInt("step", g_step.load())
                         .line());
        }
    }).detach();

    auto failNow = [&](long step) -> int {
        say("rank " + std::to_string(g_rank) + " failing at step " + std::to_string(step) +
            " with " + failMode);
        if (failMode.rfind("exit:", 0) == 0)
            std::_Exit(std::atoi(failMode.c_str() + 5));
        if (failMode == "error" || failMode == "peer-error") {
            const char *msg = failMode == "error" ? "scripted failure: bad batch"
                                                  : "Connection closed by peer [127.0.0.1]:1234";
            emit(WireEventWriter(ev::Error, g_rank, nowUs() + tsOffsetUs)
                     .addString("msg", msg)
                     .addInt("exit_code", 1)
                     .line());
            std::fprintf(stderr, "error: %s\n", msg);
            std::_Exit(1);
        }
        if (failMode == "kill")
            ::raise(SIGKILL);
        return 0;
    };

    int listenFd = -1;
    int port = std::atoi(portEnv);
    if (g_rank == 0) {
        if (iFail && failMode.rfind("before-store", 0) == 0) {
            say("rank 0 dies before binding the store");
            return 3;
        }
        if (port != 0) {
            std::fprintf(stderr, "scriptedworker: rank 0 expects MASTER_PORT=0, got %d\n", port);
            return 2;
        }
        listenFd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        socklen_t len = sizeof a;
        if (::bind(listenFd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
            ::listen(listenFd, 64) != 0 ||
            ::getsockname(listenFd, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
            std::perror("scriptedworker: bind");
            return 1;
        }
        port = ntohs(a.sin_port);
        emit(WireEventWriter(ev::Store, 0, nowUs()).addInt("port", port).line());
        std::vector<int> peers;
        for (int i = 1; i < world; ++i) {
            const int c = ::accept(listenFd, nullptr, nullptr);
            if (c < 0)
                return 1;
            peers.push_back(c);
        }
        if (flag(argc, argv, "--peer-echo")) {
            const long long echoOffsetUs =
                std::atoll(arg(argc, argv, "--peer-ts-offset-ms", "0").c_str()) * 1000;
            for (int fd : peers) {
                std::thread([fd, echoOffsetUs] {
                    char b;
                    while (::read(fd, &b, 1) > 0) {
                    }
                    const char *msg = "Connection closed by peer [127.0.0.1]:29500";
                    emit(WireEventWriter(ev::Error, g_rank, nowUs() + echoOffsetUs)
                             .addString("msg", msg)
                             .addInt("exit_code", 1)
                             .line());
                    std::_Exit(1);
                }).detach();
            }
        }
    } else {
        if (port <= 0) {
            std::fprintf(stderr, "scriptedworker: rank %d started without the store port\n",
                         g_rank);
            return 2;
        }
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(uint16_t(port));
        ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
            std::fprintf(stderr, "scriptedworker: cannot reach the store on port %d\n", port);
            return 1;
        }
        // Kept open for the whole run: rank 0 notices this rank's death through it.
    }
    emit(WireEventWriter(ev::Rendezvous, g_rank, nowUs())
             .addInt("duration_ms", 1)
             .addString("backend", "gloo")
             .addInt("world_size", world)
             .line());

    long step = 0;
    for (; step < steps; ++step) {
        if (g_stop && !ignoreStop)
            break;
        if (iFail && step == failAt) {
            if (failMode == "hang" || failMode == "silent") {
                if (failMode == "silent")
                    g_silent = true;
                say("rank " + std::to_string(g_rank) + " stops making progress");
                for (;;) {
                    if (g_stop && !ignoreStop)
                        break;
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
                break;
            }
            failNow(step);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
        const double loss = 1.0 / double(step + 1 + g_rank);
        for (int l = 0; l < linesPerStep; ++l)
            say("Rank " + std::to_string(g_rank) + ": Epoch 0, Loss " + std::to_string(loss) +
                " line " + std::to_string(l));
        // Like the real worker, `step` counts completed steps (1 after the first).
        emit(WireEventWriter(ev::Step, g_rank, nowUs())
                 .addInt("step", step + 1)
                 .addInt("epoch", 0)
                 .addDouble("loss", loss)
                 .addDouble("lr", 0.1)
                 .addDouble("samples_per_s", 100.0)
                 .line());
        g_step = step + 1;
    }
    if (g_stop)
        emit(WireEventWriter(ev::Stopping, g_rank, nowUs())
                 .addString("reason", "stdin-stop")
                 .line());
    emit(WireEventWriter(ev::Finished, g_rank, nowUs())
             .addInt("step", step)
             .addInt("duration_ms", 1)
             .line());
    say("rank " + std::to_string(g_rank) + " done");
    if (listenFd >= 0)
        ::close(listenFd);
    return 0;
}
