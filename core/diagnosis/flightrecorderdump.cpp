// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/flightrecorderdump.h"

#include "util/printabletext.h"
#include "util/translation.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QRegularExpression>

#include <limits>

namespace rankdeck {

namespace {

// A dump's strings, cut to the limit at a character boundary and with lone surrogates (a JSON
// "\ud800" escape) replaced, so that writing and reading the dump again gives the same text.
QString bounded(const QString &in)
{
    QString s = in.left(frlimits::MaxString);
    if (!s.isEmpty() && s.back().isHighSurrogate())
        s.chop(1);
    for (qsizetype i = 0; i < s.size(); ++i) {
        const bool pairStart =
            s[i].isHighSurrogate() && i + 1 < s.size() && s[i + 1].isLowSurrogate();
        if (pairStart)
            ++i;
        else if (s[i].isSurrogate())
            s[i] = QChar::ReplacementCharacter;
    }
    return s;
}

// A name from the dump, for an error message.
QString quoted(const QString &name)
{
    return QLatin1Char('"') + printableLabel(name, 60) + QLatin1Char('"');
}

// Reading stops at the first problem; `fail` records it and every reader returns false.
class Reader
{
public:
    QString error;

    bool fail(const QString &where, const QString &what)
    {
        if (error.isEmpty())
            error = where.isEmpty() ? what : where + QStringLiteral(": ") + what;
        return false;
    }

    bool integer(const QJsonValue &v, const QString &where, const char *field, qint64 min,
                 qint64 *out)
    {
        const qint64 none = std::numeric_limits<qint64>::min();
        const qint64 n = v.isDouble() ? v.toInteger(none) : none;
        if (n == none || n < min)
            return fail(
                where,
                tr("%1 is not an integer of at least %2").arg(QLatin1String(field)).arg(min));
        *out = n;
        return true;
    }

    // pg_status writes its numbers as strings; a number is taken too.
    bool integerOrString(const QJsonValue &v, const QString &where, const char *field, qint64 *out)
    {
        if (v.isString()) {
            bool ok = false;
            const qint64 n = v.toString().trimmed().toLongLong(&ok);
            if (!ok || n < -1)
                return fail(where, tr("%1 %2 is not a number of at least -1")
                                       .arg(QLatin1String(field), quoted(v.toString())));
            *out = n;
            return true;
        }
        return integer(v, where, field, -1, out);
    }

    bool string(const QJsonValue &v, const QString &where, const char *field, QString *out)
    {
        if (!v.isString())
            return fail(where, tr("%1 is not a string").arg(QLatin1String(field)));
        *out = bounded(v.toString());
        return true;
    }

    bool boolean(const QJsonValue &v, const QString &where, const char *field, bool *out)
    {
        if (!v.isBool())
            return fail(where, tr("%1 is not true or false").arg(QLatin1String(field)));
        *out = v.toBool();
        return true;
    }

    bool sizes(const QJsonValue &v, const QString &where, const char *field,
               QList<QList<qint64>> *out)
    {
        if (!v.isArray())
            return fail(where, tr("%1 is not a list of tensor sizes").arg(QLatin1String(field)));
        const QJsonArray tensors = v.toArray();
        if (tensors.size() > frlimits::MaxTensors)
            return fail(where, tr("%1 lists %2 tensors, more than %3")
                                   .arg(QLatin1String(field))
                                   .arg(tensors.size())
                                   .arg(frlimits::MaxTensors));
        for (const auto &t : tensors) {
            if (!t.isArray() || t.toArray().size() > frlimits::MaxDims)
                return fail(where, tr("%1 holds something that is not a tensor's sizes (a list "
                                      "of at most %2 numbers)")
                                       .arg(QLatin1String(field))
                                       .arg(frlimits::MaxDims));
            QList<qint64> dims;
            for (const QJsonArray items = t.toArray(); const auto &d : items) {
                qint64 n = 0;
                if (!integer(d, where, field, 0, &n))
                    return false;
                dims << n;
            }
            *out << dims;
        }
        return true;
    }

