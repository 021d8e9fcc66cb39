#pragma once
/// @file
/// A host micro-kernel for tile products C_t += alpha * A_t * B_t with A
/// packed once per tile (BLIS-style panels of MR rows) and B read in place.
///
/// Why not one BLAS call per tile product: a BLAS GEMM packs both operands on
/// every call. In a block-sparse product each A tile meets every B tile of
/// its tile row, so packing A per call repeats the same work, and at low
/// density most B tiles meet a single A tile, so packing B costs a copy of B
/// per product; on tiles of 128 to 512 that held OpenBLAS to ~70% of its
/// large-DGEMM rate. Here the caller packs an A tile once (pack_a) and runs
/// all its products (packed_gemm); the micro-kernel keeps an MR x NR block of
/// C in registers and broadcasts B's elements straight from the column-major
/// tile (NR columns are NR sequential streams, which the hardware prefetches;
/// measured as fast as packed B here even at a 4 KiB column stride). Its width
/// follows what the compiler was told the host has (AVX-512F, AVX2 + FMA), with
/// a portable scalar kernel otherwise (correct everywhere, fast only with SIMD:
/// see has_simd_tile_kernel).
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_PACKED_TILE_GEMM_HPP
#endif

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "host_simd.hpp"

#if __has_include(<unistd.h>)
#include <unistd.h>  // sysconf: the L2's size
#endif

namespace tessera::kernels {

namespace detail {

/// The register block of the micro-kernel, per instruction set: `row_regs` registers of
/// host_vector<T>::lanes rows by `cols` columns of C.
template <class T>
struct simd_lanes : host_vector<T> {
#if defined(TESSERA_HOST_AVX512) && (defined(__znver3__) || defined(__znver4__) || defined(__znver5__))
  // AMD Zen (GCC 12 names Zen 4 znver3): 4 x 8 rows x 6 columns, 24 accumulators, 4 A registers.
  // Zen 4 issues a 512-bit FMA as two 256-bit halves and its broadcasts compete with them: four
  // FMAs per broadcast instead of two measured 1-6% faster on tiles of 128 to 512 and 4-13% on 32
  // to 128 (two processes at once, B and C warm or cold). On an Intel Xeon (AVX-512) this block
  // measured 0.53-0.58 of the one below, so it is Zen's alone.
  static constexpr int native_row_regs = 4, native_cols = 6;
#elif defined(TESSERA_HOST_AVX512)
  // 2 x 8 rows x 14 columns: 28 of the 32 zmm registers accumulate, 2 hold A, the rest broadcast B.
  static constexpr int native_row_regs = 2, native_cols = 14;
#else
  // 2 x 4 rows x 6 columns: 12 of the 16 ymm registers accumulate.
  static constexpr int native_row_regs = 2, native_cols = 6;
#endif
  // Scalar "registers" (no SIMD for T in this build): a 4 x 4 block of C.
  static constexpr int row_regs = host_vector<T>::native ? native_row_regs : 4;
  static constexpr int cols = host_vector<T>::native ? native_cols : 4;
};

/// This core's L2 in bytes, as the C library reports it (1 MiB where it does not).
inline std::size_t l2_cache_bytes() {
  static const std::size_t bytes = [] {
#if defined(_SC_LEVEL2_CACHE_SIZE)
    if (const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE); reported > 0) return static_cast<std::size_t>(reported);
#endif
    return std::size_t{1} << 20;
  }();
  return bytes;
}

/// Ask for the cache line at `p` in L2 (a hint; nothing where the compiler has no prefetch builtin).
inline void prefetch_l2([[maybe_unused]] const void* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p, 0, 2);
#endif
}

/// Ask for the cache line at `p` in L1, to be written (a hint, as prefetch_l2).
inline void prefetch_for_write([[maybe_unused]] const void* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p, 1, 3);
#endif
}

