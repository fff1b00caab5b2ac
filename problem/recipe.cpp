#include "problem/recipe.h"

#include <array>

#include <fmt/core.h>

#include "problem/error.h"
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
    case QFormat::bf16_scaled: return "bf16-scaled";
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
std::string_view to_string(KvScale s) {
  switch (s) {
    case KvScale::scores_output: return "scores";
    case KvScale::fold_bf16: return "fold-bf16";
    case KvScale::fold_f16: return "fold-f16";
  }
  return "?";
}
std::string_view to_string(PartialFormat f) { return f == PartialFormat::f32 ? "f32" : "bf16"; }
std::string_view to_string(Fp8Accumulation a) {
  switch (a) {
    case Fp8Accumulation::f32: return "f32";
    case Fp8Accumulation::tc64: return "tc64";
    case Fp8Accumulation::tc: return "tc";
  }
  return "?";
}

bool fp8_products_qk(const Recipe& r) {
  return is_fp8(r.q) && r.kv == KvFormat::fp8 && r.kv_scale == KvScale::scores_output;
}
bool fp8_products_pv(const Recipe& r) {
  return r.p == PFormat::fp8 && r.kv == KvFormat::fp8 && r.kv_scale == KvScale::scores_output;
}

}  // namespace mlacheck::problem

