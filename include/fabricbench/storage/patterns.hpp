// The I/O patterns one rank runs, each timed per call: a large file written
// and read sequentially in blocks (1-16 MiB: checkpoints, big dataset
// shards), and many small files each opened, read or written whole and
// closed (KiB-MiB shards: a dataloader's per-sample files). Every pattern
// comes in two modes: O_DIRECT (the page cache bypassed), and buffered with
// the page cache dropped before reading (fsync, then posix_fadvise
// DONTNEED). Whether that worked is measured, not assumed: after the write
// the file's pages are looked up with mincore(); pages still resident
// (tmpfs keeps files in memory whatever is asked) make the figure `cached`,
// a memory figure, and the row says so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/storage/workspace.hpp"

namespace fb {
class ProgressBoard;
}

namespace fb::storage {

enum class Pattern { seq_write, seq_read, small_write, small_read };
inline constexpr int kPatternCount = 4;
std::string_view name(Pattern p);
bool is_read(Pattern p);

enum class Mode { direct, buffered };  // what was asked
std::string_view name(Mode m);

// How far the figure is the storage's:
//   bypassed  O_DIRECT: no page cache between the calls and the filesystem
//   dropped   buffered read of a file whose pages were all dropped first
//   synced    buffered write, fsync inside the timed span
//   cached    the file's pages stayed in memory: RAM, not storage
enum class Cache { bypassed, dropped, synced, cached };
inline constexpr int kCacheCount = 4;
std::string_view name(Cache c);

// O_DIRECT wants buffers, offsets and sizes in whole logical blocks; 4 KiB
// covers every device in use.
inline constexpr std::uint64_t kDirectAlign = 4096;

// How a pattern's calls are made, written into its record line so that a
// figure can be held against another tool's run with the same settings
// (fio: ioengine=psync, iodepth=1, fallocate=none, end_fsync=1 or fsync=1).
// These are what the loops below do, not options: change a loop, change this.
struct IoPolicy {
  std::string_view engine;     // "psync": pread/pwrite, the caller waits for each
  int queue_depth = 1;         // calls in flight per rank
  std::string_view sync;       // "end": one fsync after the last block; "file": each file's before its close; "none"
  std::string_view fallocate;  // "none": files grow as written, nothing reserved first
};
IoPolicy io_policy(Pattern p);

// What one rank measured in one pattern.
struct RankFigures {
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;   // read/write calls (sequential) or files (small files)
  double elapsed_us = 0;   // first call to last (with the fsync, for writes)
  std::vector<double> op_us;  // each call (sequential) or each file's open..close
  bool o_direct = false;      // O_DIRECT in effect
  Cache cache = Cache::dropped;
  std::string note;  // why O_DIRECT is off though asked, or why the figure is cached
};

// The share of the first `bytes` of `fd` resident in the page cache
// (mmap + mincore); negative when it cannot be told (mmap refused).
double resident_fraction(int fd, std::uint64_t bytes);

// A buffer aligned for O_DIRECT, filled with pseudo-random bytes (so
// compression on the way cannot flatter the figure) and stamped before each
// write (so deduplication cannot either).
class IoBuffer {
 public:
  explicit IoBuffer(std::uint64_t bytes);
  ~IoBuffer();
  IoBuffer(const IoBuffer&) = delete;
  IoBuffer& operator=(const IoBuffer&) = delete;
  char* data() { return data_; }
  std::uint64_t size() const { return size_; }
  // Makes every kDirectAlign page unique to this buffer and `unit` (a block
  // or file number): a salt drawn once per buffer, the unit and the page's
  // index go in the page's first 24 bytes. Without it every block written
  // was the same bytes, on every rank: a deduplicating filesystem or array
  // stores one copy and reports the write as fast as it likes. Three stores
  // per 4 KiB cost nothing measurable; fio's per-write scramble_buffers
  // costs it 11% at 1 MiB O_DIRECT (docs/storage.md, "Beside fio").
  void stamp(std::uint64_t unit);

 private:
  char* data_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t salt_ = 0;
};

// A pattern's files on one rank: written (timed), then read back (timed).
class PatternFiles {
 public:
  virtual ~PatternFiles() = default;
  // Each throws RunError naming the file on an I/O error.
  virtual RankFigures write() = 0;
  virtual RankFigures read() = 0;
};

// One large file, written then read in blocks. The file is unlinked when
// made; its descriptor holds it until this object goes.
class SequentialFile final : public PatternFiles {
 public:
  SequentialFile(Workspace& ws, std::uint64_t file_bytes, std::uint64_t block_bytes, Mode mode, ProgressBoard* board);
  ~SequentialFile() override;
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;
  RankFigures write() override;  // every block, then fsync; then the cache dropped (untimed)
  RankFigures read() override;   // every block from the start

 private:
  Workspace& ws_;
  std::uint64_t file_bytes_;
  std::uint64_t block_bytes_;
  ProgressBoard* board_;
  int fd_ = -1;
  bool o_direct_ = false;
  std::string note_;
  Cache read_cache_ = Cache::dropped;
  IoBuffer buffer_;
};

// `files` files of `file_bytes` each, every one opened, written or read
// whole and closed inside its timed span.
class SmallFiles final : public PatternFiles {
 public:
  SmallFiles(Workspace& ws, std::uint64_t files, std::uint64_t file_bytes, std::uint64_t block_bytes, Mode mode,
             ProgressBoard* board);
  ~SmallFiles() override;  // removes the files
  SmallFiles(const SmallFiles&) = delete;
  SmallFiles& operator=(const SmallFiles&) = delete;
  RankFigures write() override;  // each file: create, write, fsync, close
  RankFigures read() override;   // each file: open, read whole, close
  void remove();

 private:
  std::string file_name(std::uint64_t i) const;
  Workspace& ws_;
  std::uint64_t files_;
  std::uint64_t file_bytes_;
  std::uint64_t block_bytes_;
  ProgressBoard* board_;
  bool o_direct_ = false;
  std::string note_;
  Cache read_cache_ = Cache::dropped;
  std::uint64_t made_ = 0;
  IoBuffer buffer_;
};

}  // namespace fb::storage
