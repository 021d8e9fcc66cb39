// Mutation fuzzing of read_matrix_market against a small serial reference parser
// written from the rules in docs/matrices.md, not from the reader's code: valid
// files are mutated (bytes, lines, numbers, headers), and every case must either
// give the reference's matrix or the reference's error kind with file:line.
#include "fuzz_support.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>

namespace fuzz_matrix_market_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

const auto& comm() { return test::world(); }

template <class T>
using entries = std::map<std::pair<global_index, global_index>, T>;

// ---------------------------------------------------------------------------------------------
// The reference: serial, whole file in memory, standard library only.

bool is_blank_or_comment(const std::string& line) {
  const auto first = line.find_first_not_of(" \t\r");
  return first == std::string::npos || line[first] == '%';
}

/// [+-]?[0-9]+
bool integer_syntax(const std::string& token) {
  const std::size_t digits = !token.empty() && (token[0] == '+' || token[0] == '-') ? 1 : 0;
  return token.size() > digits && token.find_first_not_of("0123456789", digits) == std::string::npos;
}

std::optional<std::int64_t> ref_int64(const std::string& token) {
  if (!integer_syntax(token)) return std::nullopt;
  errno = 0;
  const long long v = std::strtoll(token.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

// The real syntax of C's strtod without hexadecimal floats:
// [+-]?(digits[.digits]|.digits)([eE][+-]?digits)? | [+-]?(inf|infinity|nan|nan([0-9A-Za-z_]*)), any case.
bool real_syntax(std::string token) {
  if (!token.empty() && (token[0] == '+' || token[0] == '-')) token.erase(0, 1);
  std::string lower;
  for (char c : token) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "inf" || lower == "infinity" || lower == "nan") return true;
  if (lower.rfind("nan(", 0) == 0 && lower.back() == ')')
    return lower.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz_", 4) == lower.size() - 1;
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t k = 0, mantissa = 0;
  while (k < token.size() && is_digit(token[k])) ++k, ++mantissa;
  if (k < token.size() && token[k] == '.') {
    ++k;
    while (k < token.size() && is_digit(token[k])) ++k, ++mantissa;
  }
  if (mantissa == 0) return false;
  if (k < token.size() && (token[k] == 'e' || token[k] == 'E')) {
    ++k;
    if (k < token.size() && (token[k] == '+' || token[k] == '-')) ++k;
    const std::size_t exponent = k;
    while (k < token.size() && is_digit(token[k])) ++k;
    if (k == exponent) return false;
  }
  return k == token.size();
}

/// The value of a token as T, or why not.
template <class T>
std::optional<std::string> ref_value(const std::string& token, bool integer_field, T& out) {
  if (integer_field) {
    if (!integer_syntax(token)) return "not an integer";
    if constexpr (std::is_integral_v<T>) {
      const auto v = ref_int64(token);
      if (!v || *v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max()) return "beyond the type";
      out = static_cast<T>(*v);
      return std::nullopt;
    }
  } else if (!real_syntax(token)) {
    return "not a real";
  }
  if constexpr (std::is_floating_point_v<T>) {
    errno = 0;
    const T v = std::is_same_v<T, float> ? static_cast<T>(std::strtof(token.c_str(), nullptr))
                                         : static_cast<T>(std::strtod(token.c_str(), nullptr));
    if (errno == ERANGE && std::isinf(v)) return "beyond the type";  // underflow: ERANGE with a tiny value, kept
    out = v;
  }
  return std::nullopt;
}

/// sum += value; false if T cannot hold the sum.
template <class T>
bool add(T& sum, T value) {
  if constexpr (std::is_integral_v<T>) return !__builtin_add_overflow(sum, value, &sum);
  sum += value;
  return true;
}

/// The reference's verdict; `overflow` is set when repeated entries sum beyond T.
template <class T>
fuzz::verdict reference_read(const std::string& text, int ranks, entries<T>& out, bool& overflow) {
  const auto lines = fuzz::split_lines(text);
  if (lines.empty()) return fuzz::verdict::fail(error_kind::parse_error, 1, "empty file");
  std::string banner = lines[0];
  for (auto& c : banner) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto words = fuzz::tokens(banner);
  auto word = [&](std::size_t k) { return k < words.size() ? words[k] : std::string(); };
  if (banner.size() > 4096 || word(0) != "%%matrixmarket") return fuzz::verdict::fail(error_kind::parse_error, 1, "banner");
  if (word(1) != "matrix") return fuzz::verdict::fail(error_kind::parse_error, 1, "object");
  if (word(2) == "array") return fuzz::verdict::fail(error_kind::unsupported, 0, "array");
  if (word(2) != "coordinate") return fuzz::verdict::fail(error_kind::parse_error, 1, "format");
  const std::string field = word(3), symmetry = word(4);
  if (field == "complex") return fuzz::verdict::fail(error_kind::unsupported, 0, "complex");
  if (field != "real" && field != "double" && field != "integer" && field != "pattern")
    return fuzz::verdict::fail(error_kind::parse_error, 1, "field");
  if (symmetry == "hermitian") return fuzz::verdict::fail(error_kind::unsupported, 0, "hermitian");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric")
    return fuzz::verdict::fail(error_kind::parse_error, 1, "symmetry");
  if (words.size() > 5) return fuzz::verdict::fail(error_kind::parse_error, 1, "banner has more words");
  if (field == "pattern" && symmetry == "skew-symmetric") return fuzz::verdict::fail(error_kind::parse_error, 1, "pattern skew");

  std::size_t k = 1;
  while (k < lines.size() && is_blank_or_comment(lines[k])) ++k;
  if (k == lines.size()) return fuzz::verdict::fail(error_kind::parse_error, static_cast<std::int64_t>(lines.size()), "no size line");
  const auto size_line = static_cast<std::int64_t>(k + 1);
  const auto sizes = fuzz::tokens(lines[k]);
  std::int64_t dims[3] = {-1, -1, -1};
  bool ok = sizes.size() == 3 && lines[k].size() <= 4096;
  for (std::size_t d = 0; ok && d < 3; ++d) {
    const auto v = ref_int64(sizes[d]);
    ok = v && *v >= 0;
    if (ok) dims[d] = *v;
  }
  if (!ok) return fuzz::verdict::fail(error_kind::parse_error, size_line, "size line");
  const auto [rows, cols, declared] = dims;
  const bool mirrored = symmetry != "general";
  if (mirrored && rows != cols) return fuzz::verdict::fail(error_kind::parse_error, size_line, "not square");
  if (std::is_integral_v<T> && (field == "real" || field == "double")) return fuzz::verdict::fail(error_kind::unsupported, 0, "real into integral");
  if (rows / ranks + (rows % ranks != 0 ? 1 : 0) > std::numeric_limits<std::int32_t>::max())
    return fuzz::verdict::fail(error_kind::unsupported, 0, "rows per rank");

  std::int64_t count = 0;
  for (++k; k < lines.size(); ++k) {
    const auto at = static_cast<std::int64_t>(k + 1);
    if (is_blank_or_comment(lines[k])) continue;
    if (count++ >= declared) return fuzz::verdict::fail(error_kind::parse_error, at, "more entries than declared");
    const auto t = fuzz::tokens(lines[k]);
    if (t.size() < 2 || !ref_int64(t[0]) || !ref_int64(t[1])) return fuzz::verdict::fail(error_kind::parse_error, at, "indices");
    const std::int64_t row = ref_int64(t[0]).value_or(0), col = ref_int64(t[1]).value_or(0);
    if (row < 1 || row > rows || col < 1 || col > cols) return fuzz::verdict::fail(error_kind::parse_error, at, "index range");
    T value{1};
    std::size_t used = 2;
    if (field != "pattern") {
      if (t.size() < 3) return fuzz::verdict::fail(error_kind::parse_error, at, "no value");
      if (const auto why = ref_value<T>(t[2], field == "integer", value)) return fuzz::verdict::fail(error_kind::parse_error, at, *why);
      used = 3;
    }
    if (t.size() > used) return fuzz::verdict::fail(error_kind::parse_error, at, "extra text");
    if (mirrored && col > row) return fuzz::verdict::fail(error_kind::parse_error, at, "upper triangle");
    if (symmetry == "skew-symmetric" && row == col) return fuzz::verdict::fail(error_kind::parse_error, at, "skew diagonal");
    if constexpr (std::is_integral_v<T>)
      if (symmetry == "skew-symmetric" && value == std::numeric_limits<T>::min())
        return fuzz::verdict::fail(error_kind::parse_error, at, "mirror beyond the type");
    if (!add(out[{row - 1, col - 1}], value)) overflow = true;
    if (mirrored && row != col && !add(out[{col - 1, row - 1}], symmetry == "skew-symmetric" ? static_cast<T>(-value) : value))
      overflow = true;
  }
  if (count < declared) return fuzz::verdict::fail(error_kind::parse_error, static_cast<std::int64_t>(lines.size()), "fewer entries");
  return {};
}

// ---------------------------------------------------------------------------------------------
// Seeds and mutations.

std::vector<std::string> seeds() {
  std::vector<std::string> s;
  fuzz::rng g(2024);
  auto body = [&](int rows, int cols, int n, bool lower, bool strict, const char* kind) {
    std::string text;
    for (int e = 0; e < n; ++e) {
      auto i = 1 + static_cast<int>(g.below(static_cast<std::size_t>(rows)));
      auto j = 1 + static_cast<int>(g.below(static_cast<std::size_t>(cols)));
      if (strict && i == j) i = i == rows ? i - 1 : i + 1;  // skew-symmetric: no diagonal
      if (lower && j > i) std::swap(i, j);
      const std::string kind_s = kind;
      if (kind_s == "pattern") text += fmt::format("{} {}\n", i, j);
      else if (kind_s == "integer") text += fmt::format("{} {} {}\n", i, j, static_cast<int>(g.below(2001)) - 1000);
      else text += fmt::format("{} {} {:.6g}\n", i, j, (static_cast<double>(g.below(1u << 20)) - 524288.0) / 1024.0);
    }
    return text;
  };
  s.push_back("%%MatrixMarket matrix coordinate real general\n% a comment\n9 7 14\n" + body(9, 7, 14, false, false, "real"));
  s.push_back("%%MatrixMarket matrix coordinate real symmetric\n8 8 12\n" + body(8, 8, 12, true, false, "real"));
  s.push_back("%%MatrixMarket matrix coordinate integer skew-symmetric\n6 6 8\n" + body(6, 6, 8, true, true, "integer"));
  s.push_back("%%MatrixMarket matrix coordinate pattern general\n5 11 10\n" + body(5, 11, 10, false, false, "pattern"));
  s.push_back("%%MatrixMarket matrix coordinate pattern symmetric\n7 7 9\n" + body(7, 7, 9, true, false, "pattern"));
  s.push_back("%%MatrixMarket matrix coordinate integer general\n%\n\n12 4 10\n" + body(12, 4, 10, false, false, "integer"));
  s.push_back("%%MatrixMarket matrix coordinate real general\r\n4 4 5\r\n1 1 nan\r\n2 3 -inf\r\n% mid\r\n3 3 1e-5\r\n4 1 +2\r\n4 4 -0\r\n");
  s.push_back("%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 2147483647\n3 1 -2147483648\n2 2 0");
  s.push_back("%%MatrixMarket matrix coordinate real general\n3 5 0\n");
  return s;
}

std::string mutate_number(fuzz::rng& g, bool size_line) {
  // Row counts a rank could hold but this machine could not store are never generated: every
  // huge number here is beyond what 3 ranks can index (2^33) or beyond int64 altogether.
  static const char* huge_sizes[] = {"8589934592", "1099511627776", "9223372036854775807", "9223372036854775808",
                                     "99999999999999999999", "-1", "-9223372036854775808", "1e3", "0x10", "+-3"};
  static const char* values[] = {"2147483648", "2147483647",  "-2147483649", "1099511627776", "9223372036854775808",
                                 "1e400",      "-1e400",      "1e-400",      "1e39",          "nan",
                                 "-inf",       "+7",          "0",           "-1",            "1.5.5",
                                 "1e",         "0x1p3",       "+-1",         "99999999999999999999", "3e38"};
  return size_line ? g.pick(huge_sizes) : g.pick(values);
}

std::string mutate(fuzz::rng& g, std::string text) {
  auto lines = fuzz::split_lines(text);
  const bool final_newline = !text.empty() && text.back() == '\n';
  auto any_line = [&] { return g.below(lines.size()); };
  auto size_line = [&] {
    std::size_t k = 1;
    while (k < lines.size() && is_blank_or_comment(lines[k])) ++k;
    return k;
  };
  if (lines.empty()) return text;
  switch (g.below(12)) {
    case 0: {  // a byte becomes an interesting one
      static const char bytes[] = {'0', '9', '1', ' ', '\t', '\n', '%', '-', '+', '.', 'e', 'x', '\0', '\r', '\x80'};
      if (text.empty()) return text;
      text[g.below(text.size())] = g.chance(80) ? g.pick(bytes) : static_cast<char>(g.below(256));
      return text;
    }
    case 1: return text.substr(0, g.below(text.size() + 1));  // truncated
    case 2: lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(any_line())); break;
    case 3: {
      const auto k = any_line();
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(k), lines[k]);
      break;
    }
    case 4: {  // a huge or odd number
      const auto k = g.chance(20) ? size_line() : 1 + g.below(lines.size());
      if (k >= lines.size()) break;
      const auto n = fuzz::tokens(lines[k]).size();
      if (n > 0) lines[k] = fuzz::replace_token(lines[k], g.below(n), mutate_number(g, k == size_line()));
      break;
    }
    case 5: {  // an index out of range
      const auto k = size_line() + 1 + g.below(lines.size());
      if (k >= lines.size() || fuzz::tokens(lines[k]).size() < 2) break;
      static const char* bad[] = {"0", "-1", "13", "100", "-0"};
      lines[k] = fuzz::replace_token(lines[k], g.below(2), g.pick(bad));
      break;
    }
    case 6: lines[any_line()] += g.chance(50) ? " 7" : "\t%"; break;  // an extra field
    case 7: {  // another header
      static const char* banners[] = {
          "%%MatrixMarket matrix coordinate real general",     "%%MatrixMarket matrix coordinate integer general",
          "%%MatrixMarket matrix coordinate pattern general",  "%%MatrixMarket matrix coordinate real symmetric",
          "%%MatrixMarket matrix coordinate real skew-symmetric", "%%MatrixMarket matrix coordinate pattern symmetric",
          "%%MatrixMarket matrix coordinate complex general",  "%%MatrixMarket matrix array real general",
          "%%MatrixMarket matrix coordinate real hermitian",   "%%MATRIXMARKET MATRIX COORDINATE REAL GENERAL",
          "%%MatrixMarket matrix coordinate real",             "%%MatrixMarket matrix coordinate real general extra",
          "%%MatrixMarket vector coordinate real general",     "%MatrixMarket matrix coordinate real general",
          "%%MatrixMarket matrix coordinate pattern skew-symmetric", "%%MatrixMarket matrix coordinate double general"};
      lines[0] = g.pick(banners);
      break;
    }
    case 8: {  // the size line changes shape
      const auto k = size_line();
      if (k >= lines.size()) break;
      static const char* sizes[] = {"9 9 14", "7 9 14", "12 12 3", "12 12 40", "3 3", "3 3 3 3", "0 0 0", "12 12 0"};
      lines[k] = g.pick(sizes);
      break;
    }
    case 9: lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(1 + any_line()), g.chance(50) ? "% inserted" : "  "); break;
    case 10: {  // row and column swapped: the upper triangle of a symmetric file
      const auto k = size_line() + 1 + g.below(lines.size());
      if (k >= lines.size()) break;
      const auto t = fuzz::tokens(lines[k]);
      if (t.size() >= 2) lines[k] = fuzz::replace_token(fuzz::replace_token(lines[k], 0, t[1]), 1, t[0]);
      break;
    }
    default: {  // a long garbage line (sometimes longer than a header line may be)
      const auto n = g.chance(30) ? 5000 : 1 + g.below(300);
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(g.below(lines.size() + 1)), fuzz::garbage(g, n));
      break;
    }
  }
  return fuzz::join_lines(lines, final_newline);
}

