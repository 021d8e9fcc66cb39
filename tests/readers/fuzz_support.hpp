#pragma once
// Shared by the reader fuzzers: a portable seeded generator, the mutations,
// and what a reference parser answers. Everything depends on the seed only, so
// every rank builds the same case and a failure names the seed that reproduces it.
#include "test_support.hpp"

#include <spdnn/network.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

/// The SpDNN example's splitmix64 (the same stream on every platform, which
/// std::uniform_int_distribution is not), with the draws the mutators use.
class rng : public spdnn::splitmix64 {
 public:
  using spdnn::splitmix64::splitmix64;
  bool chance(int percent) { return below(100) < static_cast<std::uint64_t>(percent); }
  template <class C>
  const auto& pick(const C& c) { return c[static_cast<std::size_t>(below(std::size(c)))]; }
};

/// The file's lines as the readers number them: split at '\n'; a final newline does not open a line.
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto nl = text.find('\n', at);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(at));
      break;
    }
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return lines;
}

inline std::string join_lines(const std::vector<std::string>& lines, bool final_newline) {
  std::string text;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    text += lines[k];
    if (k + 1 < lines.size() || final_newline) text += '\n';
  }
  return text;
}

/// Tokens split at blanks, tabs and carriage returns.
inline std::vector<std::string> tokens(const std::string& line, std::string_view separators = " \t\r") {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    const auto first = line.find_first_not_of(separators, at);
    if (first == std::string::npos) break;
    const auto last = line.find_first_of(separators, first);
    out.push_back(line.substr(first, last == std::string::npos ? std::string::npos : last - first));
    if (last == std::string::npos) break;
    at = last;
  }
  return out;
}

/// Replace the k-th token of a line (keeping the separators around it).
inline std::string replace_token(const std::string& line, std::size_t k, const std::string& by,
                                 std::string_view separators = " \t\r") {
  std::size_t at = 0;
  for (std::size_t t = 0;; ++t) {
    const auto first = line.find_first_not_of(separators, at);
    if (first == std::string::npos) return line;
    const auto last = std::min(line.find_first_of(separators, first), line.size());
    if (t == k) return line.substr(0, first) + by + line.substr(last);
    at = last;
  }
}

/// A string of `n` bytes, mostly garbage, occasionally printable.
inline std::string garbage(rng& g, std::size_t n) {
  std::string s(n, ' ');
  for (auto& c : s) {
    c = static_cast<char>(g.chance(50) ? 'a' + g.below(26) : 1 + g.below(255));
    if (c == '\n') c = '#';
  }
  return s;
}

/// What a reference parser expects: a matrix (or table), or an error of a kind at a line.
struct verdict {
  bool ok = true;
  tessera::error_kind kind = tessera::error_kind::parse_error;
  std::int64_t line = 0;  ///< for parse errors; 0: no line
  std::string why;        ///< the reference's own words, shown when tessera disagrees
  static verdict fail(tessera::error_kind k, std::int64_t line, std::string why) { return {false, k, line, std::move(why)}; }
};

/// Rank 0 writes `text`; every rank gets the path.
inline std::string write_case(const std::string& name, const std::string& text) {
  const auto path = tessera::test::scratch_path(name);
  if (tessera::test::world().rank() == 0) std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  tessera::test::world().barrier();
  return path;
}

/// Checks an error tessera raised against the reference's verdict.
inline void check_error(const tessera::error& e, const verdict& want, const std::string& path) {
  const std::string what = e.what();
  INFO(what);
  INFO("reference: " << (want.ok ? std::string("accept") : want.why));
  REQUIRE_FALSE(want.ok);
  REQUIRE(e.kind() == want.kind);
  if (want.kind == tessera::error_kind::parse_error) {
    const auto where = path + ":" + std::to_string(want.line) + ":";
    REQUIRE(e.message().rfind(where, 0) == 0);  // starts with file:line:
  }
  REQUIRE(e.message().size() < path.size() + 400);  // quoted input is cut short
}

}  // namespace fuzz
