#pragma once
/// @file
/// The node-local SpMM kernel: Y(rows, :) = A(rows, :) * X for a list of rows,
/// with X row-major and each column of A reading its X row either from this
/// rank's block or from the halo of fetched rows.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_ROWS_HPP
#endif

#include "../core/index_types.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "host_simd.hpp"

namespace tessera::kernels {

/// Where column c of the local block reads its row of X: `local(c)` says
/// which buffer (1: this rank's X, 0: the halo), `row(c)` which row of it.
template <class MemorySpace>
struct column_sources {
  Kokkos::View<std::uint8_t*, MemorySpace> local;
  Kokkos::View<local_index*, MemorySpace> row;
};

/// The kernels' name for a row of X: row `row` of this rank's X (`own`) as itself (>= 0), row
/// `row` of the halo as ~row (< 0).
KOKKOS_INLINE_FUNCTION local_index x_source_of(const bool own, const local_index row) { return own ? row : ~row; }

/// Per entry of A (columns `col_idx`), the row of X it reads (x_source_of). The kernels read this instead of A's columns: one sequential load per
/// entry in place of the column, its buffer and its row (three dependent loads, two of them at
/// random places of per-column arrays). Made once per plan, in the execution space; 4 bytes per entry.
template <class ExecSpace, class MemorySpace>
Kokkos::View<local_index*, MemorySpace> entry_sources(const ExecSpace& exec,
                                                      const Kokkos::View<const local_index*, MemorySpace>& col_idx,
                                                      const column_sources<MemorySpace>& sources) {
  Kokkos::View<local_index*, MemorySpace> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::x_source"),
                                              col_idx.extent(0));
  const auto local = sources.local;
  const auto row = sources.row;
  Kokkos::parallel_for(
      "tessera::spmm::x_source", Kokkos::RangePolicy<ExecSpace>(exec, 0, col_idx.extent(0)), KOKKOS_LAMBDA(const std::size_t e) {
        const local_index c = col_idx(e);
        out(e) = x_source_of(local(c) != 0, row(c));
      });
  return out;
}

namespace detail {
/// The row of X that entry e of A reads (see entry_sources): both kernels' inner loops.
template <class T, class MemorySpace>
struct rows_of_x {
  Kokkos::View<const local_index*, MemorySpace> source;
  Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace> x_local, x_halo;
  KOKKOS_INLINE_FUNCTION const T* operator()(const offset_type e) const {
    const local_index s = source(e);
    return s >= 0 ? &x_local(s, 0) : &x_halo(~s, 0);
  }
};
}  // namespace detail

/// Cut points of a list of rows into `pieces` contiguous pieces of about equal work (a row's
/// entries, plus one for its row of Y), computed on the host (host-accessible memory): piece p is
/// the list's positions [bounds(p), bounds(p + 1)). The host kernels hand threads pieces, not
/// equal counts of rows, so that a thread whose rows hold a power-law matrix's hubs (a graph
/// sorted by degree, an R-MAT without its relabelling) does not run alone long after the others.
/// A row longer than a piece's share makes the pieces around it empty, not split.
template <class MemorySpace>
Kokkos::View<std::size_t*, MemorySpace> balanced_row_pieces(const Kokkos::View<const local_index*, MemorySpace>& rows,
                                                            const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                                                            std::size_t pieces) {
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible,
                "balanced_row_pieces reads the rows on the host: give it host-accessible Views");
  const std::size_t n = rows.extent(0);
  pieces = pieces < 1 ? 1 : (n > 0 && pieces > n ? n : pieces);
  Kokkos::View<std::size_t*, MemorySpace> bounds(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm::row_pieces"),
                                                 pieces + 1);
  const auto work = [&](const std::size_t i) {
    const auto r = static_cast<std::size_t>(rows(i));
    return static_cast<std::uint64_t>(row_ptr(r + 1) - row_ptr(r)) + 1;
  };
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += work(i);
  bounds(0) = 0;
  std::size_t next = 1;
  std::uint64_t done = 0;
  for (std::size_t i = 0; i < n && next < pieces; ++i) {
    done += work(i);
    while (next < pieces && done * pieces >= next * total) bounds(next++) = i + 1;
  }
  while (next <= pieces) bounds(next++) = n;
  return bounds;
}

