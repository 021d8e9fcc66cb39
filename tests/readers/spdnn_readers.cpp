// The SpDNN example's readers (examples/spdnn/spdnn): the tester's findings as
// regression tests, and mutation fuzzing of read_tsv against a reference parser.
#include "fuzz_support.hpp"

#include "spdnn/inference.hpp"
#include "spdnn/tsv.hpp"
#include "spdnn/tsv_rows.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace spdnn_readers_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

using namespace tessera;

namespace {

const auto& comm() { return test::world(); }
using P = test::csr_policy;

/// Reading must fail on every rank with a parse error whose message starts with `where` and holds `what`.
template <class F>
void require_parse_error(F&& read, const std::string& where, const std::string& what) {
  try {
    read();
    FAIL("no error; expected " << where << " " << what);
  } catch (const error& e) {
    const std::string message = e.message();
    INFO(message);
    CHECK(e.kind() == error_kind::parse_error);
    CHECK(message.rfind(where, 0) == 0);
    CHECK(message.find(what) != std::string::npos);
  }
}

spdnn::problem<double, P> problem_from(const spdnn::tsv_columns& lines, std::int64_t declared = 0) {
  spdnn::feature_source source;
  source.file = &lines;
  source.images = declared;
  return spdnn::make_problem<double, P>(comm(), spdnn::scheme::data, spdnn::mode::spmm, 16, {}, source,
                                        communicator::duplicate(MPI_COMM_SELF));
}

}  // namespace

TEST_CASE("an image id far beyond the file is refused at its line, quickly and before any allocation") {
  std::string text;
  for (int i = 1; i <= 20; ++i) text += fmt::format("{}\t{}\t1\n", i, 1 + i % 16);
  text += "1000000000\t3\t1\n";
  const auto path = fuzz::write_case("far-image.tsv", text);
  const auto start = std::chrono::steady_clock::now();
  const auto lines = spdnn::read_tsv(comm(), path, {3, std::numeric_limits<std::int64_t>::max(), 16, "image", "neuron"});
  CHECK(lines.largest_first == 999999999);
  CHECK(lines.largest_first_line == 21);
  CHECK(lines.lines == 21);
  require_parse_error([&] { (void)problem_from(lines); }, path + ":21:", "image 1000000000 is beyond the file's 21 lines");
  // A declared number of images is checked by the reader itself, at the line.
  require_parse_error([&] { (void)spdnn::read_tsv(comm(), path, spdnn::features_layout(16, 60000)); }, path + ":21:",
                      "image 1000000000 is outside [1, 60000]");
  require_parse_error([&] { (void)problem_from(lines, 20); }, path + ":21:", "image 1000000000 is beyond the 20 images declared");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));

  // Within the bounds the same lines make a problem of 21 images.
  const auto fine = fuzz::write_case("near-image.tsv", text.substr(0, text.rfind("1000000000")) + "21\t3\t1\n");
  const auto near = spdnn::read_tsv(comm(), fine, spdnn::features_layout(16, 21));
  CHECK(problem_from(near).total_images == 21);
}

TEST_CASE("empty layer and features files are errors that name their own file") {
  const auto dir = test::scratch_path("empty-layer");
  if (comm().rank() == 0) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/n16-l1.tsv") << "1\t2\t0.0625\n";
    std::ofstream(dir + "/n16-l2.tsv") << "\n\n";  // blank lines only
  }
  comm().barrier();
  require_parse_error([&] { (void)spdnn::read_layers<double, P>(comm(), dir, 16, 2, true); }, dir + "/n16-l2.tsv:2:",
                      "no weights");
  CHECK(spdnn::read_layers<double, P>(comm(), dir, 16, 1, true).size() == 1);

  const auto empty = fuzz::write_case("empty-features.tsv", "");
  const auto lines = spdnn::read_tsv(comm(), empty, spdnn::features_layout(16, 60000));
  CHECK(lines.lines == 0);
  require_parse_error([&] { (void)problem_from(lines); }, empty + ":1:", "no images");
}

TEST_CASE("a category listed twice in the truth file is a file error at its second line") {
  const auto path = fuzz::write_case("truth-twice.tsv", "3\n7\n\n12\n7\n30\n");
  require_parse_error([&] { (void)spdnn::read_tsv(comm(), path, spdnn::truth_layout(40)); }, path + ":5:",
                      "image 7 is listed twice (first on line 2)");
  const auto fine = fuzz::write_case("truth-once.tsv", "3\n7\n\n12\n30\n");
  CHECK(comm().allgather_concatenated(spdnn::read_tsv(comm(), fine, spdnn::truth_layout(40)).first) ==
        std::vector<std::int64_t>{2, 6, 11, 29});
}

