#pragma once
/// @file
/// Communication counters: messages and bytes each rank sent, per named operation scope.
///
/// Every backend records what it sends here. The counters are how tessera's
/// tests assert communication volume, and how a run on a few ranks projects
/// to thousands: they count what was sent, not how long it took.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_COUNTERS_HPP
#endif

#include "../core/format.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera {

/// Traffic of one operation scope on one rank (or summed over ranks).
struct traffic {
  std::uint64_t messages = 0;  ///< point-to-point transfers started by this rank (self-sends excluded)
  std::uint64_t bytes = 0;     ///< payload bytes of those transfers

  traffic& operator+=(const traffic& o) noexcept {
    messages += o.messages;
    bytes += o.bytes;
    return *this;
  }
  friend bool operator==(const traffic&, const traffic&) = default;
};

/// Counters of one rank, keyed by operation scope name ("build", "spgemm", ...).
///
/// Traffic recorded outside any scope goes to the scope named "other".
class comm_stats {
 public:
  /// Attribute `messages` transfers totalling `bytes` to the innermost open scope.
  void record(std::uint64_t messages, std::uint64_t bytes) {
    auto& t = by_scope_[scopes_.empty() ? std::string("other") : scopes_.back()];
    t.messages += messages;
    t.bytes += bytes;
  }

  /// Traffic of one scope (zero if none was recorded).
  [[nodiscard]] traffic of(const std::string& scope) const {
    auto it = by_scope_.find(scope);
    return it == by_scope_.end() ? traffic{} : it->second;
  }

  /// Traffic summed over all scopes.
  [[nodiscard]] traffic total() const {
    traffic t;
    for (const auto& [name, v] : by_scope_) t += v;
    return t;
  }

  [[nodiscard]] const std::map<std::string, traffic>& scopes() const noexcept { return by_scope_; }

  /// Forget everything recorded so far (open scopes stay open).
  void reset() { by_scope_.clear(); }

  void push_scope(std::string name) { scopes_.push_back(std::move(name)); }
  void pop_scope() {
    if (!scopes_.empty()) scopes_.pop_back();
  }

 private:
  std::map<std::string, traffic> by_scope_;
  std::vector<std::string> scopes_;
};

}  // namespace tessera

namespace tessera {

/// "M messages, B bytes".
[[nodiscard]] inline std::string to_string(const traffic& t) {
  return std::to_string(t.messages) + " messages, " + std::to_string(t.bytes) + " bytes";
}

/// "scope: M messages, B bytes; ..." per scope in name order, or "no traffic".
[[nodiscard]] inline std::string to_string(const comm_stats& s) {
  std::string text;
  for (const auto& [name, t] : s.scopes()) {
    if (!text.empty()) text += "; ";
    text += name;
    text += ": ";
    text += to_string(t);
  }
  return text.empty() ? std::string("no traffic") : text;
}

}  // namespace tessera

namespace tessera::detail {

/// fmt's formatter for a type printed as its to_string: `{}` only, no width or fill. Nested
/// format_to calls made every unit that prints the counters compile fmt's formatting machinery
/// again (2 s of g++); fmt's string formatter, padding and escaping included, was still 10 KB of
/// code in each.
template <class Printed>
struct to_string_formatter {
  constexpr auto parse(fmt::format_parse_context& context) {
    const auto end = context.end();
    auto it = context.begin();
    if (it != end && *it != '}') throw fmt::format_error("tessera's counters take '{}' with no format spec");
    return it;
  }
  template <class Context>
  auto format(const Printed& printed, Context& context) const {
    const std::string text = to_string(printed);
    return std::copy(text.begin(), text.end(), context.out());
  }
};

}  // namespace tessera::detail

template <>
struct fmt::formatter<tessera::traffic> : tessera::detail::to_string_formatter<tessera::traffic> {};

template <>
struct fmt::formatter<tessera::comm_stats> : tessera::detail::to_string_formatter<tessera::comm_stats> {};

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_COUNTERS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_COUNTERS_HPP
#endif
