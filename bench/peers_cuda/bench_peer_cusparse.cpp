// cuSPARSE and cuBLAS on the same GPU and the same inputs as tessera's benchmarks, with the same
// JSON fields: SpMM (cusparseSpMM, X and Y row-major, X filled as bench_spmm fills it, so the
// checksums agree), SpGEMM A * A (cusparseSpGEMM, the whole sequence timed: work estimation,
// compute, allocation of C, copy), transpose (cusparseCsr2cscEx2) and DGEMM (cublasDgemm on
// n x n). One rank: the peers run on one GPU. Built only where Kokkos has CUDA (docs/gpu.md).
//
//   bench_peer_cusparse --matrix A.mtx --k 8,32,128 --ops spmm,spgemm,transpose --reps 5
//   bench_peer_cusparse --dense 8192 --ops dgemm
#include "peer_common.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "bench_peer_cusparse: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}
void check_sparse(cusparseStatus_t status, const char* what) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    std::fprintf(stderr, "bench_peer_cusparse: %s: %s\n", what, cusparseGetErrorString(status));
    std::exit(1);
  }
}
void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "bench_peer_cusparse: %s: cuBLAS status %d\n", what, static_cast<int>(status));
    std::exit(1);
  }
}

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* out = nullptr;
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&out), std::max<std::size_t>(1, host.size()) * sizeof(T)), "cudaMalloc");
  if (!host.empty()) check_cuda(cudaMemcpy(out, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return out;
}

template <class T>
double device_sum(const T* data, std::size_t n) {
  std::vector<T> host(n);
  if (n > 0) check_cuda(cudaMemcpy(host.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  double s = 0;
  for (const T v : host) s += static_cast<double>(v);
  return s;
}

// Median seconds of `reps` runs of f, each synchronised, after one warm-up run.
template <class F>
double median_seconds(int reps, F&& f) {
  f();
  check_cuda(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    check_cuda(cudaDeviceSynchronize(), "run");
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// A on the device as 32-bit CSR (cuSPARSE's common index type).
struct device_csr {
  int rows = 0, cols = 0;
  long long nnz = 0;
  int* ptr = nullptr;
  int* col = nullptr;
  double* val = nullptr;
  cusparseSpMatDescr_t descr = nullptr;
};

device_csr upload(const tessera::bench::peer::local_csr& a) {
  device_csr d;
  d.rows = static_cast<int>(a.rows);
  d.cols = static_cast<int>(a.cols);
  d.nnz = static_cast<long long>(a.col_idx.size());
  d.ptr = device_copy(std::vector<int>(a.row_ptr.begin(), a.row_ptr.end()));
  d.col = device_copy(std::vector<int>(a.col_idx.begin(), a.col_idx.end()));
  d.val = device_copy(a.values);
  check_sparse(cusparseCreateCsr(&d.descr, d.rows, d.cols, d.nnz, d.ptr, d.col, d.val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                 CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
               "cusparseCreateCsr");
  return d;
}

void line(const std::string& fields) { std::printf("{\"bench\": \"peer_cusparse\", %s}\n", fields.c_str()); }

}  // namespace

int main(int argc, char** argv) {
  // --ops and --dense are this program's; the rest is the peers' common command line.
  std::string ops = "spmm,spgemm,transpose";
  long dense = 0;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ops" && i + 1 < argc) ops = argv[++i];
    else if (arg == "--dense" && i + 1 < argc) dense = std::stol(argv[++i]);
    else rest.push_back(argv[i]);
  }
  const bool has_matrix = ops.find("spmm") != std::string::npos || ops.find("spgemm") != std::string::npos ||
                          ops.find("transpose") != std::string::npos;
  if (!has_matrix) rest.insert(rest.end(), {const_cast<char*>("--random"), const_cast<char*>("1")});
  auto pa = tessera::bench::peer::parse(static_cast<int>(rest.size()), rest.data());
  tessera::environment env(pa.rest_count, pa.rest_argv);
  const auto& comm = env.world();
  if (comm.size() != 1) {
    if (comm.rank() == 0) std::fprintf(stderr, "bench_peer_cusparse: runs on one rank (one GPU), not %d\n", comm.size());
    return 2;
  }
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const std::string device = fmt::format("\"device\": \"{}\"", prop.name);
  cusparseHandle_t sparse = nullptr;
  check_sparse(cusparseCreate(&sparse), "cusparseCreate");
  const int reps = pa.base.reps;

  if (has_matrix) {
    const auto host = tessera::bench::peer::input_rows(comm, pa.base);
    const std::string name = tessera::bench::matrix_name(pa.base);
    device_csr a = upload(host);
    const double alpha = 1, beta = 0;

    if (ops.find("spmm") != std::string::npos)
      for (const long k : pa.widths) {
        std::vector<double> x(static_cast<std::size_t>(a.cols) * static_cast<std::size_t>(k));
        for (long i = 0; i < a.cols; ++i)
          for (long j = 0; j < k; ++j) x[static_cast<std::size_t>(i * k + j)] = 1.0 / static_cast<double>(1 + (i + j) % 7);
        double* dx = device_copy(x);
        double* dy = device_copy(std::vector<double>(static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(k)));
        cusparseDnMatDescr_t xd = nullptr, yd = nullptr;
        check_sparse(cusparseCreateDnMat(&xd, a.cols, k, k, dx, CUDA_R_64F, CUSPARSE_ORDER_ROW), "cusparseCreateDnMat");
        check_sparse(cusparseCreateDnMat(&yd, a.rows, k, k, dy, CUDA_R_64F, CUSPARSE_ORDER_ROW), "cusparseCreateDnMat");
        std::size_t bytes = 0;
        check_sparse(cusparseSpMM_bufferSize(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                             a.descr, xd, &beta, yd, CUDA_R_64F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
                     "cusparseSpMM_bufferSize");
        void* buffer = nullptr;
        check_cuda(cudaMalloc(&buffer, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
        const double seconds = median_seconds(reps, [&] {
          check_sparse(cusparseSpMM(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a.descr,
                                    xd, &beta, yd, CUDA_R_64F, CUSPARSE_SPMM_ALG_DEFAULT, buffer),
                       "cusparseSpMM");
        });
        const double checksum = device_sum(dy, static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(k));
        line(fmt::format("{}, \"op\": \"spmm\", \"matrix\": \"{}\", \"k\": {}, \"seconds\": {:.6f}, \"reps\": {}, "
                         "\"gflops\": {:.4f}, \"nnz\": {}, \"checksum\": {:.10g}",
                         device, name, k, seconds, reps, 2.0 * static_cast<double>(a.nnz) * static_cast<double>(k) / seconds / 1e9,
                         a.nnz, checksum));
        cusparseDestroyDnMat(xd);
        cusparseDestroyDnMat(yd);
        cudaFree(buffer);
        cudaFree(dx);
        cudaFree(dy);
      }

    if (ops.find("spgemm") != std::string::npos && a.rows == a.cols) {
      long long c_nnz = 0;
      double checksum = 0;
      // The whole product, as a user runs it; `measure`: also sum C's values (outside the timing).
      const auto product = [&](bool measure) {
        cusparseSpGEMMDescr_t spgemm = nullptr;
        check_sparse(cusparseSpGEMM_createDescr(&spgemm), "cusparseSpGEMM_createDescr");
        int* c_ptr = nullptr;
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&c_ptr), (static_cast<std::size_t>(a.rows) + 1) * sizeof(int)), "cudaMalloc");
        cusparseSpMatDescr_t c = nullptr;
        check_sparse(cusparseCreateCsr(&c, a.rows, a.cols, 0, c_ptr, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
                     "cusparseCreateCsr");
        const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
        std::size_t bytes1 = 0, bytes2 = 0;
        void *buffer1 = nullptr, *buffer2 = nullptr;
        check_sparse(cusparseSpGEMM_workEstimation(sparse, op, op, &alpha, a.descr, a.descr, &beta, c, CUDA_R_64F,
                                                   CUSPARSE_SPGEMM_DEFAULT, spgemm, &bytes1, nullptr),
                     "cusparseSpGEMM_workEstimation");
        check_cuda(cudaMalloc(&buffer1, std::max<std::size_t>(bytes1, 1)), "cudaMalloc");
        check_sparse(cusparseSpGEMM_workEstimation(sparse, op, op, &alpha, a.descr, a.descr, &beta, c, CUDA_R_64F,
                                                   CUSPARSE_SPGEMM_DEFAULT, spgemm, &bytes1, buffer1),
                     "cusparseSpGEMM_workEstimation");
        check_sparse(cusparseSpGEMM_compute(sparse, op, op, &alpha, a.descr, a.descr, &beta, c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT,
                                            spgemm, &bytes2, nullptr),
                     "cusparseSpGEMM_compute");
        check_cuda(cudaMalloc(&buffer2, std::max<std::size_t>(bytes2, 1)), "cudaMalloc");
        check_sparse(cusparseSpGEMM_compute(sparse, op, op, &alpha, a.descr, a.descr, &beta, c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT,
                                            spgemm, &bytes2, buffer2),
                     "cusparseSpGEMM_compute");
        std::int64_t rows = 0, cols = 0, nnz = 0;
        check_sparse(cusparseSpMatGetSize(c, &rows, &cols, &nnz), "cusparseSpMatGetSize");
        int* c_col = nullptr;
        double* c_val = nullptr;
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&c_col), std::max<std::int64_t>(nnz, 1) * sizeof(int)), "cudaMalloc");
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&c_val), std::max<std::int64_t>(nnz, 1) * sizeof(double)), "cudaMalloc");
        check_sparse(cusparseCsrSetPointers(c, c_ptr, c_col, c_val), "cusparseCsrSetPointers");
        check_sparse(cusparseSpGEMM_copy(sparse, op, op, &alpha, a.descr, a.descr, &beta, c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT,
                                         spgemm),
                     "cusparseSpGEMM_copy");
        check_cuda(cudaDeviceSynchronize(), "spgemm");
        c_nnz = nnz;
        if (measure) checksum = device_sum(c_val, static_cast<std::size_t>(nnz));
        cusparseDestroySpMat(c);
        cusparseSpGEMM_destroyDescr(spgemm);
        cudaFree(buffer1);
        cudaFree(buffer2);
        cudaFree(c_ptr);
        cudaFree(c_col);
        cudaFree(c_val);
      };
      const double seconds = median_seconds(reps, [&] { product(false); });
      product(true);
      line(fmt::format("{}, \"op\": \"spgemm\", \"matrix\": \"{}\", \"seconds\": {:.6f}, \"reps\": {}, \"nnz_in\": {}, "
                       "\"nnz_out\": {}, \"checksum\": {:.10g}",
                       device, name, seconds, reps, a.nnz, c_nnz, checksum));
    }

    if (ops.find("transpose") != std::string::npos) {
      int *t_ptr = nullptr, *t_row = nullptr;
      double* t_val = nullptr;
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&t_ptr), (static_cast<std::size_t>(a.cols) + 1) * sizeof(int)), "cudaMalloc");
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&t_row), std::max<long long>(a.nnz, 1) * sizeof(int)), "cudaMalloc");
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&t_val), std::max<long long>(a.nnz, 1) * sizeof(double)), "cudaMalloc");
      std::size_t bytes = 0;
      check_sparse(cusparseCsr2cscEx2_bufferSize(sparse, a.rows, a.cols, static_cast<int>(a.nnz), a.val, a.ptr, a.col, t_val, t_ptr,
                                                 t_row, CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                                 CUSPARSE_CSR2CSC_ALG1, &bytes),
                   "cusparseCsr2cscEx2_bufferSize");
      void* buffer = nullptr;
      check_cuda(cudaMalloc(&buffer, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
      const double seconds = median_seconds(reps, [&] {
        check_sparse(cusparseCsr2cscEx2(sparse, a.rows, a.cols, static_cast<int>(a.nnz), a.val, a.ptr, a.col, t_val, t_ptr, t_row,
                                        CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, buffer),
                     "cusparseCsr2cscEx2");
      });
      const double checksum = device_sum(t_val, static_cast<std::size_t>(a.nnz));
      line(fmt::format("{}, \"op\": \"transpose\", \"matrix\": \"{}\", \"seconds\": {:.6f}, \"reps\": {}, \"nnz_out\": {}, "
                       "\"checksum\": {:.10g}",
                       device, name, seconds, reps, a.nnz, checksum));
      cudaFree(buffer);
      cudaFree(t_ptr);
      cudaFree(t_row);
      cudaFree(t_val);
    }
    cusparseDestroySpMat(a.descr);
    cudaFree(a.ptr);
    cudaFree(a.col);
    cudaFree(a.val);
  }

  if (ops.find("dgemm") != std::string::npos && dense > 0) {
    cublasHandle_t blas = nullptr;
    check_blas(cublasCreate(&blas), "cublasCreate");
    const auto n = static_cast<std::size_t>(dense);
    std::vector<double> fill(n * n);
    for (std::size_t i = 0; i < fill.size(); ++i) fill[i] = 1.0 / static_cast<double>(1 + i % 7);
    double* a = device_copy(fill);
    double* b = device_copy(fill);
    double* c = device_copy(std::vector<double>(n * n));
    const double one = 1, zero = 0;
    const int m = static_cast<int>(dense);
    const double seconds = median_seconds(reps, [&] {
      check_blas(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, m, b, m, &zero, c, m), "cublasDgemm");
    });
    line(fmt::format("{}, \"op\": \"dgemm\", \"matrix\": \"dense{}\", \"seconds\": {:.6f}, \"reps\": {}, \"gflops\": {:.1f}", device,
                     dense, seconds, reps, 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / seconds / 1e9));
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cublasDestroy(blas);
  }
  cusparseDestroy(sparse);
  return 0;
}