namespace detail {
/// A host kernel's work item over a list of rows: piece p of the list (balanced_row_pieces'
/// bounds), row after row in the list's order, each row's sums as a work item per row makes them.
template <class MemorySpace, class RowBody>
struct listed_rows_piece {
  Kokkos::View<const std::size_t*, MemorySpace> bounds;
  RowBody body;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t p) const {
    const std::size_t end = bounds(p + 1);
    // A copy whose address never escapes: the compiler keeps the row body's Views in registers
    // across the rows instead of reloading them after every store to Y (streaming stores may alias
    // anything); through the member, k = 8 on R-MAT 16 ran 8-10% slower than a work item per row.
    const RowBody row_body = body;
    for (std::size_t i = bounds(p); i < end; ++i) row_body(i);
  }
};

/// body(i) for every position i of a list of `rows` rows: with `bounds` (host spaces with
/// threads: spmm_rows_for_space makes them), by pieces that idle threads take as they finish
/// (dynamic schedule); without, a work item per row. One thread (Serial) keeps the work item per
/// row: the same order either way, and the row loop compiled inside the piece loop measured up to
/// 20% slower on one thread at k = 8 (2 ranks, R-MAT 16 and the Laplacian 512²).
template <class ExecSpace, class MemorySpace, class RowBody>
void for_each_listed_row(const char* name, const ExecSpace& exec, const std::size_t rows,
                         const Kokkos::View<const std::size_t*, MemorySpace>& bounds, const RowBody& body) {
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
    if (bounds.extent(0) > 1) {
      Kokkos::parallel_for(name, Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(exec, 0, bounds.extent(0) - 1),
                           listed_rows_piece<MemorySpace, RowBody>{bounds, body});
      return;
    }
  }
  Kokkos::parallel_for(name, Kokkos::RangePolicy<ExecSpace>(exec, 0, rows), body);
}
}  // namespace detail

/// True when this build can write rows of Width Ts past the caches (non-temporal stores) on
/// ExecSpace: a host space, doubles, rows of whole 64-byte lines, AVX-512 compiled in.
template <int Width, class ExecSpace, class T>
inline constexpr bool has_streaming_rows =
#if defined(TESSERA_HOST_AVX512)
    std::is_same_v<T, double> && Width % 8 == 0 &&
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
#else
    false;
#endif

namespace detail {
// out[0, Width) = acc; Streaming: without first reading the lines into the cache (out 64-byte
// aligned), where the build has non-temporal stores.
template <int Width, bool Streaming, class T>
KOKKOS_INLINE_FUNCTION void store_row(T* out, const T* acc) {
  using vec = host_vector<T>;
  if constexpr (Streaming && vec::native && Width % vec::lanes == 0) {
    for (int t = 0; t < Width; t += vec::lanes) vec::stream(out + t, vec::load(acc + t));
    return;
  }
  for (int t = 0; t < Width; ++t) out[t] = acc[t];
}

/// How many entries ahead the host kernel prefetches rows of X: rows named by
/// column indices are random in a power-law matrix, and no hardware prefetcher
/// follows an index array (measured at R-MAT 16, k = 32: 16 ahead -13%; the
/// Laplacian, whose rows the hardware already streams, is no slower).
inline constexpr offset_type x_prefetch_distance = 16;

/// Whether the host kernel prefetches rows of Width Ts: only rows of a cache line or more. A
/// shorter row (k < 8 doubles) is one line that X's whole block shares with its neighbours, and
/// finding it ahead cost more than waiting for it (R-MAT 16, k = 1: 0.85 ms without, 1.33-1.53 with).
/// (Tested in a plain `if`: nvcc refuses a device lambda's first capture inside `if constexpr`.)
template <int Width, class T>
inline constexpr bool prefetches_rows = Width * sizeof(T) >= 64;

/// Prefetch the Width elements at `row` into the cache (host builds; nothing on devices).
template <int Width, class T>
KOKKOS_INLINE_FUNCTION void prefetch_row([[maybe_unused]] const T* row) {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
  constexpr int per_line = 64 / static_cast<int>(sizeof(T)) > 0 ? 64 / static_cast<int>(sizeof(T)) : 1;
  for (int t = 0; t < Width; t += per_line) __builtin_prefetch(row + t);
#endif
}

inline void stream_fence() {
#if defined(TESSERA_HOST_AVX512)
  _mm_sfence();
#endif
}
}  // namespace detail

