// SPDX-License-Identifier: GPL-3.0-or-later
#include "crash/faultinjection.h"

// Only c10's exception header: TORCH_CHECK without the cost of the full torch headers.
#include <c10/util/Exception.h>

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace rankdeck::fault {

namespace {

struct KindName
{
    const char *name;
    FaultKind kind;
};

constexpr KindName kKinds[] = {
    {"segv", FaultKind::Segv},
    {"abort", FaultKind::Abort},
    {"fpe", FaultKind::Fpe},
    {"throw", FaultKind::Throw},
    {"torch-check", FaultKind::TorchCheck},
    {"exit", FaultKind::Exit},
    {"hang", FaultKind::Hang},
    {"skip-allreduce", FaultKind::SkipAllreduce},
};

const char *kindName(FaultKind kind)
{
    for (const auto &k : kKinds)
        if (k.kind == kind)
            return k.name;
    return "?";
}

bool parseInt(std::string_view text, int *out)
{
    if (text.empty())
        return false;
    const char *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, *out);
    return ec == std::errc() && ptr == end;
}

// Each fault lives in its own named, never-inlined function so that the crash report's stack
// shows exactly where it happened, as a real bug in training code would.
[[gnu::noinline]] void crashWithSegv(int step)
{
    volatile int *volatile nowhere = nullptr;
    *nowhere = step;
}

[[gnu::noinline]] void crashWithAbort(int)
{
    std::abort();
}

[[gnu::noinline]] void crashWithFpe(int step)
{
    // An integer division by zero traps on x86-64 (SIGFPE); other CPUs return a value, so the
    // signal is raised by hand there to keep the fault the same everywhere.
    volatile int zero = 0;
    volatile int result = step / zero;
    (void)result;
    ::raise(SIGFPE);
}

[[gnu::noinline]] void throwRuntimeError(int step)
{
    throw std::runtime_error("injected fault: std::runtime_error thrown at step " +
                             std::to_string(step));
}

[[gnu::noinline]] void failTorchCheck(int step)
{
    TORCH_CHECK(step < 0, "injected fault: TORCH_CHECK failed at step ", step);
}

[[noreturn, gnu::noinline]] void exitWithCode(int code)
{
    // _Exit: static destructors running while libtorch's threads still work would crash and
    // turn an exit code into a signal.
    std::fflush(nullptr);
    std::_Exit(code);
}

[[noreturn, gnu::noinline]] void hangWithoutJoiningCollectives()
{
    for (;;)
        std::this_thread::sleep_for(std::chrono::hours(1));
}

} // namespace

std::optional<FaultInjector> FaultInjector::parse(const std::string &spec, int faultRank,
                                                  int myRank, std::string *error)
{
    auto fail = [&](const std::string &why) -> std::optional<FaultInjector> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const std::size_t at = spec.rfind('@');
    if (at == std::string::npos)
        return fail("--fault '" + spec +
                    "': expected KIND@STEP, e.g. segv@5 "
                    "(KIND: segv abort fpe throw torch-check exit:N hang skip-allreduce[:B])");
    const std::string kindText = spec.substr(0, at);
    const std::string stepText = spec.substr(at + 1);

    FaultInjector f;
    if (!parseInt(stepText, &f.m_step) || f.m_step < 0)
        return fail("--fault '" + spec + "': STEP '" + stepText +
                    "' is not a non-negative integer");

    std::string name = kindText;
    std::string argument;
    bool hasArgument = false;
    if (const std::size_t colon = kindText.find(':'); colon != std::string::npos) {
        name = kindText.substr(0, colon);
        argument = kindText.substr(colon + 1);
        hasArgument = true;
    }
    bool known = false;
    for (const auto &k : kKinds) {
        if (name == k.name) {
            f.m_kind = k.kind;
            known = true;
        }
    }
    if (!known)
        return fail("--fault '" + spec + "': unknown KIND '" + name +
                    "' (one of: segv abort fpe throw torch-check exit:N hang "
                    "skip-allreduce[:B])");
    if (f.m_kind == FaultKind::Exit) {
        if (!hasArgument || !parseInt(argument, &f.m_exitCode) || f.m_exitCode < 0 ||
            f.m_exitCode > 255)
            return fail("--fault '" + spec + "': exit needs an exit code 0..255, e.g. exit:3@5");
    } else if (f.m_kind == FaultKind::SkipAllreduce) {
        if (hasArgument && (!parseInt(argument, &f.m_bucket) || f.m_bucket < 0))
            return fail("--fault '" + spec +
                        "': skip-allreduce takes a bucket index >= 0, e.g. skip-allreduce:1@5");
    } else if (hasArgument) {
        return fail("--fault '" + spec + "': KIND '" + name + "' takes no ':' argument");
    }
    if (faultRank < 0)
        return fail("--fault-rank " + std::to_string(faultRank) + ": must be a rank (>= 0)");
    f.m_faultRank = faultRank;
    f.m_active = faultRank == myRank;
    return f;
}

std::string FaultInjector::describe() const
{
    std::string s = kindName(m_kind);
    if (m_kind == FaultKind::Exit)
        s += ':' + std::to_string(m_exitCode);
    if (m_kind == FaultKind::SkipAllreduce && m_bucket != 0)
        s += ':' + std::to_string(m_bucket);
    return s + '@' + std::to_string(m_step) + " on rank " + std::to_string(m_faultRank);
}

void FaultInjector::maybeInject(int step) noexcept
{
    if (!m_active || step != m_step)
        return;
    // A plain stderr line, so the log shows the fault was deliberate.
    const std::string note = "rankdeck-worker: injecting fault " + describe() + "\n";
    std::fflush(nullptr);
    (void)!::write(STDERR_FILENO, note.data(), note.size());
    switch (m_kind) {
    case FaultKind::Segv:
        crashWithSegv(step);
        break;
    case FaultKind::Abort:
        crashWithAbort(step);
        break;
    case FaultKind::Fpe:
        crashWithFpe(step);
        break;
    case FaultKind::Throw:
        throwRuntimeError(step);
        break;
    case FaultKind::TorchCheck:
        failTorchCheck(step);
        break;
    case FaultKind::Exit:
        exitWithCode(m_exitCode);
    case FaultKind::Hang:
        hangWithoutJoiningCollectives();
    case FaultKind::SkipAllreduce:
        break; // the trainer leaves the bucket out (skippedBucket)
    }
}

int FaultInjector::skippedBucket(int step) const
{
    return m_active && m_kind == FaultKind::SkipAllreduce && step == m_step ? m_bucket : -1;
}

bool FaultInjector::shouldSkipCollectives(int step) const
{
    return m_active && m_kind == FaultKind::Hang && step >= m_step;
}

} // namespace rankdeck::fault
