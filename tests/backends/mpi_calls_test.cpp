// Issue 16 (item 3), the module rule of docs/architecture.md: outside core's
// comm*.cpp (Comm and check_mpi) and the mpi_host backend (the MPI data
// plane, which checks its calls with check_mpi), no source calls an MPI
// function. A call elsewhere would drop its return code, or check it a second
// way; this scan of src/ and include/ names each one found.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fb {
namespace {

namespace fs = std::filesystem;

// The source with comments and string or character literals blanked (newlines
// kept, so line numbers stand): "MPI_Gather(3)" in a comment is no call.
std::string code_only(const std::string& src) {
  std::string out = src;
  std::size_t i = 0;
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  while (i < src.size()) {
    if (src.compare(i, 2, "//") == 0) {
      const std::size_t end = src.find('\n', i);
      blank(i, end);
      i = end == std::string::npos ? src.size() : end;
    } else if (src.compare(i, 2, "/*") == 0) {
      const std::size_t end = src.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? src.size() : end + 2;
      blank(i, stop);
      i = stop;
    } else if (src.compare(i, 2, "R\"") == 0) {  // R"delim( ... )delim"
      const std::size_t open = src.find('(', i + 2);
      const std::string close = ")" + src.substr(i + 2, open - i - 2) + "\"";
      const std::size_t end = open == std::string::npos ? std::string::npos : src.find(close, open);
      const std::size_t stop = end == std::string::npos ? src.size() : end + close.size();
      blank(i, stop);
      i = stop;
    } else if (src[i] == '"' || (src[i] == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(src[i - 1]))))) {
      // A quote after a hex digit is a digit separator (1'000), not a literal.
      const char quote = src[i];
      std::size_t k = i + 1;
      while (k < src.size() && src[k] != quote && src[k] != '\n') k += src[k] == '\\' ? 2 : 1;
      blank(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

struct Call {
  std::string file;  // relative to the scanned root
  int line = 0;
  std::string name;
};

// MPI functions have a lowercase letter in their names (MPI_Comm_rank,
// MPI_T_cvar_read); constants and handles do not (MPI_COMM_WORLD, MPI_INT).
const std::regex kMpiCall(R"(\bP?MPI_[A-Za-z0-9_]*[a-z][A-Za-z0-9_]*\s*\()");

std::vector<Call> calls_in(const std::string& file, const std::string& text) {
  std::vector<Call> out;
  std::istringstream lines(code_only(text));
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    for (std::sregex_iterator m(line.begin(), line.end(), kMpiCall), end; m != end; ++m) {
      std::string name = m->str();
      name = name.substr(0, name.find_first_of(" \t("));
      out.push_back({file, n, name});
    }
  }
  return out;
}

bool may_call_mpi(const std::string& rel) {
  if (rel.rfind("src/backends/mpi_host/", 0) == 0) return true;
  const fs::path p(rel);
  if (p.parent_path() == "src/core" && p.filename().string().rfind("comm", 0) == 0) return true;
  return rel == "include/fabricbench/core/comm.hpp";
}

bool is_source(const fs::path& p) {
  static const std::vector<std::string> kExtensions = {".cpp", ".hpp", ".h", ".cc", ".c", ".cu", ".cuh", ".in"};
  for (const auto& e : kExtensions)
    if (p.extension() == e) return true;
  return false;
}

struct Scan {
  int files = 0;
  std::vector<Call> allowed;    // in the files that may call MPI
  std::vector<Call> forbidden;  // everywhere else
};

Scan scan(const fs::path& root, const std::vector<std::string>& trees) {
  Scan s;
  for (const auto& tree : trees) {
    if (!fs::exists(root / tree)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / tree)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      ++s.files;
      for (auto& c : calls_in(rel, text.str())) (may_call_mpi(rel) ? s.allowed : s.forbidden).push_back(std::move(c));
    }
  }
  return s;
}

std::string listing(const std::vector<Call>& calls) {
  std::string out;
  for (const auto& c : calls) out += "  " + c.file + ":" + std::to_string(c.line) + " " + c.name + "\n";
  return out;
}

TEST(MpiCalls, OnlyCommAndTheMpiHostBackendCallMpi) {
  const Scan s = scan(FB_SOURCE_DIR, {"src", "include"});
  // The scan saw the tree and finds the calls that are there (so it cannot pass by finding nothing).
  EXPECT_GT(s.files, 100);
  bool comm_calls = false;
  bool backend_calls = false;
  for (const auto& c : s.allowed) {
    comm_calls = comm_calls || (c.file == "src/core/comm.cpp" && c.name == "MPI_Comm_split");
    backend_calls = backend_calls || (c.file == "src/backends/mpi_host/mpi_op.cpp" && c.name == "MPI_Allreduce");
  }
  EXPECT_TRUE(comm_calls) << listing(s.allowed);
  EXPECT_TRUE(backend_calls) << listing(s.allowed);
  EXPECT_TRUE(s.forbidden.empty()) << "MPI called outside core's comm*.cpp and src/backends/mpi_host (use Comm, "
                                      "or add what is missing to it):\n"
                                   << listing(s.forbidden);
}

class MpiCallsScan : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fb_mpi_calls_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "src/topo");
    fs::create_directories(root_ / "src/core");
    fs::create_directories(root_ / "src/backends/mpi_host");
  }
  void TearDown() override { fs::remove_all(root_); }
  void plant(const std::string& rel, const std::string& text) const { std::ofstream(root_ / rel) << text; }
  fs::path root_;
};

