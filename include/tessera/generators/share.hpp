#pragma once
/// @file
/// The part of a generated index range that one rank produces.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_SHARE_HPP
#endif

#include "../comm/communicator.hpp"
#include "../core/index_types.hpp"

namespace tessera::detail {

struct index_range {
  global_index begin;
  global_index end;
};

/// Rank r's share [n*r/P, n*(r+1)/P) of n items.
[[nodiscard]] inline index_range own_share(const communicator& comm, global_index n) {
  const global_index p = comm.size(), r = comm.rank();
  // floor(n * r / p) without overflowing n * r.
  auto split = [&](global_index k) { return (n / p) * k + (n % p) * k / p; };
  return {split(r), split(r + 1)};
}

}  // namespace tessera::detail

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_SHARE_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_GENERATORS_SHARE_HPP
#endif
