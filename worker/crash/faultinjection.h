// SPDX-License-Identifier: GPL-3.0-or-later
//
// --fault KIND@STEP --fault-rank R: makes one rank fail on purpose, for the fault-matrix
// tests and for demos. KIND: segv abort fpe throw torch-check exit:N hang skip-allreduce[:B].
// skip-allreduce:B makes the rank leave out its gradient bucket B's collective (B 0 unless
// given: the first launched, holding the last parameters) in that step only, so that the
// ranks part at a collective (docs/worker.md says what Gloo then does).
#pragma once

#include <optional>
#include <string>

namespace rankdeck::fault {

enum class FaultKind
{
    Segv,
    Abort,
    Fpe,
    Throw,
    TorchCheck,
    Exit,
    Hang,
    SkipAllreduce
};

class FaultInjector
{
public:
    // spec is the --fault value ("segv@5", "exit:3@2"). Returns nullopt with *error set (a
    // message naming --fault or --fault-rank) when the spec is malformed. A well-formed spec
    // for another rank gives an injector that never fires.
    static std::optional<FaultInjector> parse(const std::string &spec, int faultRank, int myRank,
                                              std::string *error);

    // Call at the start of each step, before forward. At the fault's step on the fault's rank
    // it crashes, throws or exits as asked (a human line on stderr first). `hang` blocks here
    // forever without joining any collective, while other threads (heartbeats, stack dumps,
    // the control channel) keep running.
    // noexcept on purpose: `throw` and `torch-check` model an exception nobody catches, so they
    // reach the crash handler's terminate handler (crash event with type, message and the
    // throw site's stack; the process dies by SIGABRT) whatever catch blocks surround the
    // training loop.
    void maybeInject(int step) noexcept;

    // True from the hang step on, on the hanging rank: a worker that wants to keep computing
    // instead of blocking in maybeInject() skips its collectives when this is set.
    bool shouldSkipCollectives(int step) const;

    // skip-allreduce: the bucket whose collective this rank leaves out at `step`, -1 none.
    int skippedBucket(int step) const;

    FaultKind kind() const { return m_kind; }
    int step() const { return m_step; }
    int exitCode() const { return m_exitCode; }
    bool active() const { return m_active; } // this rank is the one that fails
    std::string describe() const;            // "segv@5 on rank 1"

private:
    FaultKind m_kind = FaultKind::Segv;
    int m_step = 0;
    int m_exitCode = 0;
    int m_bucket = 0; // skip-allreduce
    int m_faultRank = 0;
    bool m_active = false;
};

} // namespace rankdeck::fault
