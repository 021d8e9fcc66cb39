#pragma once
/// @file
/// Matrix Market I/O: parallel read (every rank parses its own byte range) and ordered parallel write.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_MATRIX_MARKET_HPP
#endif

#include "../core/error.hpp"
#include "build.hpp"
#include "detail/matrix_market_header.hpp"
#include "dist_matrix.hpp"
#include "local_triplets.hpp"

#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
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
  bool data_ends_line = true;          ///< the data section is empty or ends with a newline (same on every rank)
};

/// Not collective: the caller turns the newline counts into `first_line` with an exclusive scan.
inline file_chunk read_own_lines(int rank, int num_ranks, const std::string& path, const matrix_market_header& h) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_REQUIRE(in, io_error, "{}: cannot open for reading", path);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  TESSERA_REQUIRE(size >= h.data_offset, io_error, "{}: the file shrank while it was being read", path);
  const std::uint64_t data = h.data_offset, span = size - data;
  const auto p = static_cast<std::uint64_t>(num_ranks), r = static_cast<std::uint64_t>(rank);
  const std::uint64_t begin = data + span * r / p, end = data + span * (r + 1) / p;

  file_chunk chunk;
  if (span > 0) {
    char last = '\n';
    in.seekg(static_cast<std::streamoff>(size - 1));
    in.get(last);
    chunk.data_ends_line = last == '\n';
  }
  // Read [begin - 1, end) and then up to the end of the line that straddles `end`.
  const std::uint64_t from = begin > data ? begin - 1 : begin;
  std::string raw(end - from, '\0');
  in.seekg(static_cast<std::streamoff>(from));
  in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
  TESSERA_REQUIRE(static_cast<std::uint64_t>(in.gcount()) == raw.size(), io_error, "{}: cannot read bytes {} to {}",
                  path, from, end);
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
  chunk.newlines_in_range = newlines(own_first, own_last);
  chunk.newlines_skipped = newlines(own_first, start);
  if (start < own_last) chunk.text = raw.substr(start);
  return chunk;
}

/// Calls `f(line, line_number)` for each entry line of the chunk (not blank, not a comment).
template <class F>
void for_each_entry_line(const file_chunk& chunk, F&& f) {
  std::string_view text(chunk.text);
  global_index line_number = chunk.first_line;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '%') f(line, line_number);
    ++line_number;
  }
}

template <class T>
[[nodiscard]] std::string type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, long double>) return "long double";
  else return ::tessera::detail::formatted("{}int{}", std::is_signed_v<T> ? "" : "u", 8 * sizeof(T));
}

/// The value of an integer-field token as T; empty if it is fine, else what is wrong.
/// Values beyond T's range are errors: wrapping them would be a silently wrong matrix.
template <class T>
std::string parse_integer_value(std::string_view token, T& value) {
  if (!integer_syntax(token)) return ::tessera::detail::formatted("expected an integer value, found '{}'", quote_input(token));
  auto does_not_fit = [&] {
    if constexpr (std::is_integral_v<T>)
      return ::tessera::detail::formatted("integer value {} does not fit the value type {} [{}, {}]", quote_input(token), type_name<T>(),
                         std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    else
      return ::tessera::detail::formatted("integer value {} is beyond the range of the value type {}", quote_input(token), type_name<T>());
  };
  if (token.front() == '+') token.remove_prefix(1);
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      std::int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
      if (ec != std::errc{} || v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return does_not_fit();
      value = static_cast<T>(v);
    } else {
      if (token.front() == '-') {  // only a negative zero fits
        if (token.find_first_not_of('0', 1) != std::string_view::npos) return does_not_fit();
        value = T{0};
        return {};
      }
      std::uint64_t v = 0;
      const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
      if (ec != std::errc{} || v > std::numeric_limits<T>::max()) return does_not_fit();
      value = static_cast<T>(v);
    }
  } else {
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc{}) return does_not_fit();
  }
  return {};
}

