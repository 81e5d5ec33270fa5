// SPDX-License-Identifier: GPL-3.0-or-later
//
// Follows the TensorBoard event files a rank's program writes (torch.utils.tensorboard's
// SummaryWriter, tensorboardX, TensorFlow) and forwards their new bytes to the launcher as
// `tfevents` wire events, unparsed: the launcher frames and decodes them (core/stream's
// TensorBoardScalars), so the supervisor needs no protobuf.
//   - Where: a directory tree (the launch option --tensorboard-dir, else the program's
//     --logdir / --log_dir / --log-dir argument, else SummaryWriter's default `runs`), searched
//     to kMaxDepth levels below it (SummaryWriter's default is runs/<date>_<host>/, add_scalars
//     adds one more level), every poll. It may appear at any time. And the program's working
//     directory, wherever a framework puts its logs there (Lightning's TensorBoardLogger:
//     tb_logs/lightning_logs/version_0/, lightning_logs/version_0/; Transformers:
//     <output_dir>/runs/<date>_<host>/), walked breadth first to kWalkDepth levels, at most
//     kWalkDirectories directories and kWalkEntries entries a walk, past hidden directories,
//     __pycache__, node_modules, site-packages and virtual environments (a pyvenv.cfg), symbolic
//     links and other file systems (a home directory's mounts); a directory is read again only
//     when its mtime moved. A walk runs at most every 100× its own last duration (so at most
//     1% of a core whatever the tree; every poll for a small one): a huge working directory
//     costs little, and a file in it is found later, not never. Files seen both ways are
//     followed once (by device and inode).
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
#include <deque>
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
    static constexpr int kWalkDepth = 5;
    static constexpr std::size_t kWalkDirectories = 4096;
    static constexpr std::size_t kWalkEntries = 200000;
    // A walk of the working directory waits this many times its own last duration, and goes
    // on in slices of at most kWalkSliceUs (drain(): kDrainWalkUs).
    static constexpr int kWalkCostFactor = 100;
    static constexpr std::int64_t kWalkSliceUs = 50000;
    static constexpr std::int64_t kDrainWalkUs = 2000000;

    // One complete wire event line (to write with one write()), and a note for the rank's log.
    using LineSink = std::function<void(const std::string &line)>;
    // Whether `pid` is a process of this rank's program.
    using PidFilter = std::function<bool(pid_t pid)>;

    struct Options
    {
        std::string directory; // as given: relative to the supervisor's working directory
        // The program's working directory, walked for event files too; empty: not walked.
        std::string workDirectory = ".";
        std::string host; // this node's host name, as the writers put it in the name
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

    // What the last whole walk of the working directory cost (tests, docs/benchmarks.md).
    struct WalkStats
    {
        std::size_t directories = 0;   // looked at (stat)
        std::size_t read = 0;          // of them read again (their mtime moved)
        std::size_t entries = 0;       // directory entries read
        std::int64_t microseconds = 0; // over its slices
        bool cut = false;              // a bound stopped it
    };
    const WalkStats &lastWalk() const { return m_lastWalk; }
    std::size_t walks() const { return m_walks; }

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
        bool environment = false; // a virtual environment (pyvenv.cfg): not walked below
    };
    struct File
    {
        std::string path;
        int fd = -1;
        std::uint64_t offset = 0;
    };

    void scan(const std::string &path, int depth, bool force, std::size_t *directories);
    // Reads `path` again if its mtime moved (or force): its subdirectories into `dir`, its event
    // files considered. Counts into `stats` when walking. False when it is no directory.
    bool readDirectory(const std::string &path, Directory &dir, bool force, WalkStats *stats,
                       dev_t *device);
    void walk(bool force);
    void consider(const std::string &path, std::string_view name);
    std::size_t readFile(File &file, std::size_t budget);

    Options m_options;
    PidFilter m_ownsPid;
    LineSink m_emit;
    LineSink m_note;
    std::map<std::string, Directory> m_directories;
    std::vector<File> m_files;
    std::set<std::string> m_seen;                  // every event file judged (followed or not)
    std::set<std::pair<dev_t, ino_t>> m_seenFiles; // the same by identity: one file, two paths
    std::map<std::string, Directory> m_walked;     // the working directory's, by path
    std::deque<std::pair<std::string, int>> m_walkQueue; // the pass under way: path, depth
    std::set<std::string> m_passVisited;
    WalkStats m_pass;
    dev_t m_passDevice = 0;
    WalkStats m_lastWalk;
    std::size_t m_walks = 0;
    std::int64_t m_nextWalkUs = 0;
    bool m_walkCutNoted = false;
    std::set<pid_t> m_ownPids; // pids whose files were taken: later files of theirs too
    std::size_t m_next = 0;    // round robin over m_files
    bool m_tooManyNoted = false;
};

} // namespace rankdeck::supervisor