/// C[0:rows, 0:Cols] += alpha * (packed A panel) * B[0:kc, 0:Cols] over kc
/// steps (B column-major with leading dimension ldb), using the first RowRegs
/// registers of each step of the panel (rows <= RowRegs * lanes); with
/// `overwrite`, C = alpha * A * B (C's old values never read). Edge blocks get
/// their own Cols and RowRegs instead of padding to a full block: on tiles of
/// 128 to 512 the padding cost 3-4% of the flops. With `next_a`, the panel the
/// next call reads is fetched into L2 step by step, as fast as this one is
/// consumed.
template <class V, int Cols, int RowRegs, class T>
inline void micro_kernel(int kc, const T* __restrict a, const T* __restrict b, std::size_t ldb, T* __restrict c,
                         std::size_t ldc, int rows, T alpha, bool overwrite, const T* next_a) {
  constexpr int mr = V::lanes * V::row_regs, rv = RowRegs;
  constexpr int per_line = 64 / static_cast<int>(sizeof(T));
  typename V::reg acc[Cols][rv];
  for (int j = 0; j < Cols; ++j)
    for (int i = 0; i < rv; ++i) acc[j][i] = V::broadcast(T{0});
  // C's block is read (or written) only after the last step; asked for now, its lines arrive while
  // the steps run. A block-sparse product's C tiles lie all over memory and most come from DRAM:
  // on tiles of 32 to 128 (two processes, B and C cold) waiting for them at the end cost 7-15%.
  for (int j = 0; j < Cols; ++j)
    for (int i = 0; i < rows; i += per_line) prefetch_for_write(c + static_cast<std::size_t>(j) * ldc + static_cast<std::size_t>(i));
  // Two copies of the loop, with and without the prefetch, rather than a test per step; each
  // unrolled twice. Both measured 5-10% faster on tiles of 32 to 512 (AVX-512, A/B in one process).
  const auto steps = [&]<bool Prefetch>() {
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC unroll 2
#endif
    for (int l = 0; l < kc; ++l) {
      if constexpr (Prefetch)
        for (int i = 0; i < mr; i += per_line) prefetch_l2(next_a + l * mr + i);
      typename V::reg av[rv];
      for (int i = 0; i < rv; ++i) av[i] = V::load(a + l * mr + i * V::lanes);
      for (int j = 0; j < Cols; ++j) {
        const auto bv = V::broadcast(b[static_cast<std::size_t>(l) + static_cast<std::size_t>(j) * ldb]);
        for (int i = 0; i < rv; ++i) acc[j][i] = V::fma(av[i], bv, acc[j][i]);
      }
    }
  };
  if (next_a != nullptr)
    steps.template operator()<true>();
  else
    steps.template operator()<false>();
  // A partial panel's last register is read and written under a mask: only the rows that exist.
  const auto scale = V::broadcast(alpha);
  const int last_rows = rows - (rv - 1) * V::lanes;
  for (int j = 0; j < Cols; ++j)
    for (int i = 0; i < rv; ++i) {
      T* const at = c + static_cast<std::size_t>(j) * ldc + static_cast<std::size_t>(i * V::lanes);
      if (i + 1 < rv || last_rows == V::lanes)
        V::store(at, V::fma(acc[j][i], scale, overwrite ? V::broadcast(T{0}) : V::load(at)));
      else
        V::store_first(at, V::fma(acc[j][i], scale, overwrite ? V::broadcast(T{0}) : V::load_first(at, last_rows)),
                       last_rows);
    }
}

/// micro_kernel for `cols` columns (1..V::cols) and as few row registers as `rows` needs.
template <class V, class T, int... C, int... R>
inline void dispatch_micro_kernel(std::integer_sequence<int, C...>, std::integer_sequence<int, R...>, int cols,
                                  int kc, const T* a, const T* b, std::size_t ldb, T* c, std::size_t ldc, int rows,
                                  T alpha, bool overwrite, const T* next_a) {
  const int regs = (rows + V::lanes - 1) / V::lanes;
  const auto with_regs = [&]<int Cols>() {
    (void)((regs == R + 1 && (micro_kernel<V, Cols, R + 1>(kc, a, b, ldb, c, ldc, rows, alpha, overwrite, next_a), true)) ||
           ...);
  };
  (void)((cols == C + 1 && (with_regs.template operator()<C + 1>(), true)) || ...);
}

}  // namespace detail

/// True when this build's packed kernel for T uses SIMD registers (AVX-512F,
/// or AVX2 + FMA, enabled by the compiler flags, e.g. -march=native). Without
/// them the packed kernel is a portable scalar loop, slower than a BLAS.
template <class T>
inline constexpr bool has_simd_tile_kernel = detail::simd_lanes<T>::native;

/// Register-block shape of the packed kernel for T: panels of `rows` rows of A
/// and blocks of `cols` columns of B.
template <class T>
struct packed_shape {
  static constexpr int rows = detail::simd_lanes<T>::lanes * detail::simd_lanes<T>::row_regs;
  static constexpr int cols = detail::simd_lanes<T>::cols;
  /// Elements of a packed m x k A tile (rows rounded up to whole panels).
  static constexpr std::size_t a_elements(std::size_t m, std::size_t k) noexcept {
    return (m + rows - 1) / rows * rows * k;
  }
};

