// The CLI's named matrices (quick, standard, full), for the registry in matrices.cpp.
#pragma once

#include <string_view>
#include <vector>

#include "moeval/testbed/matrices.h"

namespace moeval::testbed {

// Throws std::invalid_argument for another name.
std::vector<MatrixEntry> named_matrix_entries(std::string_view name);

}  // namespace moeval::testbed
