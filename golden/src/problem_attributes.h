// The MoeProblem as case attributes (and the expert_map dataset), and back.
#pragma once

#include "moeval/fixtures/problem.h"
#include "moeval/golden/record.h"
#include "record_fields.h"

namespace moeval::golden {

void put_problem(CaseRecord& record, const MoeProblem& problem);
// Throws GoldenError (through `fields`) for a missing/mistyped attribute, an unknown enum name or
// a problem the fixtures reject.
MoeProblem get_problem(const RecordFields& fields);

}  // namespace moeval::golden
