// CIFAR-10 and CIFAR-100 record parsing on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "data/readers/cifar.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (ts::data::CifarKind kind : {ts::data::CifarKind::k10, ts::data::CifarKind::k100}) {
    auto set = ts::data::parse_cifar(bytes, "fuzz", kind);
    if (!set.ok()) {
      FUZZ_CHECK(absl::StartsWith(set.status().message(), "fuzz: "));
      continue;
    }
    const int64_t n = set->labels.numel();
    FUZZ_CHECK(n * ts::data::cifar_record_bytes(kind) == static_cast<int64_t>(size));
    FUZZ_CHECK(set->images.numel() == n * ts::data::kCifarImageBytes);
    const int64_t* labels = set->labels.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) FUZZ_CHECK(labels[i] >= 0 && labels[i] < ts::data::cifar_num_classes(kind));
    FUZZ_CHECK((kind == ts::data::CifarKind::k100) == set->coarse_labels.defined());
  }
  return 0;
}
