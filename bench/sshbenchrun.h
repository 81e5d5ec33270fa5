// SPDX-License-Identifier: GPL-3.0-or-later
//
// What bench_ssh's parts share: one timed run through RunController over an SSH fixture, the
// fixture's profile, CPU accounting of the servers and of the launcher, medians and formatting.
#pragma once

#include "config/profile.h"

#include <QJsonArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <vector>

class SshFixture;

namespace rankdeck::bench {

double median(std::vector<double> v);
QString binDir();
void progress(const QString &text);
Profile fixtureProfile(const SshFixture &ssh, int nodes, int ranksPerNode);

// The moments of one run, in seconds after start(); -1 where it did not happen.
struct Timing
{
    QString error;
    double prepared = -1;     // every node ready (run state leaves Preparing)
    double allHello = -1;     // every rank's hello event
    double allFirstStep = -1; // every rank's first step event
};

enum class Until
{
    AllHello,
    AllFirstStep
};

// One run through RunController, to its own end (the ranks finish by themselves), so that the
// next run starts on a quiet machine; the milestone must have been reached on the way.
// stagesOut: every progress stage the transport reported, with its time.
Timing timedRun(const Profile &profile, const QStringList &workerArgs, const QString &workerPath,
                const QString &runsDir, Until until, bool timeline = false,
                QList<QPair<QString, double>> *stagesOut = nullptr);

// CPU seconds the fixture's servers spent: each listening sshd with the children it reaped
// (connection handlers, sessions, the shells and commands they ran).
double serverCpuSeconds(const SshFixture &ssh);
double selfCpuSeconds();
// Lets the servers reap what the last run left (sessions end after the transport is gone).
void settle(int msec);
QString ms(double seconds);
// Each repetition's ratio, the spread behind the ratio of the medians.
QJsonArray ratiosOf(const std::vector<double> &num, const std::vector<double> &den);

} // namespace rankdeck::bench
