#pragma once
/// @file
/// Checks every operation runs on its operands before it communicates: they live on the same
/// ranks, and an output does not share memory with an input. Call them inside an agreement
/// (communicator::collectively) so that a misuse seen on one rank is raised on every rank.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE
#error "tessera/ops/detail/operand_checks.hpp is internal to tessera: include tessera/tessera.hpp or a public header instead"
#endif

#include "../../comm/communicator.hpp"
#include "../../core/error.hpp"

#include <cstdint>

namespace tessera::detail {

/// Throw invalid_argument unless `operand` lives on the processes of `comm`, in the same rank
/// order. Operations address ranks by number: on any other communicator rank r is another
/// process, and the result would be silently wrong (or the call would hang).
inline void require_same_ranks(const char* operation, const communicator& comm, const communicator& operand,
                               const char* operand_name) {
  TESSERA_REQUIRE(operand.same_ranks_as(comm), invalid_argument,
                  "{}: {} lives on a communicator of {} ranks whose processes or rank order differ from the first "
                  "operand's ({} ranks); build every operand on the same communicator (or a duplicate of it)",
                  operation, operand_name, operand.size(), comm.size());
}

/// Whether two Views share any element on this rank.
template <class ViewA, class ViewB>
[[nodiscard]] bool views_overlap(const ViewA& a, const ViewB& b) noexcept {
  if (a.span() == 0 || b.span() == 0) return false;
  const auto a_begin = reinterpret_cast<std::uintptr_t>(a.data());
  const auto b_begin = reinterpret_cast<std::uintptr_t>(b.data());
  const auto a_end = a_begin + a.span() * sizeof(typename ViewA::value_type);
  const auto b_end = b_begin + b.span() * sizeof(typename ViewB::value_type);
  return a_begin < b_end && b_begin < a_end;
}

/// Throw invalid_argument if the output `out` shares memory with the input `in`: the kernels
/// read inputs while they write outputs, so an aliased output yields garbage, not an in-place result.
template <class OutView, class InView>
void require_no_alias(const char* operation, const OutView& out, const char* out_name, const InView& in,
                      const char* in_name) {
  TESSERA_REQUIRE(!views_overlap(out, in), invalid_argument,
                  "{}: the output {} shares memory with the input {}; pass a separate output", operation, out_name,
                  in_name);
}

/// The checks of C = alpha * A * B + beta * C over block-sparse tiles (bsgemm, SUMMA): A, B and C
/// on `comm`'s ranks, and C's tiles apart from A's and B's.
template <class A, class B, class C>
void require_product_operands(const char* operation, const communicator& comm, const A& a, const B& b, const C& c) {
  require_same_ranks(operation, comm, a.comm(), "A");
  require_same_ranks(operation, comm, b.comm(), "B");
  require_same_ranks(operation, comm, c.comm(), "C");
  require_no_alias(operation, c.local().values, "C", a.local().values, "A");
  require_no_alias(operation, c.local().values, "C", b.local().values, "B");
}

}  // namespace tessera::detail
