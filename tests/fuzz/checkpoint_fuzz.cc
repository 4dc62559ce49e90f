// Checkpoint decoding (nn/checkpoint.h) on arbitrary bytes: an error names
// the input; what decodes encodes back to the same bytes. Mutations rarely
// get past the checksums, so this mostly exercises what is read before them:
// the header, names, dtype codes, ranks, dims and sizes.
#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "nn/checkpoint.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tensors = ts::nn::decode_tensors(bytes, "fuzz");
  if (!tensors.ok()) {
    FUZZ_CHECK(absl::StartsWith(tensors.status().message(), "fuzz: "));
    return 0;
  }
  auto encoded = ts::nn::encode_tensors(*tensors);
  FUZZ_CHECK(encoded.ok());
  FUZZ_CHECK(*encoded == bytes);
  return 0;
}
