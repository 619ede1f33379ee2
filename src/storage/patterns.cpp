// The timed loops of the I/O patterns (patterns.hpp). Each call is timed on
// its own with the steady clock; nothing but the call is inside its span.
#include "fabricbench/storage/patterns.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <thread>
#include <utility>

#include "fabricbench/core/enum_cover.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/sizes.hpp"
#include "errno_text.hpp"

namespace fb::storage {
namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}


[[noreturn]] void io_failed(const std::string& what, const std::string& path, int e) {
  // ECANCELED: the files were removed because the run is ending (a signal,
  // the watchdog); whoever removed them ends the process in a moment. An
  // error from here would race the closing of the record.
  if (e == ECANCELED) {
    for (int i = 0; i < 300; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    throw RunError(fmt::format("{} '{}': the files were removed as the run ended", what, path));
  }
  throw RunError(fmt::format("{} '{}' failed: {}", what, path, errno_text(e)));
}

// Whole `bytes` at `offset`, retrying short transfers (a signal, a network
// filesystem returning less). Returns 0 or the errno.
int write_all(int fd, const char* data, std::uint64_t bytes, std::uint64_t offset) {
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, data, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    data += n;
    bytes -= static_cast<std::uint64_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return 0;
}

// Up to `bytes` at `offset`; the count read (0 at the end), or -errno.
std::int64_t read_some(int fd, char* data, std::uint64_t bytes, std::uint64_t offset) {
  std::uint64_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::pread(fd, data + got, bytes - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;
    got += static_cast<std::uint64_t>(n);
  }
  return static_cast<std::int64_t>(got);
}

void publish(ProgressBoard* board, std::int64_t done) {
  if (board) board->issued()->store(done, std::memory_order_relaxed);
}

void enter(ProgressBoard* board, Phase phase) {
  if (board) board->enter(phase);
}

// Can this filesystem open files with O_DIRECT? "" when it can, else why not.
[[nodiscard]] std::string direct_refused(Workspace& ws) {
  const int fd = ws.create("o_direct_probe", O_WRONLY | O_DIRECT, false);
  if (fd >= 0) {
    ::close(fd);
    return {};
  }
  const int e = errno;
  if (e == EINVAL || e == EOPNOTSUPP)
    return fmt::format("O_DIRECT refused by the filesystem ({}): buffered, the page cache dropped before reading",
                       std::strerror(e));
  io_failed("creating a file in", ws.rank_path(), e);
}

std::string percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }

// After the data is written and (buffered) its pages dropped: is any of it
// still in memory? Sets `cache` for the read and adds to `note`.
Cache judge_residency(double resident, bool o_direct, std::string& note) {
  const auto add = [&](const std::string& s) { note += (note.empty() ? "" : "; ") + s; };
  if (resident < 0) {
    add("residency not verifiable (mmap refused): the page cache drop is assumed to have worked");
    return o_direct ? Cache::bypassed : Cache::dropped;
  }
  if (resident > 0) {
    add(fmt::format("{} of the data stayed in memory after {}: the filesystem keeps files in RAM (tmpfs) or "
                    "ignores the drop; a memory figure, not the storage's",
                    percent(resident), o_direct ? "O_DIRECT writes" : "fsync and posix_fadvise(DONTNEED)"));
    return Cache::cached;
  }
  return o_direct ? Cache::bypassed : Cache::dropped;
}

Cache write_cache(Cache read_cache, bool o_direct) {
  if (read_cache == Cache::cached) return Cache::cached;
  return o_direct ? Cache::bypassed : Cache::synced;
}

}  // namespace

