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
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
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

/// One line's numbers, 0-based (fields the layout does not have stay 0), and what parse_plain_entry
/// keeps of the line before to skip parsing what repeats.
struct tsv_entry {
  std::int64_t first = 0, second = 0;
  double value = 0;
  // The bytes of the last first field and value parse_plain_entry read, each with the separator
  // after it (at most 8 bytes: 0 when longer, or none), while `first` and `value` still hold
  // their numbers. A layer's row and weight, and an image's id and value, repeat line after line:
  // comparing one word instead of parsing them took a fifth to a quarter off the parse.
  std::uint64_t first_bytes = 0, value_bytes = 0;
  std::size_t first_length = 0, value_length = 0;
};

inline constexpr double powers_of_ten[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/// The 8 bytes at `at` as a word, and whether its first `length` (1 to 8) bytes are those of
/// `bytes` (a word read the same way).
inline std::uint64_t word_at(const char* at) noexcept {
  std::uint64_t w = 0;
  std::memcpy(&w, at, sizeof w);
  return w;
}
inline bool same_first_bytes(std::uint64_t word, std::uint64_t bytes, std::size_t length) noexcept {
  if (length == 0) return false;
  const std::uint64_t all = ~std::uint64_t{0};
  const std::uint64_t mask = length >= 8 ? all
                             : std::endian::native == std::endian::little ? ~(all << (8 * length))
                                                                          : ~(all >> (8 * length));
  return ((word ^ bytes) & mask) == 0;
}

/// A 1-based index in [1, max] and its tab at `at` (advanced past them) into `into`, 0-based; false
/// (with `at` anywhere in the field) for anything else. Always inlined, as parse_plain_entry is.
[[gnu::always_inline]] inline bool parse_index_field(const char*& at, const char* const end, std::int64_t max,
                                                     std::int64_t& into) {
  const char* const first = at;
  std::int64_t v = 0;
  while (at != end && static_cast<unsigned char>(*at - '0') < 10 && at - first < 18) v = 10 * v + (*at++ - '0');
  if (at == first || at == end || *at != '\t' || v < 1 || v > max) return false;
  into = v - 1;
  ++at;
  return true;
}

/// The common line, `row<TAB>column<TAB>value` up to its newline (or `end`), with plain decimal
/// indices in range and a plain decimal value, read in one pass over its bytes: returns where the
/// line ends (its newline, or `end`), or nullptr for any other line, which parse_line then reads
/// field by field, with its messages (`out` may hold part of such a line: not to be used). It
/// takes only lines that parse_line accepts with the same numbers (tests/readers fuzzes both
/// against a reference parser); finding each line's end first and then parsing it cost twice as much.
/// Always inlined: in tessera-spdnn's units, with several scans instantiated, the compiler kept it a
/// call per line (8-10% of reading a file in a read benchmark).
[[gnu::always_inline]] inline const char* parse_plain_entry(const char* at, const char* const end, const tsv_layout& layout, tsv_entry& out) {
  if (layout.fields != 3) return nullptr;
  // Each number goes straight into `out`'s field: gathering the two indices in an array first and
  // copying it made the compiler move them as one 16-byte load right after two 8-byte stores, a
  // failed store forward per line (a third of the parse).
  // The bytes [from, to) of a field and its separator, to compare the next line's with; none where
  // they are more than a word or too near the end to read one.
  const auto remember = [&](const char* from, const char* to, std::uint64_t& bytes, std::size_t& length) {
    const auto n = static_cast<std::size_t>(to - from);
    const bool fits = n <= 8 && end - from >= 8;
    bytes = fits ? word_at(from) : 0;
    length = fits ? n : 0;
  };
  const bool readable = end - at >= 8;
  if (readable && same_first_bytes(word_at(at), out.first_bytes, out.first_length)) {
    at += out.first_length;  // the same row or image as the line before: out.first holds it
  } else {
    const char* const from = at;
    out.first_length = 0;
    if (!parse_index_field(at, end, layout.first_max, out.first)) return nullptr;
    remember(from, at, out.first_bytes, out.first_length);
  }
  if (!parse_index_field(at, end, layout.second_max, out.second)) return nullptr;
  if (end - at >= 8 && same_first_bytes(word_at(at), out.value_bytes, out.value_length))
    return at + out.value_length - 1;  // the same value, up to its newline: out.value holds it
  out.value_length = 0;
  const char* const value_from = at;
  const bool negative = at != end && *at == '-';
  if (negative) ++at;
  std::uint64_t digits = 0;
  int count = 0, after_point = 0;
  bool point = false;
  for (; at != end && *at != '\n'; ++at) {
    const auto digit = static_cast<unsigned>(static_cast<unsigned char>(*at)) - unsigned{'0'};
    if (digit < 10) {
      digits = 10 * digits + digit;  // wraps past 19 digits: refused below anyway
      ++count;
      after_point += point ? 1 : 0;
    } else if (*at == '.' && !point) {
      point = true;
    } else {
      return nullptr;
    }
  }
  // At most 15 digits without exponent (the challenge's "0.0625" and "1"): the digits as an integer
  // divided by a power of ten, both exact in a double, so the one division rounds correctly
  // (Clinger's fast path): the double std::from_chars gives, at a fraction of its cost.
  if (count == 0 || count > 15) return nullptr;
  const double magnitude = after_point == 0 ? static_cast<double>(digits) : static_cast<double>(digits) / powers_of_ten[after_point];
  out.value = negative ? -magnitude : magnitude;
  if (at != end) remember(value_from, at + 1, out.value_bytes, out.value_length);  // with its newline
  return at;
}

/// Parse one line (without its newline) into `out`; nothing if fine, else what is wrong with it.
inline std::optional<std::string> parse_line(std::string_view line, const tsv_layout& layout, tsv_entry& out) {
  if (const char* end = parse_plain_entry(line.data(), line.data() + line.size(), layout, out);
      end == line.data() + line.size())
    return std::nullopt;
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
  out = {index[0], layout.fields >= 2 ? index[1] : 0, layout.fields >= 3 ? value : 0.0};
  return std::nullopt;
}

/// What scanning a share found out about its lines.
struct share_scan {
  std::int64_t lines = 0;           ///< lines that start in the share, blank ones included
  std::int64_t failure_line = 0;    ///< the first malformed one (1-based in the share), 0 if none
  std::optional<std::string> failure;
  std::int64_t largest_first = -1;  ///< the largest first index of the share's entries
  std::int64_t largest_line = 0;    ///< its first line (1-based in the share)
};

/// Every line that starts in bytes [begin, end) of the open file (`size` bytes), in order:
/// `expect(lines)` once, with an estimate of the share's lines from its first megabyte, then
/// `on_entry(entry, line)` per well-formed non-blank line (line 1-based in the share) until the
/// first malformed one; lines after it are only counted. The share is read once, a megabyte at a
/// time into one buffer: reading it whole first cost a page fault per 4 KiB of it, and the file's
/// bytes were out of cache again by the time the parser reached them.
template <class Expect, class OnEntry>
share_scan scan_share(std::ifstream& in, std::uint64_t size, std::uint64_t begin, std::uint64_t end,
                      const tsv_layout& layout, Expect&& expect, OnEntry&& on_entry) {
  share_scan scan;
  if (begin >= end) return scan;
  constexpr std::size_t chunk = std::size_t{1} << 20;
  // One buffer per thread, kept for the next file: a fresh megabyte per file was a page fault per
  // 4 KiB of it, for each of a network's 120 layer files.
  thread_local byte_buffer buffer;
  buffer.resize(chunk);
  // A line that starts before `begin` belongs to the share before: read from the byte before it
  // (a newline there means the share starts with a line of its own) and skip to the next newline.
  std::uint64_t next = begin - (begin > 0 ? 1 : 0);  // file offset of the next byte to read
  std::uint64_t base = next;                          // file offset of buffer[0]
  std::size_t have = 0, at = 0;
  bool skipping = begin > 0, estimated = false;
  tsv_entry entry;
  in.seekg(static_cast<std::streamoff>(next));
  for (bool done = false; !done;) {
    // Keep the unfinished line, read the next piece after it: up to a megabyte within the share,
    // 64 KiB at a time past its end (only the line that crosses it is still wanted).
    if (at > 0) {
      std::memmove(buffer.data(), buffer.data() + at, have - at);
      base += at;
      have -= at;
      at = 0;
    }
    if (have == buffer.size()) buffer.resize(2 * buffer.size());  // a line longer than the buffer
    const std::uint64_t wanted = std::min<std::uint64_t>(buffer.size() - have, next < end ? end - next : 1 << 16);
    const std::uint64_t count = std::min<std::uint64_t>(wanted, size - next);
    in.read(buffer.data() + have, static_cast<std::streamsize>(count));
    const auto got = static_cast<std::size_t>(in.gcount());
    have += got;
    next += got;
    const bool last_piece = got == 0 || next >= size;
    // Whole lines only: up to the last newline, or everything when the file has no more.
    std::size_t whole = have;
    if (!last_piece) {
      while (whole > at && buffer[whole - 1] != '\n') --whole;
      if (whole == at) continue;  // no newline yet: read more
    }
    const char* const bytes = buffer.data();
    const char* const stop = bytes + whole;
    while (at < whole) {
      if (skipping) {
        const auto* nl = static_cast<const char*>(std::memchr(bytes + at, '\n', whole - at));
        at = nl == nullptr ? whole : static_cast<std::size_t>(nl - bytes) + 1;
        skipping = nl == nullptr;
        continue;
      }
      if (base + at >= end) {
        done = true;
        break;
      }
      ++scan.lines;
      if (!scan.failure) {
        if (const char* line_end = parse_plain_entry(bytes + at, stop, layout, entry)) {
          on_entry(entry, scan.lines);
          if (entry.first > scan.largest_first) {
            scan.largest_first = entry.first;
            scan.largest_line = scan.lines;
          }
          at = static_cast<std::size_t>(line_end - bytes) + (line_end != stop ? 1 : 0);
          continue;
        }
      }
      const auto* nl = static_cast<const char*>(std::memchr(bytes + at, '\n', whole - at));
      const std::size_t line_end = nl == nullptr ? whole : static_cast<std::size_t>(nl - bytes);
      const std::string_view line(bytes + at, line_end - at);
      at = line_end + (nl != nullptr ? 1 : 0);
      if (scan.failure || line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      scan.failure = parse_line(line, layout, entry);
      if (scan.failure) {
        scan.failure_line = scan.lines;
        continue;
      }
      on_entry(entry, scan.lines);
      if (entry.first > scan.largest_first) {
        scan.largest_first = entry.first;
        scan.largest_line = scan.lines;
      }
    }
    if (!estimated && !skipping) {
      estimated = true;
      const double read = static_cast<double>(base + at - begin);
      expect(read > 0 ? static_cast<std::size_t>(static_cast<double>(scan.lines) * static_cast<double>(end - begin) / read * 1.02) + 16 : 16);
    }
    if (last_piece && at >= have) done = true;
  }
  return scan;
}

/// The share of a file rank r of p reads: bytes [size r / p, size (r + 1) / p).
struct byte_share {
  std::uint64_t size = 0, begin = 0, end = 0;
};

/// Check that `path` is a readable file (collective) and give this rank's share of its bytes.
inline byte_share share_of(const tessera::communicator& comm, const std::string& path) {
  const auto size = comm.collectively([&] {
    std::error_code ec;
    TESSERA_REQUIRE(!std::filesystem::is_directory(path, ec), io_error, "{}: is a directory, not a file", path);
    const auto bytes = std::filesystem::file_size(path, ec);
    TESSERA_REQUIRE(!ec, io_error, "{}: cannot read ({})", path, ec.message());
    return static_cast<std::uint64_t>(bytes);
  });
  const auto p = static_cast<std::uint64_t>(comm.size()), r = static_cast<std::uint64_t>(comm.rank());
  return {size, size * r / p, size * (r + 1) / p};
}

/// Read this rank's share of `path` (collective): `expect` and `on_entry` as scan_share's. Fills
/// `info`'s path, lines and largest first index, and raises parse_error on every rank for the
/// file's first malformed line. Returns the global number of this share's line 0.
template <class Expect, class OnEntry>
std::int64_t read_share(const tessera::communicator& comm, const std::string& path, const tsv_layout& layout,
                        tsv_columns& info, Expect&& expect, OnEntry&& on_entry) {
  const byte_share share = share_of(comm, path);
  info.path = path;
  std::ifstream in(path, std::ios::binary);
  comm.collectively([&] { TESSERA_REQUIRE(in, io_error, "{}: cannot open for reading", path); });
  share_scan scan;
  comm.collectively([&] { scan = scan_share(in, share.size, share.begin, share.end, layout, expect, on_entry); });
  // Line numbers: the lines every earlier rank holds come first.
  const std::int64_t first_line = comm.exclusive_prefix_sum(scan.lines);
  info.lines = comm.sum(scan.lines);
  comm.collectively([&] {
    if (scan.failure) TESSERA_THROW(parse_error, "{}:{}: {}", path, first_line + scan.failure_line, *scan.failure);
  });
  // The largest index and its first line (the lowest rank holding it has it first).
  const std::int64_t largest = comm.max(scan.largest_first);
  info.largest_first_line = comm.min(scan.largest_first == largest && largest >= 0
                                         ? first_line + scan.largest_line
                                         : std::numeric_limits<std::int64_t>::max());
  info.largest_first = largest;
  if (largest < 0) info.largest_first_line = 0;
  return first_line;
}

}  // namespace detail

/// Read a TSV file in parallel over `comm` (collective): each rank gets the
/// lines that start in its share of the bytes. Blank lines are skipped. A
/// missing file, a directory or a malformed line raises tessera::error on
/// every rank, with the file name and the 1-based line number: the first
/// malformed line if any, else (one-field files) the first repeated index.
inline tsv_columns read_tsv(const tessera::communicator& comm, const std::string& path, const tsv_layout& layout) {
  tsv_columns out;
  std::vector<std::int64_t> entry_lines;  // one-field files: where each index is, to name a repeat's line
  const auto expect = [&](std::size_t lines) {
    out.first.reserve(lines);
    if (layout.fields >= 2) out.second.reserve(lines);
    if (layout.fields >= 3) out.value.reserve(lines);
  };
  const std::int64_t first_line = detail::read_share(comm, path, layout, out, expect, [&](const detail::tsv_entry& e, std::int64_t line) {
    out.first.push_back(e.first);
    if (layout.fields >= 2) out.second.push_back(e.second);
    if (layout.fields >= 3) out.value.push_back(e.value);
    if (layout.fields == 1) entry_lines.push_back(line);
  });

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
