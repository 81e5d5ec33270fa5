// SPDX-License-Identifier: GPL-3.0-or-later
//
// Follows the TensorBoard event files a rank's program writes (torch.utils.tensorboard's
// SummaryWriter, tensorboardX, TensorFlow) and forwards their new bytes to the launcher as
// `tfevents` wire events, unparsed: the launcher frames and decodes them (core/stream's
// TensorBoardScalars), so the supervisor needs no protobuf.
//   - Where: a directory tree (the launch option --tensorboard-dir, else the program's
//     --logdir / --log_dir / --log-dir argument, else SummaryWriter's default `runs`), searched
//     to kMaxDepth levels below it (SummaryWriter's default is runs/<date>_<host>/, add_scalars
//     adds one more level). It may appear at any time.
//   - Whose: every rank of a run may write into the same directory, so a file counts as this
//     rank's only when its name, events.out.tfevents.<secs>.<host>.<pid>.<n>[suffix] (the
//     naming all three writers use), carries this node's host name, a time no earlier than the
//     supervisor's start, and the pid of a process of this rank's program (the program itself,
//     or a descendant, checked through /proc when the file is first seen). A writer process
//     that is gone before its file is first seen (within one poll, 250 ms) is not counted.
//   - How: poll() on the supervisor's loop, never blocking: a directory is read again only when
//     its mtime changed (or is recent enough that a coarse clock could hide a change), a file
//     is read by offset with pread, at most kMaxBytesPerPoll per poll over all files (round
//     robin), in chunks of wire::kTfEventsChunkBytes. A file that shrinks is followed from its
//     new end (an empty event at that offset tells the launcher). drain() at the end reads
//     every byte that is left.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rankdeck::supervisor {

class EventFileFollower
{
public:
    static constexpr int kMaxDepth = 4;
    static constexpr std::size_t kMaxBytesPerPoll = 256 * 1024;
    static constexpr std::size_t kMaxFiles = 256;
    static constexpr std::size_t kMaxDirectories = 4096;

    // One complete wire event line (to write with one write()), and a note for the rank's log.
    using LineSink = std::function<void(const std::string &line)>;
    // Whether `pid` is a process of this rank's program.
    using PidFilter = std::function<bool(pid_t pid)>;

    struct Options
    {
        std::string directory; // as given: relative to the supervisor's working directory
        std::string host;      // this node's host name, as the writers put it in the name
        int rank = 0;
        std::int64_t startSec = 0; // the supervisor's start, seconds since the epoch
    };

    EventFileFollower(Options options, PidFilter ownsPid, LineSink emit, LineSink note);
    ~EventFileFollower();
    EventFileFollower(const EventFileFollower &) = delete;
    EventFileFollower &operator=(const EventFileFollower &) = delete;

    // Looks for new files and forwards new bytes; returns the bytes forwarded.
    std::size_t poll();
    // Forwards everything that is left (the program ended), up to maxBytes.
    std::size_t drain(std::size_t maxBytes = 256u * 1024 * 1024);

    const std::string &directory() const { return m_options.directory; }
    std::size_t fileCount() const { return m_files.size(); }

    // The directory to follow for `command`: `option` if set, else the value of its last
    // --logdir / --log_dir / --log-dir (as "--logdir DIR" or "--logdir=DIR"), else "runs".
    static std::string directoryFor(const std::vector<std::string> &command,
                                    const std::string &option);
    // Whether `name` is an event file written on `host`, and then its pid and time.
    static bool parseFileName(std::string_view name, std::string_view host, pid_t *pid,
                              std::int64_t *timeSec);

private:
    struct Directory
    {
        timespec mtime{};
        std::vector<std::string> subdirectories;
    };
    struct File
    {
        std::string path;
        int fd = -1;
        std::uint64_t offset = 0;
    };

    void scan(const std::string &path, int depth, bool force, std::size_t *directories);
    void consider(const std::string &path, std::string_view name);
    std::size_t readFile(File &file, std::size_t budget);

    Options m_options;
    PidFilter m_ownsPid;
    LineSink m_emit;
    LineSink m_note;
    std::map<std::string, Directory> m_directories;
    std::vector<File> m_files;
    std::set<std::string> m_seen; // every event file judged (followed or not)
    std::set<pid_t> m_ownPids;    // pids whose files were taken: later files of theirs too
    std::size_t m_next = 0;       // round robin over m_files
    bool m_tooManyNoted = false;
};

} // namespace rankdeck::supervisor
