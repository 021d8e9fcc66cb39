#pragma once
/// @file
/// typed_cache: objects kept by their type, not under a formatted key. Each entry type has one
/// list; whoever looks for an entry asks the entries whether they fit (a plan compares its own
/// operands and options). A matrix keeps its operations' plans in one (dist_matrix::plan_cache),
/// a communicator the workspaces its products share (communicator::shared_resources).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_TYPED_CACHE_HPP
#endif

#include <cstddef>
#include <map>
#include <memory>
#include <typeindex>
#include <typeinfo>
#include <vector>

namespace tessera {

class typed_cache {
 public:
  /// The entries of type Entry (an empty list on first use).
  template <class Entry>
  [[nodiscard]] std::vector<Entry>& entries() {
    auto& slot = slots_[std::type_index(typeid(Entry))];
    if (!slot.list) {
      slot.list = std::make_shared<std::vector<Entry>>();
      slot.count = [](const void* list) { return static_cast<const std::vector<Entry>*>(list)->size(); };
    }
    return *static_cast<std::vector<Entry>*>(slot.list.get());
  }

  /// Entries of every type.
  [[nodiscard]] std::size_t size() const noexcept {
    std::size_t total = 0;
    for (const auto& [type, slot] : slots_) total += slot.count(slot.list.get());
    return total;
  }

  /// Drop every entry.
  void clear() noexcept { slots_.clear(); }

 private:
  struct slot {
    std::shared_ptr<void> list;
    std::size_t (*count)(const void*) = nullptr;
  };
  std::map<std::type_index, slot> slots_;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_TYPED_CACHE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_TYPED_CACHE_HPP
#endif