/// True when the host kernel keeps a row of Width Ts of Y in SIMD registers on ExecSpace:
/// host_vector has registers for T and Width fills two or more whole ones (a row of one register,
/// k = 8 doubles, GCC already keeps in a register, and the portable loop measured 5-10% faster).
template <int Width, class ExecSpace, class T>
inline constexpr bool has_register_rows = detail::host_vector<T>::native && Width % detail::host_vector<T>::lanes == 0 && Width > detail::host_vector<T>::lanes &&
                                          Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

/// One pass of spmm_rows_fixed: rows of Y stored plainly or (Streaming) past the caches.
template <int Width, bool Streaming, class ExecSpace, class T, class MemorySpace>
void spmm_rows_pass(const ExecSpace& exec, const Kokkos::View<const local_index*, MemorySpace>& rows,
                    const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                    const Kokkos::View<const local_index*, MemorySpace>& x_source,
                    const Kokkos::View<const T*, MemorySpace>& values,
                    const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                    const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
                    const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y,
                    const Kokkos::View<const std::size_t*, MemorySpace>& pieces) {
  const detail::rows_of_x<T, MemorySpace> x_row{x_source, x_local, x_halo};
  const auto nnz = static_cast<offset_type>(x_source.extent(0));
  const char* const name = Streaming ? "tessera::spmm_rows_streaming" : "tessera::spmm_rows";
  if constexpr (has_register_rows<Width, ExecSpace, T>) {
    // The row of Y in SIMD registers, written once: as a local array GCC kept it on the stack and
    // reloaded and stored it every entry, a store-to-load round trip on each FMA's dependency
    // chain. The sums are the same FMAs in the same order as the portable loop's.
    using vec = detail::host_vector<T>;
    constexpr int regs = Width / vec::lanes;
    detail::for_each_listed_row(name, exec, rows.extent(0), pieces, KOKKOS_LAMBDA(const std::size_t i) {
      const local_index r = rows(i);
      typename vec::reg acc[regs];
      for (int j = 0; j < regs; ++j) acc[j] = vec::zero();
      const offset_type end = row_ptr(r + 1);
      for (offset_type e = row_ptr(r); e < end; ++e) {
        if (detail::prefetches_rows<Width, T> && e + detail::x_prefetch_distance < nnz)
          detail::prefetch_row<Width>(x_row(e + detail::x_prefetch_distance));
        const auto a = vec::broadcast(values(e));
        const T* in = x_row(e);
        for (int j = 0; j < regs; ++j) acc[j] = vec::fma(a, vec::load(in + j * vec::lanes), acc[j]);
      }
      T* out = &y(r, 0);
      for (int j = 0; j < regs; ++j) {
        if constexpr (Streaming) vec::stream(out + j * vec::lanes, acc[j]);
        else vec::store(out + j * vec::lanes, acc[j]);
      }
    });
    return;
  }
  detail::for_each_listed_row(
      name, exec, rows.extent(0), pieces, KOKKOS_LAMBDA(const std::size_t i) {
        const local_index r = rows(i);
        alignas(64) T acc[Width];
        for (int t = 0; t < Width; ++t) acc[t] = T{};
        // The row's end in a register: re-reading row_ptr(r + 1) every entry measured 1.5x slower.
        const offset_type end = row_ptr(r + 1);
        for (offset_type e = row_ptr(r); e < end; ++e) {
          if (detail::prefetches_rows<Width, T> && e + detail::x_prefetch_distance < nnz)
            detail::prefetch_row<Width>(x_row(e + detail::x_prefetch_distance));
          const T a = values(e);
          const T* in = x_row(e);
          for (int t = 0; t < Width; ++t) acc[t] += a * in[t];
        }
        detail::store_row<Width, Streaming>(&y(r, 0), acc);
      });
}