TEST_F(MpiCallsScan, FindsAPlantedCallAndNamesItsFileAndLine) {
  plant("src/topo/gather.cpp", "#include <mpi.h>\nvoid f(MPI_Comm c) {\n  int r;\n  MPI_Comm_rank (c, &r);\n}\n");
  const Scan s = scan(root_, {"src"});
  ASSERT_EQ(s.forbidden.size(), 1u) << listing(s.forbidden);
  EXPECT_EQ(s.forbidden[0].file, "src/topo/gather.cpp");
  EXPECT_EQ(s.forbidden[0].line, 4);
  EXPECT_EQ(s.forbidden[0].name, "MPI_Comm_rank");
}

TEST_F(MpiCallsScan, FindsProfilingAndToolInterfaceCalls) {
  plant("src/topo/a.cpp", "int x = PMPI_Barrier(MPI_COMM_WORLD);\nint y = MPI_T_cvar_read(h, v);\n");
  const Scan s = scan(root_, {"src"});
  ASSERT_EQ(s.forbidden.size(), 2u) << listing(s.forbidden);
  EXPECT_EQ(s.forbidden[0].name, "PMPI_Barrier");
  EXPECT_EQ(s.forbidden[1].name, "MPI_T_cvar_read");
}

TEST_F(MpiCallsScan, CommentsStringsConstantsAndTypesAreNoCalls) {
  plant("src/topo/b.cpp",
        "// MPI_Gather(3) says so\n/* MPI_Allreduce(x) */\nconst char* s = \"MPI_Bcast(\";\n"
        "auto r = R\"x(MPI_Send()x\";\nMPI_Comm c = MPI_COMM_WORLD; f(MPI_INT, MPI_IN_PLACE);\nint n = 1'000;\n");
  const Scan s = scan(root_, {"src"});
  EXPECT_EQ(s.files, 1);
  EXPECT_TRUE(s.forbidden.empty()) << listing(s.forbidden);
}

TEST_F(MpiCallsScan, CommFilesAndTheMpiHostBackendMayCall) {
  plant("src/core/comm_gather.cpp", "void g() { MPI_Igatherv(a, b); }\n");
  plant("src/backends/mpi_host/mpi_op.cpp", "void h() { MPI_Allreduce(a, b); }\n");
  plant("src/core/timing.cpp", "void t() { MPI_Barrier(c); }\n");
  const Scan s = scan(root_, {"src"});
  EXPECT_EQ(s.allowed.size(), 2u) << listing(s.allowed);
  ASSERT_EQ(s.forbidden.size(), 1u) << listing(s.forbidden);
  EXPECT_EQ(s.forbidden[0].file, "src/core/timing.cpp");
}

}  // namespace
}  // namespace fb
