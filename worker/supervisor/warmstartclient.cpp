// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: the client's protocol with the warm server and what
// decides whether a command may start warm (its parsing, the server key, the private
// directory) are one contract with python/rankdeck/_warmstart.py, kept in one place.
#include "supervisor/warmstartclient.h"

#include "supervisor/flightrecorderdumper.h"

#include "supervisor/jsonreader.h"
#include "supervisor/pythonmodule.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern char **environ;

namespace rankdeck::supervisor {

namespace {

// What a fresh interpreter reads at start-up or while it imports torch: a server started with
// other values would give a rank a different process than a cold start. Per-rank variables
// (RANK, MASTER_PORT…) are not among them: the rank process gets them after the fork.
constexpr std::string_view kKeyVariables[] = {"PYTHONHOME",
                                              "PYTHONNOUSERSITE",
                                              "PYTHONUSERBASE",
                                              "PYTHONSAFEPATH",
                                              "PYTHONHASHSEED",
                                              "PYTHONWARNINGS",
                                              "PYTHONOPTIMIZE",
                                              "PYTHONDEVMODE",
                                              "PYTHONMALLOC",
                                              "PYTHONIOENCODING",
                                              "PYTHONUTF8",
                                              "PYTHONPLATLIBDIR",
                                              "PYTHONDONTWRITEBYTECODE",
                                              "VIRTUAL_ENV",
                                              "LD_LIBRARY_PATH",
                                              "LD_PRELOAD",
                                              "CUDA_VISIBLE_DEVICES",
                                              "CUDA_HOME",
                                              "CUDA_PATH",
                                              "OMP_NUM_THREADS",
                                              "MKL_NUM_THREADS",
                                              "LANG",
                                              "LC_ALL",
                                              "LC_CTYPE",
                                              "RANKDECK_WARM_PRELOAD"};
// Every TORCH_* variable counts too (TORCH_CPP_LOG_LEVEL, TORCH_HOME, …), but for the flight
// recorder's per-run paths (FlightRecorderDumper::perRunVariable).
constexpr std::string_view kKeyPrefix = "TORCH_";
// How long a rank's request may take before the launch goes cold instead.
constexpr int kReplyTimeoutMs = 10000;

std::string env(const char *name)
{
    const char *v = std::getenv(name);
    return v ? v : "";
}

bool isPythonName(std::string_view name)
{
    if (name.substr(0, 6) != "python")
        return false;
    for (char c : name.substr(6))
        if (!(c >= '0' && c <= '9') && c != '.')
            return false;
    return true;
}

bool isExecutableFile(const std::string &path)
{
    struct stat st
    {
    };
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

// As execvp finds it: a name with a slash as is (made absolute), else the first on PATH.
std::string resolveExecutable(const std::string &name)
{
    if (name.find('/') != std::string::npos) {
        if (name.front() == '/')
            return name;
        char cwd[4096];
        return ::getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + name : name;
    }
    std::string path = env("PATH");
    if (path.empty())
        path = "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    for (;;) {
        const size_t end = path.find(':', start);
        std::string dir = path.substr(start, end == std::string::npos ? end : end - start);
        if (dir.empty())
            dir = ".";
        const std::string candidate = dir + "/" + name;
        if (isExecutableFile(candidate))
            return candidate;
        if (end == std::string::npos)
            return {};
        start = end + 1;
    }
}

// PYTHONPATH without the run's own module directory (it differs from run to run).
std::string userPythonPath(const std::string &runPythonDirectory)
{
    const std::string path = env("PYTHONPATH");
    std::string out;
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find(':', start);
        if (end == std::string::npos)
            end = path.size();
        const std::string entry = path.substr(start, end - start);
        if (!entry.empty() && entry != runPythonDirectory)
            out += (out.empty() ? "" : ":") + entry;
        start = end + 1;
    }
    return out;
}

bool validUtf8(std::string_view s)
{
    size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        const int len = c < 0x80         ? 1
                        : (c >> 5) == 6  ? 2
                        : (c >> 4) == 14 ? 3
                        : (c >> 3) == 30 ? 4
                                         : 0;
        if (len == 0 || i + size_t(len) > s.size())
            return false;
        for (int k = 1; k < len; ++k)
            if ((static_cast<unsigned char>(s[i + size_t(k)]) >> 6) != 2)
                return false;
        i += size_t(len);
    }
    return true;
}

