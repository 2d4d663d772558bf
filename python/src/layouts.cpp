#include "layouts.h"

#include <nanobind/stl/string.h>

#include "moeval/fixtures/layouts/awq.h"
#include "moeval/fixtures/layouts/compressed_tensors.h"
#include "moeval/fixtures/layouts/gptq.h"
#include "moeval/fixtures/layouts/marlin.h"
#include "moeval/fixtures/layouts/wna16.h"

namespace moeval::python {

Layout pack_layout(const GemmCase& c, const std::string& name) {
  const QuantizedWeights& w = c.w;
  const Size e = Size(w.experts), k = Size(w.k), n = Size(w.n), g = Size(w.groups());
  Layout l;
  l.name = name;
  l.attrs["bits"] = bits_of(w.scheme.type);
  l.attrs["group_size"] = w.scheme.group_size;
  l.attrs["dtype"] = std::string(to_string(w.scheme.act));
  if (name == "wna16") {
    layouts::Wna16Weights p = layouts::pack_wna16(w);
    l.add_rows("qweight", std::move(p.qweight), {e, n});  // [E][N][K/ppb]
    l.add("scales", std::move(p.scales), {e, n, g});      // [E][N][G]
    l.add("qzeros", std::move(p.qzeros), {e, n * Size(bits_of(w.scheme.type)) / 8, g});  // [E][N/ppb][G]
  } else if (name == "marlin") {
    layouts::MarlinWeights p = layouts::pack_marlin(w);
    l.attrs["scale_order"] = std::string(layouts::to_string(p.scale_order));
    l.attrs["k_shards"] = p.k_shards;
    l.add_rows("qweight", std::move(p.qweight), {e, k / 16});  // [E][K/16][N·16/pf]
    l.add("scales", std::move(p.scales), {e, g, n});      // [E][G][N]
    l.add_rows("zeros", std::move(p.zeros), {e, g});  // [E][G][N/pf]
    l.add("g_idx", std::move(p.g_idx), {e, k});
    l.add("perm", std::move(p.perm), {e, k});
  } else if (name == "gptq") {
    layouts::GptqWeights p = layouts::pack_gptq(w);
    l.attrs["k_shards"] = p.k_shards;
    l.add("qweight", std::move(p.qweight), {e, k * Size(bits_of(w.scheme.type)) / 32, n});  // [E][K/pf][N]
    l.add_rows("qzeros", std::move(p.qzeros), {e, g});  // [E][G][N/pf]
    l.add("scales", std::move(p.scales), {e, g, n});
    l.add("g_idx", std::move(p.g_idx), {e, k});
  } else if (name == "awq") {
    layouts::AwqWeights p = layouts::pack_awq(w);
    l.add_rows("qweight", std::move(p.qweight), {e, k});  // [E][K][N/8]
    l.add_rows("qzeros", std::move(p.qzeros), {e, g});  // [E][G][N/8]
    l.add("scales", std::move(p.scales), {e, g, n});
  } else if (name == "compressed_tensors") {
    layouts::CompressedTensorsWeights p = layouts::pack_compressed_tensors(w);
    l.attrs["k_shards"] = p.k_shards;
    l.attrs["weight_shape"] = nb::make_tuple(p.weight_shape[0], p.weight_shape[1]);
    l.add_rows("weight_packed", std::move(p.weight_packed), {e, n});  // [E][N][ceil(K·bits/32)]
    l.add("weight_scale", std::move(p.weight_scale), {e, n, g});
    l.add("weight_zero_point", std::move(p.weight_zero_point),
          {e, (n * Size(bits_of(w.scheme.type)) + 31) / 32, g});  // [E][ceil(N·bits/32)][G]
    l.add("weight_g_idx", std::move(p.weight_g_idx), {e, k});
  } else {
    throw std::invalid_argument("layout '" + name + "' is unknown; allowed: wna16, marlin, gptq, awq, compressed_tensors");
  }
  return l;
}

}  // namespace moeval::python
