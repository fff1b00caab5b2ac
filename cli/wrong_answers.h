#pragma once
// Known-wrong outputs for the gate's power report (check/power.h): each is what a kernel with one
// classic bug would return, computed with the reference (check/ runs nothing itself).
//   zeros            all-zero output
//   drop-token       the middle key of every request left out
//   skip-rope        Q·K over the 512 latent dims only (rope dims 512..575 ignored)
//   forget-kv-scale  the recipe with the fp8 KV scale taken as 1 (mxfp4: every block scale 1)
//   v-wrong-dims     V read from dims 64..575 of the row instead of 0..511
//   drop-split       the last of the recipe's KV splits left out of the merge
// By default each is computed in fp64 by the exact decode on transformed inputs that make the bug
// exact: a page table without the dropped keys; Q with zero rope dims; Q and K rotated together by
// 64 dims (scores unchanged, V shifted); forget-kv-scale runs the emulated recipe with the scales
// reset. With WrongAnswerNumerics::recipe, drop-token, skip-rope and drop-split are made as a
// kernel of the recipe with that bug computes them: the recipe's emulation with its preset
// schedule and a planted fault (ref/decode_emulated.h), each scored beside that emulation without
// the fault (check::WrongAnswer::baseline). An fp64 answer also differs from the recipe's emulation
// by all of the recipe's quantization, which a kernel with the bug would still do.
// Each answer but zeros carries the LSE the kernel with the bug writes, always in the recipe's
// numerics (the faulted emulation's; v-wrong-dims keeps the correct scores, so the correct LSE).
#include <map>
#include <span>
#include <string>
#include <vector>

#include "check/power.h"
#include "cli/golden_case.h"
#include "problem/recipe.h"

namespace mlacheck::cli {

// Builds the wrong answers of one case for any recipe; answers that do not depend on the recipe
// are computed once. A bug that changes nothing in this case (drop-split when no request is long
// enough to have a last split) is left out rather than scored as if it were wrong.
enum class WrongAnswerNumerics { exact, recipe };

class WrongAnswers {
 public:
  // The case must be complete (caches, exact and emulated outputs, cli/golden_case.h complete())
  // and outlive this object.
  explicit WrongAnswers(const GoldenCase& c,
                        WrongAnswerNumerics numerics = WrongAnswerNumerics::exact)
      : case_(c), numerics_(numerics) {}
  std::vector<check::WrongAnswer> for_recipe(const problem::Recipe& recipe);

 private:
  const GoldenCase& case_;
  WrongAnswerNumerics numerics_;
  // The fp64 outputs, which do not depend on the recipe: by name (drop-split: by split count).
  std::map<std::string, std::vector<float>> exact_;
  const std::vector<float>* exact_output(const std::string& key, auto make);
};

}  // namespace mlacheck::cli
