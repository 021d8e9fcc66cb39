// SuiteSparse:GraphBLAS running the same sparse DNN inference as tessera-spdnn
// (the same RadiX-Net and features from the same seed), the way LAGraph's dnn
// does it: per layer Y = Y * W (GrB_mxm, plus-times), bias on the entries,
// keep those > 0 (GrB_select), clamp at 32 (GrB_apply). The bias is a bound
// GrB_apply rather than LAGraph's mxm with a diagonal matrix: cheaper, so the
// comparison favours GraphBLAS. Prints one JSON line, like tessera-spdnn.
#include "spdnn/network.hpp"
#include "spdnn/reference.hpp"

extern "C" {
#include <GraphBLAS.h>
}

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(GrB_Info info, const char* what) {
  if (info != GrB_SUCCESS) {
    fmt::print(stderr, "GraphBLAS: {} failed ({})\n", what, static_cast<int>(info));
    std::exit(1);
  }
}

GrB_Matrix to_graphblas(const spdnn::host_sparse<float>& a, std::int64_t rows, std::int64_t cols) {
  std::vector<GrB_Index> r, c;
  r.reserve(a.col_idx.size());
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (auto e = a.row_ptr[static_cast<std::size_t>(i)]; e < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      r.push_back(static_cast<GrB_Index>(i));
      c.push_back(static_cast<GrB_Index>(a.col_idx[static_cast<std::size_t>(e)]));
    }
  GrB_Matrix m = nullptr;
  check(GrB_Matrix_new(&m, GrB_FP32, static_cast<GrB_Index>(rows), static_cast<GrB_Index>(cols)), "GrB_Matrix_new");
  check(GrB_Matrix_build_FP32(m, r.data(), c.data(), a.values.data(), r.size(), GrB_PLUS_FP32), "GrB_Matrix_build");
  check(GrB_Matrix_wait(m, GrB_MATERIALIZE), "GrB_Matrix_wait");
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  int neurons = 1024, layers = 120, threads = 2, reps = 1;
  std::int64_t inputs = 60000;
  std::uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (a == "--neurons") neurons = static_cast<int>(v);
    else if (a == "--layers") layers = static_cast<int>(v);
    else if (a == "--inputs") inputs = v;
    else if (a == "--seed") seed = static_cast<std::uint64_t>(v);
    else if (a == "--threads") threads = static_cast<int>(v);
    else if (a == "--reps") reps = static_cast<int>(v);
    else {
      fmt::print(stderr, "usage: {} [--neurons N] [--layers L] [--inputs M] [--seed S] [--threads T] [--reps R]\n", argv[0]);
      return 2;
    }
  }
  check(GrB_init(GrB_NONBLOCKING), "GrB_init");
  check(GxB_Global_Option_set(GxB_GLOBAL_NTHREADS, threads), "GxB_set(NTHREADS)");
  const float bias = static_cast<float>(spdnn::challenge_bias(neurons));
  const spdnn::radixnet net(neurons, seed);
  std::vector<GrB_Matrix> w;
  for (int l = 1; l <= layers; ++l) w.push_back(to_graphblas(spdnn::radixnet_layer<float>(net, l), neurons, neurons));
  const auto features = spdnn::generated_features<float>(spdnn::feature_generator(neurons, seed), neurons, 0, inputs);
  GrB_Matrix y0 = to_graphblas(features, inputs, neurons);

  std::vector<double> times;
  GrB_Index categories = 0;
  for (int rep = 0; rep < reps; ++rep) {
    GrB_Matrix y = nullptr;
    check(GrB_Matrix_new(&y, GrB_FP32, static_cast<GrB_Index>(inputs), static_cast<GrB_Index>(neurons)), "GrB_Matrix_new");
    const auto start = std::chrono::steady_clock::now();
    for (int l = 0; l < layers; ++l) {
      check(GrB_mxm(y, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP32, l == 0 ? y0 : y, w[static_cast<std::size_t>(l)],
                    nullptr),
            "GrB_mxm");
      check(GrB_Matrix_apply_BinaryOp2nd_FP32(y, nullptr, nullptr, GrB_PLUS_FP32, y, bias, nullptr), "bias");
      check(GrB_Matrix_select_FP32(y, nullptr, nullptr, GrB_VALUEGT_FP32, y, 0.0f, nullptr), "GrB_select");
      check(GrB_Matrix_apply_BinaryOp2nd_FP32(y, nullptr, nullptr, GrB_MIN_FP32, y, 32.0f, nullptr), "clamp");
    }
    // Categories: the rows with an entry (reduce the rows, count them).
    GrB_Vector alive = nullptr;
    check(GrB_Vector_new(&alive, GrB_FP32, static_cast<GrB_Index>(inputs)), "GrB_Vector_new");
    check(GrB_Matrix_reduce_Monoid(alive, nullptr, nullptr, GrB_PLUS_MONOID_FP32, y, nullptr), "GrB_reduce");
    check(GrB_Vector_nvals(&categories, alive), "GrB_Vector_nvals");
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    GrB_Vector_free(&alive);
    GrB_Matrix_free(&y);
  }
  std::sort(times.begin(), times.end());
  const double seconds = times[times.size() / 2];
  const double edges = static_cast<double>(inputs) * spdnn::edges_per_neuron * neurons * layers;
  fmt::print(
      "{{\"bench\": \"spdnn\", \"peer\": \"graphblas\", \"neurons\": {}, \"layers\": {}, \"inputs\": {}, \"mode\": "
      "\"spgemm\", \"parallel\": \"threads\", \"threads\": {}, \"np\": 1, \"seconds\": {:.6f}, \"reps\": {}, "
      "\"edges_per_second\": {:.6e}, \"categories\": {}}}\n",
      neurons, layers, inputs, threads, seconds, reps, edges / seconds, categories);
  for (auto& m : w) GrB_Matrix_free(&m);
  GrB_Matrix_free(&y0);
  GrB_finalize();
  return 0;
}
