func.func @main(%i: tensor<si32>) -> tensor<f32> {
  %0 = "stablehlo.case"(%i) : (tensor<si32>) -> tensor<f32>
  "func.return"(%0) : (tensor<f32>) -> ()
}