/// The value of a real-field token as T (floating point); empty if it is fine, else what is wrong.
/// NaN and infinities are accepted (C's strtod reads them); a finite value beyond T's range is an
/// error, one too small for it becomes zero or subnormal, as in strtod.
template <class T>
std::string parse_real_value(std::string_view token, T& value) {
  if (token.size() > 1 && token.front() == '+' && token[1] != '-' && token[1] != '+') token.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || ptr != token.data() + token.size() || (ec != std::errc{} && ec != std::errc::result_out_of_range))
    return ::tessera::detail::formatted("expected a real value, found '{}'", quote_input(token));
  if (ec == std::errc::result_out_of_range) {
    // from_chars says "out of range" for underflow too: strto* tells the two apart.
    const std::string copy(token);
    long double v = std::strtold(copy.c_str(), nullptr);
    if (std::isinf(v) || std::fabs(v) > static_cast<long double>(std::numeric_limits<T>::max()))
      return ::tessera::detail::formatted("real value {} is beyond the range of the value type {}", quote_input(token), type_name<T>());
    value = static_cast<T>(v);
  }
  return {};
}

template <class T>
triplets<T> parse_entries(const std::string& path, const matrix_market_header& h, const file_chunk& chunk,
                          global_index first_entry, global_index count) {
  triplets<T> out;
  const bool mirrored = h.symmetry != mm_symmetry::general;
  out.reserve(static_cast<std::size_t>(mirrored ? 2 * count : count));
  global_index entry = first_entry;
  for_each_entry_line(chunk, [&](std::string_view line, global_index line_number) {
    auto fail = [&](const std::string& what) {
      throw error(error_kind::parse_error, ::tessera::detail::formatted("{}:{}: {}", path, line_number, what), __FILE__, __LINE__);
    };
    if (entry >= h.entries)
      fail(::tessera::detail::formatted("entry {} is beyond the {} entries the size line declares", entry + 1, h.entries));
    ++entry;
    std::string_view rest = line;
    const auto row_token = next_token(rest), col_token = next_token(rest);
    std::int64_t row = 0, col = 0;
    if (!parse_int64(row_token, row) || !parse_int64(col_token, col))
      fail(::tessera::detail::formatted("expected 'row column{}', found '{}'", h.field == mm_field::pattern ? "" : " value", quote_input(line)));
    if (row < 1 || row > h.rows) fail(::tessera::detail::formatted("row index {} is outside [1, {}]", row, h.rows));
    if (col < 1 || col > h.cols) fail(::tessera::detail::formatted("column index {} is outside [1, {}]", col, h.cols));
    T value{1};
    if (h.field != mm_field::pattern) {
      const auto token = next_token(rest);
      if (token.empty()) fail(::tessera::detail::formatted("expected a {} value after the column index", to_string(h.field)));
      std::string problem;
      if (h.field == mm_field::integer) problem = parse_integer_value<T>(token, value);
      else if constexpr (std::is_floating_point_v<T>) problem = parse_real_value<T>(token, value);
      if (!problem.empty()) fail(problem);
    }
    if (!next_token(rest).empty()) fail(::tessera::detail::formatted("unexpected text after the entry: '{}'", quote_input(line)));
    // The spec stores the lower triangle only: an entry above it would be mirrored onto one that may also be there.
    if (mirrored && col > row)
      fail(::tessera::detail::formatted("entry ({}, {}) is above the diagonal; a {} file holds the lower triangle only", row, col,
                       to_string(h.symmetry)));
    if (h.symmetry == mm_symmetry::skew_symmetric && row == col)
      fail(::tessera::detail::formatted("a skew-symmetric matrix cannot have diagonal entry ({}, {})", row, col));
    if constexpr (std::is_integral_v<T>)  // the mirror of a skew-symmetric entry is its negation: it must fit too
      if (h.symmetry == mm_symmetry::skew_symmetric &&
          (std::is_unsigned_v<T> ? value != T{0} : value == std::numeric_limits<T>::min()))
        fail(::tessera::detail::formatted("the mirror of value {} is -{}, beyond the value type {}", value, value, type_name<T>()));
    const global_index i = row - 1, j = col - 1;
    out.push_back(i, j, value);
    if (mirrored && i != j) out.push_back(j, i, h.symmetry == mm_symmetry::skew_symmetric ? static_cast<T>(-value) : value);
  });
  return out;
}

