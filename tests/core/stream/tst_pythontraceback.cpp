// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Python parsers on what CPython really prints (tests/core/stream/data, made by the
// programs in data/src with the project's venv and pyenv's 3.12/3.13), on torchelastic's error
// file, and on hostile text: cut off, binary, huge lines, 10^6 frames.
#include "stream/pythontraceback.h"

#include <QFile>
#include <QJsonDocument>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

QString sample(const QString &name)
{
    QFile f(QStringLiteral(RANKDECK_TEST_DATA "/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test data %s", qPrintable(name));
    return QString::fromUtf8(f.readAll());
}

QString where(const PythonFrame &f)
{
    return QStringLiteral("%1:%2 %3").arg(f.file.section(u'/', -1)).arg(f.line).arg(f.function);
}

} // namespace

class TestPythonTraceback : public QObject
{
    Q_OBJECT
private slots:
    void parsesTracebacks_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("types"); // the chain, printed order
        QTest::addColumn<QStringList>("chainedBy");
        QTest::addColumn<QString>("message"); // of the last
        QTest::addColumn<int>("frames");      // of the last
        QTest::addColumn<QString>("innermost");
        QTest::addColumn<QString>("source"); // of the innermost frame

        QTest::newRow("simple, ^^^ markers (3.11)")
            << sample(u"simple.txt"_s) << QStringList{u"ValueError"_s} << QStringList{QString()}
            << u"invalid literal for int() with base 10: 'bad batch'"_s << 4
            << u"simple.py:6 compute"_s << u"return int(batch[\"value\"]) * 2"_s;
        QTest::newRow("simple, ~~^^ markers (3.13)")
            << sample(u"simple_py313.txt"_s) << QStringList{u"ValueError"_s}
            << QStringList{QString()} << u"invalid literal for int() with base 10: 'bad batch'"_s
            << 4 << u"simple.py:6 compute"_s << u"return int(batch[\"value\"]) * 2"_s;
        QTest::newRow("coloured (3.13, FORCE_COLOR)")
            << sample(u"simple_py313_color.txt"_s) << QStringList{u"ValueError"_s}
            << QStringList{QString()} << u"invalid literal for int() with base 10: 'bad batch'"_s
            << 4 << u"simple.py:6 compute"_s << u"return int(batch[\"value\"]) * 2"_s;
        QTest::newRow("raise from (cause)")
            << sample(u"chained_cause.txt"_s)
            << QStringList{u"FileNotFoundError"_s, u"RuntimeError"_s}
            << QStringList{QString(), u"cause"_s} << u"cannot load config /nonexistent/cfg.yaml"_s
            << 2 << u"cause.py:5 read_config"_s
            << u"raise RuntimeError(f\"cannot load config {path}\") from e"_s;
        QTest::newRow("during handling (context)")
            << sample(u"chained_context.txt"_s)
            << QStringList{u"KeyError"_s, u"ZeroDivisionError"_s}
            << QStringList{QString(), u"context"_s} << u"division by zero"_s << 2
            << u"context.py:5 step"_s << u"return 1 / 0"_s;
        QTest::newRow("SyntaxError in an import")
            << sample(u"syntax_import.txt"_s) << QStringList{u"SyntaxError"_s}
            << QStringList{QString()} << u"invalid syntax"_s << 2 << u"broken_mod.py:1 "_s
            << u"def f(:"_s;
        QTest::newRow("SyntaxError in the script: no header")
            << sample(u"syntax_main.txt"_s) << QStringList{u"SyntaxError"_s}
            << QStringList{QString()} << u"invalid syntax"_s << 1 << u"syntax_main.py:2 "_s
            << u"def f(:"_s;
        QTest::newRow("multi-line message")
            << sample(u"multiline_message.txt"_s) << QStringList{u"AssertionError"_s}
            << QStringList{QString()}
            << u"shapes do not match:\n  expected (32, 128)\n  got      (32, 64)"_s << 2
            << u"multiline.py:2 check"_s
            << u"raise AssertionError(\"shapes do not match:\\n  expected (32, 128)\\n  got      "
               u"(32, 64)\")"_s;
        QTest::newRow("KeyboardInterrupt: no message")
            << sample(u"keyboardinterrupt.txt"_s) << QStringList{u"KeyboardInterrupt"_s}
            << QStringList{QString()} << QString() << 2 << u"kbint.py:3 wait"_s
            << u"os.kill(os.getpid(), signal.SIGINT)"_s;
        QTest::newRow("ExceptionGroup (3.11)")
            << sample(u"exceptiongroup.txt"_s) << QStringList{u"ExceptionGroup"_s}
            << QStringList{QString()} << u"two workers failed (2 sub-exceptions)"_s << 2
            << u"group.py:8 run"_s << u"raise ExceptionGroup(\"two workers failed\", errs)"_s;
        QTest::newRow("ExceptionGroup (3.13)")
            << sample(u"exceptiongroup_py313.txt"_s) << QStringList{u"ExceptionGroup"_s}
            << QStringList{QString()} << u"two workers failed (2 sub-exceptions)"_s << 2
            << u"group.py:8 run"_s << u"raise ExceptionGroup(\"two workers failed\", errs)"_s;
        QTest::newRow("ExceptionGroup as a cause")
            << sample(u"exceptiongroup_cause.txt"_s)
            << QStringList{u"ExceptionGroup"_s, u"RuntimeError"_s}
            << QStringList{QString(), u"cause"_s} << u"training aborted"_s << 2
            << u"groupchain.py:5 run"_s << u"raise RuntimeError(\"training aborted\") from g"_s;
        QTest::newRow("own exception class, message on two lines")
            << sample(u"custom_multiline.txt"_s) << QStringList{u"BatchError"_s}
            << QStringList{QString()} << u"bad batch 12\nshape (3, 4)"_s << 2
            << u"ctx_nested.py:4 f"_s << u"raise BatchError(\"bad batch 12\\nshape (3, 4)\")"_s;
        QTest::newRow("RecursionError: repeated line")
            << sample(u"recursion.txt"_s) << QStringList{u"RecursionError"_s}
            << QStringList{QString()} << u"maximum recursion depth exceeded"_s << 4
            << u"recur.py:2 r"_s << u"return r(n + 1)"_s;
        QTest::newRow("gloo echo with torch's [rank0]: prefix")
            << sample(u"gloo_peer_closed.txt"_s) << QStringList{u"RuntimeError"_s}
            << QStringList{QString()}
            << u"[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:561] "
               u"Connection closed by peer [127.0.0.1]:16582. This is typically caused by a "
               u"remote worker crashing. Check the logs of the remote worker before reporting "
               u"an error. GLHF! 🏖️"_s
            << 3 << u"distributed_c10d.py:3913 all_reduce"_s << u"work.wait()"_s;
        QTest::newRow("TCPStore broken pipe")
            << sample(u"store_broken_pipe.txt"_s)
            << QStringList{u"torch.distributed.DistNetworkError"_s} << QStringList{QString()}
            << u"Broken pipe"_s << 1 << u"store.py:11 <module>"_s << u"s.get(\"missing\")"_s;
        QTest::newRow("torchrun's [default0]: prefix")
            << u"[default0]:Traceback (most recent call last):\n"
               u"[default0]:  File \"/job/train.py\", line 7, in <module>\n"
               u"[default0]:    main()\n"
               u"[default0]:ValueError: bad batch\n"_s
            << QStringList{u"ValueError"_s} << QStringList{QString()} << u"bad batch"_s << 1
            << u"train.py:7 <module>"_s << u"main()"_s;
        // The last complete traceback counts; a later one cut off before its exception line
        // does not replace it.
        QTest::newRow("cut off after a complete one")
            << sample(u"simple.txt"_s) +
                   u"\nstep 4 done\nTraceback (most recent call last):\n  File \"/x.py\", line 1, "
                   u"in <module>\n"_s
            << QStringList{u"ValueError"_s} << QStringList{QString()}
            << u"invalid literal for int() with base 10: 'bad batch'"_s << 4
            << u"simple.py:6 compute"_s << u"return int(batch[\"value\"]) * 2"_s;
        // A chain whose second link is cut off: the first stays.
        QTest::newRow("cut off chain")
            << sample(u"chained_cause.txt"_s).section(u"RuntimeError: cannot"_s, 0, 0)
            << QStringList{u"FileNotFoundError"_s} << QStringList{QString()}
            << u"[Errno 2] No such file or directory: '/nonexistent/cfg.yaml'"_s << 1
            << u"cause.py:3 read_config"_s << u"open(path)"_s;
        // Text between two tracebacks that is not Python's separator sentence: two tracebacks.
        QTest::newRow("not a separator")
            << sample(u"chained_context.txt"_s)
                   .replace(u"During handling of the above exception, another exception "
                            u"occurred:"_s,
                            u"retrying"_s)
            << QStringList{u"ZeroDivisionError"_s} << QStringList{QString()}
            << u"division by zero"_s << 2 << u"context.py:5 step"_s << u"return 1 / 0"_s;
        // The message ends at a blank line or at a log line of another source.
        QTest::newRow("message ends at a c10 log line")
            << u"Traceback (most recent call last):\n  File \"/a.py\", line 3, in f\n"
               u"RuntimeError: CUDA error: out of memory\nFor debugging consider passing "
               u"CUDA_LAUNCH_BLOCKING=1\n[W1201 11:46:27.823792222 ProcessGroupNCCL.cpp:1500] "
               u"Warning: destroy_process_group() was not called\n"_s
            << QStringList{u"RuntimeError"_s} << QStringList{QString()}
            << u"CUDA error: out of memory\nFor debugging consider passing "
               u"CUDA_LAUNCH_BLOCKING=1"_s
            << 1 << u"a.py:3 f"_s << QString();
        // Python gives no end to a message: a line that follows it at once, and is not a log
        // line of another kind, is taken as its next line (bounded; see pythontracebackreader.h).
        QTest::newRow("a line right after the message")
            << u"Traceback (most recent call last):\n  File \"/a.py\", line 3, in f\n"
               u"KeyError: 'lr'\nretrying step 4\n\nstep 5 loss=0.2\n"_s
            << QStringList{u"KeyError"_s} << QStringList{QString()} << u"'lr'\nretrying step 4"_s
            << 1 << u"a.py:3 f"_s << QString();
        // Issue 27: torch writes a NUL before a DataLoader worker's death's traceback, which the
        // launcher's lines show as "␀" (LineSplitter::displayText()).
        const auto workerDeathAfter =
            [](QChar lead, const char *name) {
                QTest::newRow(name)
                    << QString(u"step 3\n"_s + lead +
                               u"[rank1]: Traceback (most recent call last):\n"
                               u"[rank1]:   File \"/job/train.py\", line 7, in <module>\n"
                               u"[rank1]:     main()\n"
                               u"[rank1]: RuntimeError: DataLoader worker (pid 42) is killed by "
                               u"signal: Segmentation fault. \n"_s)
                    << QStringList{u"RuntimeError"_s} << QStringList{QString()}
                    << u"DataLoader worker (pid 42) is killed by signal: Segmentation fault. "_s
                    << 1 << u"train.py:7 <module>"_s << u"main()"_s;
            };
        workerDeathAfter(QChar(0), "a NUL before torch's [rank1]: prefix");
        workerDeathAfter(QChar(0x2400), "a NUL shown as ␀ before torch's [rank1]: prefix");
        // A progress bar's unfinished row, then the traceback on the same line (issue 27).
        QTest::newRow("a header after a progress bar's row")
            << u" 25%|██▌       | 4/16 [00:00<00:00, 15.96it/s][rank0]: Traceback (most "
               u"recent call last):\n"
               u"[rank0]:   File \"/job/train.py\", line 80, in on_step_end\n"
               u"[rank0]:     self.limits[\"clip\"]\n"
               u"[rank0]: KeyError: 'clip'\n"
               u" 25%|██▌       | 4/16 [00:01<00:03,  3.90it/s]\n"_s
            << QStringList{u"KeyError"_s} << QStringList{QString()} << u"'clip'"_s << 1
            << u"train.py:80 on_step_end"_s << u"self.limits[\"clip\"]"_s;
        QTest::newRow("nothing") << u"epoch 1 loss=0.3\nTraceback is a word\n"_s << QStringList()
                                 << QStringList() << QString() << 0 << QString() << QString();
    }

    void parsesTracebacks()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, types);
        QFETCH(QStringList, chainedBy);
        QFETCH(QString, message);
        QFETCH(int, frames);
        QFETCH(QString, innermost);
        QFETCH(QString, source);
        const QList<PythonException> chain = parsePythonTraceback(text);
        QStringList gotTypes, gotChained;
        for (const PythonException &e : chain) {
            gotTypes << e.type;
            gotChained << e.chainedBy;
        }
        QCOMPARE(gotTypes, types);
        QCOMPARE(gotChained, chainedBy);
        if (types.isEmpty())
            return;
        const PythonException &last = chain.last();
        QCOMPARE(last.message, message);
        QCOMPARE(last.frames.size(), frames);
        QCOMPARE(where(last.frames.first()), innermost);
        QCOMPARE(last.frames.first().source, source);
        for (const PythonException &e : chain)
            for (const PythonFrame &f : e.frames)
                QVERIFY2(!f.source.startsWith(u'^') && !f.source.startsWith(u'~'),
                         qPrintable(f.source)); // marker lines are dropped
    }

    void formatsLikePython_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("simple") << u"simple.txt"_s;
        QTest::newRow("cause") << u"chained_cause.txt"_s;
        QTest::newRow("context") << u"chained_context.txt"_s;
        QTest::newRow("multi-line") << u"multiline_message.txt"_s;
        QTest::newRow("own class, two lines") << u"custom_multiline.txt"_s;
        QTest::newRow("KeyboardInterrupt") << u"keyboardinterrupt.txt"_s;
        QTest::newRow("syntax") << u"syntax_import.txt"_s;
    }

    // Python's own text less the ^^^ marker lines: what formatPythonTraceback() gives back.
    void formatsLikePython()
    {
        QFETCH(QString, file);
        const QString text = sample(file);
        QStringList expected;
        for (const QString &line : text.split(u'\n')) {
            const QString t = line.trimmed();
            if (!t.isEmpty() && t.count(u'^') + t.count(u'~') == t.size())
                continue;
            expected << line;
        }
        // Source lines come back trimmed behind four spaces; SyntaxError's too.
        QString got = formatPythonTraceback(parsePythonTraceback(text));
        QCOMPARE(got, expected.join(u'\n'));
    }

    void marksInnermostUserFrame()
    {
        const QString text =
            formatPythonTraceback(parsePythonTraceback(sample(u"gloo_peer_closed.txt"_s)), true);
        const QStringList marked = text.split(u'\n').filter(u"→ File"_s);
        QCOMPARE(marked.size(), 1);
        QVERIFY2(marked.first().contains(u"gloo.py\", line 9"_s), qPrintable(text));
    }

    void userFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("user");
        QTest::newRow("script") << u"/home/u/train.py"_s << true;
        QTest::newRow("relative") << u"train.py"_s << true;
        QTest::newRow("site-packages")
            << u"/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py"_s
            << false;
        QTest::newRow("dist-packages")
            << u"/usr/lib/python3/dist-packages/numpy/core.py"_s << false;
        QTest::newRow("stdlib") << u"/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py"_s
                                << false;
        QTest::newRow("stdlib free-threaded") << u"/usr/lib/python3.13t/threading.py"_s << false;
        QTest::newRow("frozen") << u"<frozen runpy>"_s << false;
        QTest::newRow("string") << u"<string>"_s << false;
        QTest::newRow("rankdeck helper") << u"/src/rankdeck/python/rankdeck/__init__.py"_s << false;
        QTest::newRow("rankdeck's startup hook, local run")
            << u"/home/u/.local/share/rankdeck/runs/a-1/rank-0/python/sitecustomize.py"_s << false;
        QTest::newRow("rankdeck's startup hook, node")
            << u"/home/u/.cache/rankdeck/worker/runs/a-1/python/sitecustomize.py"_s << false;
        QTest::newRow("rankdeck's startup hook, Slurm shared folder")
            << u"/scratch/alice/runs/20261207-042608-envd-a372/rank-3/python/sitecustomize.py"_s
            << false;
        QTest::newRow("the user's own sitecustomize")
            << u"/home/u/project/sitecustomize.py"_s << true;
        QTest::newRow("a project under lib") << u"/home/u/lib/model.py"_s << true;
        QTest::newRow("empty") << QString() << false;
    }

    void userFiles()
    {
        QFETCH(QString, file);
        QFETCH(bool, user);
        QCOMPARE(isUserFile(file), user);
    }

    void parsesFaultDumps_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("fatal");
        QTest::addColumn<QStringList>("threads"); // id, "*" for the current one
        QTest::addColumn<QString>("currentInnermost");
        QTest::addColumn<int>("currentUserFrame");
        QTest::addColumn<QStringList>("notes");

        QTest::newRow("segfault, 2 threads (3.11)")
            << sample(u"segv_threads.txt"_s) << u"Segmentation fault"_s
            << QStringList{u"0x00007fdaaa0776c0"_s, u"*0x00007fdaaabf7b80"_s}
            << u"__init__.py:519 string_at"_s << 1 << QStringList{QString(), QString()};
        QTest::newRow("segfault, 2 threads (3.12)")
            << sample(u"segv_threads_py312.txt"_s) << u"Segmentation fault"_s
            << QStringList{u"0x00007f72972ee6c0"_s, u"*0x00007f7297f6ab80"_s}
            << u"__init__.py:525 string_at"_s << 1 << QStringList{QString(), QString()};
        QTest::newRow("one thread: Stack")
            << sample(u"segv_stack.txt"_s) << u"Segmentation fault"_s << QStringList{u"*"_s}
            << u"__init__.py:519 string_at"_s << -1 << QStringList{QString()};
        QTest::newRow("markers, thread name, C stack, extension modules")
            << sample(u"faulthandler_synthetic.txt"_s) << u"Aborted"_s
            << QStringList{u"0x00007f0a1c5ff6c0"_s, u"0x00007f0a1cdff6c0"_s,
                           u"*0x00007f0a2e1e7740"_s}
            << u"distributed_c10d.py:2501 all_reduce"_s << 1
            << QStringList{u"<no Python frame>"_s, u"Garbage-collecting"_s, u"..."_s};
        QTest::newRow("dump on request: no fatal line")
            << u"Thread 0x01 (most recent call first):\n  File \"/a/t.py\", line 3 in run\n\n"
               u"Current thread 0x02 (most recent call first):\n  File \"/a/m.py\", line 9 in "
               u"main\nloss=0.3\n"_s
            << QString() << QStringList{u"0x01"_s, u"*0x02"_s} << u"m.py:9 main"_s << 0
            << QStringList{QString(), QString()};
        QTest::newRow("the last of two dumps")
            << sample(u"segv_stack.txt"_s) + sample(u"segv_threads.txt"_s)
            << u"Segmentation fault"_s
            << QStringList{u"0x00007fdaaa0776c0"_s, u"*0x00007fdaaabf7b80"_s}
            << u"__init__.py:519 string_at"_s << 1 << QStringList{QString(), QString()};
        QTest::newRow("a traceback is no dump")
            << sample(u"simple.txt"_s) << QString() << QStringList() << QString() << -1
            << QStringList();
    }

    void parsesFaultDumps()
    {
        QFETCH(QString, text);
        QFETCH(QString, fatal);
        QFETCH(QStringList, threads);
        QFETCH(QString, currentInnermost);
        QFETCH(int, currentUserFrame);
        QFETCH(QStringList, notes);
        const PythonFaultDump dump = parseFaultHandlerDump(text);
        QCOMPARE(dump.fatalError, fatal);
        QStringList ids, gotNotes;
        for (const PythonThreadStack &t : dump.threads) {
            ids << (t.current ? u"*"_s : QString()) + t.threadId;
            gotNotes << t.note.section(u'\n', 0, 0);
        }
        QCOMPARE(ids, threads);
        QCOMPARE(gotNotes, notes);
        if (threads.isEmpty()) {
            QVERIFY(dump.isEmpty());
            return;
        }
        const PythonThreadStack *current = dump.currentThread();
        QVERIFY(current);
        QCOMPARE(where(current->frames.first()), currentInnermost);
        QCOMPARE(innermostUserFrame(current->frames), currentUserFrame);
        // Formatting gives faulthandler's own lines back.
        const QString formatted = formatFaultDump(dump);
        for (const PythonThreadStack &t : dump.threads)
            for (const PythonFrame &f : t.frames)
                QVERIFY2(text.contains(QStringLiteral("  File \"%1\", line %2 in %3\n")
                                           .arg(f.file, f.line ? QString::number(f.line) : u"???"_s,
                                                f.function)),
                         qPrintable(formatted));
        QCOMPARE(parseFaultHandlerDump(formatted), dump);
    }

    void parsesElasticErrorFile_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("message");
        QTest::addColumn<int>("frames");
        QTest::addColumn<qint64>("timeUs");
        QTest::newRow("@record") << sample(u"elastic_error.json"_s).toUtf8() << u"ValueError"_s
                                 << u"bad batch on rank 1"_s << 2 << qint64(1796125520000000);
        QTest::newRow("plain form")
            << QByteArray(R"({"message": "RuntimeError: NCCL error", "timestamp": 1700000000})")
            << u"RuntimeError"_s << u"NCCL error"_s << 0 << qint64(1700000000000000);
        QTest::newRow("no call stack")
            << QByteArray(R"({"message": {"message": "KeyError: 'lr'", "extraInfo": )"
                          R"({"py_callstack": "", "timestamp": "1700000001"}}})")
            << u"KeyError"_s << u"'lr'"_s << 0 << qint64(1700000001000000);
        QTest::newRow("not a type") << QByteArray(R"({"message": "process 3 exited oddly"})")
                                    << QString() << u"process 3 exited oddly"_s << 0 << qint64(0);
        QTest::newRow("garbage") << QByteArray("\x01\x02{not json") << QString() << QString() << -1
                                 << qint64(0);
        QTest::newRow("wrong shape")
            << QByteArray(R"({"message": 12})") << QString() << QString() << -1 << qint64(0);
        QTest::newRow("array") << QByteArray("[1,2]") << QString() << QString() << -1 << qint64(0);
    }

    void parsesElasticErrorFile()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, type);
        QFETCH(QString, message);
        QFETCH(int, frames);
        QFETCH(qint64, timeUs);
        qint64 t = -5;
        const QList<PythonException> chain = parseElasticErrorFile(json, &t);
        QCOMPARE(t, timeUs);
        if (frames < 0) {
            QVERIFY(chain.isEmpty());
            return;
        }
        QCOMPARE(chain.size(), 1);
        QCOMPARE(chain.last().type, type);
        QCOMPARE(chain.last().message, message);
        QCOMPARE(chain.last().frames.size(), frames);
        QVERIFY(parseElasticErrorFile(json).size() == 1); // without a time wanted
    }

    void roundTripsThroughJson()
    {
        QList<PythonException> chain = parsePythonTraceback(sample(u"chained_cause.txt"_s));
        chain.last().framesOmitted = 3;
        QVERIFY(chain.size() == 2);
        const QByteArray bytes = QJsonDocument(pythonChainToJson(chain)).toJson();
        QCOMPARE(pythonChainFromJson(QJsonDocument::fromJson(bytes).array()), chain);

        const PythonFaultDump dump = parseFaultHandlerDump(sample(u"faulthandler_synthetic.txt"_s));
        QVERIFY(dump.threads.size() == 3);
        const QByteArray d = QJsonDocument(dump.toJson()).toJson();
        QCOMPARE(PythonFaultDump::fromJson(QJsonDocument::fromJson(d).object()), dump);
        QVERIFY(PythonFaultDump::fromJson({}).isEmpty());
        QVERIFY(pythonChainFromJson({}).isEmpty());
    }

    // What the parsers find survives the run record exactly: the JSON objects and the compact
    // text the record writes. Each row is a kind of input that used to lose something on the
    // way (issue #25: a fuzz finding whose thread id was a run of hex digits longer than the
    // record's own bound); bounded() must leave the parsers' output alone.
    void survivesTheRecord_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("threads");
        const QString frame = u"  File \"/a/t.py\", line 3 in run\n"_s;
        {
            // The fuzz finding itself (its first byte is the fuzz target's split byte).
            QFile f(QStringLiteral(RANKDECK_FUZZ_CORPUS "/pythontraceback/roundtrip-de76b048"));
            if (!f.open(QIODevice::ReadOnly))
                qFatal("missing the fuzz finding roundtrip-de76b048");
            QTest::newRow("fuzz finding de76b048") << QString::fromUtf8(f.readAll().mid(1)) << 4;
        }
        QTest::newRow("thread id of 200 hex digits")
            << u"Thread 0x%1 (most recent call first):\n"_s.arg(QString(200, u'E')) + frame << 1;
        QTest::newRow("two over-long ids equal in their first 64 characters")
            << u"Thread 0x%1A (most recent call first):\n%2\nThread 0x%1B (most recent call "
               u"first):\n%2"_s.arg(QString(100, u'0'), frame)
            << 1;
        QTest::newRow("NUL and control bytes in the header and frames")
            << u"Fatal Python error: Segm\0ent\x01ation\x7f fault\n\nCurrent thread 0x00007f0a "
               u"(most recent call first):\n  File \"/a/\0\x1b[31m.py\", line 3 in f\x02\x03\n"_s
            << 1;
        QTest::newRow("NUL in a thread's note")
            << u"Thread 0x01 (most recent call first):\n  <no \0Python frame>\n"_s << 1;
        QTest::newRow("malformed ids are no headers")
            << u"Thread 0x (most recent call first):\nThread 0xZZ (most recent call first):\n"
               u"Current thread 0x02 (most recent call first):\n"_s +
                   frame
            << 1;
        QTest::newRow("header cut off before its colon")
            << u"Fatal Python error: Aborted\n\nCurrent thread 0x00007f0a2e1e7740 (most rec"_s << 0;
        QTest::newRow("header cut off after a thread")
            << u"Thread 0x01 (most recent call first):\n"_s + frame + u"Current thread 0x02"_s << 1;
        QString notes = u"Thread 0x01 (most recent call first):\n"_s;
        for (int i = 0; i < 50; ++i)
            notes += u"  <note %1 %2>\n"_s.arg(i).arg(QString(90, u'n'));
        QTest::newRow("notes past their bound") << notes << 1;
        QString longId = u"Current thread 0x%1 [%2] (most recent call first):\n"_s.arg(
            QString(70, u'a'), QString(3000, u'n'));
        QTest::newRow("long id and long thread name") << longId + frame << 1;
    }

    void survivesTheRecord()
    {
        QFETCH(QString, text);
        QFETCH(int, threads);
        const PythonFaultDump dump = parseFaultHandlerDump(text);
        QCOMPARE(dump.threads.size(), threads);
        QCOMPARE(dump.bounded(), dump);
        for (const PythonThreadStack &t : dump.threads)
            QVERIFY(t.threadId.size() <= pythonlimits::MaxThreadId);
        QCOMPARE(PythonFaultDump::fromJson(dump.toJson()), dump);
        const QByteArray compact = QJsonDocument(dump.toJson()).toJson(QJsonDocument::Compact);
        QCOMPARE(PythonFaultDump::fromJson(QJsonDocument::fromJson(compact).object()), dump);

        const QList<PythonException> chain = parsePythonTraceback(text);
        const QByteArray chainText =
            QJsonDocument(pythonChainToJson(chain)).toJson(QJsonDocument::Compact);
        QCOMPARE(pythonChainFromJson(QJsonDocument::fromJson(chainText).array()), chain);
    }

    // torchelastic's error file: a "Type: message" summary whose type is longer than any
    // exception type kept comes back bounded, and survives the record.
    void elasticSummaryIsBounded()
    {
        const QByteArray json = "{\"message\": \"" + QByteArray(5000, 'T') + ": boom\"}";
        const QList<PythonException> chain = parseElasticErrorFile(json);
        QCOMPARE(chain.size(), 1);
        QCOMPARE(chain.first().type.size(), pythonlimits::MaxType);
        QCOMPARE(chain.first().bounded(), chain.first());
        QCOMPARE(pythonChainFromJson(pythonChainToJson(chain)), chain);
    }

    void hostileInputStaysBounded_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("traceback");
        QString deep = u"Traceback (most recent call last):\n"_s;
        for (int i = 0; i < 1000000; ++i)
            deep += u"  File \"/a.py\", line %1, in f\n    f()\n"_s.arg(i % 1000 + 1);
        deep += u"RecursionError: deep\n"_s;
        QTest::newRow("10^6 frames") << deep << true;
        QString huge = u"Traceback (most recent call last):\n  File \"/a.py\", line 1, in f\n"_s;
        huge += u"ValueError: "_s + QString(2'000'000, u'x') + u'\n';
        for (int i = 0; i < 100000; ++i)
            huge += u"more message\n"_s;
        QTest::newRow("huge message") << huge << true;
        QByteArray binary(300000, '\0');
        for (int i = 0; i < binary.size(); ++i)
            binary[i] = char((qint64(i) * 7919) % 256); // i * 7919 overflows int past 271181
        QTest::newRow("binary") << QString::fromLatin1(binary) << false;
        QString threads = u"Fatal Python error: Segmentation fault\n"_s;
        const QString thirtyFrames = QString(u"  File \"/a.py\", line 1 in f\n"_s).repeated(30);
        for (int i = 0; i < 100000; ++i)
            threads += u"Thread 0x%1 (most recent call first):\n"_s.arg(i, 0, 16) + thirtyFrames;
        QTest::newRow("10^5 threads") << threads << false;
        QString frames = u"Stack (most recent call first):\n"_s;
        for (int i = 0; i < 100000; ++i)
            frames += u"  File \"/%1.py\", line 1 in f\n"_s.arg(QString(900, u'p'));
        QTest::newRow("10^5 frames in a dump, long names") << frames << false;
        QString chain;
        for (int i = 0; i < 10000; ++i)
            chain += u"Traceback (most recent call last):\n  File \"/a.py\", line 1, in f\n"
                     u"ValueError: %1\n\nDuring handling of the above exception, another "
                     u"exception occurred:\n\n"_s.arg(i);
        chain += u"Traceback (most recent call last):\n  File \"/a.py\", line 2, in g\nE: end\n"_s;
        QTest::newRow("10^4 chained") << chain << true;
    }

    void hostileInputStaysBounded()
    {
        QFETCH(QString, text);
        QFETCH(bool, traceback);
        const QList<PythonException> chain = parsePythonTraceback(text);
        QCOMPARE(!chain.isEmpty(), traceback);
        QVERIFY(chain.size() <= pythonlimits::MaxChain);
        for (const PythonException &e : chain) {
            QVERIFY(e.frames.size() <= pythonlimits::MaxFrames);
            QVERIFY(e.message.size() <= pythonlimits::MaxMessage);
        }
        if (traceback && chain.last().type == u"RecursionError"_s) {
            QCOMPARE(chain.last().framesOmitted + chain.last().frames.size(), 1000000);
            QCOMPARE(chain.last().frames.first().line, 1000); // the innermost are kept
        }
        if (traceback && chain.last().type == u"E"_s)
            QCOMPARE(chain.first().message, QString::number(10000 - (pythonlimits::MaxChain - 1)));
        const PythonFaultDump dump = parseFaultHandlerDump(text);
        QVERIFY(dump.threads.size() <= pythonlimits::MaxThreads);
        qsizetype dumpFrames = 0;
        for (const PythonThreadStack &t : dump.threads) {
            QVERIFY(t.frames.size() <= pythonlimits::MaxThreadFrames);
            dumpFrames += t.frames.size();
        }
        QVERIFY(dumpFrames <= pythonlimits::MaxDumpFrames);
        QVERIFY(dump.fatalError.size() <= pythonlimits::MaxMessage);
        formatPythonTraceback(chain, true);
        formatFaultDump(dump, true);
    }
};

QTEST_APPLESS_MAIN(TestPythonTraceback)
#include "tst_pythontraceback.moc"
