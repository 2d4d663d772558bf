#include "report_formats.h"

#include <cstdio>

#include "json_text.h"

namespace moeval::cli {
namespace {

// A JSON value as one CSV/XML field: strings bare (invalid UTF-8 as U+FFFD, as in the JSON files:
// a path may hold any bytes, and one such byte makes an XML reader refuse the whole junit.xml),
// null empty, numbers in JSON's shortest form.
std::string field(const nlohmann::json& j) {
  if (j.is_null()) return "";
  if (j.is_string()) return valid_utf8(j.get<std::string>());
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  return json_text(j);
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

nlohmann::json at(const nlohmann::json& j, const char* key) { return j.is_object() && j.contains(key) ? j[key] : nlohmann::json(); }

std::string xml_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 has no control characters but tab, LF and CR.
        out += (c < 0x20 && c != '\t' && c != '\n' && c != '\r') ? '?' : char(c);
    }
  }
  return out;
}

std::string seconds(const nlohmann::json& j) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", j.is_number() ? j.get<double>() : 0.0);
  return buf;
}

}  // namespace

std::string to_csv(const RunReport& report) {
  static const char* const kParams[] = {"weight_type", "group", "act_order", "is_k_full", "dtype", "E", "M", "topk",
                                        "H", "I", "local_experts", "k_shards", "routing", "seed"};
  static const char* const kAfter[] = {"device", "tier", "reference", "contract", "status", "max_ratio", "mismatches",
                                       "elements", "mismatch_fraction", "normwise"};
  std::string out = "index,id,kernel,kind,shape,case";
  for (const char* p : kParams) out += std::string(",") + p;
  for (const char* p : kAfter) out += std::string(",") + p;
  out += ",worst_row,worst_col,time_s,repro,reason\r\n";
  RunReport sorted = report;
  sorted.sort_checks();
  for (const auto& c : sorted.checks) {
    std::string row;
    for (const char* k : {"index", "id", "kernel", "kind", "shape", "case"}) row += (row.empty() ? "" : ",") + csv_quote(field(at(c, k)));
    const nlohmann::json params = at(c, "params");
    for (const char* p : kParams) row += "," + csv_quote(field(at(params, p)));
    for (const char* k : kAfter) row += "," + csv_quote(field(at(c, k)));
    const nlohmann::json worst = at(c, "worst");
    row += "," + field(at(worst, "row")) + "," + field(at(worst, "col"));
    row += "," + field(at(c, "time_s")) + "," + csv_quote(field(at(c, "repro"))) + "," + csv_quote(field(at(c, "reason")));
    out += row + "\r\n";
  }
  return out;
}

std::string to_junit(const RunReport& report) {
  RunReport sorted = report;
  sorted.sort_checks();
  const nlohmann::json s = report.summary();
  double total = 0;
  for (const auto& c : sorted.checks) total += at(c, "time_s").is_number() ? c["time_s"].get<double>() : 0.0;
  const std::string counts = " tests=\"" + std::to_string(sorted.checks.size()) + "\" failures=\"" + field(s["failed"]) +
                             "\" errors=\"0\" skipped=\"" + field(s["skipped"]) + "\" time=\"" + seconds(total) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"moeval\"" + counts + ">\n";
  const nlohmann::json run = at(report.header, "run");
  out += "  <testsuite name=\"moeval check\"" + counts + " timestamp=\"" + xml_escape(field(at(run, "start_time"))) + "\">\n";
  out += "    <properties>\n";
  for (const char* k : {"command", "matrix", "seeds", "contract"}) {
    out += "      <property name=\"" + std::string(k) + "\" value=\"" + xml_escape(field(at(run, k))) + "\"/>\n";
  }
  out += "      <property name=\"shard\" value=\"" + xml_escape(field(at(at(run, "shard"), "index")) + "/" +
                                                            field(at(at(run, "shard"), "count"))) + "\"/>\n";
  out += "    </properties>\n";
  for (const auto& c : sorted.checks) {
    out += "    <testcase classname=\"moeval." + xml_escape(field(at(c, "kernel"))) + "\" name=\"" +
           xml_escape(field(at(c, "case"))) + "\" time=\"" + seconds(at(c, "time_s")) + "\"";
    const std::string status = field(at(c, "status"));
    const std::string reason = field(at(c, "reason"));
    // What judged the check (the CPU's fp64 reference, the GPU's cuBLAS one, a golden file), as
    // the testcase property JUnit readers (Jenkins, GitLab) show.
    out += ">\n      <properties><property name=\"reference\" value=\"" + xml_escape(field(at(c, "reference"))) +
           "\"/></properties>\n";
    if (status == "FAIL") {
      const std::string first_line = reason.substr(0, reason.find('\n'));
      out += "      <failure message=\"" + xml_escape(first_line) + "\" type=\"" + xml_escape(field(at(c, "tier"))) + "\">" +
             xml_escape(reason) + "</failure>\n";
    } else if (status != "PASS") {
      out += "      <skipped message=\"" + xml_escape(reason) + "\"/>\n";
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace moeval::cli
