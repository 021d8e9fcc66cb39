#pragma once
/// @file
/// Parsing the banner and size line of a Matrix Market file.

#include "../../core/error.hpp"
#include "../../core/index_types.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace tessera::detail {

enum class mm_field { real, integer, pattern };
enum class mm_symmetry { general, symmetric, skew_symmetric };

[[nodiscard]] inline std::string_view to_string(mm_field f) {
  return f == mm_field::real ? "real" : f == mm_field::integer ? "integer" : "pattern";
}

struct matrix_market_header {
  mm_field field = mm_field::real;
  mm_symmetry symmetry = mm_symmetry::general;
  global_index rows = 0;
  global_index cols = 0;
  global_index entries = 0;
  std::uint64_t data_offset = 0;  ///< byte offset of the line after the size line
  global_index data_line = 0;     ///< 1-based number of that line
};

inline matrix_market_header read_matrix_market_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_REQUIRE(in, io_error, "{}: cannot open for reading", path);
  matrix_market_header h;
  std::string line;
  global_index line_number = 1;
  TESSERA_REQUIRE(std::getline(in, line), parse_error, "{}:1: empty file, expected a %%MatrixMarket banner", path);
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::istringstream banner(lower);
  std::string tag, object, format, field, symmetry;
  banner >> tag >> object >> format >> field >> symmetry;
  TESSERA_REQUIRE(tag == "%%matrixmarket", parse_error, "{}:1: expected a %%MatrixMarket banner, found '{}'", path, line);
  TESSERA_REQUIRE(object == "matrix", parse_error, "{}:1: object '{}' is not 'matrix'", path, object);
  TESSERA_REQUIRE(format == "coordinate", unsupported, "{}:1: format '{}' is not supported (only 'coordinate')", path, format);
  if (field == "real" || field == "double") h.field = mm_field::real;
  else if (field == "integer") h.field = mm_field::integer;
  else if (field == "pattern") h.field = mm_field::pattern;
  else TESSERA_THROW(unsupported, "{}:1: field '{}' is not supported (real, integer or pattern)", path, field);
  if (symmetry == "general") h.symmetry = mm_symmetry::general;
  else if (symmetry == "symmetric") h.symmetry = mm_symmetry::symmetric;
  else if (symmetry == "skew-symmetric") h.symmetry = mm_symmetry::skew_symmetric;
  else TESSERA_THROW(unsupported, "{}:1: symmetry '{}' is not supported (general, symmetric or skew-symmetric)", path, symmetry);

  while (std::getline(in, line)) {
    ++line_number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '%') continue;
    std::istringstream size_line(line);
    std::string extra;
    const bool ok = static_cast<bool>(size_line >> h.rows >> h.cols >> h.entries) && !(size_line >> extra);
    TESSERA_REQUIRE(ok && h.rows >= 0 && h.cols >= 0 && h.entries >= 0, parse_error,
                    "{}:{}: expected the size line 'rows columns entries', found '{}'", path, line_number, line);
    h.data_offset = static_cast<std::uint64_t>(in.tellg());
    if (in.eof()) {  // size line without a final newline
      in.clear();
      in.seekg(0, std::ios::end);
      h.data_offset = static_cast<std::uint64_t>(in.tellg());
    }
    h.data_line = line_number + 1;
    return h;
  }
  TESSERA_THROW(parse_error, "{}:{}: the file ends before the size line", path, line_number);
}

}  // namespace tessera::detail
