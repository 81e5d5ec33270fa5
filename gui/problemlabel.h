// SPDX-License-Identifier: GPL-3.0-or-later
//
// The line under a form that names what keeps it from being accepted: wrapped, in the palette's
// colour for trouble, recoloured when the palette switches (light/dark) while the form is open.
#pragma once

#include <QLabel>

namespace rankdeck {

class ProblemLabel : public QLabel
{
    Q_OBJECT
public:
    explicit ProblemLabel(QWidget *parent = nullptr);

protected:
    void changeEvent(QEvent *event) override;

private:
    void applyColour();
};

} // namespace rankdeck
