// The debug mode's call signatures: what they record, how they read, and the
// first-mismatch report every backend returns.
#include "collectives/call_signature.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using ::ts::testing::expect_error;

TEST(CallSignature, DescribesTheCall) {
  EXPECT_EQ(describe_call_signature(make_call_signature(3, "allreduce(sum)", ones({2, 3}))),
            "allreduce(sum) #3 on f32[2, 3]");
  EXPECT_EQ(describe_call_signature(make_call_signature(0, "barrier", Tensor())), "barrier #0");
  const Tensor deep = ones({1, 1, 1, 1, 1, 1, 1, 1, 2});
  EXPECT_EQ(describe_call_signature(make_call_signature(1, "broadcast(root 0)", deep)),
            "broadcast(root 0) #1 on f32[2 elements in > 8 dims]");
}

TEST(CallSignature, LongOpNamesAreCutNotOverrun) {
  const std::string long_name(100, 'x');
  const CallSignature s = make_call_signature(0, long_name, ones({1}));
  EXPECT_EQ(std::string(s.op), long_name.substr(0, sizeof(s.op) - 1));
}

TEST(CallSignature, NamesEveryDifference) {
  const CallSignature a = make_call_signature(4, "allreduce(sum)", ones({4}));
  EXPECT_EQ(call_signature_difference(a, a), "");
  EXPECT_EQ(call_signature_difference(a, make_call_signature(5, "allreduce(sum)", ones({4}))), "sequence number");
  EXPECT_EQ(call_signature_difference(a, make_call_signature(4, "allreduce(max)", ones({4}))), "op");
  EXPECT_EQ(call_signature_difference(a, make_call_signature(4, "allreduce(sum)", ones({4}, {DType::kF16}))), "dtype");
  EXPECT_EQ(call_signature_difference(a, make_call_signature(4, "allreduce(sum)", ones({2, 2}))), "shape");
  EXPECT_EQ(call_signature_difference(a, make_call_signature(5, "barrier", Tensor())),
            "sequence number, op, dtype, shape");
}

TEST(CallSignature, ReportsTheFirstRankThatDiffersFromRankZero) {
  const CallSignature same = make_call_signature(2, "allgather", ones({3}));
  const CallSignature other = make_call_signature(2, "allgather", ones({5}));
  std::vector<CallSignature> all = {same, same, other, other};
  EXPECT_TRUE(check_call_signatures({same, same}, 1).ok());
  EXPECT_TRUE(check_call_signatures({}, 0).ok());
  expect_error(check_call_signatures(all, 3), absl::StatusCode::kFailedPrecondition,
               {"seen on rank 3", "rank 0 called allgather #2 on f32[3]", "rank 2 called allgather #2 on f32[5]",
                "(shape differ)"});
}

}  // namespace
}  // namespace ts::collectives
