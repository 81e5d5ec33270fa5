// SPDX-License-Identifier: GPL-3.0-or-later
#include "steadylabel.h"

#include <QLabel>
#include <QResizeEvent>

#include <algorithm>

namespace rankdeck {

SteadyLabel::SteadyLabel(QLabel *label, QWidget *parent) : QWidget(parent), m_label(label)
{
    m_label->setParent(this);
    setSizePolicy(label->sizePolicy());
    fitHint();
}

void SteadyLabel::setText(const QString &text)
{
    if (text == m_label->text())
        return;
    m_label->setText(text);
    fitHint();
}

QSize SteadyLabel::minimumSizeHint() const
{
    // A wrapped text can be narrowed to a word; a single line keeps its width.
    return m_label->wordWrap() ? QSize(0, m_hint.height()) : m_hint;
}

void SteadyLabel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    m_label->setGeometry(rect());
    if (m_label->wordWrap() && event->oldSize().width() != width())
        fitHint(); // the text wraps to another number of lines at the new width
}

void SteadyLabel::fitHint()
{
    QSize want = m_label->sizeHint();
    if (m_label->wordWrap() && width() > 0)
        want.setHeight(m_label->heightForWidth(width()));
    const int step = 8 * std::max(1, m_label->fontMetrics().averageCharWidth());
    want.setWidth((want.width() + step - 1) / step * step);
    if (m_label->text().isEmpty())
        want.setWidth(0);
    if (want == m_hint)
        return;
    m_hint = want;
    updateGeometry();
}

} // namespace rankdeck
