#pragma once
// Recipes: the numerics of one MLA decode (DESIGN.md "Strategy = recipe x schedule"). One table,
// shared by the CPU reference, the GPU strategies and the gate, so none needs another's code.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "quant/formats.h"

namespace mlacheck::problem {

// How Q enters Q·Kᵀ.
enum class QFormat : uint8_t {
  bf16,           // unquantized
  fp8_harness,    // the harness's per-tensor quantize_fp8 (NUMERICS §4)
  fp8_dynamic,    // kernel-side per-tensor fp8, float32 scale (NUMERICS §4.1)
  fp8_static,     // fp8 with a fixed scale
  fp8_cast,       // plain cast to fp8, scale 1
  mxfp4_dynamic,  // per-32 dynamic MXFP4 quantization of Q
  // Q x the softmax scale (x log2 e for base 2) rounded to bf16 before Q·Kᵀ, the scores then taking
  // no scale of their own: Triton kernels that pre-scale q (`(q * qk_scale).to(tl.bfloat16)`).
  bf16_scaled,
};
enum class KvFormat : uint8_t { bf16, fp8, mxfp4 };
// What P = exp(s - max) is rounded to before P·V. P·V takes V in the same type (the MMA's operand
// type): fp8 V into an fp8 MMA, dequantized MXFP4 V converted to bf16 (seed 001) or fp16 (seed 000).
enum class PFormat : uint8_t { f32, bf16, f16, fp8 };
enum class SoftmaxBase : uint8_t { e, two };
// What a split writes for the LSE merge: the normalized partial output of each split.
enum class PartialFormat : uint8_t { f32, bf16 };
// Where the KV cache's scale enters. scores_output: the fp8 per-tensor scale multiplies the score
// and the output, never an element (aiter's golden model, NUMERICS §6.2). fold_bf16 / fold_f16:
// each dequantized element (fp8 code x scale, or E2M1 x E8M0 block scale) is rounded to bf16 /
// fp16 once and both products take those values (seed 004 dequantizes K and V to fp16 with the
// scale folded in). A bf16 cache has no scale: only scores_output applies to it.
enum class KvScale : uint8_t { scores_output, fold_bf16, fold_f16 };
// How the fp8 x fp8 products are summed: Q·Kᵀ of an fp8 Q on an fp8 cache and P·V of an fp8 P, the
// cache's scale on the scores and the output (fp8_products_qk / _pv). f32: in float32 (MFMA, or a
// 16-bit product of the codes). tc64 and tc: as an sm_90 tensor core sums them (ref/fp8_mma.h's
// model, measured by docs/probes/fp8_accumulation.cu; e4m3fn codes only). tc64: a
// fresh accumulator for every 64 products added to a float32 sum: Q·Kᵀ per 64-dim box, P·V per 64
// keys from the start of each softmax step (the a8w8 hopper kernels, gpu/hopper/config.h). tc: never
// promoted: Q·Kᵀ's 576 products in one accumulator, and P·V's float32 accumulator, scaled by the
// softmax step's correction, the tensor core's C for the next step's products (Triton's default
// for fp8 x fp8 tl.dot on sm_90: max_num_imprecise_acc_default = 2**30).
enum class Fp8Accumulation : uint8_t { f32, tc64, tc };

struct Recipe {
  std::string_view name;
  QFormat q;
  KvFormat kv;
  PFormat p;
  SoftmaxBase base;
  // FP8 variant of every fp8 tensor of the recipe (Q, KV, P): e4m3fn on gfx950 / NVIDIA
  // (NUMERICS Decisions table; the MI355X harness ran gfx950).
  quant::Fp8Format fp8 = quant::Fp8Format::e4m3fn;
  // E2M1 rounding of MXFP4 Q and KV: rne = aiter >= 2026-03-17 (NUMERICS §5.4, Decisions table).
  quant::E2M1Rounding mxfp4_rounding = quant::E2M1Rounding::rne;
  // fp8_static: the scale is fl32(q_static_absmax / fp8_max(fp8)), as seed 004 computes
  // STATIC_Q_ABSMAX / FP8_MAX in Python and stores it as a float32 tensor. 0 where unused.
  float q_static_absmax = 0.0f;
  // fp8_cast: what a Q element past the fp8 max becomes. Triton's cast (seed 002) is backend-
  // specific (NUMERICS §4.1, last paragraph); mlacheck takes the hardware cvt's saturation.
  // Harness data (|q| < 1) never reaches it.
  quant::Overflow q_cast_overflow = quant::Overflow::saturate;
  // Format of the per-split partial outputs fed to the LSE merge (the LSE itself is float32).
  PartialFormat partial = PartialFormat::f32;
  KvScale kv_scale = KvScale::scores_output;
  Fp8Accumulation fp8_acc = Fp8Accumulation::f32;
  // Default split-K count of the emulated reference for this recipe (callers may pass another).
  int num_splits = 1;
  // Keys per online-softmax step inside a split: P = exp(s - running max) is rounded to the P
  // format with the max of the keys seen so far; 0 = one step over the whole split, i.e. the max
  // of the split (aiter's golden model, NUMERICS §6.2).
  int softmax_tile = 0;
  std::string_view source;  // where the defaults come from
};

// The seeds' recipes with their starting defaults (DESIGN.md table).
std::span<const Recipe> recipes();
std::optional<Recipe> find_recipe(std::string_view name);

// --- Composed recipes: a preset plus field overrides -------------------------------------------
// One spelling on every command: "PRESET[:FIELD=VALUE[,FIELD=VALUE...]]", e.g. "a16w8:p=fp8" or
// "a16w16:base=2,p=f16". The fields (recipe_fields() lists them with their values): q, kv, p,
// base, kv-scale, partial, fp8-acc. The result keeps the preset's name (its stored out_<preset> tensor is
// only the recipe's when no numerics field differs: same_numerics) and its schedule defaults.
struct RecipeField {
  std::string_view name;
  std::string_view values;  // "bf16|fp8-harness|..."
  std::string_view what;
};
std::span<const RecipeField> recipe_fields();
// Throws ProblemError naming the unknown preset, field or value and listing the known ones.
Recipe parse_recipe(std::string_view spelling);
// Sets one field ("p", "fp8"); the same errors as parse_recipe.
void set_recipe_field(Recipe& recipe, std::string_view field, std::string_view value);
// The canonical spelling: the preset name plus the fields that differ from it, in recipe_fields()
// order ("a16w8:p=fp8"); parse_recipe(spell(r)) has r's numerics.
std::string spell(const Recipe& recipe);
// Whether two recipes round every value the same way (formats, base, scale placement, partial
// format, fp8 variant, MXFP4 rounding, static absmax, cast overflow, fp8 accumulation); the schedule fields
// (num_splits, softmax_tile) and the name are not numerics.
bool same_numerics(const Recipe& a, const Recipe& b);

// Whether Q enters Q·Kᵀ as fp8 codes (any of the per-tensor fp8 quantizations).
constexpr bool is_fp8(QFormat q) {
  return q == QFormat::fp8_harness || q == QFormat::fp8_dynamic || q == QFormat::fp8_static ||
         q == QFormat::fp8_cast;
}
// Whether Q·Kᵀ / P·V multiply fp8 codes by fp8 codes (the products Fp8Accumulation is about).
bool fp8_products_qk(const Recipe&);
bool fp8_products_pv(const Recipe&);
// Products per fresh accumulator of Fp8Accumulation::tc64.
inline constexpr int kTensorCoreRun = 64;

// The Q scale of fp8_static for this recipe's fp8 variant (see Recipe::q_static_absmax).
float static_q_scale(const Recipe&);

std::string_view to_string(QFormat);
std::string_view to_string(KvFormat);
std::string_view to_string(PFormat);
std::string_view to_string(SoftmaxBase);
std::string_view to_string(PartialFormat);
std::string_view to_string(KvScale);
std::string_view to_string(Fp8Accumulation);

}  // namespace mlacheck::problem
