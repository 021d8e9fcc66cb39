// The node-local SpMM kernels against a serial sum: the host's row loop (kernels/spmm_rows.hpp)
// and the GPU's nonzero-balanced kernel (kernels/spmm_balanced.hpp), the latter on the host
// space and on the default execution space (Serial here, CUDA in a CUDA build). Rows of 0, 1,
// one segment's worth, one more than a segment, and thousands of entries; X rows read from the
// local block and from the halo; every width the lane shapes distinguish.
#include "test_support.hpp"

#include "tessera/kernels/spmm_balanced.hpp"
#include "tessera/kernels/spmm_row_groups.hpp"
#include "tessera/kernels/spmm_rows.hpp"

#include <cmath>
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace spmm_kernels_tests {  // the suite may compile several test files as one unit (tests/CMakeLists.txt)

namespace {
using namespace tessera;

struct host_problem {
  std::vector<offset_type> row_ptr{0};
  std::vector<local_index> col_idx;
  std::vector<double> values;
  std::vector<std::uint8_t> local;
  std::vector<local_index> source_row;
  std::size_t local_rows = 0, halo_rows = 0;
};

// A skewed matrix: row lengths cycle through the kernel's edge cases, columns random.
host_problem skewed_problem(std::mt19937& gen, bool all_local = false) {
  constexpr offset_type segment = kernels::spmm_row_schedule<Kokkos::HostSpace>::segment_entries;
  const std::vector<offset_type> lengths{0, 1, 3, segment - 1, segment, segment + 1, 2 * segment, 5, 0, 3000, 17, 2 * segment + 7};
  host_problem p;
  p.local_rows = 40;
  p.halo_rows = 25;
  const local_index columns = 90;
  std::uniform_int_distribution<local_index> col(0, columns - 1);
  std::uniform_real_distribution<double> val(-1, 1);
  for (local_index c = 0; c < columns; ++c) {
    const bool is_local = all_local || c % 3 != 0;
    p.local.push_back(is_local ? 1 : 0);
    p.source_row.push_back(static_cast<local_index>(is_local ? (c * 7) % p.local_rows : (c * 5) % p.halo_rows));
  }
  for (std::size_t r = 0; r < 3 * lengths.size(); ++r) {
    for (offset_type e = 0; e < lengths[r % lengths.size()]; ++e) {
      p.col_idx.push_back(col(gen));
      p.values.push_back(val(gen));
    }
    p.row_ptr.push_back(static_cast<offset_type>(p.col_idx.size()));
  }
  return p;
}

template <class Space, class T>
Kokkos::View<T*, typename Space::memory_space> device_copy(const std::vector<T>& v, const char* name) {
  Kokkos::View<T*, typename Space::memory_space> out(std::string(name), v.size());
  const auto host = Kokkos::create_mirror_view(out);
  for (std::size_t i = 0; i < v.size(); ++i) host(i) = v[i];
  Kokkos::deep_copy(out, host);
  return out;
}

template <class Space>
Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space> random_block(std::size_t rows, std::size_t k,
                                                                                        std::mt19937& gen) {
  Kokkos::View<double**, Kokkos::LayoutRight, typename Space::memory_space> out("block", rows, k);
  const auto host = Kokkos::create_mirror_view(out);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t t = 0; t < k; ++t) host(i, t) = u(gen);
  Kokkos::deep_copy(out, host);
  return out;
}

// Every row of `rows` (a subset, in a scrambled order) computed by the balanced kernel or the row
// loop on Space, against a serial sum; rows not listed must keep the sentinel.
// direct: every source local (no halo; the kernels' per-entry sources are all rows of x_local).
template <class Space>
void kernel_matches_serial_sum(bool balanced, bool direct = false) {
  using mem = typename Space::memory_space;
  std::mt19937 gen(5);
  const auto p = skewed_problem(gen, direct);
  const std::size_t n_rows = p.row_ptr.size() - 1;
  std::vector<local_index> listed;
  for (std::size_t r = 0; r < n_rows; ++r)
    if (r % 4 != 2) listed.push_back(static_cast<local_index>((r * 11) % n_rows));
  std::sort(listed.begin(), listed.end());
  listed.erase(std::unique(listed.begin(), listed.end()), listed.end());
  std::reverse(listed.begin(), listed.end());
  const auto row_ptr = device_copy<Space>(p.row_ptr, "row_ptr");
  const auto col_idx = device_copy<Space>(p.col_idx, "col_idx");
  const auto values = device_copy<Space>(p.values, "values");
  const auto rows = device_copy<Space>(listed, "rows");
  kernels::column_sources<mem> sources{device_copy<Space>(p.local, "local"), device_copy<Space>(p.source_row, "source_row")};
  kernels::spmm_rows_state<double, mem> state;  // one schedule for every width, as a plan keeps it
  const Kokkos::View<const local_index*, mem> x_source =
      kernels::entry_sources(Space{}, Kokkos::View<const local_index*, mem>(col_idx), sources);
  {
    // The per-entry sources say the same as the per-column ones, in the kernels' numbering.
    const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x_source);
    for (std::size_t e = 0; e < p.col_idx.size(); ++e) {
      const auto c = static_cast<std::size_t>(p.col_idx[e]);
      REQUIRE(got(e) == (p.local[c] ? p.source_row[c] : ~p.source_row[c]));
    }
  }
  for (const std::size_t k : {0, 1, 2, 3, 5, 8, 16, 31, 32, 33, 64, 100, 128, 130, 257}) {
    CAPTURE(k);
    CAPTURE(balanced);
    const auto x_local = random_block<Space>(p.local_rows, k, gen);
    const auto x_halo = random_block<Space>(p.halo_rows, k, gen);
    Kokkos::View<double**, Kokkos::LayoutRight, mem> y("y", n_rows, k);
    constexpr double sentinel = 12345.0;
    Kokkos::deep_copy(y, sentinel);
    if (balanced) {
      if (!state.schedule.made) state.schedule = kernels::spmm_row_schedule<mem>::make(Space{}, Kokkos::View<const local_index*, mem>(rows), Kokkos::View<const offset_type*, mem>(row_ptr));
      kernels::spmm_rows_balanced<Space, double, mem>(Space{}, state.schedule, row_ptr, x_source, values, x_local, x_halo,
                                                      y, state.partial);
    } else {
      kernels::spmm_rows<Space, double, mem>(Space{}, rows, row_ptr, x_source, values, x_local, x_halo, y);
    }
    Space().fence();
    const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
    const auto xl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x_local);
    const auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x_halo);
    std::vector<char> is_listed(n_rows, 0);
    for (const auto r : listed) is_listed[static_cast<std::size_t>(r)] = 1;
    for (std::size_t r = 0; r < n_rows; ++r)
      for (std::size_t t = 0; t < k; ++t) {
        if (!is_listed[r]) {
          REQUIRE_MESSAGE(got(r, t) == sentinel, "row ", r, " is not listed but was written");
          continue;
        }
        double want = 0, magnitude = 0;
        for (auto e = p.row_ptr[r]; e < p.row_ptr[r + 1]; ++e) {
          const auto c = static_cast<std::size_t>(p.col_idx[static_cast<std::size_t>(e)]);
          const auto src = static_cast<std::size_t>(p.source_row[c]);
          const double x = p.local[c] ? xl(src, t) : xh(src, t);
          want += p.values[static_cast<std::size_t>(e)] * x;
          magnitude += std::abs(p.values[static_cast<std::size_t>(e)] * x);
        }
        // Split rows add their segments' sums: another order than the serial sum, so a bound
        // proportional to the row's absolute sum, not bitwise equality.
        REQUIRE_MESSAGE(std::abs(got(r, t) - want) <= 1e-14 * (magnitude + 1), "row ", r, " column ", t, ": ",
                        got(r, t), " != ", want);
      }
  }
  if (balanced) {
    CHECK(state.schedule.splits > 0);  // the long rows were split
    CHECK(state.schedule.segments > listed.size());
  }
}
}  // namespace

