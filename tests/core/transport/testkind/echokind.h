// SPDX-License-Identifier: GPL-3.0-or-later
//
// A transport kind that exists only in the tests: "echo", ranks as local processes, with a table
// of its own ([echo]: greeting, repeat, tags) and `profiles add` flags (--echo, --greeting,
// --repeat). It plugs in through the same API as the built-in kinds (TransportKindRegistry::add),
// with no edit outside tests/, which is what it proves.
#pragma once

#include "transport/transportkind.h"

namespace rankdeck::testkind {

class EchoKind : public TransportKind
{
public:
    QString name() const override;
    QString displayName() const override;
    QList<ProfileField> sectionFields() const override;
    QList<ProfileError> validateSection(const QJsonObject &section,
                                        const QString &fileName) const override;
    QList<QCommandLineOption> addOptions() const override;
    QString selectingOption() const override;
    bool applyOptions(const QCommandLineParser &parser, Profile *profile,
                      QString *error) const override;
    Transport *create(const Profile &profile, const QString &runId, SshInteraction *interaction,
                      QObject *parent) const override;
};

} // namespace rankdeck::testkind
