#include "device_arch.h"

#include <cctype>
#include <vector>

namespace moeval::cli {
namespace {

struct ArchEntry {
  int arch = 0;             // 90 for "90a-real"
  bool specific = false;    // "a": only this exact capability
  bool family = false;      // "f": this major, minor >= arch's
  bool sass = true;         // real code present
  bool ptx = true;          // virtual code present
};

// false for entries we cannot judge (all, native, ...) or cannot parse.
bool parse_entry(std::string_view text, ArchEntry& e) {
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) e.arch = e.arch * 10 + (text[i++] - '0');
  if (i == 0 || e.arch <= 0 || e.arch > 1000) return false;
  if (i < text.size() && text[i] == 'a') e.specific = true, ++i;
  else if (i < text.size() && text[i] == 'f') e.family = true, ++i;
  const std::string_view rest = text.substr(i);
  if (rest == "-real") e.ptx = false;
  else if (rest == "-virtual") e.sass = false;
  else if (!rest.empty()) return false;
  return true;
}

bool runs(const ArchEntry& e, int major, int minor) {
  const int cc = major * 10 + minor;
  const int arch_major = e.arch / 10;
  if (e.specific) return cc == e.arch;  // arch-specific features: neither SASS nor PTX travels
  if (e.sass && arch_major == major && minor >= e.arch % 10) return true;
  if (e.ptx && !e.family && cc >= e.arch) return true;
  return false;
}

}  // namespace

std::string arch_mismatch(int major, int minor, std::string_view architectures) {
  std::vector<std::string_view> entries;
  for (std::size_t start = 0; start <= architectures.size();) {
    const std::size_t end = std::min(architectures.find_first_of(";, ", start), architectures.size());
    if (end > start) entries.push_back(architectures.substr(start, end - start));
    start = end + 1;
  }
  bool judged = false;
  for (std::string_view text : entries) {
    ArchEntry e;
    if (!parse_entry(text, e)) return "";  // "all", "native", ...: trust the build
    judged = true;
    if (runs(e, major, minor)) return "";
  }
  if (!judged) return "";
  const std::string cc = std::to_string(major) + std::to_string(minor);
  return "compute capability " + std::to_string(major) + "." + std::to_string(minor) +
         " cannot run this build's kernels (built for CMAKE_CUDA_ARCHITECTURES=" + std::string(architectures) +
         "); rebuild with -DCMAKE_CUDA_ARCHITECTURES=\"" + cc + ";" + std::string(architectures) + "\"";
}

}  // namespace moeval::cli
