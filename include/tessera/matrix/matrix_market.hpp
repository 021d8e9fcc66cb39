#pragma once
/// @file
/// Matrix Market I/O: parallel read (every rank parses its own byte range) and ordered parallel write.

#include "../core/error.hpp"
#include "build.hpp"
#include "detail/matrix_market_header.hpp"
#include "dist_matrix.hpp"
#include "local_triplets.hpp"

#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tessera {

namespace detail {

/// This rank's byte range of the data section, extended to whole lines; `first_line` is the
/// 1-based line number of its first line.
struct file_chunk {
  std::string text;
  global_index newlines_in_range = 0;  ///< newlines inside this rank's byte range
  global_index newlines_skipped = 0;   ///< newlines between the range start and the first owned line
  global_index first_line = 0;
};

/// Not collective: the caller turns the newline counts into `first_line` with an exclusive scan.
inline file_chunk read_own_lines(int rank, int num_ranks, const std::string& path, const matrix_market_header& h) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_REQUIRE(in, io_error, "{}: cannot open for reading", path);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  const std::uint64_t data = h.data_offset, span = size - data;
  const auto p = static_cast<std::uint64_t>(num_ranks), r = static_cast<std::uint64_t>(rank);
  const std::uint64_t begin = data + span * r / p, end = data + span * (r + 1) / p;

  // Read [begin - 1, end) and then up to the end of the line that straddles `end`.
  const std::uint64_t from = begin > data ? begin - 1 : begin;
  std::string raw(end - from, '\0');
  in.seekg(static_cast<std::streamoff>(from));
  in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
  if (!raw.empty() && raw.back() != '\n' && end < size) {
    std::string tail;
    std::getline(in, tail);
    raw += tail;
    raw += '\n';
  }
  // raw[i] is the byte at from + i; this rank owns the lines that start inside [begin, end).
  const std::size_t own_first = static_cast<std::size_t>(begin - from), own_last = static_cast<std::size_t>(end - from);
  std::size_t start = 0;
  if (begin > data) {
    const auto nl = raw.find('\n');  // raw[0] is the byte just before `begin`
    start = nl == std::string::npos ? raw.size() : nl + 1;
  }
  auto newlines = [&](std::size_t lo, std::size_t hi) {
    return static_cast<global_index>(std::count(raw.begin() + static_cast<std::ptrdiff_t>(std::min(lo, raw.size())),
                                                raw.begin() + static_cast<std::ptrdiff_t>(std::min(hi, raw.size())), '\n'));
  };
  file_chunk chunk;
  chunk.newlines_in_range = newlines(own_first, own_last);
  chunk.newlines_skipped = newlines(own_first, start);
  if (start < own_last) chunk.text = raw.substr(start);
  return chunk;
}

template <class T>
T parse_value(std::string_view token, bool& ok) {
  T value{};
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  ok = ec == std::errc{} && ptr == token.data() + token.size();
  return value;
}

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

template <class T>
triplets<T> parse_entries(const std::string& path, const matrix_market_header& h, const file_chunk& chunk,
                          global_index& entries_read) {
  triplets<T> out;
  std::string_view text(chunk.text);
  global_index line_number = chunk.first_line;
  auto fail = [&](const std::string& what) {
    throw error(error_kind::parse_error, fmt::format("{}:{}: {}", path, line_number, what), __FILE__, __LINE__);
  };
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    std::string_view rest = line;
    const auto first = next_token(rest);
    if (first.empty() || first.front() == '%') {
      ++line_number;
      continue;
    }
    bool ok_row = false, ok_col = false;
    const auto row = parse_value<global_index>(first, ok_row);
    const auto col_token = next_token(rest);
    const auto col = parse_value<global_index>(col_token, ok_col);
    if (!ok_row || !ok_col) fail(fmt::format("expected 'row column{}', found '{}'", h.field == mm_field::pattern ? "" : " value", line));
    if (row < 1 || row > h.rows) fail(fmt::format("row index {} is outside [1, {}]", row, h.rows));
    if (col < 1 || col > h.cols) fail(fmt::format("column index {} is outside [1, {}]", col, h.cols));
    T value{1};
    if (h.field != mm_field::pattern) {
      const auto token = next_token(rest);
      bool ok = false;
      if (h.field == mm_field::integer) {
        const auto v = parse_value<std::int64_t>(token, ok);
        value = static_cast<T>(v);
      } else {
        const auto v = parse_value<double>(token, ok);
        value = static_cast<T>(v);
      }
      if (!ok) fail(fmt::format("expected a {} value, found '{}'", to_string(h.field), token));
    }
    if (!next_token(rest).empty()) fail(fmt::format("unexpected text after the entry: '{}'", line));
    const global_index i = row - 1, j = col - 1;
    if (h.symmetry == mm_symmetry::skew_symmetric && i == j) fail(fmt::format("a skew-symmetric matrix cannot have diagonal entry ({}, {})", row, col));
    out.push_back(i, j, value);
    if (h.symmetry != mm_symmetry::general && i != j)
      out.push_back(j, i, h.symmetry == mm_symmetry::skew_symmetric ? static_cast<T>(-value) : value);
    ++entries_read;
    ++line_number;
  }
  return out;
}

