// SPDX-License-Identifier: GPL-3.0-or-later
//
// One state of a tqdm-style progress bar as a line shows it (tqdm itself, Lightning's
// TQDMProgressBar, Transformers' Trainer, Accelerate, anything built on tqdm's default format):
//     Epoch 1:  38%|███▊      | 6/16 [00:00<00:00, 103.95it/s, v_num=1, train_loss=2.600]
//      16%|█▌        | 5/32 [00:00<00:01, 17.75it/s]
//     Sanity Checking: |          | 0/? [00:00<?, ?it/s]
//     train: 5it [00:00, 17.75it/s, loss=0.3]
// The parts: the description before the bar, its "Epoch N" if it has one, the counter n of
// n/total, the total (unknown: -1), and the postfix (what set_postfix adds after the rate).
// Text that is not such a bar parses to nothing; parsing is bounded (no backtracking over
// arbitrary text: a cheap test first, then one anchored regular expression).
#pragma once

#include <QList>
#include <QPair>
#include <QString>

#include <optional>

namespace rankdeck {

struct ProgressBarLine
{
    QString description; // "Epoch 1", "" (none), "Validation DataLoader 0"
    int epoch = -1;      // N of "Epoch N" / "epoch N/M" in the description, -1: none
    qint64 n = 0;
    qint64 total = -1;
    QString postfix; // "v_num=1, train_loss=2.600" (may be empty)
    // The description with its digits as '#' ("Epoch #"): the same bar from epoch to epoch.
    QString key;

    // The numeric key=value items of the postfix, in order, keys lower-cased.
    QList<QPair<QString, double>> postfixValues() const;

    static std::optional<ProgressBarLine> parse(const QString &text);
    // A bar with other text after its closing bracket, as a terminal shows a print() that came
    // while the bar was drawn on the same stream (Lightning's bar and a callback's print on
    // stdout): the bar, and in *textFrom where the rest begins; nothing when the text does not
    // begin with a bar or is all bar (parse() takes that).
    static std::optional<ProgressBarLine> parseLeading(const QString &text, qsizetype *textFrom);
};

} // namespace rankdeck
