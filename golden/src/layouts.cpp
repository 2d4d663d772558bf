#include "moeval/golden/layouts.h"

#include <cstring>

#include "moeval/fixtures/layouts/awq.h"
#include "moeval/fixtures/layouts/compressed_tensors.h"
#include "moeval/fixtures/layouts/gptq.h"
#include "moeval/fixtures/layouts/marlin.h"
#include "moeval/fixtures/layouts/wna16.h"

namespace moeval::golden {
namespace {

// Checkpoints declare packed words as int32; the fixtures hold them as uint32 (same bits).
std::vector<std::int32_t> as_int32(const std::vector<std::uint32_t>& words) {
  std::vector<std::int32_t> out(words.size());
  if (!words.empty()) std::memcpy(out.data(), words.data(), words.size() * sizeof(std::uint32_t));
  return out;
}

// A packed checkpoint array, compared bitwise.
void put_packed(CaseRecord& r, const std::string& name, Array array) { r.datasets[name] = Dataset{std::move(array)}; }

void add_wna16(CaseRecord& r, const std::string& p, const QuantizedWeights& w) {
  const layouts::Wna16Weights packed = layouts::pack_wna16(w);
  const std::int64_t ppb = 8 / bits_of(w.scheme.type);
  const std::int64_t g = w.groups();
  put_packed(r, p + "qweight", make_array<std::uint8_t>({w.experts, w.n, w.k / ppb}, packed.qweight));
  put_packed(r, p + "scales", make_array<std::uint16_t>({w.experts, w.n, g}, packed.scales, w.scheme.act));
  if (!packed.qzeros.empty()) put_packed(r, p + "qzeros", make_array<std::uint8_t>({w.experts, w.n / ppb, g}, packed.qzeros));
}

void add_marlin(CaseRecord& r, const std::string& p, const std::string& tag, const QuantizedWeights& w) {
  const layouts::MarlinWeights packed = layouts::pack_marlin(w);
  const std::int64_t pf = pack_factor(w.scheme.type);
  const std::int64_t g = w.groups();
  put_packed(r, p + "qweight", make_array<std::int32_t>({w.experts, w.k / 16, w.n * 16 / pf}, as_int32(packed.qweight)));
  put_packed(r, p + "scales", make_array<std::uint16_t>({w.experts, g, w.n}, packed.scales, w.scheme.act));
  if (!packed.zeros.empty())
    put_packed(r, p + "zeros", make_array<std::int32_t>({w.experts, g, w.n / pf}, as_int32(packed.zeros)));
  if (!packed.g_idx.empty()) put_packed(r, p + "g_idx", make_array<std::int32_t>({w.experts, w.k}, packed.g_idx));
  if (!packed.perm.empty()) put_packed(r, p + "perm", make_array<std::int32_t>({w.experts, w.k}, packed.perm));
  r.attributes[tag + "_scale_order"] = std::string(layouts::to_string(packed.scale_order));
}

void add_gptq(CaseRecord& r, const std::string& p, const QuantizedWeights& w) {
  const layouts::GptqWeights packed = layouts::pack_gptq(w);
  const std::int64_t pf = pack_factor(w.scheme.type);
  const std::int64_t g = w.groups();
  put_packed(r, p + "qweight", make_array<std::int32_t>({w.experts, w.k / pf, w.n}, as_int32(packed.qweight)));
  put_packed(r, p + "qzeros", make_array<std::int32_t>({w.experts, g, w.n / pf}, as_int32(packed.qzeros)));
  put_packed(r, p + "scales", make_array<std::uint16_t>({w.experts, g, w.n}, packed.scales, w.scheme.act));
  put_packed(r, p + "g_idx", make_array<std::int32_t>({w.experts, w.k}, packed.g_idx));
}

void add_awq(CaseRecord& r, const std::string& p, const QuantizedWeights& w) {
  const layouts::AwqWeights packed = layouts::pack_awq(w);
  const std::int64_t g = w.groups();
  put_packed(r, p + "qweight", make_array<std::int32_t>({w.experts, w.k, w.n / 8}, as_int32(packed.qweight)));
  put_packed(r, p + "qzeros", make_array<std::int32_t>({w.experts, g, w.n / 8}, as_int32(packed.qzeros)));
  put_packed(r, p + "scales", make_array<std::uint16_t>({w.experts, g, w.n}, packed.scales, w.scheme.act));
}

void add_compressed_tensors(CaseRecord& r, const std::string& p, const QuantizedWeights& w) {
  const layouts::CompressedTensorsWeights packed = layouts::pack_compressed_tensors(w);
  const std::int64_t bits = bits_of(w.scheme.type);
  const std::int64_t g = w.groups();
  put_packed(r, p + "weight_packed",
      make_array<std::int32_t>({w.experts, w.n, (w.k * bits + 31) / 32}, as_int32(packed.weight_packed)));
  put_packed(r, p + "weight_scale", make_array<std::uint16_t>({w.experts, w.n, g}, packed.weight_scale, w.scheme.act));
  if (!packed.weight_zero_point.empty()) {
    put_packed(r, p + "weight_zero_point",
        make_array<std::int32_t>({w.experts, (w.n * bits + 31) / 32, g}, as_int32(packed.weight_zero_point)));
  }
  if (!packed.weight_g_idx.empty())
    put_packed(r, p + "weight_g_idx", make_array<std::int32_t>({w.experts, w.k}, packed.weight_g_idx));
  put_packed(r, p + "weight_shape",
      make_array<std::int32_t>({2}, {std::int32_t(packed.weight_shape[0]), std::int32_t(packed.weight_shape[1])}));
}

}  // namespace

std::string_view to_string(Layout layout) {
  switch (layout) {
    case Layout::wna16: return "wna16";
    case Layout::marlin: return "marlin";
    case Layout::gptq: return "gptq";
    case Layout::awq: return "awq";
    case Layout::compressed_tensors: return "compressed_tensors";
  }
  return "?";
}

bool layout_applies(Layout layout, const QuantScheme& scheme, std::int64_t k, std::int64_t n) {
  const int bits = bits_of(scheme.type);
  const std::int64_t pf = pack_factor(scheme.type);
  switch (layout) {
    case Layout::wna16: return !scheme.act_order && (bits == 8 || (k % 2 == 0 && n % 2 == 0));
    case Layout::marlin: return k % 16 == 0 && n % 64 == 0;
    case Layout::gptq: return !has_zero_point(scheme.type) && k % pf == 0 && n % pf == 0;
    case Layout::awq: return bits == 4 && !scheme.act_order && n % 8 == 0;
    case Layout::compressed_tensors: return true;
  }
  return false;
}

void add_layout(CaseRecord& record, const std::string& prefix, const std::string& tag, Layout layout,
                const QuantizedWeights& w) {
  switch (layout) {
    case Layout::wna16: add_wna16(record, prefix, w); break;
    case Layout::marlin: add_marlin(record, prefix, tag, w); break;
    case Layout::gptq: add_gptq(record, prefix, w); break;
    case Layout::awq: add_awq(record, prefix, w); break;
    case Layout::compressed_tensors: add_compressed_tensors(record, prefix, w); break;
  }
}

}  // namespace moeval::golden
