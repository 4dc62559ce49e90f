// The progress line redraws in place on a terminal and prints whole lines at
// its interval otherwise.
#include "tasks/common/progress.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace ts::tasks {
namespace {

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

ProgressState state(int64_t step) {
  ProgressState s;
  s.epoch = 2;
  s.epochs = 10;
  s.step = step;
  s.steps = 390;
  s.loss = 1.23456;
  s.samples_per_second = 1234.56;
  s.eta_seconds = 754;
  return s;
}

TEST(ProgressTest, Formats) {
  EXPECT_EQ(format_progress(state(120)), "epoch 2/10  step 120/390  loss 1.2346  1234.6 samples/s  ETA 0:12:34");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(eta_seconds(10, 5, 20), 40);
  EXPECT_EQ(eta_seconds(10, 0, 20), -1);
}

TEST(ProgressTest, TerminalRedrawsInPlace) {
  std::FILE* f = std::tmpfile();
  ProgressLine p(f, /*tty=*/true, 10);
  p.update(state(1), 0.0);
  p.update(state(2), 0.05);  // within 0.1 s: skipped
  p.update(state(3), 0.2);
  p.message("epoch 2/10 done");
  p.update(state(4), 0.4);
  p.finish();
  EXPECT_EQ(contents(f), "\r" + format_progress(state(1)) + "\033[K" + "\r" + format_progress(state(3)) + "\033[K" +
                             "\r\033[Kepoch 2/10 done\n" + "\r" + format_progress(state(4)) + "\033[K\n");
  std::fclose(f);
}

TEST(ProgressTest, PipePrintsLinesAtTheInterval) {
  std::FILE* f = std::tmpfile();
  ProgressLine p(f, /*tty=*/false, 10);
  for (int i = 0; i < 30; ++i) p.update(state(i), i);  // one per second
  p.finish();
  EXPECT_EQ(contents(f),
            format_progress(state(0)) + "\n" + format_progress(state(10)) + "\n" + format_progress(state(20)) + "\n");
  std::fclose(f);
}

TEST(ProgressTest, NullStreamIsQuiet) {
  ProgressLine p = ProgressLine::for_stream(nullptr, 10);
  p.update(state(0), 0);
  p.message("checkpoint written");
  p.finish();
}

}  // namespace
}  // namespace ts::tasks
