#pragma once
/// @file
/// Parsing the banner and size line of a Matrix Market file, and the token
/// rules shared by the header and the entries.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/matrix/detail/matrix_market_header.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../core/error.hpp"
#include "../../core/index_types.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace tessera::detail {

enum class mm_field { real, integer, pattern };
enum class mm_symmetry { general, symmetric, skew_symmetric };

[[nodiscard]] inline std::string_view to_string(mm_field f) {
  return f == mm_field::real ? "real" : f == mm_field::integer ? "integer" : "pattern";
}
[[nodiscard]] inline std::string_view to_string(mm_symmetry s) {
  return s == mm_symmetry::general ? "general" : s == mm_symmetry::symmetric ? "symmetric" : "skew-symmetric";
}

/// Input quoted in an error message: at most `limit` bytes, non-printable ones
/// escaped. The message travels to every rank and into logs, so a megabyte of
/// garbage on one line must not come with it.
[[nodiscard]] inline std::string quote_input(std::string_view text, std::size_t limit = 80) {
  std::string out;
  const std::size_t shown = std::min(text.size(), limit);
  out.reserve(shown + 8);
  for (std::size_t k = 0; k < shown; ++k) {
    const auto c = static_cast<unsigned char>(text[k]);
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += ::tessera::detail::formatted("\\x{:02x}", c);
  }
  if (text.size() > limit) out += "...";
  return out;
}

/// Tokens are separated by blanks, tabs and carriage returns (files written on Windows).
inline std::string_view next_token(std::string_view& line) {
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(first);
  const auto last = line.find_first_of(" \t\r");
  const auto token = line.substr(0, last);
  line.remove_prefix(last == std::string_view::npos ? line.size() : last);
  return token;
}

/// A decimal integer as C's scanf("%lld") reads it, minus the leading blanks:
/// an optional sign, then digits only. from_chars alone refuses the '+'.
inline bool parse_int64(std::string_view token, std::int64_t& value) {
  if (token.size() > 1 && token.front() == '+' && token[1] != '-' && token[1] != '+') token.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  return ec == std::errc{} && ptr == token.data() + token.size() && !token.empty();
}

/// True if `token` has the syntax of an integer (sign, digits), whatever its size.
[[nodiscard]] inline bool integer_syntax(std::string_view token) {
  if (!token.empty() && (token.front() == '+' || token.front() == '-')) token.remove_prefix(1);
  return !token.empty() && std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
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

/// Reads one line of at most `keep` bytes into `line` (the rest is skipped, not
/// stored: a header line can be a whole file without newlines); returns false
/// at the end of the file, sets `cut` if the line was longer than `keep`,
/// `first` to its first byte that is not a blank, tab or carriage return (0 if
/// none), and adds the bytes it consumed (newline included) to `consumed`.
/// The longest header line (banner, comment, size line) kept; longer ones are refused by name.
inline constexpr std::size_t header_line_limit = 4096;

inline bool read_header_line(std::istream& in, std::string& line, bool& cut, char& first, std::uint64_t& consumed,
                             std::size_t keep = header_line_limit) {
  line.clear();
  cut = false;
  first = 0;
  std::streambuf& buf = *in.rdbuf();
  bool any = false;
  for (int c = buf.sbumpc(); c != std::char_traits<char>::eof(); c = buf.sbumpc()) {
    any = true;
    ++consumed;
    if (c == '\n') return true;
    if (first == 0 && c != ' ' && c != '\t' && c != '\r') first = static_cast<char>(c);
    if (line.size() < keep) line += static_cast<char>(c);
    else cut = true;
  }
  return any;
}

/// The kind of error a missing or unreadable path deserves: a directory is not "empty".
inline void require_regular_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  TESSERA_REQUIRE(!std::filesystem::is_directory(status), io_error, "{}: is a directory, not a file", path);
}

