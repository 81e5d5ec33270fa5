// SPDX-License-Identifier: GPL-3.0-or-later
//
// The benchmarks' QApplication that can name what keeps the GUI thread busy (--slow-events).
#pragma once

#include <QApplication>
#include <QElapsedTimer>
#include <QString>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

namespace rankdeck::bench {

// Times every event the GUI thread dispatches from its event loop (not the ones sent from inside
// another's handler) and keeps, per kind of receiver and event, how many took over a threshold:
// a timer's lateness is the length of what ran before it, and this names it.
class TimedApplication : public QApplication
{
public:
    using QApplication::QApplication;

    bool notify(QObject *receiver, QEvent *event) override
    {
        // notify() runs in every thread that delivers an event; only the GUI thread's count.
        if (m_thresholdNs <= 0 || !m_recording || QThread::currentThread() != thread())
            return QApplication::notify(receiver, event);
        if (m_depth > 0)
            return dispatch(receiver, event);
        QElapsedTimer clock;
        clock.start();
        const int type = int(event->type());
        QString who = QString::fromLatin1(receiver->metaObject()->className());
        if (const auto *timer = qobject_cast<const QTimer *>(receiver))
            who += QStringLiteral(" every %1 ms").arg(timer->interval());
        if (QObject *parent = receiver->parent())
            who += QStringLiteral(" in ") + QString::fromLatin1(parent->metaObject()->className());
        const bool result = dispatch(receiver, event);
        const qint64 ns = clock.nsecsElapsed();
        if (ns > m_thresholdNs) {
            Slow &slow = m_slow[QStringLiteral("%1 (event %2)").arg(who).arg(type)];
            ++slow.count;
            slow.totalMs += double(ns) / 1e6;
            slow.maxMs = std::max(slow.maxMs, double(ns) / 1e6);
        }
        return result;
    }

    void setThresholdMs(double ms) { m_thresholdNs = qint64(ms * 1e6); }
    bool timing() const { return m_thresholdNs > 0; }
    void setRecording(bool on) { m_recording = on; }
    void printSlow() const
    {
        std::vector<std::pair<QString, Slow>> all(m_slow.cbegin(), m_slow.cend());
        std::sort(all.begin(), all.end(),
                  [](const auto &a, const auto &b) { return a.second.totalMs > b.second.totalMs; });
        std::fprintf(stderr,
                     "events over %.1f ms in the loaded window (count, total ms, max ms):\n",
                     double(m_thresholdNs) / 1e6);
        for (const auto &[what, slow] : all)
            std::fprintf(stderr, "  %5d %9.1f %8.1f  %s\n", slow.count, slow.totalMs, slow.maxMs,
                         qPrintable(what));
    }

private:
    struct Slow
    {
        int count = 0;
        double totalMs = 0;
        double maxMs = 0;
    };

    bool dispatch(QObject *receiver, QEvent *event)
    {
        ++m_depth;
        const bool result = QApplication::notify(receiver, event);
        --m_depth;
        return result;
    }

    int m_depth = 0;
    qint64 m_thresholdNs = 0;
    bool m_recording = false;
    std::map<QString, Slow> m_slow;
};

} // namespace rankdeck::bench