// A JSON string that Python turns back into the same bytes (os.fsencode): a value that is not
// UTF-8 travels with its bytes as lone surrogates U+DC80…U+DCFF (surrogateescape).
void appendJsonString(std::string &out, std::string_view s)
{
    static constexpr char hex[] = "0123456789abcdef";
    const bool utf8 = validUtf8(s);
    out += '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c < 0x20 || c == 0x7f) {
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else if (c >= 0x80 && !utf8) {
            out += "\\udc";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else {
            out += char(c);
        }
    }
    out += '"';
}

bool makePrivateDirectory(const std::string &path, std::string *why)
{
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
        *why = path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st
    {
    };
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() ||
        (st.st_mode & 077) != 0) {
        *why = path + " is not a private directory of this user (0700)";
        return false;
    }
    return true;
}

struct Command
{
    std::string python; // as resolved on PATH (a venv's python must stay the venv's)
    bool module = false;
    bool dontWriteBytecode = false;
    std::string target; // script path or module name
    std::vector<std::string> args;
};

bool parseCommand(const std::vector<std::string> &command, Command *out, std::string *why)
{
    const std::string &program = command.front();
    const std::string base = program.substr(program.rfind('/') + 1);
    if (!isPythonName(base)) {
        *why = program + " is not a Python interpreter (python…)";
        return false;
    }
    out->python = resolveExecutable(program);
    if (out->python.empty() || !isExecutableFile(out->python)) {
        *why = program + " was not found";
        return false;
    }
    size_t i = 1;
    for (; i < command.size(); ++i) {
        const std::string &a = command[i];
        if (a == "-u") {
            continue; // the rank's stdout is unbuffered anyway (PYTHONUNBUFFERED=1)
        } else if (a == "-B") {
            out->dontWriteBytecode = true;
        } else if (a == "-m" && i + 1 < command.size()) {
            out->module = true;
            out->target = command[++i];
            ++i;
            break;
        } else if (!a.empty() && a.front() == '-') {
            *why = "the interpreter option " + a + " is not supported warm";
            return false;
        } else {
            out->target = a;
            ++i;
            break;
        }
    }
    if (out->target.empty()) {
        *why = "no script to run";
        return false;
    }
    out->args.assign(command.begin() + long(i), command.end());
    return true;
}

std::string serverKey(const Command &c, const std::string &pythonPath)
{
    std::string key = "python=" + c.python + "\n";
    char real[4096];
    if (::realpath(c.python.c_str(), real)) {
        struct stat st
        {
        };
        ::stat(real, &st);
        key += "real=" + std::string(real) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_size) + "\n";
    }
    key += "files=" + pythonFilesDigest() + "\nPYTHONPATH=" + pythonPath + "\n";
    for (std::string_view name : kKeyVariables)
        key += std::string(name) + "=" + env(std::string(name).c_str()) + "\n";
    std::vector<std::string> torch;
    for (char **e = environ; *e; ++e) {
        const std::string_view kv(*e);
        if (kv.substr(0, kKeyPrefix.size()) == kKeyPrefix &&
            !FlightRecorderDumper::perRunVariable(kv.substr(0, kv.find('='))))
            torch.emplace_back(kv);
    }
    std::sort(torch.begin(), torch.end());
    for (const std::string &t : torch)
        key += t + "\n";
    return key;
}

