#pragma once
/// @file
/// Explicit instantiations of the common entry points for one (value type, policy): what the
/// optional library `tessera::instantiations` compiles once, and what a translation unit linked
/// to it declares `extern` so that g++ or nvcc does not compile them again.
///
/// Header-only use never sees this file. With CMake's `TESSERA_INSTANTIATIONS=ON`, the library
/// compiles, for every configured value type x distribution x backend x execution space in csr
/// storage (instantiations/configured.hpp, generated), `TESSERA_INSTANTIATE_ALL(, T, Policy)`;
/// a target linked to `tessera::instantiations` gets `TESSERA_USE_INSTANTIATIONS` defined, and
/// each operation's header then ends with the `extern` form of its own entries. A call that is
/// not in the list (another semiring, value type or storage) is compiled in the caller's unit,
/// as without the library: the library only saves work, it never limits what can be called.
///
/// The policy is the macro's variadic tail, so it may contain commas:
/// @code
/// TESSERA_INSTANTIATE_ALL(, double, tessera::policy<tessera::row_block, tessera::csr, tessera::mpi_rma>)
/// @endcode

#include <span>
#include <string>
#include <type_traits>

// The macros expand at global scope. Function names are written `tessera::f`, not `::tessera::f`:
// after a return type ending in `>`, a leading `::` would continue that type's qualified name.

// Which combinations a unit declares extern: those whose distribution and backend headers it
// included before the operation's header (each defines TESSERA_COMPONENT_<name> as 1), so that
// linking to the library never makes a unit parse a backend or a distribution it does not use
// (with every configured one included, the README program took 0.9 s more). A combination whose
// headers come later is compiled in the unit, as header-only.
#define TESSERA_INSTANTIATION_CAT(a, b) TESSERA_INSTANTIATION_CAT_(a, b)
#define TESSERA_INSTANTIATION_CAT_(a, b) a##b
#define TESSERA_INSTANTIATION_SECOND(...) TESSERA_INSTANTIATION_SECOND_(__VA_ARGS__, )
#define TESSERA_INSTANTIATION_SECOND_(a, b, ...) b
#define TESSERA_INSTANTIATION_PROBE_1 ~, 1
/// 1 if `flag` is defined as 1, else 0.
#define TESSERA_INSTANTIATION_INCLUDED(flag) \
  TESSERA_INSTANTIATION_SECOND(TESSERA_INSTANTIATION_CAT(TESSERA_INSTANTIATION_PROBE_, flag), 0)