template <class T>
std::string format_value(const T& v) {
  if constexpr (std::is_same_v<T, double>) return fmt::format("{:.17g}", v);
  else if constexpr (std::is_floating_point_v<T>) return fmt::format("{:.9g}", v);
  else return fmt::format("{}", v);
}

}  // namespace detail

/// Read a Matrix Market file in parallel (collective).
///
/// Every rank reads the header, then parses only its own 1/P byte range of the
/// entries; entries are routed to their owners as in build_from_triplets, so no
/// rank ever holds the whole matrix. Coordinate format; real, integer or
/// pattern fields (pattern entries get the value 1); general, symmetric or
/// skew-symmetric. Duplicates are combined with the options' combine (summed).
///
/// Raises tessera::error (parse_error, naming the file and line) on every rank
/// if any rank finds a malformed line, and also if the number of entries differs
/// from the header's.
template <matrix_value T, matrix_policy Policy, class Combine = combine::sum>
[[nodiscard]] dist_matrix<T, Policy> read_matrix_market(const communicator& comm, const std::string& path,
                                                        const build_options<Policy, Combine>& options = {}) {
  const auto header = comm.collectively([&] {
    auto h = detail::read_matrix_market_header(path);
    TESSERA_REQUIRE(!(std::is_integral_v<T> && h.field == detail::mm_field::real), unsupported,
                    "{}: the file holds real values but the matrix value type is integral", path);
    return h;
  });
  auto chunk = comm.collectively([&] { return detail::read_own_lines(comm.rank(), comm.size(), path, header); });
  chunk.first_line = header.data_line + comm.exclusive_prefix_sum(chunk.newlines_in_range) + chunk.newlines_skipped;
  global_index entries_read = 0;
  auto entries = comm.collectively([&] { return detail::parse_entries<T>(path, header, chunk, entries_read); });
  const global_index total = comm.sum(entries_read);
  comm.collectively([&] {
    TESSERA_REQUIRE(total == header.entries, parse_error, "{}: the header declares {} entries but the file holds {}",
                    path, header.entries, total);
  });
  return build_from_triplets<T, Policy, Combine>(comm, header.rows, header.cols, entries, options);
}

/// Write a matrix to one Matrix Market file (collective), entries in rank order
/// (for row_block: sorted by row, then column), each rank writing its own part
/// at its offset with MPI-IO.
template <class T, class Policy>
void write_matrix_market(const dist_matrix<T, Policy>& a, const std::string& path) {
  const communicator& comm = a.comm();
  const std::string body = comm.collectively([&] {
    const auto mine = local_triplets(a);
    std::string text;
    text.reserve(mine.size() * 24);
    for (std::size_t k = 0; k < mine.size(); ++k)
      fmt::format_to(std::back_inserter(text), "{} {} {}\n", mine.rows[k] + 1, mine.cols[k] + 1,
                     detail::format_value(mine.values[k]));
    return text;
  });
  const std::string header =
      fmt::format("%%MatrixMarket matrix coordinate {} general\n% written by tessera on {} ranks\n{} {} {}\n",
                  std::is_integral_v<T> ? "integer" : "real", comm.size(), a.num_rows(), a.num_cols(), a.global_nnz());
  const auto before = comm.exclusive_prefix_sum(static_cast<std::uint64_t>(body.size()));

  MPI_File file = MPI_FILE_NULL;
  comm.collectively([&] {
    const int rc = MPI_File_open(comm.get(), path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
    TESSERA_REQUIRE(rc == MPI_SUCCESS, io_error, "{}: cannot open for writing: {}", path, detail::mpi_error_string(rc));
  });
  std::exception_ptr failure;
  try {
    TESSERA_MPI(MPI_File_set_size(file, 0));
    auto write_at = [&](std::uint64_t offset, const std::string& text) {
      constexpr std::size_t chunk = std::size_t{1} << 30;
      for (std::size_t done = 0; done < text.size(); done += chunk) {
        const int n = static_cast<int>(std::min(chunk, text.size() - done));
        TESSERA_MPI(MPI_File_write_at(file, static_cast<MPI_Offset>(offset + done), text.data() + done, n, MPI_CHAR,
                                      MPI_STATUS_IGNORE));
      }
    };
    if (comm.rank() == 0) write_at(0, header);
    write_at(header.size() + before, body);
  } catch (...) {
    failure = std::current_exception();
  }
  MPI_File_close(&file);
  comm.agree(failure);
}

}  // namespace tessera
