#include "moeval/golden/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <type_traits>

namespace moeval::golden {
namespace {

std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return index;
}

std::string show(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

template <class T>
std::string show_element(const Array& a, const std::vector<T>& values, std::size_t i) {
  if constexpr (std::is_same_v<T, std::uint16_t>) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%04x", unsigned(values[i]));
    if (a.float16) return std::string(text) + " (" + show(to_double(values[i], *a.float16)) + ")";
    return text;
  } else if constexpr (std::is_floating_point_v<T>) {
    return show(double(values[i]));
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    // int32 datasets are mostly packed words: the hex shows which nibble or byte moved.
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", unsigned(values[i]));
    return std::to_string(values[i]) + " (" + text + ")";
  } else {
    return std::to_string(values[i]);
  }
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) {
    if (std::isfinite(x)) m = std::max(m, std::fabs(x));
  }
  return m;
}

// fp64 reference outputs: equal within kFp64RelativeTolerance of the larger dataset ∞-norm;
// NaN matches NaN and an infinity matches the same infinity (both must sit in the same place).
bool fp64_close(double s, double r, double scale) {
  if (std::isnan(s) || std::isnan(r)) return std::isnan(s) && std::isnan(r);
  if (std::isinf(s) || std::isinf(r)) return s == r;
  return std::fabs(s - r) <= kFp64RelativeTolerance * scale;
}

void diff_values(const std::string& case_name, const std::string& path, const Array& stored, const Array& regen,
                 Compare compare, std::vector<Difference>& out) {
  std::visit(
      [&](const auto& s_values) {
        using Vec = std::decay_t<decltype(s_values)>;
        const Vec& r_values = std::get<Vec>(regen.data);
        double scale = 0;
        if constexpr (std::is_same_v<Vec, std::vector<double>>) {
          if (compare == Compare::fp64_relative) scale = std::max(max_abs(s_values), max_abs(r_values));
        }
        std::int64_t differing = 0;
        std::size_t first = 0;
        for (std::size_t i = 0; i < s_values.size(); ++i) {
          bool equal = same_bits(s_values[i], r_values[i]);
          if constexpr (std::is_same_v<Vec, std::vector<double>>) {
            if (compare == Compare::fp64_relative) equal = fp64_close(s_values[i], r_values[i], scale);
          }
          if (!equal && differing++ == 0) first = i;
        }
        if (differing == 0) return;
        out.push_back(Difference{case_name, path, "value", unravel(std::int64_t(first), stored.shape),
                                 show_element(stored, s_values, first), show_element(regen, r_values, first),
                                 differing});
      },
      stored.data);
}

std::string show_shape(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string show_attr(const AttrValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return show(*d);
  return "'" + std::get<std::string>(v) + "'";
}

std::string show_dtype(const Array& a) { return a.float16 ? std::string(to_string(*a.float16)) : "none"; }

}  // namespace

std::vector<Difference> diff_case(const CaseRecord& stored, const CaseRecord& regenerated) {
  std::vector<Difference> out;
  const std::string& name = regenerated.name;
  for (const auto& [attr, value] : regenerated.attributes) {
    const auto it = stored.attributes.find(attr);
    if (it == stored.attributes.end()) {
      out.push_back(Difference{name, "@" + attr, "missing", {}, "(absent)", show_attr(value)});
    } else if (it->second != value) {
      out.push_back(Difference{name, "@" + attr, "attribute", {}, show_attr(it->second), show_attr(value)});
    }
  }
  for (const auto& [attr, value] : stored.attributes) {
    if (!regenerated.attributes.count(attr)) {
      out.push_back(Difference{name, "@" + attr, "extra", {}, show_attr(value), "(absent)"});
    }
  }
  for (const auto& [path, regen] : regenerated.datasets) {
    const auto it = stored.datasets.find(path);
    if (it == stored.datasets.end()) {
      out.push_back(Difference{name, path, "missing", {}, "(absent)", show_shape(regen.array.shape)});
      continue;
    }
    const Array& s = it->second.array;
    const Array& r = regen.array;
    if (s.type() != r.type()) {
      out.push_back(
          Difference{name, path, "type", {}, std::string(to_string(s.type())), std::string(to_string(r.type()))});
    } else if (s.shape != r.shape) {
      out.push_back(Difference{name, path, "shape", {}, show_shape(s.shape), show_shape(r.shape)});
    } else if (s.float16 != r.float16) {
      out.push_back(Difference{name, path, "dtype", {}, show_dtype(s), show_dtype(r)});
    } else {
      diff_values(name, path, s, r, regen.compare, out);
    }
  }
  for (const auto& [path, dataset] : stored.datasets) {
    if (!regenerated.datasets.count(path)) {
      out.push_back(Difference{name, path, "extra", {}, show_shape(dataset.array.shape), "(absent)"});
    }
  }
  return out;
}

std::vector<Difference> diff_cases(const std::vector<CaseRecord>& stored, const std::vector<CaseRecord>& regenerated) {
  std::map<std::string, const CaseRecord*> by_name;
  for (const CaseRecord& c : stored) by_name[c.name] = &c;
  std::vector<Difference> out;
  for (const CaseRecord& r : regenerated) {
    const auto it = by_name.find(r.name);
    if (it == by_name.end()) {
      out.push_back(Difference{r.name, "", "missing", {}, "(absent)", "case"});
      continue;
    }
    for (Difference& d : diff_case(*it->second, r)) out.push_back(std::move(d));
    by_name.erase(it);
  }
  for (const auto& [name, record] : by_name) out.push_back(Difference{name, "", "extra", {}, "case", "(absent)"});
  return out;
}

std::size_t differing_cases(const std::vector<Difference>& differences) {
  std::set<std::string> names;
  for (const Difference& d : differences) names.insert(d.case_name);
  return names.size();
}

std::string format(const Difference& d) {
  std::string line = "case " + d.case_name;
  if (!d.dataset.empty()) line += ": " + std::string(d.dataset[0] == '@' ? "attribute " : "dataset ") + d.dataset;
  if (d.what == "value") {
    line += " " + show_shape(d.index) + ": stored " + d.stored + ", regenerated " + d.regenerated + " (" +
            std::to_string(d.differing) + " element" + (d.differing == 1 ? "" : "s") + " differ)";
  } else if (d.what == "missing") {
    line += ": regenerated but missing from the file";
  } else if (d.what == "extra") {
    line += ": stored in the file but no longer generated";
  } else {
    line += ": " + d.what + " differs: stored " + d.stored + ", regenerated " + d.regenerated;
  }
  return line;
}

}  // namespace moeval::golden
