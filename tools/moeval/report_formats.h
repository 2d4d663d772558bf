// The files a report is read in besides its JSON: CSV for spreadsheets and pandas, JUnit XML for CI
// systems (one testcase per check: a FAIL is a <failure>, a SKIPPED a <skipped>).
#pragma once

#include <string>

#include "run_report.h"

namespace moeval::cli {

// RFC 4180: a header row, then one row per check in index order; fields holding a comma, quote or
// line break are quoted, quotes doubled. Columns: docs/reports.md.
std::string to_csv(const RunReport& report);

// <testsuites><testsuite name="moeval check"> with classname "moeval.<kernel>" and name = the case.
// Text is escaped, and characters XML 1.0 cannot carry are replaced by '?'.
std::string to_junit(const RunReport& report);

}  // namespace moeval::cli
