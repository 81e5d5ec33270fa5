// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: Supervisor is the supervisor process's one event
// loop (environment, start, signals, control input, reaping, the end); what it decides about
// the program is in the parts it calls (ProgramDiagnostics, WarmStartClient, …).
#include "supervisor/programsupervisor.h"

#include "supervisor/eventfilefollower.h"
#include "supervisor/flightrecorderdumper.h"
#include "supervisor/portreservation.h"
#include "supervisor/privatedirectory.h"
#include "supervisor/processtree.h"
#include "supervisor/programdiagnostics.h"
#include "supervisor/pythonmodule.h"
#include "supervisor/stacksampler.h"
#include "supervisor/storeproxy.h"
#include "supervisor/wallclock.h"
#include "supervisor/warmstartclient.h"
#include "wire/wireprotocol.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#ifndef RANKDECK_VERSION
#define RANKDECK_VERSION "0"
#endif

namespace rankdeck::supervisor {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kHeartbeatInterval = std::chrono::milliseconds(500);
constexpr auto kTensorBoardInterval = std::chrono::milliseconds(250);

int envInt(const char *name, int fallback)
{
    const char *v = std::getenv(name);
    if (!v || !*v)
        return fallback;
    char *end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return end && *end == '\0' ? int(n) : fallback;
}

void setDefault(const char *name, const std::string &value)
{
    const char *v = std::getenv(name);
    if (!v || !*v)
        setenv(name, value.c_str(), 1);
}

// One whole event line in one write(), retried on EINTR and short writes (a pipe write of up
// to PIPE_BUF bytes is atomic; longer ones are rare: stop reasons and exit messages are short).
void writeAll(int fd, std::string_view data)
{
    while (!data.empty()) {
        const ssize_t n = write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        data.remove_prefix(size_t(n));
    }
}

// Ends the supervisor by `sig` (default action, unblocked, no core file of its own), so that
// whoever waits for it sees that signal; returns 128 + sig should it survive.
int endBySignal(int sig)
{
    const rlimit noCore{0, 0};
    setrlimit(RLIMIT_CORE, &noCore);
    signal(sig, SIG_DFL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
    raise(sig);
    return 128 + sig;
}

std::string signalName(int sig)
{
    if (const char *abbrev = sigabbrev_np(sig))
        return std::string("SIG") + abbrev;
    return "signal " + std::to_string(sig);
}

class Supervisor
{
public:
    explicit Supervisor(const SupervisorOptions &options) : m_options(options)
    {
        m_rank = envInt("RANK", 0);
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        m_host = host;
        const std::string &program = m_options.command.front();
        const size_t slash = program.rfind('/');
        m_programName = slash == std::string::npos ? program : program.substr(slash + 1);
    }

    int run();

private:
    void emit(const wire::WireEventWriter &event) { writeAll(STDOUT_FILENO, event.line()); }
    wire::WireEventWriter event(std::string_view type) const { return {type, m_rank, wallUs()}; }
    void prepareEnvironment();
    bool startProgram(std::string *error);
    bool startWarm();
    void signalProgramTree(int sig);
    void onSignal(int sig);
    void onControlInput();
    void beginStop(const std::string &reason, int bySignal);
    void reapChildren();
    void onWaitStatus(pid_t pid, int status);
    void dumpStacks(const std::string &reason);
    void followTensorBoard();
    int finish();

    SupervisorOptions m_options;
    std::int64_t m_startUs = wallUs(); // before the program: its event files are named later
    int m_rank = 0;
    std::string m_host;
    std::string m_programName;
    PortReservation m_port;
    StoreProxy m_proxy;                // rank 0: the other ranks' way to the program's store
    std::string m_pythonDirectory;     // the run's copy of the rankdeck module, on PYTHONPATH
    std::string m_setupError;          // why the run directory cannot be used (the rank ends)
    std::string m_environmentDefaults; // NAME=VALUE the user did not set and we did (hello)
    WarmStartClient m_warm;
    bool m_warmStarted = false; // the program runs in the warm server (m_child stays -1)
    ProgramDiagnostics m_diagnostics;
    std::unique_ptr<EventFileFollower> m_tensorboard;
    FlightRecorderDumper m_flightRecorder;
    StackSampler m_sampler;
    int m_signalFd = -1;
    pid_t m_child = -1;
    bool m_childExited = false;
    int m_childStatus = 0;
    bool m_stopRequested = false; // stop, SIGTERM/SIGINT/SIGHUP or end of stdin came
    bool m_sweeping = false;      // descendants were sent SIGTERM (stop, or the program ended)
    int m_stopSignal = 0;         // the signal that asked us to stop (0: `stop` or end of stdin)
    bool m_stdinOpen = false;
    std::string m_stdinBuffer;
    Clock::time_point m_killAt = Clock::time_point::max();
    bool m_killed = false;
};

void Supervisor::prepareEnvironment()
{
    // torchrun's contract, for what the launcher did not set already.
    const std::string rank = std::to_string(m_rank);
    setDefault("ROLE_RANK", rank);
    setDefault("ROLE_WORLD_SIZE", std::to_string(envInt("WORLD_SIZE", 1)));
    setDefault("LOCAL_RANK", "0");
    setDefault("LOCAL_WORLD_SIZE", "1");
    setDefault("GROUP_RANK", "0");
    setDefault("ROLE_NAME", "default");
    if (const char *runId = std::getenv("RANKDECK_RUN_ID"))
        setDefault("TORCHELASTIC_RUN_ID", runId);
    setDefault("MASTER_ADDR", "127.0.0.1");
    setDefault("GROUP_WORLD_SIZE", "1");
    setDefault("TORCHELASTIC_RESTART_COUNT", "0");
    setDefault("TORCHELASTIC_MAX_RESTARTS", "0");
    setDefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
    setDefault("TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGTERM,SIGINT,SIGHUP,SIGQUIT");
    // torchrun says True: its agent serves the store at MASTER_ADDR:MASTER_PORT and every rank,
    // rank 0 too, is a client of it. Here rank 0's program serves the store itself, so True
    // would make it a client of a store nobody hosts (torch.distributed.rendezvous); False is
    // what torchrun says too when its agent keeps its store to itself
    // (TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1).
    setDefault("TORCHELASTIC_USE_AGENT_STORE", "False");
    // As torchrun does (and with a notice, which the launcher prints once from the hello event):
    // several ranks on a node, each with as many OpenMP threads as the node has cores,
    // oversubscribe it. Only when the user did not set it, even to an empty value, as torchrun.
    if (envInt("LOCAL_WORLD_SIZE", 1) > 1 && !std::getenv("OMP_NUM_THREADS")) {
        setenv("OMP_NUM_THREADS", "1", 1);
        m_environmentDefaults = "OMP_NUM_THREADS=1";
    }
    // Without it Python block-buffers a pipe: lines would reach the launcher late, in bursts.
    setDefault("PYTHONUNBUFFERED", "1");
    // `import rankdeck` works on every node: the module travels inside this binary.
    std::string dir = m_options.runDirectory;
    if (dir.empty()) {
        const char *tmp = std::getenv("TMPDIR");
        dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/rankdeck-" + std::to_string(getuid());
    }
    std::string error;
    // Code goes into it and first on PYTHONPATH: a directory someone else made or can write to
    // (the default is in /tmp) ends the rank before anything of it runs.
    if (!ensurePrivateDirectory(dir, &error)) {
        m_setupError = "refusing the run directory: " + error;
        return;
    }
    m_pythonDirectory = dir + "/python";
    if (!installPythonModule(m_pythonDirectory, &error))
        writeAll(STDERR_FILENO,
                 "rankdeck-supervisor: cannot install the rankdeck Python module: " + error + "\n");
    // Crash dumps, torchelastic's error file, the Python stack-dump hook (its files live in dir).
    m_diagnostics.prepare(dir, m_rank);
    // torch's flight recorder: on unless opted out, and the hook that dumps it on request.
    m_flightRecorder.prepare(dir, m_rank, m_options.noFlightRecorder,
                             [](const std::string &line) { writeAll(STDOUT_FILENO, line); });
    // Why a rank is slow: the hook samples its stacks into a pipe of ours.
    m_sampler.prepare(m_rank, [](const std::string &line) { writeAll(STDOUT_FILENO, line); });
}

bool Supervisor::startWarm()
{
    WarmStartClient::Settings settings;
    settings.runPythonDirectory = m_pythonDirectory;
    settings.stopGraceMs = m_options.stopGraceMs;
    settings.slots = envInt("LOCAL_WORLD_SIZE", 1);
    std::string why;
    bool startedServer = false;
    if (!m_warm.start(m_options.command, settings, &why, &startedServer)) {
        // Once, on this rank's stderr: --warm never fails a launch, but it must not hide that
        // this one ran cold.
        writeAll(STDERR_FILENO, "rankdeck-supervisor: --warm: " + why +
                                    (startedServer ? "\n" : "; starting cold\n"));
        return false;
    }
    m_warmStarted = true;
    m_diagnostics.attach(m_warm.pid());
    m_warm.go();
    return true;
}

void Supervisor::signalProgramTree(int sig)
{
    signalDescendants(sig);
    if (m_warmStarted && !m_childExited)
        m_warm.signalTree(sig);
}

bool Supervisor::startProgram(std::string *error)
{
    if (m_options.warmPython && startWarm())
        return true;
    // A close-on-exec pipe tells us whether exec() worked, and errno if not.
    // The child waits on `go` until it is traced: it must not exec (and fault) before.
    int report[2];
    int go[2];
    if (pipe2(report, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
        *error = std::string("pipe: ") + std::strerror(errno);
        return false;
    }
    m_child = fork();
    if (m_child < 0) {
        *error = std::string("fork: ") + std::strerror(errno);
        return false;
    }
    if (m_child == 0) {
        close(report[0]);
        close(go[1]);
        char byte = 0;
        while (read(go[0], &byte, 1) < 0 && errno == EINTR) {
        }
        close(go[0]);
        // No PR_SET_PDEATHSIG: a SIGKILL of the supervisor reaches the program anyway (the
        // launcher signals the rank's whole process group, which the program shares), and with it
        // the reference DDP script aborted at exit ("terminate called without an active
        // exception") in 4 of 16 supervised 4-rank runs against 0 of 16 without. That abort is
        // torch's: 1 of 10 plain 4-rank runs with CUDA_VISIBLE_DEVICES="" showed it too.
        // Everything the supervisor blocked or ignored, the program gets back as the default:
        // a shell's background `( … ) &` leaves SIGINT and SIGQUIT ignored, and Python's
        // KeyboardInterrupt needs SIGINT.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int sig : {SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGHUP, SIGUSR1, SIGCHLD})
            signal(sig, SIG_DFL);
        const int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            if (devnull != STDIN_FILENO)
                close(devnull);
        }
        std::vector<char *> argv;
        for (const std::string &a : m_options.command)
            argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execvp(argv[0], argv.data());
        const int err = errno;
        writeAll(report[1], std::string_view(reinterpret_cast<const char *>(&err), sizeof err));
        _exit(127);
    }
    close(report[1]);
    close(go[0]);
    m_diagnostics.attach(m_child);
    writeAll(go[1], "g");
    close(go[1]);
    int err = 0;
    ssize_t n;
    do {
        n = read(report[0], &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n == ssize_t(sizeof err)) {
        waitpid(m_child, nullptr, 0);
        m_child = -1;
        *error =
            "cannot run " + m_options.command.front() + " on " + m_host + ": " + std::strerror(err);
        return false;
    }
    return true;
}

void Supervisor::beginStop(const std::string &reason, int bySignal)
{
    if (m_stopRequested)
        return;
    m_stopRequested = true;
    m_sweeping = true;
    m_stopSignal = bySignal;
    emit(event(wire::event::Stopping).addString(wire::field::Reason, reason));
    signalProgramTree(SIGTERM);
    m_killAt = Clock::now() + std::chrono::milliseconds(m_options.stopGraceMs);
}

void Supervisor::onSignal(int sig)
{
    switch (sig) {
    case SIGCHLD:
        reapChildren();
        break;
    case SIGTERM:
    case SIGINT:
    case SIGHUP:
        beginStop("supervisor received " + signalName(sig), sig);
        break;
    default:
        // SIGUSR1 is blocked and dropped: NCCL claims it, so stacks are asked for with
        // dump-stacks on stdin only, and it must not reach (and kill) the program.
        break;
    }
}

void Supervisor::onControlInput()
{
    char buf[4096];
    const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        m_stdinOpen = false;
        beginStop("the launcher closed the control channel", 0);
        return;
    }
    m_stdinBuffer.append(buf, size_t(n));
    size_t nl;
    while ((nl = m_stdinBuffer.find('\n')) != std::string::npos) {
        std::string line = m_stdinBuffer.substr(0, nl);
        m_stdinBuffer.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line == wire::command::Stop)
            beginStop("stop requested", 0);
        else if (line == wire::command::DumpStacks && !m_childExited)
            dumpStacks(std::string(wire::command::DumpStacks));
        else if (std::int64_t id = 0; wire::parseDumpFlightRecorder(line, &id))
            m_flightRecorder.request(id);
        else if (int seconds = 0; wire::parseProfileCommand(line, &id, &seconds))
            m_sampler.requestProfile(id, seconds);
    }
    if (m_stdinBuffer.size() > 65536)
        m_stdinBuffer.clear();
}

void Supervisor::reapChildren()
{
    for (;;) {
        int status = 0;
        // __WALL: the program's threads are traced, and their ptrace stops come here too.
        const pid_t p = waitpid(-1, &status, WNOHANG | __WALL);
        if (p <= 0)
            return;
        onWaitStatus(p, status);
    }
}

void Supervisor::onWaitStatus(pid_t pid, int status)
{
    if (m_diagnostics.handleStatus(pid, status))
        return;
    if (pid == m_child && (WIFEXITED(status) || WIFSIGNALED(status))) {
        m_childExited = true;
        m_childStatus = status;
    }
}

void Supervisor::dumpStacks(const std::string &reason)
{
    emit(m_diagnostics.stacksEvent(
        m_rank, reason, [this] { reapChildren(); },
        [this](pid_t pid, int status) { onWaitStatus(pid, status); },
        [this] { return m_childExited; }));
}

void Supervisor::followTensorBoard()
{
    EventFileFollower::Options o;
    o.directory = EventFileFollower::directoryFor(m_options.command, m_options.tensorBoardDir);
    o.host = m_host;
    o.rank = m_rank;
    o.startSec = m_startUs / 1000000;
    const pid_t self = getpid();
    m_tensorboard = std::make_unique<EventFileFollower>(
        o, [this, self](pid_t pid) { return pid == m_child || isDescendant(pid, self); },
        [this](const std::string &line) { writeAll(STDOUT_FILENO, line); },
        [](const std::string &note) { writeAll(STDERR_FILENO, note); });
}

int Supervisor::run()
{
    prepareEnvironment();
    // Orphaned descendants come to us, not to init: nothing of the program escapes a stop.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    signal(SIGPIPE, SIG_IGN);
    sigset_t handled;
    sigemptyset(&handled);
    for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1})
        sigaddset(&handled, sig);
    sigprocmask(SIG_BLOCK, &handled, nullptr);
    m_signalFd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);

    wire::WireEventWriter hello = event(wire::event::Hello);
    hello.addInt(wire::field::Protocol, wire::kProtocolVersion)
        .addString(wire::field::Host, m_host)
        .addInt(wire::field::Pid, getpid())
        .addInt(wire::field::LocalRank, envInt("LOCAL_RANK", 0))
        .addInt(wire::field::WorldSize, envInt("WORLD_SIZE", 1))
        .addString(wire::field::Task, m_programName)
        .addString(wire::field::WorkerVersion, RANKDECK_VERSION)
        .addBool("supervised", true);
    if (!m_environmentDefaults.empty())
        hello.addString(wire::field::EnvironmentDefaults, m_environmentDefaults);
    emit(hello);
    if (!m_setupError.empty()) {
        emit(event(wire::event::Error)
                 .addInt(wire::field::ExitCode, 1)
                 .addString(wire::field::Message, m_setupError));
        writeAll(STDERR_FILENO, "rankdeck-supervisor: " + m_setupError + "\n");
        return 1;
    }

    const char *port = std::getenv("MASTER_PORT");
    if (m_rank == 0 && (!port || !*port || std::string_view(port) == "0")) {
        if (!m_port.reserve()) {
            const std::string msg = std::string("cannot reserve a rendezvous port on ") + m_host +
                                    ": " + std::strerror(errno);
            emit(event(wire::event::Error)
                     .addInt(wire::field::ExitCode, 1)
                     .addString(wire::field::Message, msg));
            writeAll(STDERR_FILENO, "rankdeck-supervisor: " + msg + "\n");
            return 1;
        }
        setenv("MASTER_PORT", std::to_string(m_port.port()).c_str(), 1);
        // The other ranks come in through the proxy, which accepts them before the program's
        // store listens (StoreProxy); without one they go to the program's port directly.
        const char *noProxy = std::getenv("RANKDECK_NO_STORE_PROXY");
        // Bound where the other ranks connect (MASTER_ADDR) and capped: a few store connections
        // per rank, not whatever the network sends.
        const char *master = std::getenv("MASTER_ADDR");
        const int world = envInt("WORLD_SIZE", 1);
        const bool proxied =
            !(noProxy && *noProxy) &&
            m_proxy.listenFor(m_port.port(), master ? master : "",
                              world <= envInt("LOCAL_WORLD_SIZE", 1), std::max(64, 4 * world));
        emit(event(wire::event::Store)
                 .addInt(wire::field::Port, proxied ? m_proxy.port() : m_port.port()));
    }

    std::string error;
    if (!startProgram(&error)) {
        emit(event(wire::event::Error)
                 .addInt(wire::field::ExitCode, 127)
                 .addString(wire::field::Message, error));
        writeAll(STDERR_FILENO, "rankdeck-supervisor: " + error + "\n");
        return 127;
    }
    followTensorBoard();
    m_sampler.programStarted();

    m_stdinOpen = m_options.controlStdin;
    auto nextHeartbeat = Clock::now() + kHeartbeatInterval;
    auto nextFollow = Clock::now() + kTensorBoardInterval;
    for (;;) {
        reapChildren();
        if (m_childExited) {
            // Whatever the program left behind (DataLoader workers, daemonised helpers) goes too.
            if (descendantsOf(getpid()).empty())
                break;
            if (!m_sweeping) {
                m_sweeping = true;
                signalDescendants(SIGTERM);
                m_killAt = Clock::now() + std::chrono::milliseconds(m_options.stopGraceMs);
            }
        }
        const auto now = Clock::now();
        if (now >= m_killAt && !m_killed) {
            m_killed = true;
            signalProgramTree(SIGKILL);
        }
        if (now >= nextHeartbeat) {
            emit(event(wire::event::Heartbeat));
            nextHeartbeat = now + kHeartbeatInterval;
        }
        if (now >= nextFollow) {
            m_tensorboard->poll();
            nextFollow = now + kTensorBoardInterval;
        }
        m_flightRecorder.poll(m_warmStarted ? m_warm.pid() : m_child, m_childExited);
        if (!m_childExited)
            m_sampler.poll(m_warmStarted ? m_warm.pid() : m_child);
        auto wake = std::min(nextHeartbeat, nextFollow);
        if (const int sampleMs = m_sampler.timeoutMs(); sampleMs >= 0 && !m_childExited)
            wake = std::min(wake, now + std::chrono::milliseconds(sampleMs));
        if (const int frMs = m_flightRecorder.timeoutMs(); frMs >= 0)
            wake = std::min(wake, now + std::chrono::milliseconds(frMs));
        if (!m_killed && m_killAt < wake)
            wake = m_killAt;
        if (m_killed || m_childExited)
            wake = std::min(wake, now + std::chrono::milliseconds(50));
        const int timeoutMs = int(std::max<std::int64_t>(
            0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1));
        const bool pollsStdin = m_stdinOpen;
        std::vector<pollfd> fds{{m_signalFd, POLLIN, 0}};
        if (pollsStdin)
            fds.push_back({STDIN_FILENO, POLLIN, 0});
        const int warmIndex = int(fds.size());
        if (m_warmStarted && !m_childExited)
            fds.push_back({m_warm.fd(), POLLIN, 0});
        const int sampleIndex = int(fds.size());
        if (m_sampler.fd() >= 0)
            fds.push_back({m_sampler.fd(), POLLIN, 0});
        m_proxy.addPollFds(fds);
        if (poll(fds.data(), nfds_t(fds.size()), m_proxy.timeoutMs(timeoutMs)) < 0 &&
            errno != EINTR)
            break;
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo info;
            while (read(m_signalFd, &info, sizeof info) == ssize_t(sizeof info))
                onSignal(int(info.ssi_signo));
        }
        if (pollsStdin && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
            onControlInput();
        // The waiter reports once the program and everything it started are gone.
        if (m_warmStarted && !m_childExited && warmIndex < int(fds.size()) &&
            fds[size_t(warmIndex)].fd == m_warm.fd() &&
            (fds[size_t(warmIndex)].revents & (POLLIN | POLLHUP | POLLERR)) &&
            m_warm.readExit(&m_childStatus))
            m_childExited = true;
        if (sampleIndex < int(fds.size()) && fds[size_t(sampleIndex)].fd == m_sampler.fd() &&
            (fds[size_t(sampleIndex)].revents & (POLLIN | POLLHUP | POLLERR)))
            m_sampler.onReadable();
        m_proxy.handle();
    }
    // A DataLoader worker's crash dump the rank could not write itself (it died first).
    m_diagnostics.handOnWorkerFaults([](std::string_view text) { writeAll(STDERR_FILENO, text); });
    // What the program wrote last (SummaryWriter.close() at its end) goes before the final event.
    m_tensorboard->drain();
    m_flightRecorder.finish("the program ended before it answered");
    m_sampler.finish();
    return finish();
}