    bool strings(const QJsonValue &v, const QString &where, const char *field, QStringList *out)
    {
        if (!v.isArray() || v.toArray().size() > frlimits::MaxTensors)
            return fail(where, tr("%1 is not a list of at most %2 strings")
                                   .arg(QLatin1String(field))
                                   .arg(frlimits::MaxTensors));
        for (const QJsonArray items = v.toArray(); const auto &s : items) {
            if (!s.isString())
                return fail(
                    where, tr("%1 holds something that is not a string").arg(QLatin1String(field)));
            *out << bounded(s.toString());
        }
        return true;
    }

    // An optional field: absent is fine, present must have the right type.
    template <typename T, typename Fn>
    bool optional(const QJsonObject &o, const char *field, T *out, Fn read)
    {
        const QJsonValue v = o.value(QLatin1String(field));
        return v.isUndefined() || v.isNull() || read(v, out);
    }

    bool entry(const QJsonValue &value, const QString &where, FlightRecorderEntry *e)
    {
        if (!value.isObject())
            return fail(where, tr("not an object"));
        const QJsonObject o = value.toObject();
        const QJsonValue pg = o.value(QLatin1String("process_group"));
        const QJsonArray pair = pg.toArray();
        if (!pg.isArray() || pair.size() != 2 || !pair[0].isString() || !pair[1].isString())
            return fail(where, tr("process_group is not [name, desc]"));
        e->groupName = bounded(pair[0].toString());
        e->groupDesc = bounded(pair[1].toString());
        QString profiling;
        if (!integer(o.value(QLatin1String("collective_seq_id")), where, "collective_seq_id", 0,
                     &e->collectiveSeq) ||
            !string(o.value(QLatin1String("profiling_name")), where, "profiling_name",
                    &profiling) ||
            !integer(o.value(QLatin1String("time_created_ns")), where, "time_created_ns", 0,
                     &e->timeCreatedNs))
            return false;
        const qsizetype colon = profiling.indexOf(QLatin1Char(':'));
        e->backend = colon < 0 ? QString() : profiling.left(colon);
        e->op = colon < 0 ? profiling : profiling.mid(colon + 1);
        // Without pg_id the name stands for it: torch numbers both alike ("0"/0, "1"/1).
        e->pgId = qMax<qint64>(0, e->groupName.toLongLong());
        e->state = QStringLiteral("scheduled");
        auto num = [&](const char *field, qint64 min) {
            return [this, where, field, min](const QJsonValue &v, qint64 *out) {
                return integer(v, where, field, min, out);
            };
        };
        auto flag = [&](const char *field) {
            return [this, where, field](const QJsonValue &v, bool *out) {
                return boolean(v, where, field, out);
            };
        };
        auto size = [&](const char *field) {
            return [this, where, field](const QJsonValue &v, QList<QList<qint64>> *out) {
                return sizes(v, where, field, out);
            };
        };
        auto names = [&](const char *field) {
            return [this, where, field](const QJsonValue &v, QStringList *out) {
                return strings(v, where, field, out);
            };
        };
        return optional(o, "pg_id", &e->pgId, num("pg_id", 0)) &&
               optional(o, "record_id", &e->recordId, num("record_id", 0)) &&
               optional(o, "p2p_seq_id", &e->p2pSeq, num("p2p_seq_id", 0)) &&
               optional(o, "op_id", &e->opId, num("op_id", 0)) &&
               optional(o, "timeout_ms", &e->timeoutMs, num("timeout_ms", 0)) &&
               optional(o, "is_p2p", &e->isP2p, flag("is_p2p")) &&
               optional(o, "retired", &e->retired, flag("retired")) &&
               optional(o, "input_sizes", &e->inputSizes, size("input_sizes")) &&
               optional(o, "output_sizes", &e->outputSizes, size("output_sizes")) &&
               optional(o, "input_dtypes", &e->inputDtypes, names("input_dtypes")) &&
               optional(o, "output_dtypes", &e->outputDtypes, names("output_dtypes")) &&
               optional(o, "state", &e->state, [this, where](const QJsonValue &v, QString *out) {
                   return string(v, where, "state", out);
               });
    }

