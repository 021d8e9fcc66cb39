#pragma once
// The challenge's tab-separated files (1-based indices), read in parallel:
// every rank parses its own byte range of the file, and a malformed line is
// reported as "file:line: what is wrong" on every rank.

#include <tessera/comm/communicator.hpp>
#include <tessera/core/error.hpp>

#include <fmt/format.h>

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

/// The columns of a TSV file, converted to 0-based indices.
struct tsv_columns {
  std::vector<std::int64_t> first, second;
  std::vector<double> value;
  [[nodiscard]] std::size_t size() const noexcept { return first.size(); }
};

/// What a TSV file must hold: `fields` columns per line (1: index; 2: index
/// index; 3: index index value), 1-based indices at most first_max and
/// second_max, finite values.
struct tsv_layout {
  int fields = 3;
  std::int64_t first_max = std::numeric_limits<std::int64_t>::max();
  std::int64_t second_max = std::numeric_limits<std::int64_t>::max();
  const char* first_name = "row";
  const char* second_name = "column";
};

namespace detail {

inline std::string read_range(std::ifstream& in, std::uint64_t from, std::uint64_t count) {
  std::string bytes(count, '\0');
  in.seekg(static_cast<std::streamoff>(from));
  in.read(bytes.data(), static_cast<std::streamsize>(count));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  in.clear();
  return bytes;
}

/// Parse one line; nothing if fine, else what is wrong with it.
inline std::optional<std::string> parse_line(std::string_view line, const tsv_layout& layout, tsv_columns& out) {
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
        return fmt::format("{} '{}' is not an integer", name, text);
      if (v < 1 || v > max) return fmt::format("{} {} is outside [1, {}]", name, v, max);
      index[field] = v - 1;
    } else {
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || !std::isfinite(value))
        return fmt::format("value '{}' is not a finite number", text);
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
/// missing file or a malformed line raises tessera::error on every rank, with
/// the file name and the 1-based line number.
inline tsv_columns read_tsv(const tessera::communicator& comm, const std::string& path, const tsv_layout& layout) {
  const auto size = comm.collectively([&] {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    TESSERA_REQUIRE(!ec, io_error, "{}: cannot read ({})", path, ec.message());
    return static_cast<std::uint64_t>(bytes);
  });
  const auto p = static_cast<std::uint64_t>(comm.size()), r = static_cast<std::uint64_t>(comm.rank());
  const std::uint64_t begin = size * r / p, end = size * (r + 1) / p;

  tsv_columns out;
  std::optional<std::string> failure;
  std::int64_t failure_line = 0, my_lines = 0;
  std::ifstream in(path, std::ios::binary);
  if (begin < end && in) {
    // The line that starts before `end` may run past it: read on until its newline.
    const std::uint64_t from = begin == 0 ? 0 : begin - 1;
    std::string bytes = detail::read_range(in, from, end - from);
    for (std::uint64_t more = end; bytes.find('\n', end - 1 - from) == std::string::npos && more < size;) {
      bytes += detail::read_range(in, more, 1 << 16);
      more += 1 << 16;
    }
    std::size_t at = 0;
    if (begin > 0) {  // skip the tail of a line that started in the previous share
      const std::size_t nl = bytes.find('\n');
      at = nl == std::string::npos ? bytes.size() : nl + 1;
    }
    const std::size_t limit = end - from;
    while (at < limit && at < bytes.size()) {
      std::size_t stop = bytes.find('\n', at);
      if (stop == std::string::npos) stop = bytes.size();
      std::string_view line(bytes.data() + at, stop - at);
      ++my_lines;
      if (!failure && line.find_first_not_of(" \t\r") != std::string_view::npos) {
        failure = detail::parse_line(line, layout, out);
        if (failure) failure_line = my_lines;
      }
      at = stop + 1;
    }
  }
  // Line numbers: the lines every earlier rank holds come first.
  const std::int64_t first_line = comm.exclusive_prefix_sum(my_lines);
  comm.collectively([&] {
    if (failure) TESSERA_THROW(parse_error, "{}:{}: {}", path, first_line + failure_line, *failure);
  });
  return out;
}

}  // namespace spdnn