namespace {

// Names by position, proven to cover each enum: a pattern, mode or cache
// state added without its name stops the build rather than printing "?".
constexpr std::array kPatternNames{std::pair{Pattern::seq_write, "seq_write"}, std::pair{Pattern::seq_read, "seq_read"},
                                   std::pair{Pattern::small_write, "small_write"},
                                   std::pair{Pattern::small_read, "small_read"}};
constexpr std::array kModeNames{std::pair{Mode::direct, "direct"}, std::pair{Mode::buffered, "buffered"}};
constexpr std::array kCacheNames{std::pair{Cache::bypassed, "bypassed"}, std::pair{Cache::dropped, "dropped"},
                                 std::pair{Cache::synced, "synced"}, std::pair{Cache::cached, "cached"}};
static_assert(enum_cover::covers<Pattern, kPatternNames>([](const auto& e) { return e.first; }) &&
                  kPatternNames.size() == kPatternCount,
              "kPatternNames: row i names Pattern i, one row per enumerator");
static_assert(enum_cover::covers<Mode, kModeNames>([](const auto& e) { return e.first; }),
              "kModeNames: row i names Mode i, one row per enumerator");
static_assert(enum_cover::covers<Cache, kCacheNames>([](const auto& e) { return e.first; }) &&
                  kCacheNames.size() == kCacheCount,
              "kCacheNames: row i names Cache i, one row per enumerator");

template <typename E, std::size_t N>
std::string_view name_in(const std::array<std::pair<E, const char*>, N>& table, E e) {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? table[i].second : "?";  // only a value cast from outside the enum
}

}  // namespace

std::string_view name(Pattern p) { return name_in(kPatternNames, p); }

bool is_read(Pattern p) { return p == Pattern::seq_read || p == Pattern::small_read; }

std::string_view name(Mode m) { return name_in(kModeNames, m); }

IoPolicy io_policy(Pattern p) {
  // SequentialFile::write fsyncs once after its last block, SmallFiles::write
  // each file before closing it; reads never do. Both wait for every call.
  const std::string_view sync = p == Pattern::seq_write ? "end" : p == Pattern::small_write ? "file" : "none";
  return {.engine = "psync", .queue_depth = 1, .sync = sync, .fallocate = "none"};
}

std::string_view name(Cache c) { return name_in(kCacheNames, c); }

double resident_fraction(int fd, std::uint64_t bytes) {
  if (bytes == 0) return 0;
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  constexpr std::uint64_t kWindow = 256ull << 20;  // mapped at a time, so a huge file needs no huge vector
  std::vector<unsigned char> vec(kWindow / page);
  std::uint64_t resident = 0;
  std::uint64_t pages = 0;
  for (std::uint64_t off = 0; off < bytes; off += kWindow) {
    const std::uint64_t len = std::min(kWindow, bytes - off);
    void* m = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(off));
    if (m == MAP_FAILED) return -1;
    const int rc = ::mincore(m, len, vec.data());
    ::munmap(m, len);
    if (rc != 0) return -1;
    const std::uint64_t n = (len + page - 1) / page;
    for (std::uint64_t i = 0; i < n; ++i) resident += vec[i] & 1;
    pages += n;
  }
  return static_cast<double>(resident) / static_cast<double>(pages);
}

IoBuffer::IoBuffer(std::uint64_t bytes) : size_(bytes) {
  void* p = nullptr;
  if (::posix_memalign(&p, kDirectAlign, std::max<std::uint64_t>(bytes, kDirectAlign)) != 0) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
  std::mt19937_64 random(0x5eed5eedULL ^ bytes);
  auto* words = reinterpret_cast<std::uint64_t*>(data_);
  for (std::uint64_t i = 0; i < bytes / 8; ++i) words[i] = random();
  // Drawn here, outside any timed span: every rank and run stamps differently.
  std::random_device entropy;
  salt_ = std::uint64_t{entropy()} << 32 | entropy();
}

IoBuffer::~IoBuffer() { std::free(data_); }

void IoBuffer::stamp(std::uint64_t unit) {
  for (std::uint64_t page = 0; page * kDirectAlign < size_; ++page) {
    const std::array<std::uint64_t, 3> words{salt_, unit, page};
    std::memcpy(data_ + page * kDirectAlign, words.data(),
                std::min<std::uint64_t>(sizeof words, size_ - page * kDirectAlign));
  }
}

// ---- sequential ----------------------------------------------------------------