TEST_CASE("balanced SpMM kernel on the host space matches a serial sum") {
  kernel_matches_serial_sum<Kokkos::DefaultHostExecutionSpace>(true);
}

TEST_CASE("balanced SpMM kernel on the default execution space matches a serial sum") {
  kernel_matches_serial_sum<Kokkos::DefaultExecutionSpace>(true);
}

TEST_CASE("balanced SpMM kernel reading each entry's row of X directly matches a serial sum") {
  kernel_matches_serial_sum<Kokkos::DefaultExecutionSpace>(true, true);
}

TEST_CASE("row-loop SpMM kernel matches a serial sum") { kernel_matches_serial_sum<Kokkos::DefaultHostExecutionSpace>(false); }

TEST_CASE("balanced SpMM kernel: an empty row list and a schedule with no split rows") {
  using mem = Kokkos::DefaultExecutionSpace::memory_space;
  const Kokkos::View<const offset_type*, mem> row_ptr = device_copy<Kokkos::DefaultExecutionSpace>(std::vector<offset_type>{0, 2, 2, 3}, "ptr");
  const Kokkos::View<local_index*, mem> none("none", 0);
  const auto empty = kernels::spmm_row_schedule<mem>::make(Kokkos::DefaultExecutionSpace{}, none, row_ptr);
  CHECK(empty.segments == 0);
  const Kokkos::View<const local_index*, mem> all = device_copy<Kokkos::DefaultExecutionSpace>(std::vector<local_index>{2, 0, 1}, "all");
  const auto short_rows = kernels::spmm_row_schedule<mem>::make(Kokkos::DefaultExecutionSpace{}, all, row_ptr);
  CHECK(short_rows.segments == 3);
  CHECK(short_rows.splits == 0);
  CHECK(short_rows.slots == 0);
}

