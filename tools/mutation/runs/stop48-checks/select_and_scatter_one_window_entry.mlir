func.func @main(%op: tensor<4x4xf32>, %src: tensor<2x2xf32>, %init: tensor<f32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.select_and_scatter"(%op, %src, %init) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %c = "stablehlo.compare"(%x, %y) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2, 2>} : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  "func.return"(%0) : (tensor<4x4xf32>) -> ()
}