TEST_CASE("lines that repeat part of the line before are read whole: the parser's reuse of repeated bytes") {
  // Each line shares a prefix of its first field or its value with the line before, differing after it.
  const std::vector<std::tuple<std::int64_t, std::int64_t, double>> lines = {
      {1, 2, 0.5},     {1, 3, 0.5},      {1, 4, 0.55},     {1, 5, 0.5},   {12, 1, 0.5},  {12, 2, 5},
      {1, 6, 5},       {12, 3, 50},      {123, 4, 50.25},  {123, 5, 50.2}, {123, 6, -50.2}, {12345678, 7, 0.0625},
      {12345678, 8, 0.0625}, {1234567, 9, 0.0625}, {2, 10, 1}, {2, 11, 1}, {2, 12, 10}};
  std::string text;
  for (const auto& [i, j, v] : lines) text += fmt::format("{}\t{}\t{}\n", i, j, v);
  const auto path = fuzz::write_case("repeats.tsv", text + "2\t13\t1");  // the last line without its newline
  const spdnn::tsv_layout layout{3, 99999999, 16, "row", "column"};
  const auto got = spdnn::read_tsv(comm(), path, layout);
  const auto first = comm().allgather_concatenated(got.first), second = comm().allgather_concatenated(got.second);
  const auto value = comm().allgather_concatenated(got.value);
  REQUIRE(first.size() == lines.size() + 1);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    INFO("line " << k + 1);
    CHECK(first[k] == std::get<0>(lines[k]) - 1);
    CHECK(second[k] == std::get<1>(lines[k]) - 1);
    CHECK(value[k] == std::get<2>(lines[k]));
  }
  CHECK(first.back() == 1);
  CHECK(second.back() == 12);
  CHECK(value.back() == 1.0);
}

TEST_CASE("directories, and huge garbage lines, give short clear messages") {
  const auto dir = test::scratch_path("a-directory.tsv");
  if (comm().rank() == 0) std::filesystem::create_directories(dir);
  comm().barrier();
  try {
    (void)spdnn::read_tsv(comm(), dir, spdnn::weights_layout(16));
    FAIL("a directory was read");
  } catch (const error& e) {
    CHECK(e.kind() == error_kind::io_error);
    CHECK(e.message() == dir + ": is a directory, not a file");
  }
  const auto path = fuzz::write_case("garbage.tsv", "1\t1\t1\n" + std::string(1 << 20, 'x') + "\n");
  require_parse_error([&] { (void)spdnn::read_tsv(comm(), path, spdnn::weights_layout(16)); }, path + ":2:",
                      "row '" + std::string(80, 'x') + "...' is not an integer");
}

// ---------------------------------------------------------------------------------------------
// Fuzzing read_tsv.

