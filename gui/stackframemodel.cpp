// SPDX-License-Identifier: GPL-3.0-or-later
#include "stackframemodel.h"

#include <QFont>

#include <algorithm>
#include <map>
#include <set>

namespace rankdeck {

namespace {

// Where a heading row's index keeps its section: frame rows keep section + 1.
constexpr quintptr kHeadingId = 0;

// The mark the page has always put on the innermost own frame; first in its cell so that a
// narrow column never elides it away.
QString markPrefix()
{
    return QStringLiteral("◀ ");
}

QColor tint(const QColor &base, const QColor &over, float amount)
{
    auto mix = [amount](float from, float to) { return from + (to - from) * amount; };
    return QColor::fromRgbF(mix(base.redF(), over.redF()), mix(base.greenF(), over.greenF()),
                            mix(base.blueF(), over.blueF()));
}

} // namespace

QString StackFrameRow::location() const
{
    if (file.isEmpty())
        return QString();
    return line > 0 ? QStringLiteral("%1:%2").arg(file).arg(line) : file;
}

QString StackFrameRow::copyText() const
{
    switch (kind) {
    case Kind::Python: {
        // As Python prints a frame, so a pasted row reads like the traceback it came from.
        QString frame =
            QStringLiteral("  File \"%1\", line %2, in %3").arg(file).arg(line).arg(function);
        if (!source.isEmpty())
            frame += QStringLiteral("\n    ") + source;
        return frame;
    }
    case Kind::Native:
    case Kind::Note:
        break;
    }
    return text;
}

QString stackSectionsText(const QList<StackSection> &sections)
{
    QString text;
    for (const StackSection &s : sections) {
        text += s.heading + QLatin1Char('\n');
        for (const StackFrameRow &f : s.frames)
            text += f.copyText() + QLatin1Char('\n');
    }
    return text;
}

StackFrameModel::StackFrameModel(QObject *parent) : QAbstractItemModel(parent) {}

void StackFrameModel::setSections(const QList<StackSection> &sections)
{
    beginResetModel();
    m_sections = sections;
    endResetModel();
}

void StackFrameModel::setPalette(const QPalette &palette)
{
    m_palette = palette;
    // Only frames are tinted; headings keep the view's own background.
    for (int s = 0; s < m_sections.size(); ++s) {
        const QModelIndex heading = index(s, 0);
        if (rowCount(heading) > 0)
            emit dataChanged(index(0, 0, heading),
                             index(rowCount(heading) - 1, ColumnCount - 1, heading),
                             {Qt::BackgroundRole});
    }
}

const StackFrameRow *StackFrameModel::frameAt(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this || index.internalId() == kHeadingId)
        return nullptr;
    const StackSection &s = m_sections[qsizetype(index.internalId() - 1)];
    return &s.frames[index.row()];
}

QModelIndex StackFrameModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent))
        return QModelIndex();
    if (!parent.isValid())
        return createIndex(row, column, kHeadingId);
    return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex StackFrameModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == kHeadingId)
        return QModelIndex();
    return createIndex(int(child.internalId() - 1), 0, kHeadingId);
}

int StackFrameModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return int(m_sections.size());
    if (parent.column() != 0 || parent.internalId() != kHeadingId)
        return 0;
    return int(m_sections[parent.row()].frames.size());
}

int StackFrameModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QString StackFrameModel::cellText(const StackFrameRow &f, int column) const
{
    switch (column) {
    case FunctionColumn:
        if (f.kind == StackFrameRow::Kind::Note || (f.function.isEmpty() && f.file.isEmpty()))
            return f.text.trimmed(); // a line parseFrame() could not split: shown whole
        return f.function;
    case LocationColumn:
        return f.location();
    case ModuleColumn:
        return f.module;
    case SourceColumn:
        return f.source;
    default:
        return QString();
    }
}

QVariant StackFrameModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return QVariant();
    const StackFrameRow *f = frameAt(index);
    if (!f) {
        const StackSection &s = m_sections[index.row()];
        switch (role) {
        case Qt::DisplayRole:
        case Qt::ToolTipRole:
        case CopyTextRole:
            return index.column() == FunctionColumn ? s.heading : QString();
        case Qt::FontRole: {
            QFont font;
            font.setBold(true);
            return font;
        }
        case IsSectionRole:
            return true;
        default:
            return QVariant();
        }
    }
    switch (role) {
    case Qt::DisplayRole: {
        const QString text = cellText(*f, index.column());
        return f->marked && index.column() == FunctionColumn ? markPrefix() + text : text;
    }
    case Qt::ToolTipRole: {
        QString text = cellText(*f, index.column());
        // The mark's meaning where the mark is; the other cells hold just their text.
        if (f->marked && index.column() == FunctionColumn)
            text += (text.isEmpty() ? QString() : QStringLiteral("\n")) + markPrefix() +
                    tr("the innermost frame of your own code");
        return text;
    }
    case Qt::AccessibleDescriptionRole:
        // What the background and the bold say, for a reader that sees neither.
        return f->marked ? tr("the innermost frame of your own code")
               : f->own  ? tr("your own code")
                         : QString();
    case Qt::FontRole:
        if (f->marked || f->kind == StackFrameRow::Kind::Note) {
            QFont font;
            font.setBold(f->marked);
            font.setItalic(f->kind == StackFrameRow::Kind::Note);
            return font;
        }
        return QVariant();
    case Qt::BackgroundRole:
        if (f->own)
            return tint(m_palette.color(QPalette::Base), m_palette.color(QPalette::Highlight),
                        0.25f);
        return QVariant();
    case OwnRole:
        return f->own;
    case MarkedRole:
        return f->marked;
    case FileRole:
        return f->file;
    case LineRole:
        return f->line;
    case CopyTextRole:
        return f->copyText();
    case IsSectionRole:
        return false;
    default:
        return QVariant();
    }
}

QVariant StackFrameModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QVariant();
    if (role == Qt::DisplayRole) {
        switch (section) {
        case FunctionColumn:
            return tr("Function");
        case LocationColumn:
            return tr("File:line");
        case ModuleColumn:
            return tr("Module");
        case SourceColumn:
            return tr("Code");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (section) {
        case FunctionColumn:
            return tr("The frame's function, innermost first; ◀ marks the innermost frame of "
                      "your own code. Enter or a double-click opens the frame's file, or the "
                      "rank's log where it failed");
        case LocationColumn:
            return tr("The source file and line, as the rank's node named them");
        case ModuleColumn:
            return tr("The library or program a native frame is in");
        case SourceColumn:
            return tr("The code line a Python traceback printed");
        }
    }
    return QVariant();
}

QString StackFrameModel::copyText(const QModelIndexList &indexes) const
{
    // Section → its selected frames (-1: the heading itself); ordered as the view shows them.
    std::map<int, std::set<int>> rows;
    for (const QModelIndex &i : indexes) {
        if (!i.isValid() || i.model() != this)
            continue;
        if (i.internalId() == kHeadingId)
            rows[i.row()].insert(-1);
        else
            rows[int(i.internalId() - 1)].insert(i.row());
    }
    QStringList lines;
    for (const auto &[section, frames] : rows) {
        const StackSection &s = m_sections[section];
        // A heading alone stands for its whole stack; with frames, for what they belong to.
        const bool whole = frames.size() == 1 && frames.contains(-1);
        if (frames.contains(-1))
            lines << s.heading;
        for (int f = 0; f < s.frames.size(); ++f)
            if (whole || frames.contains(f))
                lines << s.frames[f].copyText();
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace rankdeck
