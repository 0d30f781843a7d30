#!/bin/sh
# Each program of this folder read unmutated and with the mutant its name is about (tools/mutation/try_mutant.py);
# the output is ../stop48-checks.txt.  Run from the repository root: sh tools/mutation/runs/stop48-checks/run.sh
D=tools/mutation/runs/stop48-checks
T=".venv/bin/python tools/mutation/try_mutant.py"
check() { echo "== $1"; $T '' "$D/$1"; $T "$2" "$D/$1"; echo; }
check case_no_branches.mlir 'spec/ops/case.py | case_c4 | core/ReplaceComparisonOperator_Eq_GtE | return size(op.results["results"]) == 0 | 0'
check convolution_batch_group_zero.mlir 'spec/ops/convolution.py | convolution_c24 | core/ReplaceComparisonOperator_Eq_LtE | return Or(op.feature_group_count == 1, op.batch_group_count == 1) | 1'
check dot_general_three_contracting.mlir 'spec/ops/dot_general.py | result_type | shlo/DropBranch | if len(lhs_named) > rank(op.lhs) or len(rhs_named) > rank(op.rhs): | 0'
check select_and_scatter_one_window_entry.mlir 'spec/ops/select_and_scatter.py | num_windows | core/NumberReplacer | wd = at(op.window_dimensions, i, 1) | 1'
check dynamic_gather_offset_past_rank.mlir 'spec/added/dynamic_gather.py | _batch_axes_fit | core/ReplaceComparisonOperator_Eq_LtE | any_of(And(cond, r == len(batch) + len(op.offset_dims), n_rest == len(batch), | 0'
check dynamic_gather_offset_repeated.mlir 'spec/added/dynamic_gather.py | _batch_axes_fit | core/ReplaceComparisonOperator_Eq_LtE | any_of(And(cond, r == len(batch) + len(op.offset_dims), n_rest == len(batch), | 0'
check transpose_qdim_minus_one.mlir 'spec/ops/transpose.py | transpose_c4 | core/NumberReplacer | return And(in_range(d, 0, len(perm)), at(perm, d, default=-1) == op.operand.element_type.quantization_dimension) | 1'
check reshape_qdim_larger.mlir 'spec/ops/reshape.py | reshape_c3 | core/ReplaceComparisonOperator_Eq_GtE | at(before(sa), a, -1) == at(before(sb), b, -2), at(sa, a, -1) == at(sb, b, -2), | 1'
check uniform_quantize_float_result.mlir 'spec/added/uniform_quantize.py | uniform_quantize_c2 | shlo/DropBranch | if not is_quantized(op.result): | 0'
# Stop 47 declared this one for "StableHLO's verifier refuses it first": the mutant accepts it.
check composite_integer_attributes.mlir 'spec/added/composite.py | from_mlir | shlo/DropBranch | if not (t.startswith("{") and t.endswith("}")): | 0'