// The host threads' pieces of a list of rows (kernels::balanced_row_pieces): contiguous, covering
// the list, each within one row of its share of the work, empty around a row longer than a share;
// and the row kernel through them writes every listed row as it does a row at a time (the same
// FMAs in the same order: the same bits), at every width path (registers, panels, row by row).
TEST_CASE("row-loop SpMM kernel: balanced pieces of the rows cover the list and give the same bits") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using mem = Space::memory_space;
  std::mt19937 gen(11);
  const auto p = skewed_problem(gen);  // rows of 0 to 3,000 entries
  const std::size_t n_rows = p.row_ptr.size() - 1;
  std::vector<local_index> listed;
  for (std::size_t r = 0; r < n_rows; ++r)
    if (r % 5 != 3) listed.push_back(static_cast<local_index>(r));
  std::shuffle(listed.begin(), listed.end(), gen);
  const Kokkos::View<const offset_type*, mem> row_ptr = device_copy<Space>(p.row_ptr, "row_ptr");
  const Kokkos::View<const local_index*, mem> rows = device_copy<Space>(listed, "rows");
  std::uint64_t total = 0, longest = 0;
  for (const auto r : listed) {
    const auto work = static_cast<std::uint64_t>(p.row_ptr[static_cast<std::size_t>(r) + 1] - p.row_ptr[static_cast<std::size_t>(r)]) + 1;
    total += work;
    longest = std::max(longest, work);
  }
  for (const std::size_t wanted : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{16}, listed.size(), 10 * listed.size()}) {
    CAPTURE(wanted);
    const auto bounds = kernels::balanced_row_pieces<mem>(rows, row_ptr, wanted);
    const std::size_t pieces = bounds.extent(0) - 1;
    REQUIRE(pieces == std::min(wanted, listed.size()));
    REQUIRE(bounds(0) == 0);
    REQUIRE(bounds(pieces) == listed.size());
    std::size_t empty = 0;
    for (std::size_t q = 0; q < pieces; ++q) {
      REQUIRE(bounds(q) <= bounds(q + 1));
      std::uint64_t work = 0;
      for (std::size_t i = bounds(q); i < bounds(q + 1); ++i) {
        const auto r = static_cast<std::size_t>(listed[i]);
        work += static_cast<std::uint64_t>(p.row_ptr[r + 1] - p.row_ptr[r]) + 1;
      }
      CHECK(work <= total / pieces + longest + 1);
      empty += bounds(q) == bounds(q + 1) ? 1 : 0;
    }
    if (pieces >= 16) CHECK(empty > 0);  // the 3,000-entry rows are longer than a share
  }
  kernels::column_sources<mem> sources{device_copy<Space>(p.local, "local"), device_copy<Space>(p.source_row, "source_row")};
  const Kokkos::View<const local_index*, mem> entry_source =
      kernels::entry_sources(Space{}, Kokkos::View<const local_index*, mem>(device_copy<Space>(p.col_idx, "col_idx")), sources);
  const Kokkos::View<const double*, mem> values = device_copy<Space>(p.values, "values");
  const auto pieces = kernels::balanced_row_pieces<mem>(rows, row_ptr, 7);
  for (const std::size_t k : {1, 5, 8, 32, 64, 100, 130}) {
    CAPTURE(k);
    const auto x_local = random_block<Space>(p.local_rows, k, gen);
    const auto x_halo = random_block<Space>(p.halo_rows, k, gen);
    Kokkos::View<double**, Kokkos::LayoutRight, mem> by_pieces("by_pieces", n_rows, k), by_rows("by_rows", n_rows, k);
    Kokkos::deep_copy(by_pieces, 777.0);
    Kokkos::deep_copy(by_rows, 777.0);
    kernels::spmm_rows<Space, double, mem>(Space{}, rows, row_ptr, entry_source, values, x_local, x_halo, by_pieces, false, pieces);
    kernels::spmm_rows<Space, double, mem>(Space{}, rows, row_ptr, entry_source, values, x_local, x_halo, by_rows);
    Space().fence();
    for (std::size_t r = 0; r < n_rows; ++r)
      for (std::size_t t = 0; t < k; ++t) {
        REQUIRE(by_pieces(r, t) == by_rows(r, t));
        if (r % 5 == 3) REQUIRE(by_pieces(r, t) == 777.0);
      }
  }
}

