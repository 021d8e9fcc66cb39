#pragma once
// SpDNN's spmm mode (inference.hpp): dense batches of images, each layer an spmm with its plan
// made once, the dead images compacted away.
#include "batch_kernels.hpp"
#include "problem.hpp"
#include <tessera/matrix/dist_dense.hpp>
#include <tessera/matrix/to_view.hpp>
#include <tessera/ops/spmm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace spdnn {

/// prepare() for spmm mode: every layer's plan for the first batch's width (collective over p.comm).
template <class T, class Policy>
void prepare_dense(problem<T, Policy>& p, const inference_settings& s) {
  const tessera::dist_dense<T, Policy> probe(p.comm, p.layers.front().mapping(), batch_width(p, s));
  for (const auto& w : p.layers) (void)tessera::spmm_plan_for(w, probe);
}

/// infer() in spmm mode: dense batches of images through every layer, the dead ones compacted
/// away, the few survivors of each batch pooled (see below).
template <class T, class Policy>
mode_result infer_dense(const tessera::communicator& world, const problem<T, Policy>& p, const inference_settings& s,
                          const inference_clock::time_point start) {
  const bias_relu_clamp<T> act{static_cast<T>(s.bias), static_cast<T>(s.ymax)};
  const auto seconds = [&] { return std::chrono::duration<double>(inference_clock::now() - start).count(); };
  mode_result out;
  auto& live_images = out.live_images;
  const std::int64_t images_here = p.features.front().num_cols();
  const std::int64_t batch = batch_width(p, s);
  // Y'(0) stays where it is (CSR, rows sorted by column, col_map ascending): each batch's columns
  // are a range of local columns, found in every row by binary search, in the execution space.
  const auto& y0 = p.features.front();
  const auto y0_rows = y0.local();
  const auto y0_col_map = y0.col_map();
  const auto col_map_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y0_col_map);
  const auto local_column_at = [&](std::int64_t image) {  // first local column whose image is >= image
    const auto* first = col_map_host.data();
    return static_cast<tessera::local_index>(std::lower_bound(first, first + col_map_host.extent(0), image) - first);
  };
  const auto batches = static_cast<std::size_t>((images_here + batch - 1) / batch);
  // Per row of Y'(0), the first entry no batch has taken yet (and where the next batch's fill
  // writes it: detail::fill_batch).
  const auto y0_row_count = y0_rows.row_ptr.extent(0) > 0 ? y0_rows.row_ptr.extent(0) - 1 : 0;
  Kokkos::View<tessera::offset_type*, typename Policy::memory_space> fill_cursor(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spdnn::fill_cursor"), y0_row_count);
  Kokkos::View<tessera::offset_type*, typename Policy::memory_space> next_fill_cursor(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spdnn::next_fill_cursor"), y0_row_count);
  Kokkos::deep_copy(fill_cursor, Kokkos::subview(y0_rows.row_ptr, std::make_pair(std::size_t{0}, y0_row_count)));
  const auto& w_rows = p.layers.front().mapping();
  using dense = tessera::dist_dense<T, Policy>;
  using memory_space = typename Policy::memory_space;
  // Two workspaces of the batch's width, made once: each step's Y and Z are blocks laid over them
  // at the step's width (dist_dense over the caller's memory), so nothing is allocated, faulted in
  // or zeroed per batch or per compaction (made anew, the blocks' pages were faulted in and zeroed
  // again for every batch). The activation's flags and marks likewise.
  const dense workspace[2] = {dense(p.comm, w_rows, batch), dense(p.comm, w_rows, batch)};
  const auto rows_here = workspace[0].local().extent(0);
  const Kokkos::View<char*, memory_space> flags_workspace("spdnn::live", static_cast<std::size_t>(batch));
  const auto marks_workspace = detail::activation_marks<spaces_of<Policy>>(rows_here, static_cast<std::size_t>(batch));
  const auto block_over = [&](const int which, const std::int64_t width) {
    return dense(p.comm, w_rows, typename dense::view_type(workspace[which].local().data(), rows_here, static_cast<std::size_t>(width)));
  };
  const auto flags_of = [&](const std::int64_t width) {
    return Kokkos::View<char*, memory_space>(flags_workspace.data(), static_cast<std::size_t>(width));
  };
  const auto marks_of = [&](const std::int64_t width) {
    return Kokkos::View<char**, Kokkos::LayoutRight, memory_space>(marks_workspace.data(), marks_workspace.extent(0),
                                                                   static_cast<std::size_t>(width));
  };
  // Dead images are dropped by compacting the live ones into a narrower block. Where W's plans
  // serve any width (no rank fetches rows: data parallelism), to the live count rounded up to 64
  // (whole panels of the SpMM kernel) as soon as that saves an eighth; otherwise to the next
  // power of two once half are dead, so that a few widths' plans serve every batch.
  const bool any_width = tessera::spmm_plan_for(p.layers.front(), workspace[0]).any_width();
  const auto compacted_width = [&](const std::int64_t live, const std::int64_t width) -> std::int64_t {
    const auto pow2 = static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(live)));
    if (!any_width) return live <= width / 2 ? pow2 : width;
    const std::int64_t rounded = live <= 64 ? pow2 : (live + 63) / 64 * 64;
    return rounded <= width - width / 8 ? rounded : width;
  };
  // The state of the images in flight: Y (in workspace y_at) and Z at `width` columns, column t
  // holding image image_of[t] (-1: none).
  int y_at = 0;
  std::int64_t width = batch;
  dense y = block_over(0, batch), z = block_over(1, batch);
  std::vector<std::int64_t> image_of;
  const auto lay_out = [&](const std::int64_t new_width) {
    y = block_over(y_at, new_width);
    z = block_over(1 - y_at, new_width);
    width = new_width;
  };
  // Layers [from, to) on the images in flight, dropping the dead ones on the way. Returns the
  // columns of Y alive at the end (with an image), or stops early, setting `cut`, once
  // stop_when_few and at most a sixteenth of a batch lives.
  const std::size_t layers = p.layers.size();
  std::size_t cut = layers;  // where a batch's survivors join the pool (see below); layers: no pool
  const auto run_layers = [&](const std::size_t from, const std::size_t to, const bool stop_when_few) {
    std::vector<std::int64_t> alive_columns;
    for (std::int64_t t = 0; t < width; ++t)
      if (image_of[static_cast<std::size_t>(t)] >= 0) alive_columns.push_back(t);
    for (std::size_t l = from; l < to && !alive_columns.empty(); ++l) {
      auto flags = flags_of(width);
      tessera::spmm(p.layers[l], y, z);
      detail::activate_dense<T, spaces_of<Policy>>(z.local(), flags, marks_of(width), act);
      auto host_flags = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, flags);
      std::vector<char> alive(host_flags.data(), host_flags.data() + host_flags.extent(0));
      if (p.comm.size() > 1) {  // a column lives if any rank's neurons kept a nonzero
        p.comm.allreduce_inplace(alive, MPI_MAX);
        out.liveness_bytes += static_cast<std::int64_t>(alive.size());
      }
      std::swap(y, z);
      y_at = 1 - y_at;
      alive_columns.clear();
      for (std::size_t t = 0; t < alive.size(); ++t)
        if (alive[t] && image_of[t] >= 0) alive_columns.push_back(static_cast<std::int64_t>(t));
      const auto live = static_cast<std::int64_t>(alive_columns.size());
      if (s.on_layer && world.rank() == 0) s.on_layer(static_cast<int>(l) + 1, seconds(), live);
      if (stop_when_few && l + 1 < to && live * 16 <= batch) {
        cut = l + 1;
        break;
      }
      const std::int64_t new_width = live == 0 ? width : compacted_width(live, width);
      if (new_width == width) continue;
      // Drop the dead images: the live columns, in order, into the other workspace (Z's: free
      // until the next product) at the narrower width.
      std::vector<std::int64_t> new_image(static_cast<std::size_t>(new_width), -1);
      for (std::size_t i = 0; i < alive_columns.size(); ++i)
        new_image[i] = image_of[static_cast<std::size_t>(alive_columns[i])];
      const auto keep_view = tessera::to_view<std::int64_t, memory_space>(alive_columns, "spdnn::keep");
      const dense compact = block_over(1 - y_at, new_width);
      detail::compact_columns<T, spaces_of<Policy>>(y.local(), compact.local(), keep_view);
      y_at = 1 - y_at;
      lay_out(new_width);
      image_of = std::move(new_image);
      for (std::size_t i = 0; i < alive_columns.size(); ++i) alive_columns[i] = static_cast<std::int64_t>(i);
    }
    return alive_columns;
  };
  const auto found_categories = [&](const std::vector<std::int64_t>& columns) {
    for (const auto t : columns) live_images.push_back(p.first_image + image_of[static_cast<std::size_t>(t)]);
  };
  // The pool: once most of a batch has died (at layer `cut`, found by the first batch), its few
  // survivors wait in the pool for the next batches' survivors and go through the remaining
  // layers together, a block of up to a batch's width. Each batch on its own took its handful
  // of images through every layer at a width of 1 to 32, reading all of W for each: a quarter
  // of the inference at 4,096 neurons.
  // The pool holds up to two batches' width: a batch's survivors (at most a batch) are appended
  // while fewer than a batch wait, and it is emptied, a batch's width at a time, once a batch
  // waits (the workspaces are free then: the batch's survivors are in the pool).
  const dense pool(p.comm, w_rows, 2 * batch);
  std::vector<std::int64_t> pool_images;
  const auto flush_pool = [&] {
    for (std::size_t start = 0; start < pool_images.size(); start += static_cast<std::size_t>(batch)) {
      const std::size_t count = std::min(pool_images.size() - start, static_cast<std::size_t>(batch));
      y_at = 0;
      lay_out(compacted_width(static_cast<std::int64_t>(count), batch));
      std::vector<std::int64_t> columns(count);
      for (std::size_t i = 0; i < count; ++i) columns[i] = static_cast<std::int64_t>(start + i);
      detail::compact_columns<T, spaces_of<Policy>>(pool.local(), y.local(), tessera::to_view<std::int64_t, memory_space>(columns, "spdnn::keep"));
      image_of.assign(static_cast<std::size_t>(width), -1);
      std::copy_n(pool_images.begin() + static_cast<std::ptrdiff_t>(start), count, image_of.begin());
      found_categories(run_layers(cut, layers, false));
    }
    pool_images.clear();
  };
  for (std::size_t b = 0; b < batches; ++b) {
    image_of.assign(static_cast<std::size_t>(batch), -1);
    const auto batch_first = static_cast<std::int64_t>(b) * batch;
    for (std::int64_t t = 0; t < batch && batch_first + t < images_here; ++t)
      image_of[static_cast<std::size_t>(t)] = batch_first + t;
    y_at = 0;
    lay_out(batch);
    if (b > 0) y.fill(T(0));  // fill_batch writes the batch's nonzeros only
    detail::fill_batch<T, spaces_of<Policy>>(y0_rows, y0_col_map, local_column_at(batch_first), local_column_at(batch_first + batch),
                                  batch_first, y.local(), fill_cursor, next_fill_cursor);
    std::swap(fill_cursor, next_fill_cursor);
    const bool first = b == 0;
    const auto survivors = run_layers(0, cut, first && batches > 1);
    if (cut == layers) {  // no pool (yet): these went through every layer
      found_categories(survivors);
      continue;
    }
    const auto from = tessera::to_view<std::int64_t, memory_space>(survivors, "spdnn::survivors");
    detail::append_columns<T, spaces_of<Policy>>(y.local(), from, pool.local(), static_cast<std::int64_t>(pool_images.size()));
    for (const auto t : survivors) pool_images.push_back(image_of[static_cast<std::size_t>(t)]);
    if (static_cast<std::int64_t>(pool_images.size()) >= batch) flush_pool();
  }
  flush_pool();
  return out;
}

}  // namespace spdnn
