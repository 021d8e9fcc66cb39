// Matrix Market: parallel read, ordered write, every header kind, and malformed files.
#include "test_support.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

namespace matrix_market_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {
const auto& comm() { return test::world(); }

/// Rank 0 writes `text` to a scratch file; every rank gets its path.
std::string fixture(const std::string& name, const std::string& text) {
  const auto path = test::scratch_path(name);
  if (comm().rank() == 0) std::ofstream(path, std::ios::binary) << text;
  comm().barrier();
  return path;
}

host_csr<double> dense_reference(global_index rows, global_index cols, std::initializer_list<std::tuple<global_index, global_index, double>> entries) {
  triplets<double> t;
  for (auto [i, j, v] : entries) t.push_back(i, j, v);
  return host_csr<double>::from_triplets(rows, cols, t);
}

/// Checks that reading `path` fails on every rank with `kind` and a message containing `needle`.
template <class T = double>
void require_read_error(const std::string& path, error_kind kind, const std::string& needle) {
  try {
    (void)read_matrix_market<T, test::csr_policy>(comm(), path);
    FAIL("no exception reading " << path);
  } catch (const error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(e.kind() == kind);
    CHECK(e.message().find(needle) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("write then read gives back the same matrix, exactly") {
  const auto a = generate::uniform_random<double, test::csr_policy>(comm(), 57, 33, 4, 31);
  const auto path = test::scratch_path("roundtrip.mtx");
  write_matrix_market(a, path);
  const auto b = read_matrix_market<double, test::csr_policy>(comm(), path);
  CHECK(compare(b, a).equal);
  const auto c = read_matrix_market<double, test::csc_policy>(comm(), path);
  CHECK(compare(c, a).equal);

  const auto ints = generate::uniform_random<std::int64_t, test::coo_policy>(comm(), 20, 45, 3, 32);
  write_matrix_market(ints, path);  // overwrites a longer file: must truncate
  CHECK(compare(read_matrix_market<std::int64_t, test::csr_policy>(comm(), path), ints).equal);
}

TEST_CASE("the written file is ordered by row then column with 1-based indices") {
  triplets<double> t;
  if (comm().rank() == 0) {
    t.push_back(2, 0, 1.5);
    t.push_back(0, 1, -2.0);
    t.push_back(2, 2, 3.0);
  }
  const auto a = build_from_triplets<double, test::csr_policy>(comm(), 3, 3, t);
  const auto path = test::scratch_path("ordered.mtx");
  write_matrix_market(a, path);
  if (comm().rank() == 0) {
    std::ifstream in(path);
    std::string banner, comment, size, l1, l2, l3;
    std::getline(in, banner);
    std::getline(in, comment);
    std::getline(in, size);
    std::getline(in, l1);
    std::getline(in, l2);
    std::getline(in, l3);
    CHECK(banner == "%%MatrixMarket matrix coordinate real general");
    CHECK(size == "3 3 3");
    CHECK(l1 == "1 2 -2");
    CHECK(l2 == "3 1 1.5");
    CHECK(l3 == "3 3 3");
  }
}

TEST_CASE("symmetric, skew-symmetric, pattern and integer files") {
  const auto sym = fixture("sym.mtx",
                           "%%MatrixMarket matrix coordinate real symmetric\n% comment\n4 4 3\n1 1 2.0\n3 1 -1.5\n"
                           "% a comment among entries\n\n4 2 7\n");
  test::require_equal(read_matrix_market<double, test::csr_policy>(comm(), sym),
                      dense_reference(4, 4, {{0, 0, 2.0}, {2, 0, -1.5}, {0, 2, -1.5}, {3, 1, 7}, {1, 3, 7}}));

  const auto skew = fixture("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 4\n3 2 -1\n");
  test::require_equal(read_matrix_market<double, test::csr_policy>(comm(), skew),
                      dense_reference(3, 3, {{1, 0, 4}, {0, 1, -4}, {2, 1, -1}, {1, 2, 1}}));

  const auto pattern = fixture("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 5 3\n1 5\n2 1\n1 5");
  test::require_equal(read_matrix_market<double, test::csr_policy>(comm(), pattern),
                      dense_reference(2, 5, {{0, 4, 2}, {1, 0, 1}}));  // duplicate summed; no final newline

  const auto integer = fixture("int.mtx", "%%MatrixMarket matrix coordinate integer general\n3 2 2\n3 2 -7\n1 1 12\n");
  const auto a = read_matrix_market<std::int32_t, test::csr_policy>(comm(), integer);
  CHECK(a.global_nnz() == 2);
  const auto g = gather_to_all(a);
  CHECK(g.at(2, 1).value_or(0) == -7);
  CHECK(g.at(0, 0).value_or(0) == 12);
}

TEST_CASE("a file with no entries, and a size line without a final newline") {
  const auto empty = fixture("empty.mtx", "%%MatrixMarket matrix coordinate real general\n5 6 0");
  const auto a = read_matrix_market<double, test::csr_policy>(comm(), empty);
  CHECK(a.num_rows() == 5);
  CHECK(a.num_cols() == 6);
  CHECK(a.global_nnz() == 0);
}

TEST_CASE("a malformed line is reported with file and line on every rank") {
  std::string text = "%%MatrixMarket matrix coordinate real general\n% generated\n40 40 40\n";
  for (int k = 1; k <= 40; ++k) text += k == 24 ? "24 x 1.0\n" : fmt::format("{} {} {}.5\n", k, 41 - k, k);
  const auto path = fixture("bad_line.mtx", text);
  require_read_error(path, error_kind::parse_error, path + ":27:");  // entry 24 is on line 27
}

TEST_CASE("other malformed files are rejected everywhere with a clear reason") {
  require_read_error(fixture("range.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n4 1 1\n"),
                     error_kind::parse_error, ":4: row index 4 is outside [1, 3]");
  require_read_error(fixture("count.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n"),
                     error_kind::parse_error, ":4: the file ends after 2 entries, but the size line declares 3");
  require_read_error(fixture("value.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n"),
                     error_kind::parse_error, ":3: expected a real value");
  require_read_error(fixture("extra.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 2 9\n"),
                     error_kind::parse_error, "unexpected text");
  require_read_error(fixture("banner.mtx", "MatrixMarket matrix coordinate real general\n3 3 0\n"),
                     error_kind::parse_error, ":1: expected a %%MatrixMarket banner");
  require_read_error(fixture("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"),
                     error_kind::unsupported, "format 'array'");
  require_read_error(fixture("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n"),
                     error_kind::unsupported, "field 'complex'");
  require_read_error(fixture("size.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n3 x 1\n"),
                     error_kind::parse_error, ":3: expected the size line");
  // A size line followed by 1 MiB of blanks: refused, naming the header-line limit.
  require_read_error(fixture("long_size.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1" +
                                                   std::string(std::size_t{1} << 20, ' ') + "\n1 1 2\n"),
                     error_kind::parse_error, ":2: the size line is longer than the 4096-byte limit");
  require_read_error(fixture("skewdiag.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 3\n"),
                     error_kind::parse_error, "diagonal entry");
  require_read_error(test::scratch_path("does-not-exist.mtx"), error_kind::io_error, "cannot open");
}

TEST_CASE("real values are refused for an integral value type") {
  const auto path = fixture("real_for_int.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 0.5\n");
  CHECK_THROWS_AS(((void)read_matrix_market<std::int64_t, test::csr_policy>(comm(), path)), error);
}

TEST_CASE("integer values beyond the value type are errors naming the value and the type, not wrapped") {
  const std::string head = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 5\n";
  const auto huge = fixture("int_2_40.mtx", head + "2 2 1099511627776\n");
  require_read_error<std::int32_t>(huge, error_kind::parse_error,
                                   huge + ":4: integer value 1099511627776 does not fit the value type int32");
  const auto edge = fixture("int_2_31.mtx", head + "2 2 2147483648\n");
  require_read_error<std::int32_t>(edge, error_kind::parse_error,
                                   ":4: integer value 2147483648 does not fit the value type int32 [-2147483648, 2147483647]");
  // The same files fit wider types exactly.
  CHECK(gather_to_all(read_matrix_market<std::int64_t, test::csr_policy>(comm(), huge)).at(1, 1).value_or(0) ==
        std::int64_t{1} << 40);
  CHECK(gather_to_all(read_matrix_market<double, test::csr_policy>(comm(), edge)).at(1, 1).value_or(0) == 2147483648.0);
  const auto lowest = fixture("int_min.mtx", head + "2 2 -2147483648\n");
  CHECK(gather_to_all(read_matrix_market<std::int32_t, test::csr_policy>(comm(), lowest)).at(1, 1).value_or(0) ==
        std::numeric_limits<std::int32_t>::min());
  const auto negative = fixture("int_neg.mtx", head + "2 2 -1\n");
  require_read_error<std::uint32_t>(negative, error_kind::parse_error, ":4: integer value -1 does not fit the value type uint32");
}

TEST_CASE("real values beyond the value type are errors; tiny ones round to zero; NaN and infinities are read") {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n3 1 3\n";
  require_read_error(fixture("real_big.mtx", head + "1 1 1\n2 1 1e400\n3 1 1\n"), error_kind::parse_error,
                     ":4: real value 1e400 is beyond the range of the value type double");
  require_read_error<float>(fixture("real_float.mtx", head + "1 1 1\n2 1 1e39\n3 1 1\n"), error_kind::parse_error,
                            ":4: real value 1e39 is beyond the range of the value type float");
  const auto special = fixture("real_special.mtx", head + "1 1 nan\n2 1 -inf\n3 1 +1e-400\n");
  const auto g = gather_to_all(read_matrix_market<double, test::csr_policy>(comm(), special));
  CHECK(std::isnan(g.at(0, 0).value_or(0)));
  CHECK(g.at(1, 0).value_or(0) == -std::numeric_limits<double>::infinity());
  CHECK(g.at(2, 0).has_value());
  CHECK(g.at(2, 0).value_or(1) == 0.0);
}

TEST_CASE("symmetric headers need a square matrix and the lower triangle") {
  require_read_error(fixture("sym_rect.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% c\n3 4 1\n1 1 1\n"),
                     error_kind::parse_error, ":3: a symmetric matrix must be square, the size line says 3 x 4");
  require_read_error(fixture("skew_rect.mtx", "%%MatrixMarket matrix coordinate integer skew-symmetric\n4 3 0\n"),
                     error_kind::parse_error, ":2: a skew-symmetric matrix must be square");
  require_read_error(fixture("sym_upper.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 2 1\n"),
                     error_kind::parse_error, ":4: entry (1, 2) is above the diagonal");
  require_read_error(fixture("herm.mtx", "%%MatrixMarket matrix coordinate complex hermitian\n2 2 0\n"),
                     error_kind::unsupported, "field 'complex'");
  require_read_error(fixture("herm_real.mtx", "%%MatrixMarket matrix coordinate real hermitian\n2 2 0\n"),
                     error_kind::unsupported, "symmetry 'hermitian'");
  require_read_error(fixture("pattern_skew.mtx", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 0\n"),
                     error_kind::parse_error, ":1: a pattern matrix cannot be skew-symmetric");
  require_read_error(fixture("banner_short.mtx", "%%MatrixMarket matrix coordinate real\n2 2 0\n"),
                     error_kind::parse_error, ":1: symmetry '' is not");
}

TEST_CASE("an entry beyond the declared count is reported at its own line, before later errors") {
  require_read_error(fixture("excess.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n% c\n2 2 2\n3 x\n"),
                     error_kind::parse_error, ":5: entry 2 is beyond the 1 entries the size line declares");
  require_read_error(fixture("short.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 4\n1 1\n2 2\n% end"),
                     error_kind::parse_error, ":5: the file ends after 2 entries, but the size line declares 4");
}

TEST_CASE("more rows than 32-bit local indices allow: columns are fine, rows need enough ranks") {
  // 2^31 columns are global indices only: any rank count reads them.
  const auto wide = fixture("wide.mtx", "%%MatrixMarket matrix coordinate real general\n3 4294967296 2\n1 4294967296 1.5\n3 1 2\n");
  const auto a = read_matrix_market<double, test::csr_policy>(comm(), wide);
  CHECK(a.num_cols() == global_index{1} << 32);
  CHECK(a.global_nnz() == 2);
  // 2^31 rows per rank is one more than a rank can index: refused before any allocation, saying why.
  const auto rows = static_cast<global_index>(comm().size()) << 31;
  const auto tall = fixture("tall.mtx", fmt::format("%%MatrixMarket matrix coordinate real general\n{} 2 1\n{} 1 1\n", rows, rows));
  require_read_error(tall, error_kind::unsupported, "rows, more than the 2147483647 (2^31 - 1) rows one rank can index");
  require_read_error(tall, error_kind::unsupported, fmt::format("with row_block, at least {}", comm().size() + 1));
}

TEST_CASE("a directory, and a huge garbage line, give short clear messages") {
  const auto dir = test::scratch_path("a-directory.mtx");
  if (comm().rank() == 0) std::filesystem::create_directories(dir);
  comm().barrier();
  require_read_error(dir, error_kind::io_error, "is a directory");

  const std::string garbage(1 << 20, 'x');
  for (const auto& text : {garbage + "\n", "%%MatrixMarket matrix coordinate real general\n" + garbage + "\n",
                           "%%MatrixMarket matrix coordinate real general\n2 2 1\n" + garbage + "\n"}) {
    const auto path = fixture("garbage.mtx", text);
    try {
      (void)read_matrix_market<double, test::csr_policy>(comm(), path);
      FAIL("garbage accepted");
    } catch (const error& e) {
      const std::string shown(e.message(), 0, 300);
      INFO(shown);
      CHECK(e.kind() == error_kind::parse_error);
      CHECK(e.message().size() < path.size() + 200);
      CHECK(e.message().find(std::string(80, 'x') + "...") != std::string::npos);
    }
  }
}

TEST_CASE("signs, tabs and carriage returns as C's scanf reads them") {
  const auto path = fixture("signs.mtx", "%%MatrixMarket matrix coordinate real general\r\n+2\t+3\t+1\r\n+1 +3 -2.5\r\n");
  test::require_equal(read_matrix_market<double, test::csr_policy>(comm(), path), dense_reference(2, 3, {{0, 2, -2.5}}));
}

}  // namespace matrix_market_tests