// The server's environment: ours without what belongs to one rank or one run.
std::vector<std::string> serverEnvironment(const std::string &pythonDirectory,
                                           const std::string &pythonPath)
{
    static constexpr std::string_view perRank[] = {"RANK",
                                                   "LOCAL_RANK",
                                                   "WORLD_SIZE",
                                                   "LOCAL_WORLD_SIZE",
                                                   "GROUP_RANK",
                                                   "GROUP_WORLD_SIZE",
                                                   "ROLE_RANK",
                                                   "ROLE_WORLD_SIZE",
                                                   "ROLE_NAME",
                                                   "MASTER_ADDR",
                                                   "MASTER_PORT",
                                                   "PYTHONPATH",
                                                   "TORCHELASTIC_RUN_ID",
                                                   "TORCHELASTIC_ERROR_FILE",
                                                   "PYTHONFAULTHANDLER"};
    std::vector<std::string> out;
    for (char **e = environ; *e; ++e) {
        const std::string_view kv(*e);
        const std::string_view name = kv.substr(0, kv.find('='));
        bool drop = name.substr(0, 9) == "RANKDECK_" && name != "RANKDECK_WARM_PRELOAD";
        for (std::string_view p : perRank)
            drop = drop || name == p;
        drop = drop || FlightRecorderDumper::perRunVariable(name);
        if (!drop)
            out.emplace_back(kv);
    }
    out.push_back("PYTHONPATH=" + pythonDirectory + (pythonPath.empty() ? "" : ":" + pythonPath));
    return out;
}

