func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.uniform_quantize"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%0) : (tensor<4xf32>) -> ()
}
