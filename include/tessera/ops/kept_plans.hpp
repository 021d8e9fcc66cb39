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
#include <cstdint>
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
  /// For a kept plan whose `fits` answered with a number: that number where every rank gave the
  /// same, else 1 ("fits, nothing else agreed"). 0 for a plan made now.
  std::int64_t agreed = 0;
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
///              so the rank asks for a new plan, whose errors are agreed): a bool, or a number,
///              0 for "does not fit" and n >= 1 for "fits", with n a choice the ranks agree on in
///              the same allreduce (found_plan::agreed), such as reading an operand in place
/// @param make  builds the plan when none fits everywhere (collective)
/// @param keep  plans of this kind kept at most (1 for plans that hold copies of their operands)
template <class Plan, class Fits, class Make>
found_plan<Plan> find_or_make_plan(const communicator& comm, typed_cache& cache, Fits&& fits, Make&& make,
                                   std::size_t keep = plans_kept_per_kind) {
  auto& kept = cache.template entries<std::shared_ptr<Plan>>();
  if (!kept.empty()) {
    // Per plan, the answer and its negation: one MIN gives the least and the greatest answer.
    std::vector<std::int64_t> fit(2 * kept.size());
    for (std::size_t i = 0; i < kept.size(); ++i) {
      std::int64_t answer = 0;
      try {
        answer = static_cast<std::int64_t>(fits(static_cast<const Plan&>(*kept[i])));
      } catch (...) {
        answer = 0;
      }
      answer = std::max<std::int64_t>(answer, 0);
      fit[2 * i] = answer;
      fit[2 * i + 1] = -answer;
    }
    comm.allreduce_inplace(fit, MPI_MIN);
    for (std::size_t i = 0; i < kept.size(); ++i)
      if (fit[2 * i] != 0) {
        const std::int64_t agreed = fit[2 * i] == -fit[2 * i + 1] ? fit[2 * i] : 1;
        // Most recently used last: the front is what goes when the list is full.
        std::rotate(kept.begin() + static_cast<std::ptrdiff_t>(i), kept.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    kept.end());
        return {*kept.back(), true, agreed};
      }
  }
  // The evicted go before the new one is made: a plan that holds copies of its operands (bsgemm's,
  // SUMMA's staging windows) never has two alive for one kept.
  while (!kept.empty() && kept.size() >= std::max<std::size_t>(keep, 1)) kept.erase(kept.begin());
  std::shared_ptr<Plan> made = make();
  kept.push_back(std::move(made));
  return {*kept.back(), false, 0};
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
