#pragma once
// The challenge's tab-separated files (1-based indices), read in parallel:
// every rank parses its own byte range of the file, and a malformed line is
// reported as "file:line: what is wrong" on every rank. Nothing is allocated
// from a number in a file before it is checked against the layout's bounds.

#include <tessera/comm/communicator.hpp>
#include <tessera/core/error.hpp>
#include <tessera/core/uninitialized_allocator.hpp>
#include <tessera/matrix/gather.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spdnn {

/// The columns of a TSV file, converted to 0-based indices: this rank's lines,
/// and what every rank knows about the whole file.
struct tsv_columns {
  std::vector<std::int64_t> first, second;
  std::vector<double> value;
  std::string path;
  std::int64_t lines = 0;               ///< lines in the file (blank ones included), same on every rank
  std::int64_t largest_first = -1;      ///< largest 0-based first index in the file, -1 if none (every rank)
  std::int64_t largest_first_line = 0;  ///< the first line holding it (every rank)
  [[nodiscard]] std::size_t size() const noexcept { return first.size(); }
};

/// What a TSV file must hold: `fields` columns per line (1: index; 2: index
/// index; 3: index index value), 1-based indices at most first_max and
/// second_max, values that are finite doubles. A one-field file is a set
/// (the truth's list of images): an index listed twice is an error.
struct tsv_layout {
  int fields = 3;
  std::int64_t first_max = std::numeric_limits<std::int64_t>::max();
  std::int64_t second_max = std::numeric_limits<std::int64_t>::max();
  const char* first_name = "row";
  const char* second_name = "column";
};

