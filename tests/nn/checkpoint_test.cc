// Checkpoint files: round trips of every dtype and of a module's state dict,
// the atomic write, and each way a file can be wrong (written here on purpose)
// giving an error that names the file and the entry.
#include "nn/checkpoint.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/crc32c.h"
#include "gtest/gtest.h"
#include "nn/linear.h"
#include "nn/sequential.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::random_tensor;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = contiguous(to(a, Device::cpu()));
  const Tensor cb = contiguous(b);
  // An empty tensor may have no storage: memcmp's pointers must not be null.
  return ca.numel() == 0 || std::memcmp(ca.raw_data(), cb.raw_data(), ca.numel() * ca.itemsize()) == 0;
}

class CheckpointTest : public ts::testing::SeededTest {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("checkpoint_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Two entries ("a": f32 [2, 3], "b": i64 [4]) saved to `name`.
  std::string saved_file(const std::string& name) {
    const std::string p = path(name);
    NamedTensors t = {{"a", random_tensor(rng(), {2, 3}, DType::kF32)},
                      {"b", random_tensor(rng(), {4}, DType::kI64, -100, 100)}};
    EXPECT_OK(save_tensors(p, t));
    return p;
  }

  std::filesystem::path dir_;
};

TEST_F(CheckpointTest, RoundTripsEveryDtypeAndShape) {
  NamedTensors tensors;
  for (DType d : kAllDTypes) {
    tensors.emplace_back(std::string("t_") + std::string(dtype_name(d)), random_tensor(rng(), {3, 2, 5}, d, -50, 50));
  }
  tensors.emplace_back("scalar", full({}, 7, {DType::kI64}));
  tensors.emplace_back("empty", zeros({0, 4}));
  // A strided view is written as its logical values.
  tensors.emplace_back("transposed",
                       random_tensor(rng(), {4, 3}, DType::kF32, -1, 1, ts::testing::Layout::kTransposed));
  const std::string p = path("all.ckpt");
  ASSERT_OK(save_tensors(p, tensors));
  ASSERT_OK_AND_ASSIGN(NamedTensors loaded, load_tensors(p));
  ASSERT_EQ(loaded.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(loaded[i].first, tensors[i].first);
    EXPECT_TRUE(same_values(tensors[i].second, loaded[i].second)) << tensors[i].first;
  }
  // Nothing but the file itself is left in the directory.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);
}

// The bytes are the documented layout (checkpoint.h), built here by hand, and
// the streamed file holds the same bytes as encode_tensors, also for a tensor
// larger than the writer's 1 MiB buffer.
TEST_F(CheckpointTest, BytesAreTheDocumentedLayout) {
  const Tensor w = from_vector<float>({1.5f, -2.0f}, {2});
  const Tensor big = random_tensor(rng(), {600, 500}, DType::kF32);  // 1.2 MB
  std::string expected;
  auto put = [&expected](const auto& value) { expected.append(reinterpret_cast<const char*>(&value), sizeof(value)); };
  auto put_entry = [&](const std::string& name, const Tensor& t) {
    const size_t start = expected.size();
    put(static_cast<uint32_t>(name.size()));
    expected += name;
    put(uint8_t{7});  // f32
    put(static_cast<uint32_t>(t.dim()));
    for (int64_t d : t.shape()) put(d);
    put(static_cast<uint64_t>(t.numel() * 4));
    expected.append(static_cast<const char*>(t.raw_data()), t.numel() * 4);
    put(crc32c(absl::string_view(expected).substr(start)));
  };
  expected = std::string("TSCKPT\x1a\n", 8);
  put(kCheckpointVersion);
  put(uint32_t{2});
  put(uint64_t{0});  // the file size, filled in below
  put_entry("w", w);
  put_entry("big", big);
  const uint64_t size = expected.size() + 4;
  std::memcpy(expected.data() + 16, &size, sizeof(size));
  put(crc32c(expected));

  const NamedTensors tensors = {{"w", w}, {"big", big}};
  ASSERT_OK_AND_ASSIGN(const std::string encoded, encode_tensors(tensors));
  EXPECT_TRUE(encoded == expected);
  const std::string p = path("layout.ckpt");
  ASSERT_OK(save_tensors(p, tensors));
  EXPECT_TRUE(read_bytes(p) == expected);
}

TEST_F(CheckpointTest, StateDictRoundTripAndOverwrite) {
  auto make = [] {
    return std::make_shared<Sequential>(std::make_shared<Linear>(5, 4), std::make_shared<Linear>(4, 3));
  };
  auto a = make(), b = make();
  const std::string p = path("model.ckpt");
  ASSERT_OK(save_state_dict(*b, p));  // overwritten below
  ASSERT_OK(save_state_dict(*a, p));
  ASSERT_OK(load_state_dict(*b, p));
  const NamedTensors sa = a->state_dict(), sb = b->state_dict();
  ASSERT_EQ(sa.size(), 4u);
  for (size_t i = 0; i < sa.size(); ++i) EXPECT_TRUE(same_values(sa[i].second, sb[i].second)) << sa[i].first;
}

TEST_F(CheckpointTest, StateDictMismatchNamesFileAndEntry) {
  const std::string p = path("small.ckpt");
  auto small = std::make_shared<Linear>(5, 4);
  ASSERT_OK(save_state_dict(*small, p));
  auto wide = std::make_shared<Linear>(6, 4);
  expect_error(load_state_dict(*wide, p), absl::StatusCode::kInvalidArgument, {p, "'weight'", "[4, 5]", "[4, 6]"});
  auto no_bias = std::make_shared<Linear>(5, 4, /*bias=*/false);
  expect_error(load_state_dict(*no_bias, p), absl::StatusCode::kInvalidArgument, {p, "unexpected entry 'bias'"});
  ASSERT_OK(save_state_dict(*no_bias, p));
  expect_error(load_state_dict(*small, p), absl::StatusCode::kInvalidArgument, {p, "missing entry 'bias'"});
  small->to(DType::kF64);
  ASSERT_OK(save_state_dict(*small, p));
  auto f32 = std::make_shared<Linear>(5, 4);
  expect_error(load_state_dict(*f32, p), absl::StatusCode::kInvalidArgument, {p, "'weight'", "f64", "f32"});
}

TEST_F(CheckpointTest, BadMagic) {
  const std::string p = saved_file("magic.ckpt");
  std::string bytes = read_bytes(p);
  bytes[0] = 'X';
  write_bytes(p, bytes);
  expect_error(load_tensors(p).status(), absl::StatusCode::kInvalidArgument, {p, "bad magic"});
  write_bytes(p, "just some text\n");
  expect_error(load_tensors(p).status(), absl::StatusCode::kInvalidArgument, {p, "bad magic"});
}

TEST_F(CheckpointTest, WrongVersion) {
  const std::string p = saved_file("version.ckpt");
  std::string bytes = read_bytes(p);
  bytes[8] = 2;  // the u32 version follows the 8-byte magic
  write_bytes(p, bytes);
  expect_error(load_tensors(p).status(), absl::StatusCode::kFailedPrecondition,
               {p, "format version 2", "reads version 1"});
}

TEST_F(CheckpointTest, TruncatedAnywhere) {
  const std::string p = saved_file("truncated.ckpt");
  const std::string bytes = read_bytes(p);
  // Inside the header, inside entry 0's name, inside entry 1's data, in the trailer.
  expect_error((write_bytes(p, bytes.substr(0, 12)), load_tensors(p).status()), absl::StatusCode::kDataLoss,
               {p, "truncated", "header"});
  expect_error((write_bytes(p, bytes.substr(0, 24 + 4)), load_tensors(p).status()), absl::StatusCode::kDataLoss,
               {p, "truncated entry 0", "the file has 28"});
  expect_error((write_bytes(p, bytes.substr(0, bytes.size() - 10)), load_tensors(p).status()),
               absl::StatusCode::kDataLoss, {p, "truncated entry 1 'b'"});
  expect_error((write_bytes(p, bytes.substr(0, bytes.size() - 2)), load_tensors(p).status()),
               absl::StatusCode::kDataLoss, {p, "truncated after the last entry"});
  expect_error((write_bytes(p, ""), load_tensors(p).status()), absl::StatusCode::kDataLoss, {p, "truncated"});
  expect_error((write_bytes(p, bytes + "xx"), load_tensors(p).status()), absl::StatusCode::kDataLoss,
               {p, "the header says", "the file has"});
}

// Files are mapped, not read, but a file too short to map (empty) or to
// hold the header still gives the format's own errors, not a mapping error.
TEST_F(CheckpointTest, EmptyOrShortFileIsTruncatedNotAMappingError) {
  const std::string p = path("empty.ckpt");
  write_bytes(p, "");
  const absl::Status empty = load_tensors(p).status();
  expect_error(empty, absl::StatusCode::kDataLoss, {p, "truncated: 0 bytes", "header"});
  EXPECT_EQ(empty.message().find("map"), absl::string_view::npos) << empty;
  write_bytes(p, "TSCK");
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss, {p, "truncated: 4 bytes"});
  write_bytes(p, "X");
  expect_error(load_tensors(p).status(), absl::StatusCode::kInvalidArgument, {p, "bad magic"});
  // A directory is no checkpoint either; the error names it.
  expect_error(load_tensors(dir_.string()).status(), absl::StatusCode::kInternal, {dir_.string()});
}