int Supervisor::finish()
{
    const int status = m_childStatus;
    // A stop (the launcher's `stop`, or its SIGTERM) sends the program SIGTERM, then SIGKILL.
    // How the program ended is still its own to tell (issue 27: a rank whose own KeyError
    // ended it, or that died of the stop's SIGTERM, was reported "exit code 0"): an exit code
    // of its own or a crash of its own go the usual way below; what the stop's signals did is
    // mirrored, so that the launcher sees SIGTERM (-15, as torchrun says) and counts the rank
    // as stopped.
    const bool ownExit = WIFEXITED(status) && WEXITSTATUS(status) != 0;
    const bool ownSignal = WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM &&
                           WTERMSIG(status) != SIGKILL && WTERMSIG(status) != SIGINT &&
                           WTERMSIG(status) != SIGHUP;
    if (m_stopRequested && !ownExit && !ownSignal) {
        if (m_stopSignal != 0)
            return endBySignal(m_stopSignal); // the launcher's own signal, as it sent it
        if (WIFSIGNALED(status))
            return endBySignal(WTERMSIG(status));
        // It ended cleanly when asked: done as asked, like the worker's.
        return 0;
    }
    if (WIFEXITED(status)) {
        const int code = WEXITSTATUS(status);
        if (code == 0) {
            emit(event(wire::event::Finished).addInt(wire::field::ExitCode, 0));
            return 0;
        }
        wire::WireEventWriter error = event(wire::event::Error);
        error.addInt(wire::field::ExitCode, code);
        // torchelastic's error file names the exception; without one, the exit code is all.
        if (!m_diagnostics.addErrorFields(error))
            error.addString(wire::field::Message,
                            m_programName + " exited with code " + std::to_string(code));
        emit(error);
        return code;
    }
    const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    emit(m_diagnostics.crashEvent(m_rank, sig, m_programName));
    // Mirror the program's death.
    return endBySignal(sig);
}

} // namespace

int runSupervised(const SupervisorOptions &options)
{
    Supervisor s(options);
    return s.run();
}

} // namespace rankdeck::supervisor
