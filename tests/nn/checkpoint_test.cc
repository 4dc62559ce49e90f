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

#include "gtest/gtest.h"
#include "nn/crc32c.h"
#include "nn/linear.h"
#include "nn/sequential.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::random_tensor;
using ::ts::testing::value_or_die;

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
  const Tensor ca = value_or_die(contiguous(value_or_die(to(a, Device::cpu()))));
  const Tensor cb = value_or_die(contiguous(b));
  return std::memcmp(ca.raw_data(), cb.raw_data(), ca.numel() * ca.itemsize()) == 0;
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

TEST(Crc32cTest, KnownValuesAndIncremental) {
  const std::string digits = "123456789";
  EXPECT_EQ(crc32c(digits.data(), digits.size()), 0xE3069283u);  // the standard check value
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 B.4
  std::string long_text;
  for (int i = 0; i < 1000; ++i) long_text += static_cast<char>(i * 31 + 7);
  for (size_t split : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    EXPECT_EQ(
        crc32c_extend(crc32c(long_text.data(), split), long_text.data() + split, long_text.size() - split),
        crc32c(long_text.data(), long_text.size()))
        << split;
  }
}

TEST_F(CheckpointTest, RoundTripsEveryDtypeAndShape) {
  NamedTensors tensors;
  for (DType d : kAllDTypes) {
    tensors.emplace_back(std::string("t_") + std::string(dtype_name(d)),
                         random_tensor(rng(), {3, 2, 5}, d, -50, 50));
  }
  tensors.emplace_back("scalar", value_or_die(full({}, 7, {DType::kI64})));
  tensors.emplace_back("empty", value_or_die(zeros({0, 4})));
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

TEST_F(CheckpointTest, StateDictRoundTripAndOverwrite) {
  auto make = [] {
    return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
        value_or_die(Linear::create(5, 4)), value_or_die(Linear::create(4, 3))});
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
  auto small = value_or_die(Linear::create(5, 4));
  ASSERT_OK(save_state_dict(*small, p));
  auto wide = value_or_die(Linear::create(6, 4));
  expect_error(load_state_dict(*wide, p), absl::StatusCode::kInvalidArgument,
               {p, "'weight'", "[4, 5]", "[4, 6]"});
  auto no_bias = value_or_die(Linear::create(5, 4, false));
  expect_error(load_state_dict(*no_bias, p), absl::StatusCode::kInvalidArgument,
               {p, "unexpected entry 'bias'"});
  ASSERT_OK(save_state_dict(*no_bias, p));
  expect_error(load_state_dict(*small, p), absl::StatusCode::kInvalidArgument, {p, "missing entry 'bias'"});
  ASSERT_OK(small->to(DType::kF64));
  ASSERT_OK(save_state_dict(*small, p));
  auto f32 = value_or_die(Linear::create(5, 4));
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
  expect_error((write_bytes(p, bytes.substr(0, 24 + 4)), load_tensors(p).status()),
               absl::StatusCode::kDataLoss, {p, "truncated entry 0", "the file has 28"});
  expect_error((write_bytes(p, bytes.substr(0, bytes.size() - 10)), load_tensors(p).status()),
               absl::StatusCode::kDataLoss, {p, "truncated entry 1 'b'"});
  expect_error((write_bytes(p, bytes.substr(0, bytes.size() - 2)), load_tensors(p).status()),
               absl::StatusCode::kDataLoss, {p, "truncated after the last entry"});
  expect_error((write_bytes(p, ""), load_tensors(p).status()), absl::StatusCode::kDataLoss, {p, "truncated"});
  expect_error((write_bytes(p, bytes + "xx"), load_tensors(p).status()), absl::StatusCode::kDataLoss,
               {p, "the header says", "the file has"});
}

TEST_F(CheckpointTest, CorruptDataNamesTheEntry) {
  const std::string p = saved_file("corrupt.ckpt");
  const std::string bytes = read_bytes(p);
  // Entry 0 ('a', f32 [2, 3]) starts at byte 24: 4 + 1 name + 1 dtype + 4
  // rank + 16 dims + 8 size = 34 bytes of metadata, then 24 data bytes.
  std::string flipped = bytes;
  flipped[24 + 34 + 5] ^= 0x10;
  write_bytes(p, flipped);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss,
               {p, "entry 0 'a'", "checksum mismatch"});
  // The last data byte of entry 1 ('b').
  flipped = bytes;
  flipped[bytes.size() - 4 - 4 - 1] ^= 0x01;
  write_bytes(p, flipped);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss,
               {p, "entry 1 'b'", "checksum mismatch"});
  // The entry count in the header is covered by the file checksum.
  flipped = bytes;
  flipped[12] = 1;
  write_bytes(p, flipped);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss, {p});
  // A corrupt dtype code.
  flipped = bytes;
  flipped[24 + 4 + 1] = 99;
  write_bytes(p, flipped);
  expect_error(load_tensors(p).status(), absl::StatusCode::kDataLoss,
               {p, "entry 0 'a'", "unknown dtype code 99"});
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
  const Tensor t = value_or_die(zeros({2}));
  expect_error(save_tensors(path("dup.ckpt"), {{"x", t}, {"x", t}}), absl::StatusCode::kInvalidArgument,
               {"dup.ckpt", "'x' appears twice"});
  expect_error(save_tensors(path("undef.ckpt"), {{"x", Tensor()}}), absl::StatusCode::kInvalidArgument,
               {"'x'", "undefined"});
  const std::string nowhere = path("no/such/dir/x.ckpt");
  expect_error(save_tensors(nowhere, {{"x", t}}), absl::StatusCode::kInternal, {nowhere});
  expect_error(load_tensors(path("missing.ckpt")).status(), absl::StatusCode::kNotFound, {"missing.ckpt"});
}

TEST_F(CheckpointTest, SavesFromCuda) {
  TS_SKIP_WITHOUT_CUDA();
  const Tensor host = random_tensor(rng(), {3, 4}, DType::kF32);
  ASSERT_OK_AND_ASSIGN(Tensor device, to(host, Device::cuda(0)));
  const std::string p = path("cuda.ckpt");
  ASSERT_OK(save_tensors(p, {{"w", device}}));
  ASSERT_OK_AND_ASSIGN(NamedTensors loaded, load_tensors(p));
  EXPECT_TRUE(same_values(host, loaded[0].second));
}

}  // namespace
}  // namespace ts::nn
