// SPDX-License-Identifier: GPL-3.0-or-later
#include "echokind.h"

#include "config/profile.h"
#include "transport/localtransport.h"

#include <QCommandLineParser>
#include <QJsonArray>

namespace rankdeck::testkind {

QString EchoKind::name() const
{
    return QStringLiteral("echo");
}

QString EchoKind::displayName() const
{
    return QStringLiteral("Echo (tests only)");
}

QList<ProfileField> EchoKind::sectionFields() const
{
    using F = ProfileField;
    return {
        {QStringLiteral("greeting"), F::String, QJsonValue(), 0, 0, true},
        {QStringLiteral("repeat"), F::Int, 1, 1, 10, false},
        {QStringLiteral("tags"), F::StringList, QJsonValue(), 0, 0, false},
    };
}

QList<ProfileError> EchoKind::validateSection(const QJsonObject &section,
                                              const QString &fileName) const
{
    if (section.value(QStringLiteral("greeting")).toString().isEmpty())
        return {ProfileError{fileName, 0, QStringLiteral("echo.greeting"),
                             QStringLiteral("missing (an echo needs something to say)")}};
    return {};
}

QList<QCommandLineOption> EchoKind::addOptions() const
{
    return {
        {QStringLiteral("echo"), QStringLiteral("Echo: ranks as local processes (tests).")},
        {QStringLiteral("greeting"), QStringLiteral("Echo: what to say."), QStringLiteral("TEXT")},
        {QStringLiteral("repeat"), QStringLiteral("Echo: how often (1 to 10)."),
         QStringLiteral("N"), QStringLiteral("1")},
    };
}

QString EchoKind::selectingOption() const
{
    return QStringLiteral("echo");
}

bool EchoKind::applyOptions(const QCommandLineParser &parser, Profile *profile,
                            QString *error) const
{
    bool ok = false;
    const int repeat = parser.value(QStringLiteral("repeat")).toInt(&ok);
    if (!ok || repeat < 1 || repeat > 10) {
        *error = QStringLiteral("--repeat: \"%1\" is not a number from 1 to 10")
                     .arg(parser.value(QStringLiteral("repeat")));
        return false;
    }
    QJsonObject section;
    section[QStringLiteral("greeting")] = parser.value(QStringLiteral("greeting"));
    section[QStringLiteral("repeat")] = repeat;
    profile->section = completeSection(section);
    return true;
}

Transport *EchoKind::create(const Profile &, const QString &, SshInteraction *,
                            QObject *parent) const
{
    return new LocalTransport(parent);
}

} // namespace rankdeck::testkind
