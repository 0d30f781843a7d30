func.func @main(%arg0: tensor<4x!quant.uniform<i8:f32, 0.1>>) -> (tensor<4x!quant.uniform<i8:f32, 0.1>>) {
  %0:2 = "stablehlo.sort"(%arg0) ({
  ^bb0(%a: tensor<!quant.uniform<i8:f32, 0.1>>, %b: tensor<!quant.uniform<i8:f32, 0.1>>):
    %c = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<!quant.uniform<i8:f32, 0.1>>, tensor<!quant.uniform<i8:f32, 0.1>>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = false} : (tensor<4x!quant.uniform<i8:f32, 0.1>>) -> (tensor<4x!quant.uniform<i8:f32, 0.1>>, tensor<4x!quant.uniform<i8:f32, 0.1>>)
  "func.return"(%0#0) : (tensor<4x!quant.uniform<i8:f32, 0.1>>) -> ()
}