// Starts the server, detached (setsid, and reparented away from us: the supervisor is a
// subreaper, and its sweep would stop the server with the first rank's program).
bool spawnServer(const Command &c, const std::string &directory, const std::string &stem,
                 int lockFd, int slots, const std::string &pythonPath, std::string *why)
{
    const std::string pythonDirectory = directory + "/python";
    if (!installPythonFiles(pythonDirectory, true, why))
        return false;
    std::vector<std::string> args{c.python,
                                  "-m",
                                  "rankdeck._warmstart",
                                  "--socket",
                                  directory + "/" + stem + ".sock",
                                  "--slots",
                                  std::to_string(std::max(1, slots)),
                                  "--lock-fd",
                                  "3"};
    const std::string idle = env("RANKDECK_WARM_IDLE_SEC");
    if (!idle.empty())
        args.insert(args.end(), {"--idle-sec", idle});
    const std::string preload = env("RANKDECK_WARM_PRELOAD");
    if (!preload.empty())
        args.insert(args.end(), {"--preload", preload});
    std::vector<std::string> envStrings = serverEnvironment(pythonDirectory, pythonPath);
    std::vector<char *> argv;
    for (std::string &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char *> envp;
    for (std::string &e : envStrings)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string log = directory + "/" + stem + ".log";

    int wasSubreaper = 0;
    ::prctl(PR_GET_CHILD_SUBREAPER, &wasSubreaper);
    ::prctl(PR_SET_CHILD_SUBREAPER, 0);
    const pid_t first = ::fork();
    if (first == 0) {
        ::setsid();
        if (::fork() != 0)
            _exit(0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int sig = 1; sig < NSIG; ++sig)
            if (sig != SIGKILL && sig != SIGSTOP)
                signal(sig, SIG_DFL);
        const int in = ::open("/dev/null", O_RDONLY);
        const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
        if (in >= 0)
            ::dup2(in, STDIN_FILENO);
        if (out >= 0) {
            ::dup2(out, STDOUT_FILENO);
            ::dup2(out, STDERR_FILENO);
        }
        // The lock stays held for as long as the server lives (as fd 3); nothing else of ours
        // (the rendezvous port's socket, the store proxy) may stay open in it.
        if (lockFd == 3)
            ::fcntl(3, F_SETFD, 0);
        else if (::dup2(lockFd, 3) != 3)
            _exit(127);
        ::close_range(4, ~0U, 0);
        if (::chdir("/") != 0)
            _exit(127);
        ::execve(argv[0], argv.data(), envp.data());
        _exit(127);
    }
    if (first > 0) {
        while (::waitpid(first, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    ::prctl(PR_SET_CHILD_SUBREAPER, wasSubreaper);
    if (first < 0) {
        *why = std::string("fork: ") + std::strerror(errno);
        return false;
    }
    return true;
}

} // namespace

WarmStartClient::~WarmStartClient()
{
    close();
}

void WarmStartClient::close()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
}

std::string WarmStartClient::privateDirectory(std::string *why)
{
    const std::string runtime = env("XDG_RUNTIME_DIR");
    struct stat st
    {
    };
    if (!runtime.empty() && ::stat(runtime.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == ::getuid()) {
        const std::string dir = runtime + "/rankdeck-warm";
        return makePrivateDirectory(dir, why) ? dir : std::string();
    }
    const std::string top = "/tmp/rankdeck-" + std::to_string(::getuid());
    if (::mkdir(top.c_str(), 0700) != 0 && errno != EEXIST) {
        *why = top + ": " + std::strerror(errno);
        return {};
    }
    if (::lstat(top.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
        *why = top + " is not a directory of this user";
        return {};
    }
    const std::string dir = top + "/warm";
    return makePrivateDirectory(dir, why) ? dir : std::string();
}

bool WarmStartClient::send(const std::string &line)
{
    std::string_view rest = line;
    while (!rest.empty()) {
        const ssize_t n = ::send(m_fd, rest.data(), rest.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        rest.remove_prefix(size_t(n));
    }
    return true;
}

bool WarmStartClient::start(const std::vector<std::string> &command, const Settings &settings,
                            std::string *why, bool *startedServer)
{
    *startedServer = false;
    Command c;
    if (!parseCommand(command, &c, why))
        return false;
    const std::string directory = privateDirectory(why);
    if (directory.empty())
        return false;
    const std::string pythonPath = userPythonPath(settings.runPythonDirectory);
    const std::string stem = contentDigest({serverKey(c, pythonPath)});
    const std::string socketPath = directory + "/" + stem + ".sock";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socketPath.size() >= sizeof addr.sun_path) {
        *why = socketPath + " is too long for a Unix socket";
        return false;
    }
    std::memcpy(addr.sun_path, socketPath.c_str(), socketPath.size() + 1);
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0 || ::connect(m_fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        const int err = errno;
        close();
        // No server (or a dead one's socket): whoever takes the lock starts one.
        const std::string lockPath = directory + "/" + stem + ".lock";
        const int lock = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (lock >= 0 && ::flock(lock, LOCK_EX | LOCK_NB) == 0) {
            ::unlink(socketPath.c_str());
            *startedServer = spawnServer(c, directory, stem, lock, settings.slots, pythonPath, why);
            if (*startedServer)
                *why = "starting the warm Python server (" + socketPath +
                       "); this launch starts cold, the next ones warm";
        } else if (lock >= 0) {
            *why = "the warm Python server is still starting (" + socketPath + ")";
        } else {
            *why = lockPath + ": " + std::strerror(errno);
        }
        if (lock >= 0)
            ::close(lock);
        if (err != ENOENT && err != ECONNREFUSED && !*startedServer)
            *why += std::string(" (connect: ") + std::strerror(err) + ")";
        return false;
    }

    char cwd[4096];
    if (!::getcwd(cwd, sizeof cwd)) {
        *why = std::string("getcwd: ") + std::strerror(errno);
        close();
        return false;
    }
    std::string req = "{\"mode\":";
    req += c.module ? "\"module\"" : "\"script\"";
    req += ",\"target\":";
    appendJsonString(req, c.target);
    req += ",\"args\":[";
    for (size_t i = 0; i < c.args.size(); ++i) {
        if (i)
            req += ',';
        appendJsonString(req, c.args[i]);
    }
    req += "],\"env\":{";
    bool first = true;
    for (char **e = environ; *e; ++e) {
        const std::string_view kv(*e);
        const size_t eq = kv.find('=');
        if (eq == std::string_view::npos || eq == 0)
            continue;
        if (!first)
            req += ',';
        first = false;
        appendJsonString(req, kv.substr(0, eq));
        req += ':';
        appendJsonString(req, kv.substr(eq + 1));
    }
    req += "},\"cwd\":";
    appendJsonString(req, cwd);
    req += ",\"tracer\":" + std::to_string(::getpid());
    req += ",\"grace_ms\":" + std::to_string(settings.stopGraceMs);
    req += ",\"slots\":" + std::to_string(settings.slots);
    req += c.dontWriteBytecode ? ",\"dont_write_bytecode\":true" : "";
    req += "}\n";

    // stdin is /dev/null, as for a cold child; stdout and stderr are ours (the launcher's pipes).
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int fds[3] = {devnull, STDOUT_FILENO, STDERR_FILENO};
    char control[CMSG_SPACE(sizeof fds)] = {};
    iovec iov{req.data(), req.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(cm), fds, sizeof fds);
    ssize_t sent;
    do {
        sent = ::sendmsg(m_fd, &msg, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (devnull >= 0)
        ::close(devnull);
    if (sent <= 0 || (size_t(sent) < req.size() && !send(req.substr(size_t(sent))))) {
        *why = std::string("cannot send the request to the warm server: ") + std::strerror(errno);
        close();
        return false;
    }

    // The reply: the rank's pid once it is forked and waits for go, or an error.
    for (;;) {
        const size_t nl = m_buffer.find('\n');
        if (nl != std::string::npos) {
            JsonValue reply;
            const bool ok = JsonValue::parse(std::string_view(m_buffer).substr(0, nl), &reply);
            m_buffer.erase(0, nl + 1);
            if (ok && reply.member("pid").isNumber()) {
                m_pid = pid_t(std::atol(reply.member("pid").string().c_str()));
                return m_pid > 0;
            }
            *why = "the warm server refused the request: " +
                   (ok && reply.member("error").isString() ? reply.member("error").string()
                                                           : std::string("unreadable reply"));
            close();
            return false;
        }
        pollfd p{m_fd, POLLIN, 0};
        const int r = ::poll(&p, 1, kReplyTimeoutMs);
        if (r < 0 && errno == EINTR)
            continue;
        char buf[4096];
        const ssize_t n = r > 0 ? ::recv(m_fd, buf, sizeof buf, 0) : -1;
        if (n <= 0) {
            *why = r == 0 ? "the warm server did not answer within 10 s"
                          : "the warm server closed the connection";
            close();
            return false;
        }
        m_buffer.append(buf, size_t(n));
    }
}

void WarmStartClient::go()
{
    send("{\"go\":true}\n");
}

void WarmStartClient::signalTree(int sig)
{
    if (m_fd >= 0)
        send("{\"signal\":" + std::to_string(sig) + "}\n");
}

bool WarmStartClient::readExit(int *status)
{
    char buf[4096];
    const ssize_t n = ::recv(m_fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    if (n > 0)
        m_buffer.append(buf, size_t(n));
    size_t nl;
    while ((nl = m_buffer.find('\n')) != std::string::npos) {
        JsonValue reply;
        const bool ok = JsonValue::parse(std::string_view(m_buffer).substr(0, nl), &reply);
        m_buffer.erase(0, nl + 1);
        if (ok && reply.member("exit").isNumber()) {
            *status = std::atoi(reply.member("exit").string().c_str());
            close();
            return true;
        }
    }
    if (n <= 0) {
        // The waiter is gone without a word (killed): its rank went with it.
        *status = SIGKILL;
        close();
        return true;
    }
    return false;
}

} // namespace rankdeck::supervisor
