func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.composite"(%a) {name = "my.neg", composite_attributes = 5 : i64, decomposition = @neg} : (tensor<f32>) -> tensor<f32>
  "func.return"(%0) : (tensor<f32>) -> ()
}
func.func private @neg(%a: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.negate"(%a) : (tensor<f32>) -> tensor<f32>
  "func.return"(%0) : (tensor<f32>) -> ()
}