// Floats (SpDNN's type) through the host row loop: rows long enough that each row of X is read
// more than 16 times, so wide widths take the packed-panel path where the build has SIMD
// registers (test_spmm_kernels_native), and the row-by-row path otherwise; its tail columns too.
TEST_CASE("row-loop SpMM kernel in float, wide rows and panels, matches a serial sum") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using mem = Space::memory_space;
  std::mt19937 gen(11);
  const std::size_t local_rows = 24, halo_rows = 9, n_rows = 50, per_row = 40;
  std::uniform_int_distribution<local_index> source(-static_cast<local_index>(halo_rows), static_cast<local_index>(local_rows) - 1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<offset_type> row_ptr{0};
  std::vector<local_index> sources;  // the kernels' numbering: row of x_local, or ~h for halo row h
  std::vector<float> values;
  for (std::size_t r = 0; r < n_rows; ++r) {
    const std::size_t length = r % 7 == 3 ? 0 : per_row + r % 5;  // some empty rows
    for (std::size_t e = 0; e < length; ++e) {
      const local_index s = source(gen);
      sources.push_back(s < 0 ? ~(-s - 1) : s);
      values.push_back(u(gen));
    }
    row_ptr.push_back(static_cast<offset_type>(values.size()));
  }
  std::vector<local_index> listed;
  for (std::size_t r = 0; r < n_rows; ++r)
    if (r % 6 != 1) listed.push_back(static_cast<local_index>(r));
  const Kokkos::View<const offset_type*, mem> ptr = device_copy<Space>(row_ptr, "row_ptr");
  const Kokkos::View<const local_index*, mem> x_source = device_copy<Space>(sources, "x_source");
  const Kokkos::View<const float*, mem> vals = device_copy<Space>(values, "values");
  const Kokkos::View<const local_index*, mem> rows = device_copy<Space>(listed, "rows");
  for (const std::size_t k : {1, 8, 32, 64, 96, 100, 128, 130, 257}) {
    CAPTURE(k);
    Kokkos::View<float**, Kokkos::LayoutRight, mem> x_local("x_local", local_rows, k), x_halo("x_halo", halo_rows, k);
    for (std::size_t i = 0; i < local_rows; ++i)
      for (std::size_t t = 0; t < k; ++t) x_local(i, t) = u(gen);
    for (std::size_t i = 0; i < halo_rows; ++i)
      for (std::size_t t = 0; t < k; ++t) x_halo(i, t) = u(gen);
    Kokkos::View<float**, Kokkos::LayoutRight, mem> y("y", n_rows, k);
    Kokkos::deep_copy(y, 777.0f);
    kernels::spmm_rows<Space, float, mem>(Space{}, rows, ptr, x_source, vals, x_local, x_halo, y);
    Space().fence();
    for (std::size_t r = 0; r < n_rows; ++r)
      for (std::size_t t = 0; t < k; ++t) {
        if (r % 6 == 1) {
          REQUIRE_MESSAGE(y(r, t) == 777.0f, "row ", r, " is not listed but was written");
          continue;
        }
        double want = 0, magnitude = 0;
        for (auto e = row_ptr[r]; e < row_ptr[r + 1]; ++e) {
          const local_index s = sources[static_cast<std::size_t>(e)];
          const double x = s >= 0 ? x_local(static_cast<std::size_t>(s), t) : x_halo(static_cast<std::size_t>(~s), t);
          want += static_cast<double>(values[static_cast<std::size_t>(e)]) * x;
          magnitude += std::abs(static_cast<double>(values[static_cast<std::size_t>(e)]) * x);
        }
        REQUIRE_MESSAGE(std::abs(static_cast<double>(y(r, t)) - want) <= 1e-6 * (magnitude + 1), "row ", r, " column ", t,
                        ": ", y(r, t), " != ", want);
      }
  }
}