namespace detail {
/// Columns of Y that spmm_rows' wide-row path computes per pass: eight SIMD registers of
/// accumulators (64 floats or 32 doubles with AVX2), which leaves registers for the loads.
template <class T>
inline constexpr int panel_width = 8 * host_vector<T>::lanes;

/// Whether the panel path pays for a product whose listed rows hold about `entries` entries of A
/// reading `x_rows` rows of X: when the panel of X stays near the core (a few MiB: L2, or a core's
/// share of L3) from one row of A to the next, and each packed row of X is read often enough (16
/// times on average) to repay packing it. SpDNN (1,024 and 4,096 rows, 32 entries per row: 256 KiB
/// and 1 MiB panels) ran 1.5-1.7x faster in panels; R-MAT 16 at k = 128 and 256 (a 16 MiB panel per
/// rank) 1.2-1.5x slower, and the 2-D Laplacian 96² and R-MAT 12 (5 and 8 entries per row of X,
/// panels of 1 MiB) 1.4-2x slower, than row by row.
template <class T>
bool x_panel_pays(const std::size_t x_rows, const std::size_t entries) {
  constexpr std::size_t budget_bytes = std::size_t{4} << 20;
  constexpr std::size_t reads_per_row = 16;
  return x_rows * panel_width<T> * sizeof(T) <= budget_bytes && entries >= reads_per_row * x_rows;
}

/// X's columns [first, first + panel_width) of every row, this rank's rows then the halo's, packed
/// one after the other into `panel` (rows x panel_width).
template <class ExecSpace, class T, class MemorySpace>
void pack_x_panel(const ExecSpace& exec, const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                  const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
                  const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& panel, const local_index first) {
  const std::size_t own = x_local.extent(0);
  Kokkos::parallel_for(
      "tessera::spmm_rows_pack", Kokkos::RangePolicy<ExecSpace>(exec, 0, panel.extent(0)), KOKKOS_LAMBDA(const std::size_t s) {
        const T* from = s < own ? &x_local(s, first) : &x_halo(s - own, first);
        T* to = &panel(s, 0);
        for (int t = 0; t < panel_width<T>; ++t) to[t] = from[t];
      });
}

/// Y(r, first + [0, panel_width)) for every r in `rows`, the panel of Y in registers, reading X's
/// same columns from `panel` (pack_x_panel). Run for one panel of columns at a time over all rows,
/// so that what the rows read of X stays in L2 from one row to the next (1,024 rows of 64 floats:
/// 256 KB), where row after row over the whole width X (1,024 x 4,096 floats: 16 MB) came from L3
/// or memory and Y's row went through L1 once per four entries. Packed, because in place the
/// panel's pieces of X's rows lie a row's length apart: at SpDNN's power-of-two widths that is a
/// multiple of 4 KiB, so they all fall into the same few sets of L1 and L2 and evict each other.
/// A is read once per panel: 12 bytes per entry against 256 of X. Same FMAs in the same order as
/// spmm_rows_pass.
template <class ExecSpace, class T, class MemorySpace>
void spmm_rows_panel(const ExecSpace& exec, const Kokkos::View<const local_index*, MemorySpace>& rows,
                     const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                     const Kokkos::View<const local_index*, MemorySpace>& x_source,
                     const Kokkos::View<const T*, MemorySpace>& values,
                     const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& panel, const local_index own_rows,
                     const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y, const local_index first,
                     const Kokkos::View<const std::size_t*, MemorySpace>& pieces) {
  using vec = host_vector<T>;
  constexpr int regs = panel_width<T> / vec::lanes;
  for_each_listed_row(
      "tessera::spmm_rows_panel", exec, rows.extent(0), pieces, KOKKOS_LAMBDA(const std::size_t i) {
        const local_index r = rows(i);
        typename vec::reg acc[regs];
        for (int j = 0; j < regs; ++j) acc[j] = vec::zero();
        const offset_type end = row_ptr(r + 1);
        for (offset_type e = row_ptr(r); e < end; ++e) {
          const local_index source = x_source(e);
          const T* in = &panel(source >= 0 ? source : own_rows + ~source, 0);
          const auto a = vec::broadcast(values(e));
          for (int j = 0; j < regs; ++j) acc[j] = vec::fma(a, vec::load(in + j * vec::lanes), acc[j]);
        }
        T* out = &y(r, first);
        for (int j = 0; j < regs; ++j) vec::store(out + j * vec::lanes, acc[j]);
      });
}

/// Y(r, [first, k)) for every r in `rows`, Y's row updated in memory four entries of A per pass
/// over it (each element of Y loaded and stored once per four products, not once per product).
/// The sums keep their order: ((y + a0 x0) + a1 x1) + ..., entry after entry.
template <class ExecSpace, class T, class MemorySpace>
void spmm_rows_columns(const ExecSpace& exec, const Kokkos::View<const local_index*, MemorySpace>& rows,
                       const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                       const Kokkos::View<const local_index*, MemorySpace>& x_source,
                       const Kokkos::View<const T*, MemorySpace>& values,
                       const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                       const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
                       const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y, const local_index first,
                       const Kokkos::View<const std::size_t*, MemorySpace>& pieces) {
  const rows_of_x<T, MemorySpace> x_row{x_source, x_local, x_halo};
  const auto n = static_cast<local_index>(y.extent(1)) - first;
  for_each_listed_row(
      "tessera::spmm_rows", exec, rows.extent(0), pieces, KOKKOS_LAMBDA(const std::size_t i) {
        const local_index r = rows(i);
        T* KOKKOS_RESTRICT out = &y(r, first);
        for (local_index t = 0; t < n; ++t) out[t] = T{};
        offset_type e = row_ptr(r);
        const offset_type end = row_ptr(r + 1);
        for (; e + 4 <= end; e += 4) {
          const T a0 = values(e), a1 = values(e + 1), a2 = values(e + 2), a3 = values(e + 3);
          const T* KOKKOS_RESTRICT in0 = x_row(e) + first;
          const T* KOKKOS_RESTRICT in1 = x_row(e + 1) + first;
          const T* KOKKOS_RESTRICT in2 = x_row(e + 2) + first;
          const T* KOKKOS_RESTRICT in3 = x_row(e + 3) + first;
          for (local_index t = 0; t < n; ++t) {
            T sum = out[t];
            sum += a0 * in0[t];
            sum += a1 * in1[t];
            sum += a2 * in2[t];
            sum += a3 * in3[t];
            out[t] = sum;
          }
        }
        for (; e < end; ++e) {
          const T a = values(e);
          const T* KOKKOS_RESTRICT in = x_row(e) + first;
          for (local_index t = 0; t < n; ++t) out[t] += a * in[t];
        }
      });
}
}  // namespace detail

