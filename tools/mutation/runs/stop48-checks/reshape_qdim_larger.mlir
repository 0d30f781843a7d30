func.func @main(%a: tensor<4x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2, 0.125:0}>>) -> tensor<4x2x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2}>> {
  %0 = "stablehlo.reshape"(%a) : (tensor<4x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2, 0.125:0}>>) -> tensor<4x2x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2}>>
  "func.return"(%0) : (tensor<4x2x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2}>>) -> ()
}
