#pragma once
/// @file
/// The requirements of a storage policy.
///
/// A storage is a tag with a nested `block<T, MemorySpace>` template (the
/// container of a rank's local nonzeros, on Kokkos Views) and two conversions
/// through the interchange format, sorted COO. Every conversion between two
/// storages goes through those, so a new storage works with all the others the
/// moment it provides them.

#include "../../storage/coo.hpp"
#include "../index_types.hpp"

#include <Kokkos_Core.hpp>

#include <concepts>
#include <string_view>

namespace tessera {

/// A rank's local nonzeros in some storage format.
template <class B>
concept local_block = std::copyable<B> && requires(const B& b) {
  typename B::value_type;
  typename B::memory_space;
  { b.num_rows() } -> std::same_as<local_index>;
  { b.num_cols() } -> std::same_as<local_index>;
  { b.nnz() } -> std::same_as<offset_type>;
};

namespace detail {
using probe_space = Kokkos::HostSpace;
using probe_exec = Kokkos::DefaultHostExecutionSpace;
}  // namespace detail

/// A storage policy, checked on a probe instantiation (double values in host memory).
template <class S>
concept storage_policy = requires {
  { S::name() } -> std::convertible_to<std::string_view>;
  typename S::template block<double, detail::probe_space>;
} && local_block<typename S::template block<double, detail::probe_space>> &&
    requires(const detail::probe_exec& exec, const coo_block<double, detail::probe_space>& sorted,
             const typename S::template block<double, detail::probe_space>& block) {
      { S::from_coo(exec, sorted) } -> std::same_as<typename S::template block<double, detail::probe_space>>;
      { S::to_coo(exec, block) } -> std::same_as<coo_block<double, detail::probe_space>>;
    };

}  // namespace tessera