/// For each r in `rows`: Y(r, :) = sum over the row's entries e of value(e) * (the row of X that
/// x_source(e) names: see entry_sources).
///
/// Rows run in parallel (with `pieces`, balanced_row_pieces' bounds, threads take pieces of the
/// list); the k loop is innermost over contiguous memory
/// (LayoutRight), which is the loop compilers vectorise. Widths 1 to 64 that are powers of two
/// (the common ones) accumulate a row of Y in a fixed-size local array the compiler keeps in
/// registers, and store it once; wider rows go panel by panel of columns (spmm_rows_panel), each
/// panel over all rows; what is left of a width, row by row (spmm_rows_columns).
template <int Width, class ExecSpace, class T, class MemorySpace>
void spmm_rows_fixed(const ExecSpace& exec, const Kokkos::View<const local_index*, MemorySpace>& rows,
                     const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
                     const Kokkos::View<const local_index*, MemorySpace>& x_source,
                     const Kokkos::View<const T*, MemorySpace>& values,
                     const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
                     const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
                     const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y, bool streaming_stores,
                     const Kokkos::View<const std::size_t*, MemorySpace>& pieces) {
  if constexpr (has_streaming_rows<Width, ExecSpace, T>) {
    if (streaming_stores && reinterpret_cast<std::uintptr_t>(y.data()) % 64 == 0) {
      // A large Y is written once and not read again soon: writing its lines without reading
      // them first saves a third of the memory traffic of a k >= 8 product.
      spmm_rows_pass<Width, true>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, pieces);
      exec.fence();
      detail::stream_fence();
      return;
    }
  }
  spmm_rows_pass<Width, false>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, pieces);
}