template <class T>
std::string format_value(const T& v) {
  if constexpr (std::is_same_v<T, double>) return ::tessera::detail::formatted("{:.17g}", v);
  else if constexpr (std::is_floating_point_v<T>) return ::tessera::detail::formatted("{:.9g}", v);
  else return ::tessera::detail::formatted("{}", v);
}

}  // namespace detail

/// Read a Matrix Market file in parallel (collective).
///
/// Every rank reads the header, then parses only its own 1/P byte range of the
/// entries; entries are routed to their owners as in build_from_triplets, so no
/// rank ever holds the whole matrix. Coordinate format; real, integer or
/// pattern fields (pattern entries get the value 1); general, symmetric or
/// skew-symmetric (lower triangle only, as the spec says). Duplicates are
/// combined with the options' combine (summed).
///
/// Raises tessera::error on every rank: parse_error naming the file and the
/// line of the first problem in file order (a malformed line, a value beyond
/// T's range, an entry beyond the declared count, or the end of the file when
/// entries are missing); unsupported for array or complex files, real values
/// for an integral T, and matrices whose rows a rank cannot index in 32 bits.
template <matrix_value T, matrix_policy Policy, class Combine = combine::sum>
[[nodiscard]] dist_matrix<T, Policy> read_matrix_market(const communicator& comm, const std::string& path,
                                                        const build_options<Policy, Combine>& options = {}) {
  const auto header = comm.collectively([&] {
    auto h = detail::read_matrix_market_header(path);
    TESSERA_REQUIRE(!(std::is_integral_v<T> && h.field == detail::mm_field::real), unsupported,
                    "{}: the file holds real values but the matrix value type is integral", path);
    // Local row indices are 32-bit: refuse here, naming the file and the limit, before the
    // build allocates row pointers for a shape no rank could index.
    const auto mapping = options.distribution.make_mapping(comm.size(), h.rows, h.cols);
    const auto mine = mapping.extents(comm.rank()).rows;
    TESSERA_REQUIRE(mine <= INT_MAX, unsupported,
                    "{}: {} x {} on {} rank{}: rank {} would own {} rows, more than the {} (2^31 - 1) rows one rank can "
                    "index; read it on more ranks (with row_block, at least {})",
                    path, h.rows, h.cols, comm.size(), comm.size() == 1 ? "" : "s", comm.rank(), mine, INT_MAX,
                    h.rows / INT_MAX + (h.rows % INT_MAX != 0 ? 1 : 0));
    return h;
  });
  auto chunk = comm.collectively([&] { return detail::read_own_lines(comm.rank(), comm.size(), path, header); });
  chunk.first_line = header.data_line + comm.exclusive_prefix_sum(chunk.newlines_in_range) + chunk.newlines_skipped;
  // Counting first gives every line its entry number, so an entry beyond the declared count is
  // reported at its own line, in file order with the other errors.
  global_index count = 0;
  detail::for_each_entry_line(chunk, [&](std::string_view, global_index) { ++count; });
  const global_index first_entry = comm.exclusive_prefix_sum(count);
  const global_index total = comm.sum(count);
  const global_index data_newlines = comm.sum(chunk.newlines_in_range);
  auto entries = comm.collectively([&] { return detail::parse_entries<T>(path, header, chunk, first_entry, count); });
  comm.collectively([&] {
    const global_index last_line = header.data_line - 1 + data_newlines + (chunk.data_ends_line ? 0 : 1);
    TESSERA_REQUIRE(total >= header.entries, parse_error,
                    "{}:{}: the file ends after {} entr{}, but the size line declares {}", path, last_line, total,
                    total == 1 ? "y" : "ies", header.entries);
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
      ::tessera::detail::formatted("%%MatrixMarket matrix coordinate {} general\n% written by tessera on {} ranks\n{} {} {}\n",
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

#ifdef TESSERA_USE_INSTANTIATIONS  // compiled once in tessera::instantiations, not in this unit
#include "../instantiations/use.hpp"
TESSERA_FOR_EACH_INSTANTIATED_POLICY(TESSERA_INSTANTIATE_READ, extern)
#endif

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_MATRIX_MARKET_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_MATRIX_MARKET_HPP
#endif
