func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32:0, {0.5:1, 0.25:2}>>) -> tensor<3x2x!quant.uniform<i8:f32:-1, {0.5:1, 0.25:2}>> {
  %0 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3x!quant.uniform<i8:f32:0, {0.5:1, 0.25:2}>>) -> tensor<3x2x!quant.uniform<i8:f32:-1, {0.5:1, 0.25:2}>>
  "func.return"(%0) : (tensor<3x2x!quant.uniform<i8:f32:-1, {0.5:1, 0.25:2}>>) -> ()
}