    bool groupConfig(const QString &key, const QJsonValue &value, FlightRecorderGroup *g)
    {
        const QString where = tr("pg_config %1").arg(quoted(key));
        const QJsonObject o = value.toObject();
        if (!value.isObject())
            return fail(where, tr("not an object"));
        if (!optional(
                o, "name", &g->name,
                [&](const QJsonValue &v, QString *out) { return string(v, where, "name", out); }) ||
            !optional(o, "desc", &g->desc, [&](const QJsonValue &v, QString *out) {
                return string(v, where, "desc", out);
            }))
            return false;
        const QJsonValue r = o.value(QLatin1String("ranks"));
        if (!r.isString())
            return r.isUndefined() || fail(where, tr("ranks is not a string"));
        // "[0, 1, 2]", as c10d's ranks_str writes it; the text may be long, so no bounded().
        const QString text = r.toString().trimmed();
        if (!text.startsWith(QLatin1Char('[')) || !text.endsWith(QLatin1Char(']')))
            return fail(where, tr("ranks is not a list like \"[0, 1]\""));
        const QStringList parts = text.mid(1, text.size() - 2).split(QLatin1Char(','));
        if (parts.size() > frlimits::MaxGroupRanks)
            return fail(where, tr("more than %1 ranks").arg(frlimits::MaxGroupRanks));
        for (const QString &p : parts) {
            if (p.trimmed().isEmpty() && parts.size() == 1)
                break;
            bool ok = false;
            const int n = p.trimmed().toInt(&ok);
            if (!ok || n < 0)
                return fail(where, tr("ranks is not a list like \"[0, 1]\""));
            g->ranks << n;
        }
        return true;
    }
};

QJsonArray sizesToJson(const QList<QList<qint64>> &sizes)
{
    QJsonArray out;
    for (const QList<qint64> &t : sizes) {
        QJsonArray dims;
        for (qint64 d : t)
            dims.append(d);
        out.append(dims);
    }
    return out;
}

} // namespace

QString FlightRecorderEntry::profilingName() const
{
    // "a:b" must not come back as backend "a" when it was read as op "a:b" without one.
    if (backend.isEmpty() && !op.contains(QLatin1Char(':')))
        return op;
    return backend + QLatin1Char(':') + op;
}

QString FlightRecorderEntry::describe() const
{
    QString name = printableLabel(op, 60);
    if (inputSizes.isEmpty())
        return name;
    QStringList tensors;
    for (qsizetype i = 0; i < inputSizes.size() && i < 4; ++i) {
        QStringList dims;
        for (qint64 d : inputSizes[i])
            dims << QString::number(d);
        tensors << (dims.isEmpty() ? tr("scalar") : dims.join(QChar(0x00d7)));
    }
    if (inputSizes.size() > 4)
        tensors << QStringLiteral("…");
    QStringList dtypes;
    for (const QString &d : inputDtypes) {
        const QString dtype = printableLabel(frDtypeName(d), 30);
        if (!dtypes.contains(dtype) && dtypes.size() < 4)
            dtypes << dtype;
    }
    const QString size =
        inputSizes.size() == 1
            ? tensors.first()
            : tr("%1 tensors (%2)").arg(inputSizes.size()).arg(tensors.join(QStringLiteral(", ")));
    QString text = tr("%1 of %2 %3").arg(name, size, dtypes.join(QLatin1Char('/'))).trimmed();
    // An output of another size (an all-gather's, a reduce-scatter's) is part of the call.
    if (!outputSizes.isEmpty() && frNumel(outputSizes) != frNumel(inputSizes))
        text += tr(" into %1").arg(frNumel(outputSizes));
    return text;
}

const FlightRecorderGroupStatus *FlightRecorderDump::statusOf(qint64 pgId) const
{
    for (const FlightRecorderGroupStatus &s : status)
        if (s.pgId == pgId)
            return &s;
    return nullptr;
}

const FlightRecorderGroup *FlightRecorderDump::group(const QString &name) const
{
    for (const FlightRecorderGroup &g : groups)
        if (g.name == name)
            return &g;
    return nullptr;
}

FlightRecorderDump FlightRecorderDump::parse(const QByteArray &json, QString *error)
{
    auto failed = [error](const QString &why) {
        if (error)
            *error = why;
        return FlightRecorderDump();
    };
    if (json.size() > frlimits::MaxBytes)
        return failed(tr("the dump is %1 bytes, more than the %2 MiB a flight-recorder dump can be")
                          .arg(json.size())
                          .arg(frlimits::MaxBytes / (qint64{1024} * 1024)));
    if (json.trimmed().isEmpty())
        return failed(tr("the dump is empty"));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return failed(tr("not JSON: %1 at byte %2 of %3")
                          .arg(parseError.errorString())
                          .arg(qMin<qsizetype>(parseError.offset, json.size()))
                          .arg(json.size()));
    if (!doc.isObject())
        return failed(tr("not a flight-recorder dump: the JSON is not an object"));
    const QJsonObject top = doc.object();
    if (!top.value(QLatin1String("version")).isString())
        return failed(tr("not a flight-recorder dump: no \"version\" string"));

    // The fields read here are those of torch's writer since 2.4 (collective_seq_id, pg_status
    // by pg_id); version 2.10 is torch 2.14.1's. A later 2.x adds fields, which are ignored; an
    // earlier one or another major one names its fields otherwise, so it is refused, not guessed.
    const QString version = top.value(QLatin1String("version")).toString();
    {
        static const QRegularExpression known(QStringLiteral("^2\\.(\\d{1,4})$"));
        const QRegularExpressionMatch m = known.match(version);
        if (!m.hasMatch() || m.captured(1).toInt() < 4)
            return failed(tr("flight-recorder dump version %1 is not one this build reads (2.4 "
                             "and later 2.x; torch 2.14.1 writes 2.10)")
                              .arg(quoted(version)));
    }
    Reader in;
    FlightRecorderDump d;
    d.version = bounded(version);

    const QJsonValue config = top.value(QLatin1String("pg_config"));
    if (!config.isUndefined() && !config.isObject())
        return failed(tr("pg_config is not an object"));
    const QJsonObject configs = config.toObject();
    if (configs.size() > frlimits::MaxGroups)
        return failed(tr("pg_config lists %1 groups, more than %2")
                          .arg(configs.size())
                          .arg(frlimits::MaxGroups));
    for (auto it = configs.begin(); it != configs.end(); ++it) {
        FlightRecorderGroup g;
        if (!in.groupConfig(it.key(), it.value(), &g))
            return failed(in.error);
        g.name = bounded(it.key()); // the key is the name c10d files the group under
        // Gloo files every group under "" (see the header); two keys alike once cut are one.
        if (!g.name.isEmpty() && !d.group(g.name))
            d.groups << g;
    }

    const QJsonValue statusValue = top.value(QLatin1String("pg_status"));
    if (!statusValue.isUndefined() && !statusValue.isObject())
        return failed(tr("pg_status is not an object"));
    const QJsonObject statuses = statusValue.toObject();
    if (statuses.size() > frlimits::MaxGroups)
        return failed(tr("pg_status lists %1 groups, more than %2")
                          .arg(statuses.size())
                          .arg(frlimits::MaxGroups));
    for (auto it = statuses.begin(); it != statuses.end(); ++it) {
        const QString where = tr("pg_status %1").arg(quoted(it.key()));
        FlightRecorderGroupStatus s;
        bool ok = false;
        s.pgId = it.key().toLongLong(&ok);
        if (!ok || s.pgId < 0)
            return failed(tr("%1: the key is not a process group id").arg(where));
        if (!it.value().isObject())
            return failed(tr("%1: not an object").arg(where));
        const QJsonObject o = it.value().toObject();
        if (!in.integerOrString(o.value(QLatin1String("last_enqueued_collective")), where,
                                "last_enqueued_collective", &s.lastEnqueued) ||
            !in.integerOrString(o.value(QLatin1String("last_completed_collective")), where,
                                "last_completed_collective", &s.lastCompleted))
            return failed(in.error);
        const QJsonValue started = o.value(QLatin1String("last_started_collective"));
        if (!started.isUndefined() &&
            !in.integerOrString(started, where, "last_started_collective", &s.lastStarted))
            return failed(in.error);
        if (!d.statusOf(s.pgId)) // "1" and "01" are one group
            d.status << s;
    }

    const QJsonValue entries = top.value(QLatin1String("entries"));
    if (!entries.isUndefined() && !entries.isArray())
        return failed(tr("entries is not a list"));
    const QJsonArray list = entries.toArray();
    // The newest entries say where the ranks are; the oldest are left out past the limit.
    const qsizetype first = qMax<qsizetype>(0, list.size() - frlimits::MaxEntries);
    d.droppedEntries = first;
    d.entries.reserve(list.size() - first);
    for (qsizetype i = first; i < list.size(); ++i) {
        FlightRecorderEntry e;
        if (!in.entry(list[i], tr("entry %1 of %2").arg(i + 1).arg(list.size()), &e))
            return failed(in.error);
        d.entries << e;
    }
    d.valid = true;
    if (error)
        error->clear();
    return d;
}

QByteArray FlightRecorderDump::toJson() const
{
    QJsonObject top;
    top.insert(QLatin1String("version"), version);
    QJsonObject config;
    for (const FlightRecorderGroup &g : groups) {
        QStringList ranks;
        for (int r : g.ranks)
            ranks << QString::number(r);
        config.insert(g.name, QJsonObject{{QLatin1String("name"), g.name},
                                          {QLatin1String("desc"), g.desc},
                                          {QLatin1String("ranks"),
                                           QLatin1Char('[') + ranks.join(QStringLiteral(", ")) +
                                               QLatin1Char(']')}});
    }
    top.insert(QLatin1String("pg_config"), config);
    QJsonObject statuses;
    for (const FlightRecorderGroupStatus &s : status)
        statuses.insert(
            QString::number(s.pgId),
            QJsonObject{
                {QLatin1String("last_enqueued_collective"), QString::number(s.lastEnqueued)},
                {QLatin1String("last_started_collective"), QString::number(s.lastStarted)},
                {QLatin1String("last_completed_collective"), QString::number(s.lastCompleted)}});
    top.insert(QLatin1String("pg_status"), statuses);
    QJsonArray list;
    for (const FlightRecorderEntry &e : entries) {
        QJsonObject o;
        o.insert(QLatin1String("record_id"), e.recordId);
        o.insert(QLatin1String("pg_id"), e.pgId);
        o.insert(QLatin1String("process_group"), QJsonArray{e.groupName, e.groupDesc});
        o.insert(QLatin1String("collective_seq_id"), e.collectiveSeq);
        o.insert(QLatin1String("p2p_seq_id"), e.p2pSeq);
        o.insert(QLatin1String("op_id"), e.opId);
        o.insert(QLatin1String("profiling_name"), e.profilingName());
        o.insert(QLatin1String("time_created_ns"), e.timeCreatedNs);
        o.insert(QLatin1String("input_sizes"), sizesToJson(e.inputSizes));
        o.insert(QLatin1String("input_dtypes"), QJsonArray::fromStringList(e.inputDtypes));
        o.insert(QLatin1String("output_sizes"), sizesToJson(e.outputSizes));
        o.insert(QLatin1String("output_dtypes"), QJsonArray::fromStringList(e.outputDtypes));
        o.insert(QLatin1String("state"), e.state);
        o.insert(QLatin1String("retired"), e.retired);
        o.insert(QLatin1String("timeout_ms"), e.timeoutMs);
        o.insert(QLatin1String("is_p2p"), e.isP2p);
        list.append(o);
    }
    if (!list.isEmpty())
        top.insert(QLatin1String("entries"), list);
    return QJsonDocument(top).toJson(QJsonDocument::Compact);
}

qint64 frNumel(const QList<QList<qint64>> &sizes)
{
    qint64 total = 0;
    for (const QList<qint64> &t : sizes) {
        qint64 n = 1;
        for (qint64 d : t)
            n *= qMax<qint64>(d, 0);
        total += n;
    }
    return total;
}

QString frDtypeName(const QString &torchName)
{
    static const QHash<QString, QString> names = {
        {QStringLiteral("Float"), QStringLiteral("float32")},
        {QStringLiteral("Double"), QStringLiteral("float64")},
        {QStringLiteral("Half"), QStringLiteral("float16")},
        {QStringLiteral("BFloat16"), QStringLiteral("bfloat16")},
        {QStringLiteral("Long"), QStringLiteral("int64")},
        {QStringLiteral("Int"), QStringLiteral("int32")},
        {QStringLiteral("Short"), QStringLiteral("int16")},
        {QStringLiteral("Char"), QStringLiteral("int8")},
        {QStringLiteral("Byte"), QStringLiteral("uint8")},
        {QStringLiteral("Bool"), QStringLiteral("bool")},
        {QStringLiteral("ComplexFloat"), QStringLiteral("complex64")},
        {QStringLiteral("ComplexDouble"), QStringLiteral("complex128")},
        {QStringLiteral("ComplexHalf"), QStringLiteral("complex32")},
    };
    return names.value(torchName, torchName.toLower());
}

} // namespace rankdeck
