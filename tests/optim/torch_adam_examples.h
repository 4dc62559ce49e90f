// torch.optim.Adam and AdamW's worked examples: from p = [1, -2, 0.5], three
// steps with kTorchAdamGrads, the parameter after each step as torch computes
// it in float64. Shared by the optimizer's test and the config factory's.
#pragma once

#include <vector>

#include "optim/adam_rule.h"

namespace ts::optim {

struct TorchAdamExample {
  const char* name;
  AdamOptions options;
  std::vector<std::vector<double>> after_step;
};

inline const std::vector<double> kTorchAdamStart = {1, -2, 0.5};
inline const std::vector<std::vector<double>> kTorchAdamGrads = {
    {0.5, -0.25, 1.0}, {-0.3, 0.75, 0.2}, {0.1, 0.1, -2.0}};

// Together they set every option away from its default.
inline const std::vector<TorchAdamExample> kTorchAdamExamples = {
    {"adam",
     {.lr = 0.1},
     {{0.90000000199999997, -1.9000000039999998, 0.40000000099999999},
      {0.88085019894177519, -1.9494189864458513, 0.31969590427077721},
      {0.85545368061636839, -1.9953385739674545, 0.34844128881808384}}},
    {"adam, weight decay",
     {.lr = 0.1, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-3, .weight_decay = 0.05},
     {{0.90018148820326682, -1.9002849002849003, 0.40009746588693956},
      {0.87622145175413846, -1.9398262338098058, 0.32208137051847935},
      {0.84294532783250786, -1.9687535403710699, 0.35838948959046413}}},
    {"adamw",
     {.lr = 0.1, .weight_decay = 0.05, .decoupled_weight_decay = true},
     {{0.89500000199999996, -1.8900000039999998, 0.39750000099999999},
      {0.87137519893177517, -1.9299689864258514, 0.31520840426577723},
      {0.84162180461170955, -1.9662387290153254, 0.34237774679175498}}},
    // With beta2 0.5 the second moment falls at steps 2 and 3, where
    // amsgrad keeps its maximum (with 0.999 it never fell, and the amsgrad
    // example matched plain Adam's).
    {"adam, amsgrad",
     {.lr = 0.1, .beta2 = 0.5, .amsgrad = true},
     {{0.90000000199999997, -1.9000000039999998, 0.40000000099999999},
      {0.88066192555697487, -1.9439187077730429, 0.32909371984048696},
      {0.85771906424147004, -1.9801866909583092, 0.35295299067154895}}},
    {"adam, beta2 0.5",
     {.lr = 0.1, .beta2 = 0.5},
     {{0.90000000199999997, -1.9000000039999998, 0.40000000099999999},
      {0.87914721792729389, -1.9439187077730429, 0.30350877453801167},
      {0.84568161562615529, -1.9943667665472271, 0.32736804536907371}}},
    {"adamw, amsgrad",
     {.lr = 0.05, .beta1 = 0.5, .beta2 = 0.9, .weight_decay = 0.2, .amsgrad = true, .decoupled_weight_decay = true},
     {{0.94000000100000003, -1.9300000019999999, 0.44500000049999999},
      {0.93469326976509881, -1.9472071535998676, 0.40838722051678944},
      {0.91906108680509357, -1.9524001853775588, 0.43955738378343723}}},
};

}  // namespace ts::optim