TEST_F(CheckpointTest, CorruptDataNamesTheEntry) {
  const std::string p = saved_file("corrupt.ckpt");
  const std::string bytes = read_bytes(p);
  // Entry 0 ('a', f32 [2, 3]) starts at byte 24: 4 + 1 name + 1 dtype + 4
  // rank + 16 dims + 8 size = 34 bytes of metadata, then 24 data bytes.
  std::string flipped = bytes;
  flipped[24 + 34 + 5] ^= 0x10;
  write_bytes(p, flipped);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss, {p, "entry 0 'a'", "checksum mismatch"});
  // The last data byte of entry 1 ('b').
  flipped = bytes;
  flipped[bytes.size() - 4 - 4 - 1] ^= 0x01;
  write_bytes(p, flipped);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss, {p, "entry 1 'b'", "checksum mismatch"});
  // The entry count in the header is covered by the file checksum.
  flipped = bytes;
  flipped[12] = 1;
  write_bytes(p, flipped);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss, {p});
  // A corrupt dtype code.
  flipped = bytes;
  flipped[24 + 4 + 1] = 99;
  write_bytes(p, flipped);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss, {p, "entry 0 'a'", "unknown dtype code 99"});
}

TEST_F(CheckpointTest, FileChecksumCoversTheHeader) {
  const std::string p = saved_file("header.ckpt");
  std::string bytes = read_bytes(p);
  // Rewrite the trailer of an otherwise valid file.
  bytes[bytes.size() - 1] ^= 0x80;
  write_bytes(p, bytes);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss, {p, "file checksum mismatch"});
}