/// Pack the column-major m x k tile `a` into panels of packed_shape<T>::rows
/// rows, each stored step by step (rows of one step adjacent), zero-padded.
/// Reads A column by column, in memory order, writing one stream per panel:
/// the reverse order (one panel at a time) jumps a column per step and measured
/// 1.5x to 2.5x slower on tiles of 128 to 512. Slabs of steps run in parallel on
/// ExecutionSpace (a host space).
template <class ExecutionSpace, class T>
void pack_a(const T* a, int m, int k, T* out) {
  constexpr int mr = packed_shape<T>::rows, slab = 64;
  const int panels = (m + mr - 1) / mr, full = m / mr, rest = m - full * mr;
  const auto panel_size = static_cast<std::size_t>(mr) * static_cast<std::size_t>(k);
  Kokkos::parallel_for(
      "tessera::pack_a", Kokkos::RangePolicy<ExecutionSpace>(0, (k + slab - 1) / slab), [=](const int s) {
        for (int l = s * slab; l < std::min(k, (s + 1) * slab); ++l) {
          const T* src = a + static_cast<std::size_t>(l) * static_cast<std::size_t>(m);
          T* dst = out + static_cast<std::size_t>(l) * mr;
          for (int p = 0; p < full; ++p, src += mr, dst += panel_size)
            for (int r = 0; r < mr; ++r) dst[r] = src[r];
          if (full < panels) {
            int r = 0;
            for (; r < rest; ++r) dst[r] = src[r];
            for (; r < mr; ++r) dst[r] = T{0};
          }
        }
      });
}

/// The B tile of the tile product that runs after this one, which packed_gemm
/// fetches into L2 while it finishes (null: none). Its A needs no hint: the
/// caller packs it just before, so it is in cache.
template <class T>
struct following_product {
  const T* b = nullptr;  ///< column-major with leading dimension k
  int n = 0, k = 0;
};

