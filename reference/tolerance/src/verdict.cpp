#include "moeval/tolerance/verdict.h"

#include <cstdio>

namespace moeval::tolerance {
namespace {

std::string format(const char* pattern, double a) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, a);
  return buffer;
}

std::string hex16(std::uint16_t bits) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "0x%04x", static_cast<unsigned>(bits));
  return buffer;
}

// The bounded tier measures against the fp64 reference; the exact tier compares 16-bit patterns, so
// its "want" is the reference's own rounding (with both patterns), and the fp64 value follows.
std::string describe(const char* label, const ElementReport& e, Tier tier) {
  std::string s = std::string(label) + " (" + std::to_string(e.row) + ", " + std::to_string(e.col) + "): got ";
  if (tier == Tier::exact) {
    s += format("%.9g", e.value) + " (" + hex16(e.value_bits) + ") want " + format("%.9g", e.reference_rounded) + " (" +
         hex16(e.reference_bits) + "), fp64 " + format("%.9g", e.reference);
  } else {
    s += format("%.9g", e.value) + " want " + format("%.9g", e.reference) + " bound " + format("%.3g", e.bound) +
         " ratio " + format("%.3g", e.ratio);
  }
  return s;
}

std::string hook(const char* name, const std::optional<bool>& status) {
  return std::string("; ") + name + (status ? (*status ? " ok" : " FAILED") : " not checked");
}

}  // namespace

bool Verdict::pass() const {
  const bool determinism_gates = contract.determinism == reference::Determinism::required;
  return numerics_pass && canaries_intact.value_or(true) && (!determinism_gates || deterministic.value_or(true));
}

std::string Verdict::summary() const {
  std::string s = pass() ? "PASS " : "FAIL ";
  s += std::string(to_string(tier)) + " [" + std::to_string(rows) + " x " + std::to_string(cols) + "]: ";
  s += std::to_string(violations) + (tier == Tier::exact ? " mismatches" : " violations");
  if (tier == Tier::bounded) s += ", max ratio " + format("%.3g", max_ratio);
  if (first_violation && tier == Tier::exact) s += "; " + describe("first", *first_violation, tier);
  if (worst && (tier == Tier::bounded || violations > 0)) s += "; " + describe("worst", *worst, tier);
  s += "; normwise " + format("%.3g", normwise);
  s += "; NaN " + std::to_string(observed_nan) + ", Inf " + std::to_string(observed_inf);
  if (reference_nonfinite > 0) s += " (reference non-finite " + std::to_string(reference_nonfinite) + ")";
  s += hook("canaries", canaries_intact) + hook("determinism", deterministic);
  if (deterministic == false && contract.determinism == reference::Determinism::reported) s += " (reported only)";
  if (contract != reference::NumericsContract{}) s += "; contract " + contract.name();
  return s;
}

}  // namespace moeval::tolerance