template <class ExecSpace, class T, class MemorySpace>
void spmm_rows(const ExecSpace& exec, const Kokkos::View<const local_index*, MemorySpace>& rows,
               const Kokkos::View<const offset_type*, MemorySpace>& row_ptr,
               const Kokkos::View<const local_index*, MemorySpace>& x_source,
               const Kokkos::View<const T*, MemorySpace>& values,
               const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_local,
               const Kokkos::View<const T**, Kokkos::LayoutRight, MemorySpace>& x_halo,
               const Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>& y, bool streaming_stores = false,
               const Kokkos::View<const std::size_t*, MemorySpace>& pieces = {}) {
  const auto k = static_cast<local_index>(y.extent(1));
  switch (k) {
    case 1: return spmm_rows_fixed<1>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores, pieces);
    case 2: return spmm_rows_fixed<2>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores, pieces);
    case 4: return spmm_rows_fixed<4>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores, pieces);
    case 8: return spmm_rows_fixed<8>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores, pieces);
    case 16: return spmm_rows_fixed<16>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores, pieces);
    case 32: return spmm_rows_fixed<32>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores, pieces);
    case 64: return spmm_rows_fixed<64>(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, streaming_stores, pieces);
    default: break;
  }
  // Any other width (SpDNN's batches: hundreds to thousands of images) in column panels.
  local_index done = 0;
  if constexpr (has_register_rows<detail::panel_width<T>, ExecSpace, T>) {
    const std::size_t a_rows = row_ptr.extent(0) > 0 ? row_ptr.extent(0) - 1 : 0;
    const auto entries = static_cast<std::size_t>(  // the listed rows' share
        a_rows > 0 ? static_cast<double>(x_source.extent(0)) * static_cast<double>(rows.extent(0)) / static_cast<double>(a_rows) : 0.0);
    if (detail::x_panel_pays<T>(x_local.extent(0) + x_halo.extent(0), entries)) done = k - k % detail::panel_width<T>;
    const auto own_rows = static_cast<local_index>(x_local.extent(0));
    Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace> panel(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessera::spmm_rows::x_panel"),
        done > 0 ? x_local.extent(0) + x_halo.extent(0) : 0, detail::panel_width<T>);
    for (local_index first = 0; first < done; first += detail::panel_width<T>) {
      detail::pack_x_panel(exec, x_local, x_halo, panel, first);
      detail::spmm_rows_panel<ExecSpace, T, MemorySpace>(exec, rows, row_ptr, x_source, values, panel, own_rows, y, first,
                                                         pieces);
    }
  }
  if (done < k) detail::spmm_rows_columns(exec, rows, row_ptr, x_source, values, x_local, x_halo, y, done, pieces);
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_ROWS_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_SPMM_ROWS_HPP
#endif
