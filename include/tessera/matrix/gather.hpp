#pragma once
/// @file
/// Gathering a dist_matrix onto one rank or all, and comparing matrices globally.
/// Meant for tests and small matrices: the gathered matrix is whole on a rank.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_GATHER_HPP
#endif

#include "../comm/communicator.hpp"
#include "dist_matrix.hpp"
#include "host_csr.hpp"
#include "local_triplets.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tessera {

namespace detail {
template <class T, class Policy>
std::optional<host_csr<T>> gather(const dist_matrix<T, Policy>& a, int root, bool to_all) {
  const auto& comm = a.comm();
  const auto mine = comm.collectively([&] { return local_triplets(a); });
  triplets<T> all;
  auto collect = [&](const auto& part) {
    return to_all ? comm.allgather_concatenated(part) : comm.gather_concatenated(part, root);
  };
  all.rows = collect(mine.rows);
  all.cols = collect(mine.cols);
  all.values = collect(mine.values);
  if (!to_all && comm.rank() != root) return std::nullopt;
  return host_csr<T>::from_triplets(a.num_rows(), a.num_cols(), all);
}
}  // namespace detail

/// The whole matrix on `root` (nothing elsewhere). Collective.
template <class T, class Policy>
[[nodiscard]] std::optional<host_csr<T>> gather_to_root(const dist_matrix<T, Policy>& a, int root = 0) {
  return detail::gather(a, root, false);
}

/// The whole matrix on every rank. Collective.
template <class T, class Policy>
[[nodiscard]] host_csr<T> gather_to_all(const dist_matrix<T, Policy>& a) {
  return *detail::gather(a, 0, true);
}

/// Outcome of a global comparison, the same on every rank.
struct comparison {
  bool equal = true;
  std::string difference;  ///< the first difference found, empty when equal
  explicit operator bool() const noexcept { return equal; }
};

/// Compare a distributed matrix with a reference held on rank 0 (collective;
/// only rank 0's `reference` is read).
template <class T, class Policy>
[[nodiscard]] comparison compare(const dist_matrix<T, Policy>& a, const host_csr<T>& reference, double tolerance = 0.0) {
  const auto gathered = gather_to_root(a, 0);
  std::string difference;
  if (a.comm().rank() == 0) difference = first_difference(*gathered, reference, tolerance).value_or("");
  a.comm().broadcast(difference, 0);
  return {difference.empty(), difference};
}

/// Compare two distributed matrices of any policies over the same communicator (collective).
template <class T, class PolicyA, class PolicyB>
[[nodiscard]] comparison compare(const dist_matrix<T, PolicyA>& a, const dist_matrix<T, PolicyB>& b,
                                 double tolerance = 0.0) {
  const auto gathered_b = gather_to_root(b, 0);
  return compare(a, gathered_b ? *gathered_b : host_csr<T>{}, tolerance);
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_GATHER_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_MATRIX_GATHER_HPP
#endif