// ---------------------------------------------------------------------------------------------

template <class T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a == b;
    // Duplicates may be summed in another order.
    return std::fabs(a - b) <= 16 * std::numeric_limits<T>::epsilon() * std::max<T>(1, std::fabs(b));
  } else {
    return a == b;
  }
}

struct tally {
  int accepted = 0, rejected = 0, skipped = 0;
};

/// One case at value type T: tessera and the reference agree.
template <class T>
void run_case(const std::string& text, const std::string& label, tally& count) {
  entries<T> want;
  bool overflow = false;
  const fuzz::verdict v = reference_read<T>(text, comm().size(), want, overflow);
  if (v.ok && overflow) {
    // Repeated entries are summed in T by build_from_triplets' combine, out of the reader's hands.
    ++count.skipped;
    return;
  }
  const auto path = fuzz::write_case("fuzz.mtx", text);
  INFO(label);
  try {
    const auto a = read_matrix_market<T, test::csr_policy>(comm(), path);
    INFO("reference: " << (v.ok ? std::string("accept") : v.why) << " at line " << v.line);
    REQUIRE(v.ok);
    const auto got = gather_to_all(a);
    std::size_t n = 0;
    for (global_index i = 0; i < got.rows; ++i)
      for (auto e = got.row_ptr[static_cast<std::size_t>(i)]; e < got.row_ptr[static_cast<std::size_t>(i) + 1]; ++e, ++n) {
        const auto it = want.find({i, got.col_idx[static_cast<std::size_t>(e)]});
        INFO("entry (" << i << ", " << got.col_idx[static_cast<std::size_t>(e)] << ")");
        REQUIRE(it != want.end());
        REQUIRE(same_value(got.values[static_cast<std::size_t>(e)], it->second));
      }
    REQUIRE(n == want.size());
    ++count.accepted;
  } catch (const error& e) {
    fuzz::check_error(e, v, path);
    ++count.rejected;
  }
}

}  // namespace

