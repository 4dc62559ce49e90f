// A stand-in for libFuzzer's main in gcc builds (which cannot link libFuzzer
// or instrument for coverage): runs LLVMFuzzerTestOneInput on every seed,
// then on random mutations of the seeds for a bounded time and count. It
// takes libFuzzer's flags (-max_total_time=, -runs=, -seed=, corpus dirs or
// files), so one command line serves both builds.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Byte strings the formats are made of: magic numbers, separators, numbers
// at the edges of their types.
const std::vector<std::string>& dictionary() {
  static const auto* words = new std::vector<std::string>{std::string("\x00\x00\x08\x03", 4),
                                                          std::string("\x00\x00\x08\x01", 4),
                                                          std::string("\xde\x12\x04\x95", 4),
                                                          std::string("\x95\x04\x12\xde", 4),
                                                          std::string("\x1f\x8b", 2),
                                                          std::string("\x00", 1),
                                                          std::string("\x04", 1),
                                                          "\xff\xff\xff\xff",
                                                          "\x7f\xff\xff\xff",
                                                          " ",
                                                          ":",
                                                          "\n",
                                                          "#",
                                                          "qid:",
                                                          "-1",
                                                          "+1",
                                                          "0",
                                                          "1e38",
                                                          "1e39",
                                                          "nan",
                                                          "inf",
                                                          "-0",
                                                          "2147483648",
                                                          "\r\n",
                                                          "\t",
                                                          "\xc3",
                                                          "\xe2\x82\xac"};
  return *words;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string mutate(std::string s, const std::vector<std::string>& pool) {
    const int n = 1 + below(5);
    for (int i = 0; i < n; ++i) mutate_once(s, pool);
    return s;
  }

 private:
  size_t below(size_t n) { return n == 0 ? 0 : rng_() % n; }

  void mutate_once(std::string& s, const std::vector<std::string>& pool) {
    switch (below(10)) {
      case 0:  // flip a bit
        if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1u << below(8));
        break;
      case 1:  // random byte
        if (!s.empty()) s[below(s.size())] = static_cast<char>(rng_());
        break;
      case 2: {  // overwrite with a dictionary word
        const std::string& w = dictionary()[below(dictionary().size())];
        if (s.size() >= w.size()) s.replace(below(s.size() - w.size() + 1), w.size(), w);
        break;
      }
      case 3: {  // insert a dictionary word
        const std::string& w = dictionary()[below(dictionary().size())];
        s.insert(below(s.size() + 1), w);
        break;
      }
      case 4:  // erase a range
        if (!s.empty()) {
          const size_t at = below(s.size());
          s.erase(at, 1 + below(std::min<size_t>(s.size() - at, 64)));
        }
        break;
      case 5:  // truncate
        s.resize(below(s.size() + 1));
        break;
      case 6: {  // duplicate a range
        if (s.empty()) break;
        const size_t at = below(s.size());
        const std::string piece = s.substr(at, 1 + below(std::min<size_t>(s.size() - at, 64)));
        s.insert(below(s.size() + 1), piece);
        break;
      }
      case 7: {  // splice with another input
        const std::string& other = pool[below(pool.size())];
        s = s.substr(0, below(s.size() + 1)) + other.substr(below(other.size() + 1));
        break;
      }
      case 8:  // small arithmetic on a byte (counts, lengths)
        if (!s.empty()) s[below(s.size())] += static_cast<char>(below(9)) - 4;
        break;
      default:  // random bytes appended
        for (size_t k = below(16); k > 0; --k) s.push_back(static_cast<char>(rng_()));
        break;
    }
  }

  std::mt19937_64 rng_;
};

bool read_whole(const std::filesystem::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

// The input being run, for the crash handler: a crash writes it to
// crash-input so the failure can be replayed (./x_fuzzer crash-input).
const std::string* g_current = nullptr;
char g_crash_path[4096];

void on_crash(int signal) {
  const int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0 && g_current != nullptr) {
    const ssize_t written = write(fd, g_current->data(), g_current->size());
    (void)written;
    close(fd);
  }
  static const char kMessage[] = "fuzz_driver: crashed; the input is in crash-input\n";
  const ssize_t said = write(2, kMessage, sizeof kMessage - 1);
  (void)said;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void install_crash_handler() {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s/crash-input", dir != nullptr ? dir : ".");
  for (int signal : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(signal, on_crash);
}

void run(const std::string& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  g_current = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  double max_seconds = 3;
  uint64_t max_runs = 100000, seed = 1;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? arg.c_str() + n : nullptr;
    };
    if (const char* v = value("-max_total_time=")) {
      max_seconds = std::atof(v);
    } else if (const char* v = value("-runs=")) {
      max_runs = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("-seed=")) {
      seed = std::strtoull(v, nullptr, 10);
    } else if (arg[0] == '-') {
      std::fprintf(stderr, "fuzz_driver: ignoring libFuzzer flag %s\n", arg.c_str());
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        std::string bytes;
        if (entry.is_regular_file() && read_whole(entry.path(), bytes)) seeds.push_back(std::move(bytes));
      }
    } else {
      std::string bytes;
      if (!read_whole(arg, bytes)) {
        std::fprintf(stderr, "fuzz_driver: cannot read %s\n", arg.c_str());
        return 1;
      }
      seeds.push_back(std::move(bytes));
    }
  }
  seeds.push_back("");  // the empty input is always worth a try
  // Directory order is unspecified: sort so a seed replays the same runs.
  std::sort(seeds.begin(), seeds.end());

  install_crash_handler();
  uint64_t runs = 0;
  for (const std::string& s : seeds) {
    run(s);
    ++runs;
  }
  Mutator mutator(seed);
  // Mutants join the pool now and then, so mutations stack over time.
  std::vector<std::string> pool = seeds;
  std::mt19937_64 pick(seed ^ 0x9e3779b97f4a7c15ull);
  const auto start = std::chrono::steady_clock::now();
  while (runs < max_runs) {
    if ((runs & 63) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds) {
      break;
    }
    std::string input = mutator.mutate(pool[pick() % pool.size()], pool);
    if (input.size() > (1 << 20)) input.resize(1 << 20);
    run(input);
    ++runs;
    if (pick() % 16 == 0 && pool.size() < 4096) pool.push_back(std::move(input));
  }
  std::printf("fuzz_driver: %llu runs from %zu seeds (seed %llu) without a crash\n",
              static_cast<unsigned long long>(runs), seeds.size(), static_cast<unsigned long long>(seed));
  return 0;
}
