// Tests that read Debian's Fashion-MNIST skip, saying why, on a machine
// without it (tools/setup installs it here and in CI; the lent GPU machine,
// which runs the bundled tests, has none).
#pragma once

#include <filesystem>
#include <string>

#include "data/readers/idx.h"
#include "gtest/gtest.h"

#define TS_SKIP_WITHOUT_FASHION_MNIST()                                                                        \
  do {                                                                                                         \
    if (!std::filesystem::exists(std::string(::ts::data::kFashionMnistDir) + "/train-images-idx3-ubyte.gz")) { \
      GTEST_SKIP() << "no Fashion-MNIST at " << ::ts::data::kFashionMnistDir                                   \
                   << " (Debian's dataset-fashion-mnist; tools/setup installs it)";                            \
    }                                                                                                          \
  } while (false)