SequentialFile::SequentialFile(Workspace& ws, std::uint64_t file_bytes, std::uint64_t block_bytes, Mode mode,
                               ProgressBoard* board)
    : ws_(ws), file_bytes_(file_bytes), block_bytes_(block_bytes), board_(board), buffer_(block_bytes) {
  if (mode == Mode::direct) note_ = direct_refused(ws_);
  o_direct_ = mode == Mode::direct && note_.empty();
  fd_ = ws_.create("seq", O_RDWR | (o_direct_ ? O_DIRECT : 0), false);
  if (fd_ < 0) io_failed("creating a file in", ws_.rank_path(), errno);
}

SequentialFile::~SequentialFile() {
  if (fd_ >= 0) ::close(fd_);
}

RankFigures SequentialFile::write() {
  RankFigures f;
  f.o_direct = o_direct_;
  const std::uint64_t blocks = file_bytes_ / block_bytes_;
  f.op_us.reserve(blocks);
  enter(board_, Phase::timed);
  const auto start = Clock::now();
  for (std::uint64_t b = 0; b < blocks; ++b) {
    buffer_.stamp(b);
    const auto t0 = Clock::now();
    if (const int e = write_all(fd_, buffer_.data(), block_bytes_, b * block_bytes_)) io_failed("writing", ws_.rank_path() + "/seq", e);
    f.op_us.push_back(us_between(t0, Clock::now()));
    publish(board_, static_cast<std::int64_t>(b + 1));
  }
  if (::fsync(fd_) != 0) io_failed("fsync of", ws_.rank_path() + "/seq", errno);
  f.elapsed_us = us_between(start, Clock::now());
  f.bytes = blocks * block_bytes_;
  f.ops = blocks;
  enter(board_, Phase::setup);
  // Untimed: drop what the writes left in the page cache, then look.
  std::string note = note_;
  if (!o_direct_) ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  read_cache_ = judge_residency(resident_fraction(fd_, f.bytes), o_direct_, note);
  f.cache = write_cache(read_cache_, o_direct_);
  f.note = note;
  note_ = note;
  return f;
}

RankFigures SequentialFile::read() {
  RankFigures f;
  f.o_direct = o_direct_;
  f.cache = read_cache_;
  f.note = note_;
  const std::uint64_t blocks = file_bytes_ / block_bytes_;
  f.op_us.reserve(blocks);
  enter(board_, Phase::timed);
  const auto start = Clock::now();
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const auto t0 = Clock::now();
    const std::int64_t n = read_some(fd_, buffer_.data(), block_bytes_, b * block_bytes_);
    if (n < 0) io_failed("reading", ws_.rank_path() + "/seq", static_cast<int>(-n));
    if (static_cast<std::uint64_t>(n) != block_bytes_)
      throw RunError(fmt::format("reading '{}/seq': {} bytes at offset {} where {} were written", ws_.rank_path(), n,
                                 b * block_bytes_, block_bytes_));
    f.op_us.push_back(us_between(t0, Clock::now()));
    publish(board_, static_cast<std::int64_t>(b + 1));
  }
  f.elapsed_us = us_between(start, Clock::now());
  f.bytes = blocks * block_bytes_;
  f.ops = blocks;
  enter(board_, Phase::setup);
  return f;
}

// ---- small files -----------------------------------------------------------------

SmallFiles::SmallFiles(Workspace& ws, std::uint64_t files, std::uint64_t file_bytes, std::uint64_t block_bytes,
                       Mode mode, ProgressBoard* board)
    : ws_(ws),
      files_(files),
      file_bytes_(file_bytes),
      block_bytes_(block_bytes),
      board_(board),
      buffer_(block_bytes) {
  if (mode == Mode::direct) {
    if (file_bytes % kDirectAlign != 0)
      note_ = fmt::format("O_DIRECT needs whole {} blocks and a file is {}: buffered, the page cache dropped before "
                          "reading",
                          format_bytes(kDirectAlign), format_bytes(file_bytes));
    else
      note_ = direct_refused(ws_);
  }
  o_direct_ = mode == Mode::direct && note_.empty();
}

SmallFiles::~SmallFiles() { remove(); }

std::string SmallFiles::file_name(std::uint64_t i) const { return fmt::format("shard{:07}", i); }