namespace {

std::string trim_field(std::string f) {
  while (!f.empty() && (f.back() == ' ' || f.back() == '\r')) f.pop_back();
  const auto first = f.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : f.substr(first);
}

struct tsv_row {
  std::int64_t first = 0, second = 0;
  double value = 0;
};

/// The reference: the rules of docs/spdnn.md, on the whole file.
fuzz::verdict reference_tsv(const std::string& text, const spdnn::tsv_layout& layout, std::vector<tsv_row>& out) {
  // -?[0-9]+ and -?([0-9]+.?[0-9]*|.[0-9]+)([eE][+-]?[0-9]+)?: what from_chars reads, no '+', no inf/nan.
  const auto digits = [](const std::string& t, std::size_t from) {
    std::size_t k = from;
    while (k < t.size() && t[k] >= '0' && t[k] <= '9') ++k;
    return k - from;
  };
  const auto index_syntax = [&](const std::string& t) {
    const std::size_t from = !t.empty() && t[0] == '-' ? 1 : 0;
    return t.size() > from && digits(t, from) == t.size() - from;
  };
  const auto real_syntax = [&](const std::string& t) {
    std::size_t k = !t.empty() && t[0] == '-' ? 1 : 0, mantissa = digits(t, k);
    k += mantissa;
    if (k < t.size() && t[k] == '.') {
      const auto more = digits(t, k + 1);
      mantissa += more;
      k += 1 + more;
    }
    if (mantissa == 0) return false;
    if (k < t.size() && (t[k] == 'e' || t[k] == 'E')) {
      ++k;
      if (k < t.size() && (t[k] == '+' || t[k] == '-')) ++k;
      const auto exponent = digits(t, k);
      if (exponent == 0) return false;
      k += exponent;
    }
    return k == t.size();
  };
  const auto lines = fuzz::split_lines(text);
  std::map<std::int64_t, std::int64_t> seen;  // one-field files: index -> first line
  fuzz::verdict repeat;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const auto at = static_cast<std::int64_t>(k + 1);
    if (lines[k].find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> fields;
    std::size_t from = 0;
    while (true) {
      const auto tab = lines[k].find('\t', from);
      fields.push_back(trim_field(lines[k].substr(from, tab == std::string::npos ? std::string::npos : tab - from)));
      if (tab == std::string::npos) break;
      from = tab + 1;
    }
    if (static_cast<int>(fields.size()) != layout.fields) return fuzz::verdict::fail(error_kind::parse_error, at, "field count");
    tsv_row row;
    for (int f = 0; f < std::min(layout.fields, 2); ++f) {
      const auto& s = fields[static_cast<std::size_t>(f)];
      if (!index_syntax(s)) return fuzz::verdict::fail(error_kind::parse_error, at, "index syntax");
      errno = 0;
      const long long v = std::strtoll(s.c_str(), nullptr, 10);
      if (errno == ERANGE || v < 1 || v > (f == 0 ? layout.first_max : layout.second_max))
        return fuzz::verdict::fail(error_kind::parse_error, at, "index range");
      (f == 0 ? row.first : row.second) = v - 1;
    }
    if (layout.fields == 3) {
      if (!real_syntax(fields[2])) return fuzz::verdict::fail(error_kind::parse_error, at, "value syntax");
      errno = 0;
      row.value = std::strtod(fields[2].c_str(), nullptr);
      if (errno == ERANGE) return fuzz::verdict::fail(error_kind::parse_error, at, "value range");
    }
    if (layout.fields == 1 && repeat.ok) {
      if (seen.count(row.first)) repeat = fuzz::verdict::fail(error_kind::parse_error, at, "repeated index");
      else seen[row.first] = at;
    }
    out.push_back(row);
  }
  return repeat;  // malformed lines first, then the first repeat
}

std::string mutate_tsv(fuzz::rng& g, const std::string& text) {
  auto lines = fuzz::split_lines(text);
  const bool final_newline = !text.empty() && text.back() == '\n';
  if (lines.empty()) return g.chance(50) ? text : "\t\n";
  const auto k = g.below(lines.size());
  switch (g.below(9)) {
    case 0: {
      static const char bytes[] = {'0', '9', ' ', '\t', '\n', '-', '+', '.', 'e', '\0', '\r', 'x'};
      std::string t = text;
      if (!t.empty()) t[g.below(t.size())] = g.pick(bytes);
      return t;
    }
    case 1: return text.substr(0, g.below(text.size() + 1));
    case 2: lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(k)); break;
    case 3: lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(k), lines[k]); break;
    case 4: {
      static const char* numbers[] = {"0", "-1", "17", "41", "1000000000", "9223372036854775808", "1e400", "1e-400",
                                      "nan", "inf", "+3", " 5 ", "3\r", "0.0625", "-0"};
      const auto n = std::count(lines[k].begin(), lines[k].end(), '\t') + 1;
      lines[k] = fuzz::replace_token(lines[k], g.below(static_cast<std::size_t>(n)), g.pick(numbers), "\t");
      break;
    }
    case 5: lines[k] += g.chance(50) ? "\t1" : "\t"; break;
    case 6: lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(k), g.chance(50) ? "" : " \r"); break;
    case 7: lines[k] = lines[k].substr(0, lines[k].rfind('\t') == std::string::npos ? 0 : lines[k].rfind('\t')); break;
    default: lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(k), fuzz::garbage(g, 1 + g.below(200))); break;
  }
  return fuzz::join_lines(lines, final_newline);
}

}  // namespace

