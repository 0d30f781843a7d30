func.func @main(%arg0: tensor<5x2xf32>, %arg1: tensor<3x1xi32>, %s: tensor<2xi64>) -> (tensor<3xf32>) {
  %0 = "stablehlo.dynamic_gather"(%arg0, %arg1, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false} : (tensor<5x2xf32>, tensor<3x1xi32>, tensor<2xi64>) -> tensor<3xf32>
  "func.return"(%0) : (tensor<3xf32>) -> ()
}
