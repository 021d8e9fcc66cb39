#pragma once
/// @file
/// kept_plan: the one rule by which operations keep their plans with a matrix.
///
/// spmm, spgemm, the grid SpMM, transpose's planned algorithm, bsgemm and summa keep what they
/// inspect in their first operand's plan_cache(), and all look a plan up here, so that every
/// operation decides the same way:
///  - **agreed**: each rank asks its kept plans whether they fit its operands, and one allreduce
///    picks the first plan that fits on every rank. A plan that fits on some ranks only (a width
///    that differs on one rank, a structure changed on one) is never applied by some ranks while
///    others build a new one: all build a new one, whose own checks then agree on the error;
///  - **bounded**: at most `plans_kept_per_kind` plans of one kind per matrix (with its copies);
///    the least recently used goes first. Every rank holds the same list, so evictions agree too.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_KEPT_PLANS_HPP
#endif

#include "../comm/communicator.hpp"
#include "../core/typed_cache.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace tessera {

/// Plans of one kind kept per matrix (and its copies) before the least recently used goes.
inline constexpr std::size_t plans_kept_per_kind = 4;
/// The same for plans that hold a staged copy of their operands (bsgemm, SUMMA): one, so a kept
/// plan costs at most one copy of A (and B) beside the matrices themselves.
inline constexpr std::size_t plans_kept_holding_operands = 1;

/// A plan found or made by find_or_make_plan, and whether it was kept (found) or made now.
template <class Plan>
struct found_plan {
  Plan& plan;
  bool kept;
};

/// The kept Plan for which `fits(plan)` holds on every rank, or a new one made by `make()` (which
/// returns a std::shared_ptr<Plan>, collectively) and kept. Collective: one allreduce when plans
/// are kept. An operation whose `fits` also runs its apply's checks may apply a kept plan without
/// agreeing on them again (`kept` is then true on every rank).
///
/// The reference stays valid while the matrix (or a copy) lives and until `keep` other plans of
/// the kind are made on it.
///
/// @param fits  this rank's answer (not collective; a fits that throws counts as "does not fit",
///              so the rank asks for a new plan, whose errors are agreed)
/// @param make  builds the plan when none fits everywhere (collective)
/// @param keep  plans of this kind kept at most (1 for plans that hold copies of their operands)
template <class Plan, class Fits, class Make>
found_plan<Plan> find_or_make_plan(const communicator& comm, typed_cache& cache, Fits&& fits, Make&& make,
                                   std::size_t keep = plans_kept_per_kind) {
  auto& kept = cache.template entries<std::shared_ptr<Plan>>();
  if (!kept.empty()) {
    std::vector<int> fit(kept.size());
    for (std::size_t i = 0; i < kept.size(); ++i) {
      try {
        fit[i] = fits(static_cast<const Plan&>(*kept[i])) ? 1 : 0;
      } catch (...) {
        fit[i] = 0;
      }
    }
    comm.allreduce_inplace(fit, MPI_MIN);
    for (std::size_t i = 0; i < kept.size(); ++i)
      if (fit[i] != 0) {
        // Most recently used last: the front is what goes when the list is full.
        std::rotate(kept.begin() + static_cast<std::ptrdiff_t>(i), kept.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    kept.end());
        return {*kept.back(), true};
      }
  }
  // The evicted go before the new one is made: a plan that holds copies of its operands (bsgemm's,
  // SUMMA's staging windows) never has two alive for one kept.
  while (!kept.empty() && kept.size() >= std::max<std::size_t>(keep, 1)) kept.erase(kept.begin());
  std::shared_ptr<Plan> made = make();
  kept.push_back(std::move(made));
  return {*kept.back(), false};
}

/// find_or_make_plan's plan (the operations that agree on their own checks in apply).
template <class Plan, class Fits, class Make>
Plan& kept_plan(const communicator& comm, typed_cache& cache, Fits&& fits, Make&& make,
                std::size_t keep = plans_kept_per_kind) {
  return find_or_make_plan<Plan>(comm, cache, std::forward<Fits>(fits), std::forward<Make>(make), keep).plan;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_KEPT_PLANS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_OPS_KEPT_PLANS_HPP
#endif
