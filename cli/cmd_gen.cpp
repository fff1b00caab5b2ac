// `mlacheck gen`: generate cases (inputs from (seed, shape, profile)), their quantized caches and
// reference outputs, written as golden files; or regenerate and check the manifest of hashes.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/distinct_paths.h"
#include "cli/option_checks.h"
#include "cli/golden_case.h"
#include "cli/shard.h"
#include "io/golden.h"
#include "io/manifest.h"
#include "ref/case_list.h"
#include "ref/case_spec.h"

namespace mlacheck::cli {
namespace {

struct GenOptions {
  std::string case_list;
  std::vector<std::string> case_names;  // --cases: a subset of the list
  ref::CaseSpec spec;
  std::string profile = "harness";
  std::string layout = "uniform";
  bool given_shape = false;
  std::string recipes = "all";
  bool inputs_only = false;
  std::string out;
  std::optional<std::string> check_manifest, write_manifest;
  int64_t max_keys = 0;  // 0 = no limit
  // --shard i/n: case k of those left by --cases and --max-keys (list or manifest order) when
  // k mod n = i - 1 (cli/shard.h).
  std::optional<Shard> shard;
};

namespace gt = io::golden::tensor;

// The tensors the manifest pins: inputs, quantized caches and the exact outputs. The caches are
// hashed a chunk of rows at a time, as write_case writes them: derived ones are never whole.
std::map<std::string, std::string> manifest_hashes(const GoldenCase& c) {
  auto h = [](const auto& values) { return io::hash_bytes(std::as_bytes(std::span(values))); };
  std::map<std::string, std::string> m;
  m[std::string(gt::q)] = h(c.q);
  m[std::string(gt::kv)] = h(c.kv);
  for (const CacheTensor& t : cache_tensors(c)) {
    io::StreamingHash hash;
    io::for_each_chunk(t.shape[0], t.row_bytes, t.rows,
                       [&](std::span<const std::byte> chunk) { hash.update(chunk); });
    m[t.name] = hash.digest();
  }
  m[std::string(gt::kv_fp8_scale)] = h(std::span(&c.fp8->scale, 1));
  m[std::string(gt::out_exact)] = h(c.exact->out);
  m[std::string(gt::lse_exact)] = h(c.exact->lse);
  return m;
}

std::vector<ref::CaseSpec> selected_cases(const GenOptions& o) {
  std::vector<ref::CaseSpec> cases;
  if (!o.case_list.empty()) {
    if (o.given_shape) throw std::invalid_argument("give either --case-list or --batch/--kv-len/--seed, not both");
    cases = ref::read_case_list(o.case_list);
  } else {
    ref::CaseSpec s = o.spec;
    const auto profile = ref::parse_profile(o.profile);
    if (!profile) throw std::invalid_argument("unknown --profile '" + o.profile + "' (harness, peaked, outliers, boundary)");
    s.profile = *profile;
    if (o.layout != "uniform" && o.layout != "ragged")
      throw std::invalid_argument("--layout must be uniform or ragged, got '" + o.layout + "'");
    s.ragged = o.layout == "ragged";
    if (s.name.empty()) s.name = ref::default_name(s);
    cases.push_back(s);
  }
  if (!o.case_names.empty()) {
    std::vector<ref::CaseSpec> picked;
    for (const std::string& n : o.case_names) {
      auto it = std::find_if(cases.begin(), cases.end(), [&](const ref::CaseSpec& c) { return c.name == n; });
      if (it == cases.end()) throw std::invalid_argument("--cases: no case named '" + n + "' in " + o.case_list);
      picked.push_back(*it);
    }
    cases = std::move(picked);
  }
  return cases;
}

bool affordable(const ref::CaseSpec& s, int64_t max_keys) {
  return max_keys <= 0 || static_cast<int64_t>(s.batch) * s.kv_len <= max_keys;
}

int check_manifest(const GenOptions& o) {
  const io::Manifest m = io::read_manifest(*o.check_manifest);
  for (const std::string& n : o.case_names)
    if (std::none_of(m.cases.begin(), m.cases.end(), [&](const io::ManifestCase& mc) { return mc.name == n; }))
      throw std::invalid_argument("--cases: no case named '" + n + "' in the manifest " + *o.check_manifest);
  int failed = 0, checked = 0, skipped = 0;
  std::size_t units = 0, taken = 0;  // the cases --shard shares out, and this shard's
  for (const io::ManifestCase& mc : m.cases) {
    const std::vector<ref::CaseSpec> spec = ref::parse_case_list(mc.case_line, *o.check_manifest);
    if (spec.size() != 1) throw io::Error(*o.check_manifest + ": case '" + mc.name + "' is not one case line");
    if (!o.case_names.empty() && std::find(o.case_names.begin(), o.case_names.end(), mc.name) == o.case_names.end())
      continue;
    if (!affordable(spec[0], o.max_keys)) {
      fmt::print("{:<16} skipped: {} keys > --max-keys {}\n", mc.name,
                 static_cast<int64_t>(spec[0].batch) * spec[0].kv_len, o.max_keys);
      ++skipped;
      continue;
    }
    if (o.shard && !round_robin_takes(*o.shard, units++)) continue;
    ++taken;
    require_memory(golden_case_bytes(case_size(spec[0]), 0, kOnlyDerivedCaches), "regenerating case " + mc.name);
    GoldenCase c = generate_case(spec[0]);
    complete(c, {});
    const auto got = manifest_hashes(c);
    std::string bad;
    for (const auto& [name, want] : mc.hashes) {
      auto it = got.find(name);
      if (it == got.end() || it->second != want)
        bad += fmt::format(" {} ({} != {})", name, it == got.end() ? "missing" : it->second, want);
    }
    for (const auto& [name, hash] : got)
      if (!mc.hashes.contains(name)) bad += fmt::format(" {} (not in the manifest)", name);
    ++checked;
    if (bad.empty()) {
      fmt::print("{:<16} ok: {} tensors bit-identical\n", mc.name, got.size());
    } else {
      fmt::print("{:<16} MISMATCH:{}\n", mc.name, bad);
      ++failed;
    }
    std::fflush(stdout);
  }
  fmt::print("manifest {}: {}{} checked, {} failed, {} skipped\n", *o.check_manifest,
             o.shard ? shard_summary(*o.shard, taken, units, "cases") + ": " : "", checked, failed,
             skipped);
  // A shard may get none of the cases the options leave: that is not an error (the other shards
  // check them).
  if (o.shard && units > 0 && taken == 0) return kExitOk;
  // Nothing checked is not a pass and not a mismatch either: the options left nothing to do.
  if (checked == 0) throw std::invalid_argument("no manifest case was checked (all skipped by --max-keys)");
  return failed == 0 ? kExitOk : kExitFail;
}

int run_gen(const GenOptions& o) {
  require_distinct({{"-o", o.out}, {"--write-manifest", o.write_manifest.value_or("")}},
                   {{"--case-list", o.case_list}, {"--check-manifest", o.check_manifest.value_or("")}});
  if (o.check_manifest) return check_manifest(o);
  const std::vector<problem::Recipe> recipes = o.inputs_only ? std::vector<problem::Recipe>{} : parse_recipes(o.recipes);
  const std::vector<ref::CaseSpec> cases = selected_cases(o);
  if (!o.write_manifest && o.out.empty()) throw std::invalid_argument("gen needs -o OUT (or --write-manifest / --check-manifest)");
  const bool many = !o.case_list.empty();
  if (many && !o.out.empty()) std::filesystem::create_directories(o.out);

  if (std::none_of(cases.begin(), cases.end(), [&](const ref::CaseSpec& s) { return affordable(s, o.max_keys); }))
    throw std::invalid_argument(fmt::format("every one of the {} cases has more than --max-keys {} keys: nothing to generate",
                                            cases.size(), o.max_keys));
  std::vector<ref::CaseSpec> work;  // the cases to generate: those --max-keys leaves, then --shard's
  for (const ref::CaseSpec& spec : cases)
    if (affordable(spec, o.max_keys)) work.push_back(spec);
  if (o.shard) {
    const std::vector<std::size_t> taken = round_robin(work.size(), *o.shard);
    fmt::print("{}{}\n", shard_summary(*o.shard, taken.size(), work.size(), "cases"),
               taken.empty() ? "; nothing written" : "");
    if (taken.empty()) return kExitOk;
    std::vector<ref::CaseSpec> mine;
    for (const std::size_t k : taken) mine.push_back(work[k]);
    work = std::move(mine);
  }
  io::Manifest manifest;
  for (const ref::CaseSpec& spec : work) {
    require_memory(golden_case_bytes(case_size(spec), o.inputs_only ? 0 : recipes.size(), kOnlyDerivedCaches),
                   "generating case " + spec.name);
    GoldenCase c = generate_case(spec);
    // The manifest pins inputs, caches and the exact output: recipes only when a file is written.
    if (!o.out.empty() && !o.inputs_only) complete(c, recipes);
    else if (o.write_manifest) complete(c, {});
    if (o.write_manifest) manifest.cases.push_back({spec.name, case_line(spec), manifest_hashes(c)});
    if (!o.out.empty()) {
      if (o.inputs_only) {
        c.fp8.reset();
        c.mxfp4.reset();
        c.exact.reset();
        c.emulated.clear();
      }
      const std::filesystem::path file =
          many ? std::filesystem::path(o.out) / (spec.name + ".safetensors") : std::filesystem::path(o.out);
      write_case(c, file);
      fmt::print("wrote {} ({})\n", file.string(), case_line(spec));
    }
  }
  if (o.write_manifest) {
    io::write_manifest(*o.write_manifest, manifest);
    fmt::print("wrote manifest {} ({} cases)\n", *o.write_manifest, manifest.cases.size());
  }
  return kExitOk;
}

}  // namespace

void add_gen_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<GenOptions>();
  CLI::App* sub = app.add_subcommand(
      "gen", "Generate cases (same bits on every machine and thread count) and write golden files: "
             "inputs, quantized caches, exact and emulated outputs");
  auto* case_list = sub->add_option("--case-list", o->case_list, "case list file (data/cases/*.txt); -o is then a directory");
  sub->add_option("--cases", o->case_names, "only these case names of the list / manifest")->delimiter(',');
  auto* batch = sub->add_option("--batch", o->spec.batch, "requests");
  auto* kv = sub->add_option("--kv-len", o->spec.kv_len, "keys per request (the maximum when ragged)");
  auto* seed = sub->add_option("--seed", o->spec.seed, "seed")->check(unsigned_digits());
  auto* q_len = sub->add_option("--q-len", o->spec.q_len, "queries per request, 1..4 (causal)")->capture_default_str();
  auto* profile = sub->add_option("--profile", o->profile, "harness, peaked, outliers or boundary")->capture_default_str();
  auto* layout = sub->add_option("--layout", o->layout, "uniform or ragged (lengths 0, 1, primes, page boundary ±1)")
      ->capture_default_str();
  auto* page_size = sub->add_option("--page-size", o->spec.page_size, "page size of a paged cache (1 = contiguous)")
      ->capture_default_str();
  auto* shuffle = sub->add_flag("--shuffle-pages", o->spec.shuffle_pages, "pages in a random order through the page table");
  auto* name = sub->add_option("--name", o->spec.name, "case name (default: from the shape)");
  auto* recipes = sub->add_option("--recipes", o->recipes, "comma-separated recipes to emulate, or all")->capture_default_str();
  auto* inputs_only = sub->add_flag("--inputs-only", o->inputs_only, "write only the inputs (q, kv, indptr); `mlacheck ref` fills the rest");
  auto* out = sub->add_option("-o,--out", o->out, "output file (one case) or directory (a case list)");
  auto* check = sub->add_option("--check-manifest", o->check_manifest,
                  "regenerate every case of this manifest and compare the hashes; exit 1 on a mismatch");
  auto* write = sub->add_option("--write-manifest", o->write_manifest, "write the hashes of the generated cases to this file");
  sub->add_option("--max-keys", o->max_keys, "skip cases with more than this many keys (batch x kv_len)")
      ->check(CLI::NonNegativeNumber);
  CLI::Option* shard = add_shard_option(
      *sub, o->shard, "cases of --case-list / --check-manifest (after --cases, --max-keys), case k to shard k mod n + 1");
  // Options that cannot take effect together are refused, never silently ignored.
  for (CLI::Option* regenerating_only : {case_list, batch, kv, seed, q_len, profile, layout, page_size, shuffle,
                                         name, recipes, inputs_only, out, write})
    check->excludes(regenerating_only);
  for (CLI::Option* one_case_only : {batch, kv, seed, q_len, profile, layout, page_size, shuffle, name})
    case_list->excludes(one_case_only);
  inputs_only->excludes(recipes);
  sub->callback([&run, o, batch, kv, seed, shard] {
    o->given_shape = batch->count() + kv->count() + seed->count() > 0;
    if (shard->count() > 0 && o->case_list.empty() && !o->check_manifest)
      throw CLI::ValidationError("--shard", "shares out the cases of --case-list or --check-manifest; one case has no shards");
    if (o->case_list.empty() && !o->check_manifest && (batch->count() == 0 || kv->count() == 0 || seed->count() == 0))
      throw CLI::ValidationError("gen", "give --case-list FILE, --check-manifest FILE, or --batch, --kv-len and --seed");
    run = [o] { return run_gen(*o); };
  });
}

}  // namespace mlacheck::cli