/// C += alpha * A * B (with `overwrite`: C = alpha * A * B, C's old values never
/// read) for column-major tiles C (m x n, leading dimension m) and
/// B (k x n, leading dimension k), A packed by pack_a. Blocked so that a block
/// of B columns over `depth` steps and A's panels of one depth block stay in
/// L2; blocks of B columns run in parallel on ExecutionSpace (a host space).
/// `following` names the next product's operands: a sparse product runs many
/// short products whose first blocks would otherwise come from memory
/// unannounced.
template <class ExecutionSpace, class T>
void packed_gemm(int m, int n, int k, T alpha, const T* packed_a, const T* b, T* c, bool overwrite = false,
                 following_product<T> following = {}) {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible,
                "packed_gemm runs on the host; use tile_gemm (KokkosBlas::gemm) on device execution spaces");
  using lanes = detail::simd_lanes<T>;
  constexpr int mr = packed_shape<T>::rows, nr = packed_shape<T>::cols;
  // Steps per block: 512 (14 columns of B x 512 steps = 56 KB, read from L2) measured faster than
  // 256 or 384 (L1-sized B, but C re-read once per block) on tiles of 128 to 512; with Zen's 6
  // columns, 256, 384 and 768 measured the same as 512 or up to 3% slower.
  constexpr int depth = 512;
  if (m == 0 || n == 0 || k == 0) return;
  // A's rows of one block: its panels over one depth block stay in L2 while every block of B columns
  // passes them, so they take at most 5/8 of it (1.25 MiB of a 2 MiB L2), in blocks of equal panels.
  // A fixed 512 rows had filled all of a 2 MiB L2 at 512 steps: on tiles of 512 to 1024 that
  // measured 8.6% slower (median of 16 alternated rounds), on tiles up to 512 the same.
  const std::size_t a_block_bytes = detail::l2_cache_bytes() / 8 * 5;
  const int row_panels = (m + mr - 1) / mr, col_panels = (n + nr - 1) / nr;
  const auto ldc = static_cast<std::size_t>(m), ldb = static_cast<std::size_t>(k);
  for (int k0 = 0; k0 < k; k0 += depth) {
    const int kc = std::min(depth, k - k0);
    const bool first_depth_overwrites = overwrite && k0 == 0;
    const auto panel_bytes = static_cast<std::size_t>(kc) * mr * sizeof(T);
    const auto a_blocks = static_cast<int>((static_cast<std::size_t>(row_panels) * panel_bytes + a_block_bytes - 1) / a_block_bytes);
    const int block_panels = (row_panels + a_blocks - 1) / a_blocks;
    for (int p0 = 0; p0 < row_panels; p0 += block_panels) {
      const int p1 = std::min(row_panels, p0 + block_panels);
      Kokkos::parallel_for(
          "tessera::packed_gemm", Kokkos::RangePolicy<ExecutionSpace>(0, col_panels), [=](const int q) {
            const int cols = std::min(nr, n - q * nr);
            const T* columns = b + static_cast<std::size_t>(q) * nr * ldb + k0;
            std::size_t columns_ld = ldb;
            // Columns a multiple of 4 KiB apart (k = 512 or 1024 doubles) share one L1 set, and 14 of
            // them (the AVX-512 block) are more than its ways (8 to 12 on current x86): such a block is
            // read from a copy with padded columns (-1% to +12% at k = 512 and 1024, +4% typical; at 1
            // or 2 KiB apart the copy measured slower). The AVX2 block's 6 columns fit a set.
            constexpr bool columns_outnumber_ways = nr > 8;
            alignas(64) static thread_local T padded[columns_outnumber_ways ? nr * (depth + 64 / sizeof(T)) : 1];
            if (columns_outnumber_ways && (ldb * sizeof(T)) % 4096 == 0) {
              columns_ld = static_cast<std::size_t>(kc) + 64 / sizeof(T);
              for (int j = 0; j < cols; ++j)
                std::copy_n(columns + static_cast<std::size_t>(j) * ldb, kc, padded + static_cast<std::size_t>(j) * columns_ld);
              columns = padded;
            }
            // The next block of B columns, fetched into L2 a slice per row panel while this block runs:
            // B is read in place, NR columns at a time, and the hardware prefetcher does not follow
            // the jump between blocks (measured +2% to +5% on tiles of 128 to 512). The last block
            // of the product fetches the following product's first block of B columns.
            const bool ahead = q + 1 < col_panels;
            const bool follow = !ahead && k0 + depth >= k && p1 == row_panels && following.b != nullptr;
            const T* next = ahead ? b + static_cast<std::size_t>(q + 1) * nr * ldb + k0 : following.b;
            const std::size_t next_ld = ahead ? ldb : static_cast<std::size_t>(following.k);
            const int next_steps = ahead ? kc : std::min(depth, following.k);
            const int next_cols = ahead ? std::min(nr, n - (q + 1) * nr) : std::min(nr, following.n);
            constexpr int per_line = 64 / static_cast<int>(sizeof(T));
            const int lines_per_column = (next_steps + per_line - 1) / per_line;
            const int slices = p1 - p0;
            for (int p = p0; p < p1; ++p) {
              if ((ahead || follow) && lines_per_column > 0) {
                const int total = lines_per_column * next_cols;
                const int from = total * (p - p0) / slices, to = total * (p - p0 + 1) / slices;
                // The slice's first line by one division, the others by stepping: a division per
                // line took more than half of the time spent outside the micro-kernel on tiles of 32-128.
                int l = from % lines_per_column;
                const T* column = next + static_cast<std::size_t>(from / lines_per_column) * next_ld;
                for (int line = from; line < to; ++line) {
                  detail::prefetch_l2(column + static_cast<std::size_t>(l) * per_line);
                  if (++l == lines_per_column) {
                    l = 0;
                    column += next_ld;
                  }
                }
              }
              const T* a = packed_a + static_cast<std::size_t>(p) * mr * static_cast<std::size_t>(k) +
                           static_cast<std::size_t>(k0) * mr;
              T* const block = c + static_cast<std::size_t>(q) * nr * ldc + static_cast<std::size_t>(p) * mr;
              // The first column block meets each A panel first; a packed tile of up to 2 MB need not
              // all be in L2 still, so the next panel is fetched meanwhile. Later blocks find A in L2.
              const T* next_panel = q == 0 && p + 1 < p1 ? a + static_cast<std::size_t>(mr) * k : nullptr;
              detail::dispatch_micro_kernel<lanes>(std::make_integer_sequence<int, nr>{},
                                                   std::make_integer_sequence<int, lanes::row_regs>{}, cols, kc, a,
                                                   columns, columns_ld, block, ldc, std::min(mr, m - p * mr), alpha,
                                                   first_depth_overwrites, next_panel);
            }
          });
    }
  }
}

}  // namespace tessera::kernels

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_PACKED_TILE_GEMM_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_KERNELS_PACKED_TILE_GEMM_HPP
#endif
