#pragma once
// Distributed sparse DNN inference, every variant on tessera's own operations.
// Model parallelism and the dense (spmm) mode use the column-vector form
// Y' = W'Y' (neurons as rows, images as columns): tensor parallelism splits
// neurons, and spmm multiplies a sparse matrix by a dense block. Data-parallel
// spgemm uses the row form Y = Y W (images as rows): each product then
// fetches only the small W, and every output row is one image.
//
//   --parallel model  W' and Y' split by neurons over all ranks; each layer's
//                     product fetches exactly the rows of Y' that the local
//                     rows of W' reference (tensor parallelism, as in SGA).
//   --parallel data   W' replicated, images split: each rank runs the same
//                     operations on a communicator of its own, so no layer
//                     sends anything.
//   --mode spgemm     Y' sparse: Z = spgemm(W', Y'), then the fused
//                     bias + ReLU + clamp that also drops the zeros; a dead
//                     image has no entries left, so it costs nothing later.
//   --mode spmm       Y' dense, in batches of images: Z = spmm(W', Y') with
//                     the plan of each layer cached and reused by every batch;
//                     dead images are dropped by compacting the batch: to
//                     the live ones rounded up to 64 where a layer's plan
//                     serves any width (data parallel), else to the next
//                     power of two (so the plans of a few widths serve all
//                     batches).
//   --mode fused      data parallel only: each image's sparse row through every
//                     layer in one work item, the product and the activation
//                     fused, outputs with identical columns of W computed once
//                     (fused_layers.hpp); a dead image simply stops.
//
// This header includes them all: problem.hpp (settings, problem, prepare, infer), make_problem.hpp
// and one header per mode (fused_inference.hpp, dense_inference.hpp, sparse_inference.hpp).

#include "dense_inference.hpp"
#include "fused_inference.hpp"
#include "make_problem.hpp"
#include "problem.hpp"
#include "sparse_inference.hpp"
