// The hopper family's bf16 kernel with the query tokens of a request taken together (q_len > 1:
// each tile copied once for the group, gpu/hopper/attention.hip) against the same kernel taking them
// one at a time (Tunables::pack_tokens = false): the same output and LSE bits. Each token's columns of
// the m64n32 products, its softmax steps and epilogue are the one-token kernel's float operations in
// the same order; a tile past a token's last key (the group's last tile) is all masked for it: α = 1,
// p = 0, its state unchanged. So any difference is a token's keys masked by another's bound, a statistic or P of the
// wrong token, a Q tile staged for the wrong token or a group cut wrong (q_len 3: a group of two,
// then one). Split-K (the split rule's counts and the merge in clusters where it fuses) and the
// persistent schedule, on the quick tier's q_len > 1 cases and two of q_len 3 (one cut so that a
// split holds keys of the group's last token only). Skips without a usable GPU, on a device that
// is not compute capability 9.0, and in builds without sm_90a code.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/availability.h"
#include "gpu/registry.h"
#include "ref/case_list.h"
#include "tests/gpu/bit_differences.h"
#include "tests/gpu/decode_cases.h"

#if defined(MLACHECK_HAVE_SM90A)
#include "gpu/device_problem.h"
#include "gpu/sm90/wgmma_check.h"
#endif

namespace mlacheck::gpu {
namespace {

TEST(GpuHopperPackedTokens, EqualOneTokenAtATimeBitForBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if !defined(MLACHECK_HAVE_SM90A)
  GTEST_SKIP() << "this build has no sm_90a code (an NVIDIA build with 90a among its architectures)";
#else
  if (!device_runs_sm90a()) GTEST_SKIP() << "the device is not compute capability 9.0 (sm_90a)";
  // q_len 3 (groups of two and one): ragged lengths (0, 1, primes, page boundaries), and 16 requests
  // of 66 keys under 2 splits of 33, where the second split holds keys 33 .. 65: token 0 of a
  // request sees keys 0 .. 63, token 2 keys 0 .. 65.
  constexpr const char* kOddCases =
      "name=q3_ragged_p16_bs10_kv200 batch=10 kv_len=200 seed=71 q_len=3 layout=ragged page_size=16 shuffle_pages=1\n"
      "name=q3_bs16_kv66 batch=16 kv_len=66 seed=72 q_len=3\n";
  std::vector<ref::CaseSpec> specs;
  for (const ref::CaseSpec& spec : test::decode_cases())
    if (spec.q_len > 1) specs.push_back(spec);
  ASSERT_GE(specs.size(), 2u) << "the quick tier lost its q_len > 1 cases";
  for (const ref::CaseSpec& spec : ref::parse_case_list(kOddCases, "hopper_packed_test")) specs.push_back(spec);
  int compared = 0;
  for (const char* name : {"a16w16/split-k/hopper", "a16w16/persistent/hopper"}) {
    const Strategy* packed = find_strategy(name);
    ASSERT_NE(packed, nullptr) << name;
    Strategy single = *packed;
    single.tunables.pack_tokens = false;
    for (const int splits : {0, 2}) {  // 0: the split rule's count (split-K only)
      if (splits > 0 && packed->schedule != Schedule::split_k) continue;
      Strategy p = *packed, s = single;
      if (splits > 0) {
        p.tunables.split_rule = s.tunables.split_rule = false;
        p.tunables.splits = s.tunables.splits = splits;
      }
      for (const ref::CaseSpec& spec : specs) {
        SCOPED_TRACE(spec.name + ", " + name + (splits > 0 ? ", " + std::to_string(splits) + " splits" : ""));
        test::PreparedCase c(spec);
        const ref::Inputs& in = c.inputs();
        const problem::KvCache cache = c.cache_for(p.recipe);
        if (const auto why = p.supports(in.batch, cache)) {
          ADD_FAILURE() << name << " refuses a case: " << *why;
          continue;
        }
        DeviceProblem device(in.batch, in.q);
        const RunResult one = device.run(s, cache, KeepWorkspace::no);
        const RunResult together = device.run(p, cache, KeepWorkspace::no);
        test::expect_same_bits(together.out, one.out, together.lse, one.lse);
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 15);
#endif
}

}  // namespace
}  // namespace mlacheck::gpu
