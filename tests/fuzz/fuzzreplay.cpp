// SPDX-License-Identifier: GPL-3.0-or-later
//
// main() of a fuzz target in the normal test suite: runs every file of the given corpus folders
// through LLVMFuzzerTestOneInput once. The seeds and every input that once crashed a target
// (kept in its corpus as crash-*) so stay tested by any compiler, without libFuzzer; a broken
// promise aborts, which ctest reports with the file's name printed just before.
#include "fuzzinput.h"

#include <QDirIterator>
#include <QFile>

#include <cstdint>
#include <cstdio>

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; ++i) {
        QDirIterator it(QString::fromLocal8Bit(argv[i]), QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly)) {
                std::fprintf(stderr, "fuzzreplay: cannot read %s\n", qPrintable(path));
                return 2;
            }
            const QByteArray data = file.readAll();
            std::fprintf(stderr, "fuzzreplay: %s\n", qPrintable(path));
            LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t *>(data.constData()),
                                   std::size_t(data.size()));
            ++files;
        }
    }
    if (files == 0) {
        std::fprintf(stderr, "fuzzreplay: no corpus files in the folders given\n");
        return 2;
    }
    std::printf("fuzzreplay: %d inputs, no promise broken\n", files);
    return 0;
}