namespace {
// Rows that share patterns, in groups of 1 to 50 rows (a group of more than 48 is split into work
// items), patterns of 0 to 129 rows of X (longer than 128: never grouped), rows of X from the
// local block and the halo, the rows of A shuffled and some not listed.
template <class T>
void grouped_kernel_matches(const double tolerance) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using mem = Space::memory_space;
  std::mt19937 gen(23);
  const std::size_t local_rows = 150, halo_rows = 60;
  const std::vector<std::size_t> lengths{32, 1, 3, 8, 33, 128, 129, 5, 64, 0, 32};
  const std::vector<std::size_t> members{16, 1, 2, 3, 4, 5, 7, 12, 13, 48, 49, 50, 6};
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<std::vector<local_index>> row_sources;  // per row of A, in the order made
  std::vector<std::vector<T>> row_values;
  std::vector<local_index> all(local_rows + halo_rows);
  std::iota(all.begin(), all.end(), 0);
  for (std::size_t g = 0; g < 2 * members.size(); ++g) {
    std::shuffle(all.begin(), all.end(), gen);
    std::vector<local_index> pattern;
    for (std::size_t e = 0; e < lengths[g % lengths.size()]; ++e) {
      const local_index x = all[e];  // distinct rows of X; the kernels' numbering
      pattern.push_back(x < static_cast<local_index>(local_rows) ? x : ~(x - static_cast<local_index>(local_rows)));
    }
    for (std::size_t m = 0; m < members[g % members.size()]; ++m) {
      row_sources.push_back(pattern);
      std::vector<T> v;
      for (std::size_t e = 0; e < pattern.size(); ++e) v.push_back(u(gen));
      row_values.push_back(v);
    }
  }
  const std::size_t n_rows = row_sources.size();
  std::vector<std::size_t> order(n_rows);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), gen);
  std::vector<offset_type> row_ptr{0};
  std::vector<local_index> sources;
  std::vector<T> values;
  for (const auto r : order) {
    sources.insert(sources.end(), row_sources[r].begin(), row_sources[r].end());
    values.insert(values.end(), row_values[r].begin(), row_values[r].end());
    row_ptr.push_back(static_cast<offset_type>(values.size()));
  }
  std::vector<local_index> listed;
  for (std::size_t r = 0; r < n_rows; ++r)
    if (r % 9 != 4) listed.push_back(static_cast<local_index>(r));
  std::shuffle(listed.begin(), listed.end(), gen);
  const Kokkos::View<const offset_type*, mem> ptr = device_copy<Space>(row_ptr, "row_ptr");
  const Kokkos::View<const local_index*, mem> x_source = device_copy<Space>(sources, "x_source");
  const Kokkos::View<const T*, mem> vals = device_copy<Space>(values, "values");
  const Kokkos::View<const local_index*, mem> rows = device_copy<Space>(listed, "rows");
  kernels::spmm_rows_state<T, mem> state;  // groups made on the first wide enough product, as a plan keeps them
  for (const std::size_t k : {0, 1, 8, 15, 16, 17, 31, 32, 33, 64, 65, 96, 127, 128, 129, 200}) {
    CAPTURE(k);
    Kokkos::View<T**, Kokkos::LayoutRight, mem> x_local("x_local", local_rows, k), x_halo("x_halo", halo_rows, k);
    for (std::size_t i = 0; i < local_rows; ++i)
      for (std::size_t t = 0; t < k; ++t) x_local(i, t) = u(gen);
    for (std::size_t i = 0; i < halo_rows; ++i)
      for (std::size_t t = 0; t < k; ++t) x_halo(i, t) = u(gen);
    Kokkos::View<T**, Kokkos::LayoutRight, mem> y("y", n_rows, k), by_rows("by_rows", n_rows, k);
    Kokkos::deep_copy(y, T(777));
    kernels::spmm_rows_for_space<Space, T, mem>(Space{}, rows, state, ptr, x_source, vals, x_local, x_halo, y);
    kernels::spmm_rows<Space, T, mem>(Space{}, rows, ptr, x_source, vals, x_local, x_halo, by_rows);
    Space().fence();
    for (std::size_t r = 0; r < n_rows; ++r)
      for (std::size_t t = 0; t < k; ++t) {
        if (r % 9 == 4) {
          REQUIRE_MESSAGE(y(r, t) == T(777), "row ", r, " is not listed but was written");
          continue;
        }
        double want = 0, magnitude = 0;
        for (auto e = row_ptr[r]; e < row_ptr[r + 1]; ++e) {
          const local_index s = sources[static_cast<std::size_t>(e)];
          const double x = s >= 0 ? x_local(static_cast<std::size_t>(s), t) : x_halo(static_cast<std::size_t>(~s), t);
          want += static_cast<double>(values[static_cast<std::size_t>(e)]) * x;
          magnitude += std::abs(static_cast<double>(values[static_cast<std::size_t>(e)]) * x);
        }
        REQUIRE_MESSAGE(std::abs(static_cast<double>(y(r, t)) - want) <= tolerance * (magnitude + 1), "row ", r,
                        " column ", t, ": ", y(r, t), " != ", want);
        // Where the row kernel keeps a row of Y in registers (k = 16, 32, 64), the grouped kernel
        // makes the same FMAs in the same order: the same bits.
        if (k == 16 || k == 32 || k == 64) REQUIRE(y(r, t) == by_rows(r, t));
      }
  }
  if (kernels::has_row_groups_kernel<Space, T>(200)) {
    // Groups of 4 rows or more with patterns of 1 to 128 rows of X; everything else row by row.
    REQUIRE(state.groups.made);
    CHECK(state.groups.groups > 0);
    const auto others = state.groups.other_rows;
    std::size_t long_or_small = 0;
    for (std::size_t i = 0; i < others.extent(0); ++i) {
      const auto r = static_cast<std::size_t>(others(i));
      const auto length = row_ptr[r + 1] - row_ptr[r];
      CHECK((length == 0 || length > 128 || std::count_if(listed.begin(), listed.end(), [&](local_index l) {
               const auto q = static_cast<std::size_t>(l);
               return row_ptr[q + 1] - row_ptr[q] == length &&
                      std::equal(sources.begin() + row_ptr[q], sources.begin() + row_ptr[q + 1], sources.begin() + row_ptr[r]);
             }) < 4));
      ++long_or_small;
    }
    CHECK(state.groups.grouped_rows.extent(0) + long_or_small == listed.size());
  } else {
    MESSAGE("this build has no host SIMD registers for the grouped kernel: the row kernel ran instead");
  }
}
}  // namespace

TEST_CASE("grouped SpMM kernel (rows that share a pattern) matches a serial sum and the row kernel, in double") {
  grouped_kernel_matches<double>(1e-14);
}

TEST_CASE("grouped SpMM kernel (rows that share a pattern) matches a serial sum and the row kernel, in float") {
  grouped_kernel_matches<float>(1e-6);
}

}  // namespace spmm_kernels_tests