inline matrix_market_header read_matrix_market_header(const std::string& path) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  TESSERA_REQUIRE(in, io_error, "{}: cannot open for reading", path);
  matrix_market_header h;
  std::string line;
  bool cut = false;
  char first = 0;
  std::uint64_t consumed = 0;
  TESSERA_REQUIRE(read_header_line(in, line, cut, first, consumed), parse_error, "{}:1: empty file, expected a %%MatrixMarket banner",
                  path);
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view banner(lower);
  const auto tag = next_token(banner), object = next_token(banner), format = next_token(banner),
             field = next_token(banner), symmetry = next_token(banner);
  TESSERA_REQUIRE(tag == "%%matrixmarket" && !cut, parse_error, "{}:1: expected a %%MatrixMarket banner, found '{}'",
                  path, quote_input(line));
  TESSERA_REQUIRE(object == "matrix", parse_error, "{}:1: object '{}' is not 'matrix'", path, quote_input(object));
  // The spec's words that this reader does not handle are `unsupported`; any other word is a malformed banner.
  TESSERA_REQUIRE(format != "array", unsupported, "{}:1: format 'array' is not supported (only 'coordinate')", path);
  TESSERA_REQUIRE(format == "coordinate", parse_error, "{}:1: format '{}' is not 'coordinate' or 'array'", path,
                  quote_input(format));
  if (field == "real" || field == "double") h.field = mm_field::real;
  else if (field == "integer") h.field = mm_field::integer;
  else if (field == "pattern") h.field = mm_field::pattern;
  else if (field == "complex") TESSERA_THROW(unsupported, "{}:1: field 'complex' is not supported (real, integer or pattern)", path);
  else TESSERA_THROW(parse_error, "{}:1: field '{}' is not real, integer, complex or pattern", path, quote_input(field));
  if (symmetry == "general") h.symmetry = mm_symmetry::general;
  else if (symmetry == "symmetric") h.symmetry = mm_symmetry::symmetric;
  else if (symmetry == "skew-symmetric") h.symmetry = mm_symmetry::skew_symmetric;
  else if (symmetry == "hermitian") TESSERA_THROW(unsupported, "{}:1: symmetry 'hermitian' is not supported (it needs complex values)", path);
  else TESSERA_THROW(parse_error, "{}:1: symmetry '{}' is not general, symmetric, skew-symmetric or hermitian", path,
                     quote_input(symmetry));
  TESSERA_REQUIRE(next_token(banner).empty(), parse_error, "{}:1: unexpected text after the banner: '{}'", path,
                  quote_input(line));
  // A pattern has no values to negate: the spec allows pattern with general and symmetric only.
  TESSERA_REQUIRE(!(h.field == mm_field::pattern && h.symmetry == mm_symmetry::skew_symmetric), parse_error,
                  "{}:1: a pattern matrix cannot be skew-symmetric", path);

  global_index line_number = 1;
  while (read_header_line(in, line, cut, first, consumed)) {
    ++line_number;
    if (first == 0 || first == '%') continue;  // blank lines and comments, however long
    std::string_view size_line(line);
    TESSERA_REQUIRE(!cut, parse_error,
                    "{}:{}: the size line is longer than the {}-byte limit of a header line: '{}'", path,
                    line_number, header_line_limit, quote_input(line));
    std::int64_t values[3] = {-1, -1, -1};
    bool ok = true;
    for (auto& v : values) ok = ok && parse_int64(next_token(size_line), v) && v >= 0;
    ok = ok && next_token(size_line).empty();
    TESSERA_REQUIRE(ok, parse_error, "{}:{}: expected the size line 'rows columns entries', found '{}'", path,
                    line_number, quote_input(line));
    h.rows = values[0];
    h.cols = values[1];
    h.entries = values[2];
    TESSERA_REQUIRE(h.symmetry == mm_symmetry::general || h.rows == h.cols, parse_error,
                    "{}:{}: a {} matrix must be square, the size line says {} x {}", path, line_number,
                    to_string(h.symmetry), h.rows, h.cols);
    h.data_offset = consumed;
    h.data_line = line_number + 1;
    return h;
  }
  TESSERA_THROW(parse_error, "{}:{}: the file ends before the size line", path, line_number);
}

}  // namespace tessera::detail
