// problem::Batch validation, as the reference relies on it (ref/ never re-checks a Batch).
#include <string>

#include <gtest/gtest.h>

#include "problem/batch.h"
#include "problem/error.h"
#include "ref/case_spec.h"
#include "ref/layout.h"

namespace mlacheck::problem {
namespace {

// The error's message, or "" when the constructor accepts the batch.
std::string error_of(std::vector<int32_t> qo, std::vector<int32_t> kv, std::vector<int32_t> idx,
                     int32_t page_size, int64_t rows) {
  try {
    Batch(std::move(qo), std::move(kv), std::move(idx), page_size, rows);
  } catch (const ProblemError& e) {
    return e.what();
  }
  return "";
}

TEST(RefBatchValidation, RejectsBadLayoutsWithClearMessages) {
  EXPECT_EQ(error_of({0, 1, 2}, {0, 4, 8}, {}, 1, 8), "");
  EXPECT_NE(error_of({0, 1, 2}, {0, 5, 3}, {}, 1, 8).find("not monotonic"), std::string::npos);
  EXPECT_NE(error_of({0, 2, 1}, {0, 4, 8}, {}, 1, 8).find("not monotonic"), std::string::npos);
  EXPECT_NE(error_of({0, 1, 2}, {0, 4, 9}, {}, 1, 8).find("only 8 rows"), std::string::npos);
  EXPECT_NE(error_of({0, 1}, {0, 4, 8}, {}, 1, 8).find("batch sizes differ"), std::string::npos);
  EXPECT_NE(error_of({1, 2}, {0, 4}, {}, 1, 8).find("must be 0"), std::string::npos);
  EXPECT_NE(error_of({0, 5}, {0, 4}, {}, 1, 8).find("q_seq_len 5"), std::string::npos);
  // Paged: an index past the cache, and a page table of the wrong length.
  EXPECT_EQ(error_of({0, 1}, {0, 5}, {1, 0}, 4, 8), "");
  EXPECT_NE(error_of({0, 1}, {0, 5}, {1, 2}, 4, 8).find("past the cache"), std::string::npos);
  EXPECT_NE(error_of({0, 1}, {0, 5}, {-1, 0}, 4, 8).find("past the cache"), std::string::npos);
  EXPECT_NE(error_of({0, 1}, {0, 5}, {1}, 4, 8).find("need 2"), std::string::npos);
  EXPECT_NE(error_of({0, 1}, {0, 5}, {}, 4, 8).find("without kv_indices"), std::string::npos);
  // ... but a paged batch of empty requests needs no page (`gen --page-size 2 --kv-len 0` failed).
  EXPECT_EQ(error_of({0, 1, 3}, {0, 0, 0}, {}, 4, 0), "");
}

// Issue 11 item 8 (UBSan): kv_len + page_size - 1 overflowed int32 for a request of 2^31 - 1 keys.
// Before the fix the page count came out negative ("need -1073741824"); now it is counted in 64
// bits and the short page table is reported with the right need.
TEST(RefBatchValidation, PageCountsNearTwoToThe31DoNotOverflow) {
  const std::string msg = error_of({0, 1}, {0, 2147483647}, {0}, 2, 2);
  EXPECT_NE(msg.find("need 1073741824"), std::string::npos) << msg;
}

// The same in the case generator (ref/layout.cpp): one request of 2^31 - 1 keys in one page of
// 2^31 - 1 rows. Before: length + page_size - 1 overflowed int32 (UBSan) and the page count was
// garbage; now the layout is one page, and nothing of its size is allocated.
TEST(RefBatchValidation, GeneratedLayoutNearTwoToThe31) {
  ref::CaseSpec spec;
  spec.batch = 1;
  spec.kv_len = 2147483647;
  spec.page_size = 2147483647;
  spec.seed = 1;
  const Batch b = ref::make_batch(spec);
  EXPECT_EQ(b.kv_indices().size(), 1u);
  EXPECT_EQ(b.cache_rows(), 2147483647);
  EXPECT_EQ(b.kv_len(0), 2147483647);
}

TEST(RefBatchValidation, CausalVisibility) {
  const Batch b({0, 4, 6}, {0, 10, 11}, {}, 1, 11);
  EXPECT_EQ(b.visible_kv(0, 0), 7);
  EXPECT_EQ(b.visible_kv(0, 3), 10);
  EXPECT_EQ(b.visible_kv(1, 0), 0);  // 1 key, 2 queries: the first sees none
  EXPECT_EQ(b.visible_kv(1, 1), 1);
}

}  // namespace
}  // namespace mlacheck::problem
