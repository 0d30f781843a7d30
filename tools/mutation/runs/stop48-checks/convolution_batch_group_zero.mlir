func.func @main(%a: tensor<2x4x4x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<2x2x2x2xf32> {
  %0 = "stablehlo.convolution"(%a, %w) {batch_group_count = 0 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 2 : i64} : (tensor<2x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<2x2x2x2xf32>
  "func.return"(%0) : (tensor<2x2x2x2xf32>) -> ()
}