TEST_CASE("fuzz: mutated TSV files give the reference's entries or its error with file:line") {
  std::string weights, truth;
  fuzz::rng seed_rng(17);
  for (int e = 0; e < 24; ++e)
    weights += fmt::format("{}\t{}\t{}\n", 1 + seed_rng.below(16), 1 + seed_rng.below(16), e % 3 == 0 ? "0.0625" : "-0.3");
  for (int c = 1; c <= 40; c += 1 + static_cast<int>(seed_rng.below(4))) truth += fmt::format("{}\n", c);
  std::string in_order;  // the challenge's own order, which read_tsv_rows keeps as rows
  for (int i = 1; i <= 16; i += 1 + static_cast<int>(seed_rng.below(3)))
    for (int j = 1 + static_cast<int>(seed_rng.below(4)); j <= 16; j += 1 + static_cast<int>(seed_rng.below(6)))
      in_order += fmt::format("{}\t{}\t{}\n", i, j, j % 2 == 0 ? "0.0625" : "1");
  const spdnn::tsv_layout layouts[] = {spdnn::weights_layout(16), spdnn::truth_layout(40), spdnn::weights_layout(16)};
  const std::string seeds[] = {weights, truth, in_order};

  int accepted = 0, rejected = 0, rows_in_order = 0;
  constexpr int cases = 240;
  for (int c = 0; c < cases; ++c) {
    fuzz::rng g(0x75e00000ULL + static_cast<std::uint64_t>(c));
    const auto which = g.below(3);
    std::string text = seeds[which];
    for (int m = 0, n = 1 + static_cast<int>(g.below(3)); m < n; ++m) text = mutate_tsv(g, text);
    std::vector<tsv_row> want;
    const fuzz::verdict v = reference_tsv(text, layouts[which], want);
    const auto path = fuzz::write_case("fuzz.tsv", text);
    INFO(fmt::format("case {} (seed 0x75e{:05x}), file:\n{}", c, c, std::string(text, 0, 600)));
    try {
      const auto got = spdnn::read_tsv(comm(), path, layouts[which]);
      INFO("reference: " << (v.ok ? std::string("accept") : v.why) << " at line " << v.line);
      REQUIRE(v.ok);
      const auto first = comm().allgather_concatenated(got.first);
      REQUIRE(first.size() == want.size());
      const auto second = comm().allgather_concatenated(got.second);
      const auto value_all = comm().allgather_concatenated(got.value);
      for (std::size_t e = 0; e < want.size(); ++e) {
        REQUIRE(first[e] == want[e].first);
        if (layouts[which].fields >= 2) REQUIRE(second[e] == want[e].second);
        if (layouts[which].fields >= 3) REQUIRE(value_all[e] == want[e].value);
      }
      CHECK(got.lines == static_cast<std::int64_t>(fuzz::split_lines(text).size()));
      if (layouts[which].fields == 3) {  // the same lines read into rows (or columns, where out of order)
        auto rows = spdnn::read_tsv_rows<double>(comm(), path, layouts[which]);
        CHECK(rows.file.lines == got.lines);
        CHECK(rows.file.largest_first == got.largest_first);
        CHECK(rows.file.largest_first_line == got.largest_first_line);
        std::vector<std::int64_t> row, column;
        std::vector<double> value;
        if (rows.in_order) {
          for (std::size_t k = 0; k < rows.row_id.size(); ++k)
            for (std::size_t e = 0; e < rows.row_size(k); ++e) {
              row.push_back(rows.row_id[k]);
              column.push_back(rows.column[static_cast<std::size_t>(rows.row_start[k]) + e]);
              value.push_back(rows.value[static_cast<std::size_t>(rows.row_start[k]) + e]);
            }
        } else {
          row = rows.file.first, column = rows.file.second, value = rows.file.value;
        }
        REQUIRE(comm().allgather_concatenated(row) == first);
        REQUIRE(comm().allgather_concatenated(column) == second);
        REQUIRE(comm().allgather_concatenated(value) == value_all);
        rows_in_order += comm().min(rows.in_order ? 1 : 0);
      }
      ++accepted;
    } catch (const error& e) {
      fuzz::check_error(e, v, path);
      if (layouts[which].fields == 3) {  // the same error from the rows' reader
        try {
          (void)spdnn::read_tsv_rows<double>(comm(), path, layouts[which]);
          FAIL("read_tsv_rows accepted what read_tsv refused: " << e.message());
        } catch (const error& again) {
          CHECK(again.message() == e.message());
        }
      }
      ++rejected;
    }
  }
  MESSAGE(fmt::format("{} accepted ({} read in order on every rank), {} rejected", accepted, rows_in_order, rejected));
  CHECK(accepted >= cases / 10);
  CHECK(rejected >= cases / 4);
  CHECK(rows_in_order >= cases / 20);
}

}  // namespace spdnn_readers_tests