// --- Composed recipes --------------------------------------------------------------------------
namespace mlacheck::problem {
namespace {

constexpr std::array kFields{
    RecipeField{"q", "bf16|fp8-harness|fp8-dynamic|fp8-static|fp8-cast|mxfp4-dynamic|bf16-scaled",
                "how Q enters Q·Kᵀ (bf16-scaled: Q x the softmax scale rounded to bf16)"},
    RecipeField{"kv", "bf16|fp8|mxfp4", "the KV cache the kernel reads"},
    RecipeField{"p", "f32|bf16|f16|fp8", "what P = b^(s - running max) is rounded to before P·V"},
    RecipeField{"base", "e|2", "softmax exponent base"},
    RecipeField{"kv-scale", "scores|fold-bf16|fold-f16",
                "KV scale on scores and output, or folded into the dequantized elements"},
    RecipeField{"partial", "f32|bf16", "format of the split partial outputs before the merge"},
    RecipeField{"fp8-acc", "f32|tc64|tc",
                "how fp8 x fp8 products are summed: float32, or as an sm_90 tensor core sums them "
                "(ref/fp8_mma.h, modelled) in runs of 64 added in float32 (tc64) or never promoted "
                "(tc: Triton's default)"},
};

// The enum value whose to_string is `text`, over every value of a small enum.
template <class E, std::size_t N>
std::optional<E> from_text(std::string_view text, const std::array<E, N>& all) {
  for (E e : all)
    if (to_string(e) == text) return e;
  return std::nullopt;
}

constexpr std::array kQ{QFormat::bf16,     QFormat::fp8_harness, QFormat::fp8_dynamic,
                        QFormat::fp8_static, QFormat::fp8_cast,    QFormat::mxfp4_dynamic,
                        QFormat::bf16_scaled};
constexpr std::array kKv{KvFormat::bf16, KvFormat::fp8, KvFormat::mxfp4};
constexpr std::array kP{PFormat::f32, PFormat::bf16, PFormat::f16, PFormat::fp8};
constexpr std::array kBase{SoftmaxBase::e, SoftmaxBase::two};
constexpr std::array kScale{KvScale::scores_output, KvScale::fold_bf16, KvScale::fold_f16};
constexpr std::array kPartial{PartialFormat::f32, PartialFormat::bf16};
constexpr std::array kFp8Acc{Fp8Accumulation::f32, Fp8Accumulation::tc64, Fp8Accumulation::tc};

std::string preset_names() {
  std::string s;
  for (const Recipe& r : kRecipes) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

template <class E, std::size_t N>
E value_of(std::string_view field, std::string_view value, const std::array<E, N>& all) {
  if (const auto e = from_text(value, all)) return *e;
  for (const RecipeField& f : kFields)
    if (f.name == field)
      throw ProblemError(fmt::format("recipe field {}: unknown value '{}' (one of {})", field,
                                     value, f.values));
  throw ProblemError(fmt::format("recipe field {}: unknown value '{}'", field, value));
}

// A recipe whose fields cannot go together.
void check_consistent(const Recipe& r) {
  if (r.kv == KvFormat::bf16 && r.kv_scale != KvScale::scores_output)
    throw ProblemError(fmt::format(
        "recipe {}: kv-scale={} needs a quantized cache (kv=fp8 or kv=mxfp4); a bf16 cache has "
        "no scale to fold",
        spell(r), to_string(r.kv_scale)));
  if (r.q == QFormat::fp8_static && r.q_static_absmax <= 0)
    throw ProblemError(fmt::format(
        "recipe {}: q=fp8-static needs a static scale; start from the a8w8-static preset", spell(r)));
  if (r.fp8_acc != Fp8Accumulation::f32 && !fp8_products_qk(r) && !fp8_products_pv(r))
    throw ProblemError(fmt::format(
        "recipe {}: fp8-acc={} needs fp8 x fp8 products (an fp8 q on kv=fp8, or p=fp8 on "
        "kv=fp8, with kv-scale=scores)",
        spell(r), to_string(r.fp8_acc)));
}

}  // namespace

std::span<const RecipeField> recipe_fields() { return kFields; }

void set_recipe_field(Recipe& r, std::string_view field, std::string_view value) {
  if (field == "q") {
    r.q = value_of(field, value, kQ);
    if (r.q == QFormat::fp8_static && r.q_static_absmax <= 0)
      r.q_static_absmax = find_recipe("a8w8-static")->q_static_absmax;  // seed 004's absmax
  } else if (field == "kv") {
    r.kv = value_of(field, value, kKv);
  } else if (field == "p") {
    r.p = value_of(field, value, kP);
  } else if (field == "base") {
    r.base = value_of(field, value, kBase);
  } else if (field == "kv-scale") {
    r.kv_scale = value_of(field, value, kScale);
  } else if (field == "partial") {
    r.partial = value_of(field, value, kPartial);
  } else if (field == "fp8-acc") {
    r.fp8_acc = value_of(field, value, kFp8Acc);
  } else {
    std::string known;
    for (const RecipeField& f : kFields) known += (known.empty() ? "" : ", ") + std::string(f.name);
    throw ProblemError(fmt::format("unknown recipe field '{}' (fields: {})", field, known));
  }
}

Recipe parse_recipe(std::string_view spelling) {
  const std::size_t colon = spelling.find(':');
  const std::string_view preset = spelling.substr(0, colon);
  const auto base = find_recipe(preset);
  if (!base)
    throw ProblemError(fmt::format("unknown recipe preset '{}' (presets: {}); a recipe is "
                                   "PRESET[:FIELD=VALUE,...]",
                                   preset, preset_names()));
  Recipe r = *base;
  if (colon == std::string_view::npos) return r;
  std::string_view rest = spelling.substr(colon + 1);
  if (rest.empty()) throw ProblemError(fmt::format("recipe '{}': nothing after ':'", spelling));
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      throw ProblemError(fmt::format("recipe '{}': '{}' is not FIELD=VALUE", spelling, item));
    set_recipe_field(r, item.substr(0, eq), item.substr(eq + 1));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    if (rest.empty()) throw ProblemError(fmt::format("recipe '{}': trailing ','", spelling));
  }
  check_consistent(r);
  return r;
}

std::string spell(const Recipe& r) {
  const auto base = find_recipe(r.name);
  std::string s(r.name);
  if (!base) return s;
  std::string over;
  const auto add = [&](std::string_view field, std::string_view value) {
    over += fmt::format("{}{}={}", over.empty() ? "" : ",", field, value);
  };
  if (r.q != base->q) add("q", to_string(r.q));
  if (r.kv != base->kv) add("kv", to_string(r.kv));
  if (r.p != base->p) add("p", to_string(r.p));
  if (r.base != base->base) add("base", to_string(r.base));
  if (r.kv_scale != base->kv_scale) add("kv-scale", to_string(r.kv_scale));
  if (r.partial != base->partial) add("partial", to_string(r.partial));
  if (r.fp8_acc != base->fp8_acc) add("fp8-acc", to_string(r.fp8_acc));
  return over.empty() ? s : s + ":" + over;
}

bool same_numerics(const Recipe& a, const Recipe& b) {
  return a.q == b.q && a.kv == b.kv && a.p == b.p && a.base == b.base && a.fp8 == b.fp8 &&
         a.mxfp4_rounding == b.mxfp4_rounding && a.q_static_absmax == b.q_static_absmax &&
         a.q_cast_overflow == b.q_cast_overflow && a.partial == b.partial &&
         a.kv_scale == b.kv_scale && a.fp8_acc == b.fp8_acc;
}

}  // namespace mlacheck::problem