namespace detail {

/// At most 80 bytes of the input, non-printable ones escaped: the message goes to every rank and into logs.
inline std::string excerpt(std::string_view text) {
  constexpr std::size_t limit = 80;
  std::string out;
  for (std::size_t k = 0; k < std::min(text.size(), limit); ++k) {
    const auto c = static_cast<unsigned char>(text[k]);
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  if (text.size() > limit) out += "...";
  return out;
}

/// A file's bytes, not zeroed before they are read over (zeroing a rank's tens of MB first was a
/// tenth of reading them).
using byte_buffer = std::vector<char, tessera::uninitialized_allocator<char>>;

/// Appends up to `count` bytes of the file from `from` on to `bytes`.
inline void read_range(std::ifstream& in, std::uint64_t from, std::uint64_t count, byte_buffer& bytes) {
  const std::size_t had = bytes.size();
  bytes.resize(had + static_cast<std::size_t>(count));
  in.seekg(static_cast<std::streamoff>(from));
  in.read(bytes.data() + had, static_cast<std::streamsize>(count));
  bytes.resize(had + static_cast<std::size_t>(in.gcount()));
  in.clear();
}

/// A value without exponent and with at most 15 digits (the challenge's "0.0625" and "1"): its digits
/// as an integer divided by a power of ten, both exact in a double, so the one division rounds
/// correctly (Clinger's fast path): the double std::from_chars gives, at a fraction of its cost
/// (from_chars was a third of parsing a layer file). False, with `value` untouched, for anything
/// else, which from_chars then reads.
inline bool plain_decimal(const char* at, const char* end, double& value) {
  static constexpr double powers_of_ten[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const bool negative = at != end && *at == '-';
  if (negative) ++at;
  std::uint64_t digits = 0;
  int count = 0, after_point = 0;
  bool point = false;
  for (; at != end; ++at) {
    if (*at >= '0' && *at <= '9') {
      digits = 10 * digits + static_cast<std::uint64_t>(*at - '0');
      ++count;
      after_point += point ? 1 : 0;
    } else if (*at == '.' && !point) {
      point = true;
    } else {
      return false;
    }
    if (count > 15) return false;
  }
  if (count == 0) return false;
  const double magnitude = static_cast<double>(digits) / powers_of_ten[after_point];
  value = negative ? -magnitude : magnitude;
  return true;
}

/// The common line, `row<TAB>column<TAB>value` with plain decimal indices in range and a finite
/// value, parsed in one pass; false (nothing stored) for anything else, which parse_line then
/// reads field by field, with its messages. Only lines parse_line accepts with the same numbers
/// are taken here (tests/readers fuzzes both against a reference parser).
inline bool parse_plain_line(std::string_view line, const tsv_layout& layout, tsv_columns& out) {
  if (layout.fields != 3) return false;
  const char* at = line.data();
  const char* const end = at + line.size();
  std::int64_t index[2] = {0, 0};
  for (int field = 0; field < 2; ++field) {
    const char* const first = at;
    std::int64_t v = 0;
    while (at != end && *at >= '0' && *at <= '9' && at - first < 18) v = 10 * v + (*at++ - '0');
    const std::int64_t max = field == 0 ? layout.first_max : layout.second_max;
    if (at == first || at == end || *at != '\t' || v < 1 || v > max) return false;
    index[field] = v - 1;
    ++at;
  }
  double value = 0;
  if (!plain_decimal(at, end, value)) {
    const auto [stop, ec] = std::from_chars(at, end, value);
    if (ec != std::errc{} || stop != end || at == end || !std::isfinite(value)) return false;
  }
  out.first.push_back(index[0]);
  out.second.push_back(index[1]);
  out.value.push_back(value);
  return true;
}

/// Parse one line; nothing if fine, else what is wrong with it.
inline std::optional<std::string> parse_line(std::string_view line, const tsv_layout& layout, tsv_columns& out) {
  if (parse_plain_line(line, layout, out)) return std::nullopt;
  std::int64_t index[2] = {0, 0};
  double value = 0;
  int field = 0;
  std::size_t at = 0;
  while (at <= line.size()) {
    std::size_t stop = line.find('\t', at);
    if (stop == std::string_view::npos) stop = line.size();
    std::string_view text = line.substr(at, stop - at);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (field >= layout.fields)
      return fmt::format("expected {} tab-separated field{}, found more", layout.fields, layout.fields == 1 ? "" : "s");
    if (field < 2) {
      const char* name = field == 0 ? layout.first_name : layout.second_name;
      const std::int64_t max = field == 0 ? layout.first_max : layout.second_max;
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
        return fmt::format("{} '{}' is not an integer", name, excerpt(text));
      if (v < 1 || v > max) return fmt::format("{} {} is outside [1, {}]", name, v, max);
      index[field] = v - 1;
    } else {
      // NaN and infinities are refused (the challenge's files never hold them), and so is what
      // double cannot hold, too large or too small (from_chars reports both as out of range).
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || !std::isfinite(value))
        return fmt::format("value '{}' is not a finite number within double's range", excerpt(text));
    }
    ++field;
    at = stop + 1;
  }
  if (field != layout.fields)
    return fmt::format("expected {} tab-separated field{}, found {}", layout.fields, layout.fields == 1 ? "" : "s",
                       field);
  out.first.push_back(index[0]);
  if (layout.fields >= 2) out.second.push_back(index[1]);
  if (layout.fields >= 3) out.value.push_back(value);
  return std::nullopt;
}

}  // namespace detail

/// Read a TSV file in parallel over `comm` (collective): each rank gets the
/// lines that start in its share of the bytes. Blank lines are skipped. A
/// missing file, a directory or a malformed line raises tessera::error on
/// every rank, with the file name and the 1-based line number: the first
/// malformed line if any, else (one-field files) the first repeated index.
inline tsv_columns read_tsv(const tessera::communicator& comm, const std::string& path, const tsv_layout& layout) {
  const auto size = comm.collectively([&] {
    std::error_code ec;
    TESSERA_REQUIRE(!std::filesystem::is_directory(path, ec), io_error, "{}: is a directory, not a file", path);
    const auto bytes = std::filesystem::file_size(path, ec);
    TESSERA_REQUIRE(!ec, io_error, "{}: cannot read ({})", path, ec.message());
    return static_cast<std::uint64_t>(bytes);
  });
  const auto p = static_cast<std::uint64_t>(comm.size()), r = static_cast<std::uint64_t>(comm.rank());
  const std::uint64_t begin = size * r / p, end = size * (r + 1) / p;

  tsv_columns out;
  out.path = path;
  std::optional<std::string> failure;
  std::int64_t failure_line = 0, my_lines = 0, largest_line = 0;
  std::vector<std::int64_t> entry_lines;  // one-field files: where each index is, to name a repeat's line
  std::ifstream in(path, std::ios::binary);
  comm.collectively([&] { TESSERA_REQUIRE(in, io_error, "{}: cannot open for reading", path); });
  if (begin < end) {
    // The line that starts before `end` may run past it: read on until its newline.
    const std::uint64_t from = begin == 0 ? 0 : begin - 1;
    detail::byte_buffer buffer;
    detail::read_range(in, from, end - from, buffer);
    for (std::uint64_t more = end;
         std::string_view(buffer.data(), buffer.size()).find('\n', end - 1 - from) == std::string_view::npos && more < size;) {
      detail::read_range(in, more, 1 << 16, buffer);
      more += 1 << 16;
    }
    const std::string_view bytes(buffer.data(), buffer.size());
    // The columns sized once, by the share's newlines (a fast count), not grown line by line.
    const auto newlines = static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n')) + 1;
    out.first.reserve(newlines);
    if (layout.fields >= 2) out.second.reserve(newlines);
    if (layout.fields >= 3) out.value.reserve(newlines);
    std::size_t at = 0;
    if (begin > 0) {  // skip the tail of a line that started in the previous share
      const std::size_t nl = bytes.find('\n');
      at = nl == std::string_view::npos ? bytes.size() : nl + 1;
    }
    const std::size_t limit = end - from;
    while (at < limit && at < bytes.size()) {
      std::size_t stop = bytes.find('\n', at);
      if (stop == std::string_view::npos) stop = bytes.size();
      std::string_view line(bytes.data() + at, stop - at);
      ++my_lines;
      if (!failure && line.find_first_not_of(" \t\r") != std::string_view::npos) {
        failure = detail::parse_line(line, layout, out);
        if (failure) {
          failure_line = my_lines;
        } else {
          if (out.first.back() > out.largest_first) {
            out.largest_first = out.first.back();
            largest_line = my_lines;
          }
          if (layout.fields == 1) entry_lines.push_back(my_lines);
        }
      }
      at = stop + 1;
    }
  }
  // Line numbers: the lines every earlier rank holds come first.
  const std::int64_t first_line = comm.exclusive_prefix_sum(my_lines);
  out.lines = comm.sum(my_lines);
  comm.collectively([&] {
    if (failure) TESSERA_THROW(parse_error, "{}:{}: {}", path, first_line + failure_line, *failure);
  });
  // The largest index and its first line (the lowest rank holding it has it first).
  const std::int64_t largest = comm.max(out.largest_first);
  out.largest_first_line = comm.min(out.largest_first == largest && largest >= 0
                                        ? first_line + largest_line
                                        : std::numeric_limits<std::int64_t>::max());
  out.largest_first = largest;
  if (largest < 0) out.largest_first_line = 0;

  if (layout.fields == 1) {
    // A repeated index is an error, reported at its second line. The ids are
    // gathered to rank 0: a one-field file (a list of categories) is small next to the others.
    for (auto& l : entry_lines) l += first_line;
    const auto ids = comm.gather_concatenated(out.first, 0);
    const auto at = comm.gather_concatenated(entry_lines, 0);
    comm.collectively([&] {
      if (comm.rank() != 0) return;
      std::vector<std::size_t> order(ids.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::sort(order.begin(), order.end(), [&](auto a, auto b) { return ids[a] != ids[b] ? ids[a] < ids[b] : at[a] < at[b]; });
      std::size_t repeat = ids.size();  // the repeat with the smallest line
      for (std::size_t k = 1; k < order.size(); ++k)
        if (ids[order[k]] == ids[order[k - 1]] && (repeat == ids.size() || at[order[k]] < at[repeat])) repeat = order[k];
      if (repeat == ids.size()) return;
      std::int64_t first_seen = at[repeat];
      for (std::size_t k = 0; k < ids.size(); ++k)
        if (ids[k] == ids[repeat]) first_seen = std::min(first_seen, at[k]);
      TESSERA_THROW(parse_error, "{}:{}: {} {} is listed twice (first on line {})", path, at[repeat], layout.first_name,
                    ids[repeat] + 1, first_seen);
    });
  }
  return out;
}

/// The layouts of the challenge's three kinds of file. `images` bounds the
/// image ids of a features file: it is checked as each line is read, before
/// anything is sized by an id.
inline tsv_layout weights_layout(int neurons) { return {3, neurons, neurons, "row", "column"}; }
inline tsv_layout features_layout(int neurons, std::int64_t images) { return {3, images, neurons, "image", "neuron"}; }
inline tsv_layout truth_layout(std::int64_t images) { return {1, std::max<std::int64_t>(images, 1), 1, "image", "column"}; }

}  // namespace spdnn