TEST_F(CheckpointTest, SaveErrors) {
  const Tensor t = zeros({2});
  expect_error(save_tensors(path("dup.ckpt"), {{"x", t}, {"x", t}}), absl::StatusCode::kInvalidArgument,
               {"dup.ckpt", "'x' appears twice"});
  expect_error(save_tensors(path("undef.ckpt"), {{"x", Tensor()}}), absl::StatusCode::kInvalidArgument,
               {"'x'", "undefined"});
  const std::string nowhere = path("no/such/dir/x.ckpt");
  expect_error(save_tensors(nowhere, {{"x", t}}), absl::StatusCode::kNotFound, {nowhere});
  expect_error(load_tensors(path("missing.ckpt")).status(), absl::StatusCode::kNotFound, {"missing.ckpt"});
}

TEST_F(CheckpointTest, SavesFromCuda) {
  TS_SKIP_WITHOUT_CUDA();
  const Tensor host = random_tensor(rng(), {3, 4}, DType::kF32);
  const std::string p = path("cuda.ckpt");
  ASSERT_OK(save_tensors(p, {{"w", to(host, Device::cuda(0))}}));
  ASSERT_OK_AND_ASSIGN(NamedTensors loaded, load_tensors(p));
  EXPECT_TRUE(same_values(host, loaded[0].second));
}

}  // namespace
}  // namespace ts::nn