RankFigures SmallFiles::write() {
  RankFigures f;
  f.o_direct = o_direct_;
  f.op_us.reserve(files_);
  enter(board_, Phase::timed);
  const auto start = Clock::now();
  for (std::uint64_t i = 0; i < files_; ++i) {
    const std::string name = file_name(i);
    const auto t0 = Clock::now();
    const int fd = ws_.create(name, O_WRONLY | (o_direct_ ? O_DIRECT : 0), true);
    if (fd < 0) io_failed("creating", ws_.rank_path() + "/" + name, errno);
    made_ = i + 1;
    for (std::uint64_t off = 0; off < file_bytes_; off += block_bytes_) {
      const std::uint64_t n = std::min(block_bytes_, file_bytes_ - off);
      buffer_.stamp(i * file_bytes_ + off);  // the byte's place in the run: unique per file and block
      if (const int e = write_all(fd, buffer_.data(), n, off)) {
        ::close(fd);
        io_failed("writing", ws_.rank_path() + "/" + name, e);
      }
    }
    if (::fsync(fd) != 0) {
      const int e = errno;
      ::close(fd);
      io_failed("fsync of", ws_.rank_path() + "/" + name, e);
    }
    if (!o_direct_) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    f.op_us.push_back(us_between(t0, Clock::now()));
    publish(board_, static_cast<std::int64_t>(i + 1));
  }
  f.elapsed_us = us_between(start, Clock::now());
  f.bytes = files_ * file_bytes_;
  f.ops = files_;
  enter(board_, Phase::setup);
  // Untimed: the first, middle and last file, still in memory or not?
  double resident = 0;
  for (const std::uint64_t i : {std::uint64_t{0}, files_ / 2, files_ - 1}) {
    const int fd = ws_.open_file(file_name(i), O_RDONLY);
    if (fd < 0) io_failed("opening", ws_.rank_path() + "/" + file_name(i), errno);
    const double r = resident_fraction(fd, file_bytes_);
    ::close(fd);
    resident = r < 0 || resident < 0 ? -1 : std::max(resident, r);
  }
  std::string note = note_;
  read_cache_ = judge_residency(resident, o_direct_, note);
  note_ = note;
  f.cache = write_cache(read_cache_, o_direct_);
  f.note = note;
  return f;
}

RankFigures SmallFiles::read() {
  RankFigures f;
  f.o_direct = o_direct_;
  f.cache = read_cache_;
  f.note = note_;
  f.op_us.reserve(files_);
  enter(board_, Phase::timed);
  const auto start = Clock::now();
  for (std::uint64_t i = 0; i < files_; ++i) {
    const std::string name = file_name(i);
    const auto t0 = Clock::now();
    const int fd = ws_.open_file(name, O_RDONLY | (o_direct_ ? O_DIRECT : 0));
    if (fd < 0) io_failed("opening", ws_.rank_path() + "/" + name, errno);
    std::uint64_t got = 0;
    while (got < file_bytes_) {
      const std::int64_t n = read_some(fd, buffer_.data(), std::min(block_bytes_, file_bytes_ - got), got);
      if (n <= 0) {
        ::close(fd);
        if (n < 0) io_failed("reading", ws_.rank_path() + "/" + name, static_cast<int>(-n));
        throw RunError(fmt::format("reading '{}/{}': the file ends at {} bytes where {} were written", ws_.rank_path(),
                                   name, got, file_bytes_));
      }
      got += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
    f.op_us.push_back(us_between(t0, Clock::now()));
    publish(board_, static_cast<std::int64_t>(i + 1));
  }
  f.elapsed_us = us_between(start, Clock::now());
  f.bytes = files_ * file_bytes_;
  f.ops = files_;
  enter(board_, Phase::setup);
  return f;
}

void SmallFiles::remove() {
  // Between rounds, and from the destructor: a shard that cannot go now
  // stays listed in the workspace, whose clean() removes it at the end.
  for (std::uint64_t i = 0; i < made_; ++i) (void)ws_.remove(file_name(i));
  made_ = 0;
}

}  // namespace fb::storage
