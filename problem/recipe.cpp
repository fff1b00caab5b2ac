#include "problem/recipe.h"

#include <array>

#include "quant/fp8.h"

namespace mlacheck::problem {
namespace {

// Each row is the DESIGN.md recipe table; the right column names the seed it was read from.
// Fields left out keep the defaults of recipe.h (e4m3fn, MXFP4 rne, saturating Q cast, float32
// partials, one softmax step per split). Split counts: the harness runs aiter with
// NUM_KV_SPLITS = 32 (NUMERICS §6.1); the Triton seeds tune theirs per shape, and the entry kept
// here is named in each comment.
constexpr std::array kRecipes{
    Recipe{.name = "a16w16", .q = QFormat::bf16, .kv = KvFormat::bf16, .p = PFormat::bf16,
           .base = SoftmaxBase::e,
           .num_splits = 32,  // aiter, harness default (NUMERICS §6.1)
           .source = "seed 004 (aiter a16w16)"},
    Recipe{.name = "a16w8", .q = QFormat::bf16, .kv = KvFormat::fp8, .p = PFormat::bf16,
           .base = SoftmaxBase::e,
           .num_splits = 32,  // aiter, harness default (NUMERICS §6.1)
           .source = "seed 000 (aiter a16w8)"},
    Recipe{.name = "a8w8", .q = QFormat::fp8_harness, .kv = KvFormat::fp8, .p = PFormat::fp8,
           .base = SoftmaxBase::e,
           .num_splits = 32,  // NUM_KV_SPLITS of the harness (NUMERICS §6.1)
           .source = "the harness reference (aiter golden model of mla_a8w8, NUMERICS §6.2)"},
    Recipe{.name = "a8w8-static", .q = QFormat::fp8_static, .kv = KvFormat::fp8, .p = PFormat::fp8,
           .base = SoftmaxBase::e,
           .q_static_absmax = 6.0f,  // seed 004: STATIC_Q_ABSMAX = 6.0
           .num_splits = 32,         // seed 004: N_SPLITS = 32
           .source = "seed 004 (fixed Q scale absmax 6.0 / 448)"},
    Recipe{.name = "a8w8-cast", .q = QFormat::fp8_cast, .kv = KvFormat::fp8, .p = PFormat::fp8,
           .base = SoftmaxBase::e,
           .partial = PartialFormat::bf16,  // seed 002: Mid_O is a bf16 tensor
           .num_splits = 8,                 // seed 002 S1 (bs 4, kv 1024): 8 splits of 128
           .softmax_tile = 0,               // seed 002 S1/S3/S5: one softmax step per split
           .source = "seed 002 (Triton kernels: Q cast to fp8, P cast to the KV type)"},
    Recipe{.name = "a16w4", .q = QFormat::bf16, .kv = KvFormat::mxfp4, .p = PFormat::bf16,
           .base = SoftmaxBase::e,
           .num_splits = 8,     // seed 001: NSPLITS_SMALL = 8 (kv <= 1024)
           .softmax_tile = 64,  // seed 001: BN = 64
           .source = "seed 001"},
    Recipe{.name = "a4w4", .q = QFormat::mxfp4_dynamic, .kv = KvFormat::mxfp4, .p = PFormat::f16,
           .base = SoftmaxBase::two,
           .num_splits = 4,     // seed 000: MXFP4_SPLITS_TABLE (64, 8192) = 4
           .softmax_tile = 32,  // seed 000: BLOCK_N = 32
           .source = "seed 000 (per-32 dynamic MXFP4 Q, fp16 P, base-2 softmax)"},
};

}  // namespace

std::span<const Recipe> recipes() { return kRecipes; }

float static_q_scale(const Recipe& r) {
  // Python divides in double and torch.tensor(..., float32) rounds once (seed 004).
  return static_cast<float>(static_cast<double>(r.q_static_absmax) /
                            static_cast<double>(quant::fp8_max(r.fp8)));
}

std::optional<Recipe> find_recipe(std::string_view name) {
  for (const Recipe& r : kRecipes)
    if (r.name == name) return r;
  return std::nullopt;
}

std::string_view to_string(QFormat f) {
  switch (f) {
    case QFormat::bf16: return "bf16";
    case QFormat::fp8_harness: return "fp8-harness";
    case QFormat::fp8_dynamic: return "fp8-dynamic";
    case QFormat::fp8_static: return "fp8-static";
    case QFormat::fp8_cast: return "fp8-cast";
    case QFormat::mxfp4_dynamic: return "mxfp4-dynamic";
  }
  return "?";
}
std::string_view to_string(KvFormat f) {
  switch (f) {
    case KvFormat::bf16: return "bf16";
    case KvFormat::fp8: return "fp8";
    case KvFormat::mxfp4: return "mxfp4";
  }
  return "?";
}
std::string_view to_string(PFormat f) {
  switch (f) {
    case PFormat::f32: return "f32";
    case PFormat::bf16: return "bf16";
    case PFormat::f16: return "f16";
    case PFormat::fp8: return "fp8";
  }
  return "?";
}
std::string_view to_string(SoftmaxBase b) { return b == SoftmaxBase::e ? "e" : "2"; }
std::string_view to_string(PartialFormat f) { return f == PartialFormat::f32 ? "f32" : "bf16"; }

}  // namespace mlacheck::problem