#define TESSERA_INSTANTIATION_IF_11(...) __VA_ARGS__
#define TESSERA_INSTANTIATION_IF_10(...)
#define TESSERA_INSTANTIATION_IF_01(...)
#define TESSERA_INSTANTIATION_IF_00(...)
/// `TESSERA_INSTANTIATED_IF(row_block, mpi_rma)(tokens)`: the tokens when both headers were included.
#define TESSERA_INSTANTIATED_IF(distribution, backend)                                             \
  TESSERA_INSTANTIATION_CAT(TESSERA_INSTANTIATION_IF_,                                             \
                            TESSERA_INSTANTIATION_CAT(                                             \
                                TESSERA_INSTANTIATION_INCLUDED(TESSERA_COMPONENT_##distribution), \
                                TESSERA_INSTANTIATION_INCLUDED(TESSERA_COMPONENT_##backend)))

/// Policy for X and Y of spmm with an A of `Policy`: `Policy` itself where its ranks own whole
/// rows, otherwise its row_block rebinding (a grid's dense operands are split by rows).
#define TESSERA_INSTANTIATION_DENSE_POLICY(...)                                                  \
  ::std::conditional_t<::tessera::whole_row_mapping<typename __VA_ARGS__::mapping_type>, __VA_ARGS__, \
                       ::tessera::rebind_distribution_t<__VA_ARGS__, ::tessera::row_block>>

/// read_matrix_market, summing duplicates.
#define TESSERA_INSTANTIATE_READ(EXTERN, T, ...)                                                           \
  EXTERN template ::tessera::dist_matrix<T, __VA_ARGS__> tessera::read_matrix_market<T, __VA_ARGS__>(    \
      const ::tessera::communicator&, const ::std::string&,                                               \
      const ::tessera::build_options<__VA_ARGS__, ::tessera::combine::sum>&);

/// build_from_triplets (spans and triplets<T>), summing duplicates.
#define TESSERA_INSTANTIATE_BUILD(EXTERN, T, ...)                                                                  \
  EXTERN template ::tessera::dist_matrix<T, __VA_ARGS__> tessera::build_from_triplets<T, __VA_ARGS__>(             \
      const ::tessera::communicator&, ::tessera::global_index, ::tessera::global_index,                             \
      ::std::span<const ::tessera::global_index>, ::std::span<const ::tessera::global_index>, ::std::span<const T>, \
      const ::tessera::build_options<__VA_ARGS__, ::tessera::combine::sum>&);                                       \
  EXTERN template ::tessera::dist_matrix<T, __VA_ARGS__> tessera::build_from_triplets<T, __VA_ARGS__>(             \
      const ::tessera::communicator&, ::tessera::global_index, ::tessera::global_index,                             \
      const ::tessera::triplets<T>&, const ::tessera::build_options<__VA_ARGS__, ::tessera::combine::sum>&);

/// convert from csr to csc and coo, and from csc back to csr.
#define TESSERA_INSTANTIATE_CONVERT(EXTERN, T, ...)                                                         \
  EXTERN template ::tessera::dist_matrix<T, ::tessera::rebind_storage_t<__VA_ARGS__, ::tessera::csc>>       \
  tessera::convert<::tessera::csc>(const ::tessera::dist_matrix<T, __VA_ARGS__>&);                        \
  EXTERN template ::tessera::dist_matrix<T, ::tessera::rebind_storage_t<__VA_ARGS__, ::tessera::coo>>       \
  tessera::convert<::tessera::coo>(const ::tessera::dist_matrix<T, __VA_ARGS__>&);                        \
  EXTERN template ::tessera::dist_matrix<T, __VA_ARGS__> tessera::convert<::tessera::csr>(                \
      const ::tessera::dist_matrix<T, ::tessera::rebind_storage_t<__VA_ARGS__, ::tessera::csc>>&);

/// spgemm over plus-times (the default semiring), without options and with them.
#define TESSERA_INSTANTIATE_SPGEMM(EXTERN, T, ...)                                                             \
  EXTERN template ::tessera::dist_matrix<T, __VA_ARGS__> tessera::spgemm(                                    \
      const ::tessera::dist_matrix<T, __VA_ARGS__>&, const ::tessera::dist_matrix<T, __VA_ARGS__>&);           \
  EXTERN template ::tessera::dist_matrix<T, __VA_ARGS__> tessera::spgemm(                                    \
      const ::tessera::dist_matrix<T, __VA_ARGS__>&, const ::tessera::dist_matrix<T, __VA_ARGS__>&,            \
      const ::tessera::spgemm_options<::tessera::semirings::plus_times>&);

/// transpose: routed, and by the algorithm an argument chooses at run time.
#define TESSERA_INSTANTIATE_TRANSPOSE(EXTERN, T, ...)                                                   \
  EXTERN template ::tessera::dist_matrix<T, __VA_ARGS__> tessera::transpose(                          \
      const ::tessera::dist_matrix<T, __VA_ARGS__>&);                                                 \
  EXTERN template ::tessera::dist_matrix<T, __VA_ARGS__> tessera::transpose(                          \
      const ::tessera::dist_matrix<T, __VA_ARGS__>&, ::tessera::transpose_algorithm);

/// spmm, returning Y (without and with options) and into an existing Y (X and Y split by rows:
/// TESSERA_INSTANTIATION_DENSE_POLICY).
#define TESSERA_INSTANTIATE_SPMM(EXTERN, T, ...)                                                                \
  EXTERN template ::tessera::dist_dense<T, TESSERA_INSTANTIATION_DENSE_POLICY(__VA_ARGS__)> tessera::spmm(   \
      const ::tessera::dist_matrix<T, __VA_ARGS__>&,                                                            \
      const ::tessera::dist_dense<T, TESSERA_INSTANTIATION_DENSE_POLICY(__VA_ARGS__)>&);                        \
  EXTERN template ::tessera::dist_dense<T, TESSERA_INSTANTIATION_DENSE_POLICY(__VA_ARGS__)> tessera::spmm(   \
      const ::tessera::dist_matrix<T, __VA_ARGS__>&,                                                            \
      const ::tessera::dist_dense<T, TESSERA_INSTANTIATION_DENSE_POLICY(__VA_ARGS__)>&, ::tessera::spmm_options); \
  EXTERN template void tessera::spmm(const ::tessera::dist_matrix<T, __VA_ARGS__>&,                           \
                                       const ::tessera::dist_dense<T, TESSERA_INSTANTIATION_DENSE_POLICY(__VA_ARGS__)>&, \
                                       ::tessera::dist_dense<T, TESSERA_INSTANTIATION_DENSE_POLICY(__VA_ARGS__)>&);

/// Every entry point above for one (T, policy).
#define TESSERA_INSTANTIATE_ALL(EXTERN, T, ...)     \
  TESSERA_INSTANTIATE_READ(EXTERN, T, __VA_ARGS__)    \
  TESSERA_INSTANTIATE_BUILD(EXTERN, T, __VA_ARGS__)   \
  TESSERA_INSTANTIATE_CONVERT(EXTERN, T, __VA_ARGS__) \
  TESSERA_INSTANTIATE_SPGEMM(EXTERN, T, __VA_ARGS__)  \
  TESSERA_INSTANTIATE_TRANSPOSE(EXTERN, T, __VA_ARGS__) \
  TESSERA_INSTANTIATE_SPMM(EXTERN, T, __VA_ARGS__)