TEST_CASE("fuzz: mutated Matrix Market files give the reference's matrix or its error with file:line") {
  const auto files = seeds();
  tally count;
  constexpr int cases = 360;
  for (int c = 0; c < cases; ++c) {
    fuzz::rng g(0x5eed0000ULL + static_cast<std::uint64_t>(c));
    std::string text = files[g.below(files.size())];
    const int mutations = c < static_cast<int>(files.size()) ? 0 : 1 + static_cast<int>(g.below(3));
    for (int m = 0; m < mutations; ++m) text = mutate(g, text);
    const auto label = fmt::format("case {} (seed 0x5eed{:04x}), file:\n{}", c, c, std::string(text, 0, 600));
    // The banner decides which value types make sense; each case also runs at one other type.
    const bool integral_file = text.find("integer") != std::string::npos || text.find("pattern") != std::string::npos;
    switch (g.below(3)) {
      case 0: run_case<double>(text, label, count); break;
      case 1: run_case<float>(text, label, count); break;
      default:
        if (integral_file) run_case<std::int32_t>(text, label, count);
        else run_case<double>(text, label, count);
    }
  }
  MESSAGE(fmt::format("{} accepted, {} rejected, {} skipped (duplicates overflowing the value type)", count.accepted,
                      count.rejected, count.skipped));
  // The fuzzer is worth something only if both outcomes are common.
  CHECK(count.accepted >= cases / 10);
  CHECK(count.rejected >= cases / 4);
}

}  // namespace fuzz_matrix_market_tests
