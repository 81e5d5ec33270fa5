// SPDX-License-Identifier: GPL-3.0-or-later
//
// The stacks of one Failures entry as rows and columns: a parent row per stack (the failing
// thread's, an exception it was raised while handling, each other thread's), a child row per
// frame with its function, file:line, module and (Python) code line in columns. The user's own
// frames carry a background taken from the palette, the innermost of them is bold and marked
// "◀"; every cell's whole text is its tooltip, so a column cut narrow hides nothing.
// Presentation only: failureentries.cpp decides which frames are shown and which are own.
#pragma once

#include <QAbstractItemModel>
#include <QList>
#include <QPalette>
#include <QString>

namespace rankdeck {

struct StackFrameRow
{
    enum class Kind
    {
        Native,
        Python,
        // A line that stands for frames not listed or says why there are none: "… the
        // interpreter (N more native frames) …", "<no Python frame>".
        Note
    };
    Kind kind = Kind::Native;
    QString function;
    QString file; // as the rank named it: a path on its node
    int line = 0; // 0: not known
    QString module;
    QString source; // Python: the code line the traceback printed
    // The frame as the rank printed it (a native frame's whole "#0 0x… in f at x.cpp:3 [m]"
    // line); a Note's text.
    QString text;
    bool own = false;
    bool marked = false; // the innermost frame of the user's own code

    bool operator==(const StackFrameRow &other) const = default;
    // "file:line", the file alone when its line is not known, empty without a file.
    QString location() const;
    // What copying the row yields: the line as printed, a Python frame's code line under it.
    QString copyText() const;
};

struct StackSection
{
    QString heading; // "Python thread 0x7f… (current)"
    QList<StackFrameRow> frames;

    bool operator==(const StackSection &other) const = default;
};

// The sections as text, as the page's copy and details give them: heading, then each frame.
QString stackSectionsText(const QList<StackSection> &sections);

class StackFrameModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column
    {
        FunctionColumn,
        LocationColumn,
        ModuleColumn,
        SourceColumn,
        ColumnCount
    };
    Q_ENUM(Column)
    enum Role
    {
        OwnRole = Qt::UserRole + 1, // bool
        MarkedRole,                 // bool
        FileRole,                   // QString, the frame's file whole
        LineRole,                   // int
        CopyTextRole,               // QString: StackFrameRow::copyText() or the heading
        IsSectionRole               // bool: a stack's heading row
    };
    Q_ENUM(Role)

    explicit StackFrameModel(QObject *parent = nullptr);

    void setSections(const QList<StackSection> &sections);
    const QList<StackSection> &sections() const { return m_sections; }
    // The frame a child row shows; nullptr for a heading row or an invalid index.
    const StackFrameRow *frameAt(const QModelIndex &index) const;
    // Own frames' background: a tint of the palette's highlight over its base, so it reads on
    // light and dark palettes alike and keeps the text's contrast.
    void setPalette(const QPalette &palette);
    // The rows of `indexes` (any column) once each, in the order they are shown, as text.
    QString copyText(const QModelIndexList &indexes) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QString cellText(const StackFrameRow &frame, int column) const;

    QList<StackSection> m_sections;
    QPalette m_palette;
};

} // namespace rankdeck
