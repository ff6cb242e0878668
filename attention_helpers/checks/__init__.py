"""Exercise checkers: compare a learner's array or function with the reference
and, when it is wrong, name the likely mistake.

    ah.checks.check_softmax(my_softmax)   # shows ✅ Correct: … or ❌ Not yet: …

One module per notebook (nb00 … nb11, nb05b), on a shared base (_base.py: the Check
result, `compare`, grading mode) and shared mistake builders (_mistakes.py).
Every checker returns a Check with `ok`, `kind`, `hint` and `mistake`;
`bool(check)` says whether it passed. With `ah.checks.grading(True)` (or the
environment variable ATTENTION_GRADING=1) a failed check raises AssertionError
with its hint, so a check cell works as an nbgrader autograder test.

A new exercise: write `check_…` in the module of its notebook (a new notebook
gets its own nbNN.py), decorate it with `@checker`, build its result with
`compare`, `right` or `wrong` (see _base.py), giving every named mistake a short
stable key that tests check, `mistakes={"no_scale": (hint, wrong_array)}`; read
its data from `examples` or take it as arguments, and import it here. The
reference answer goes in solutions/nbNN.py, under the name the notebook's stub
binds.
"""

from . import nb00, nb01, nb02, nb03, nb04, nb05, nb05b, nb06, nb07, nb08, nb09, nb10, nb11
from ._base import KINDS, Check, compare, grading, grading_on
from .nb00 import check_add_positions, check_build_X, check_x_shape
from .nb01 import check_key_entry, check_qkv, check_qkv_shapes
from .nb02 import check_eats_fish_score, check_scores, check_scores_shape
from .nb03 import check_attention, check_dot_variance, check_scaled_attention
from .nb04 import check_probability_by_hand, check_softmax, check_stable_softmax, check_temperature_for_ratio
from .nb05 import check_masked_attention, check_output_row
from .nb05b import check_multi_head, check_padding_mask
from .nb06 import check_decode_step, check_kv_head, check_mistral_cache_bytes
from .nb07 import check_rope, check_rotate_pair, check_same_score_position
from .nb08 import check_block_params, check_pre_norm_block
from .nb09 import check_causal_tiles, check_online_update
from .nb10 import check_dV, check_softmax_backward, check_train_step
from .nb11 import check_quantize_per_token, check_sink_attention, check_window_step

__all__ = [
    "KINDS", "Check", "compare", "grading", "grading_on",
    "nb00", "nb01", "nb02", "nb03", "nb04", "nb05", "nb05b", "nb06",
    "check_add_positions", "check_build_X", "check_x_shape",
    "check_key_entry", "check_qkv", "check_qkv_shapes",
    "check_eats_fish_score", "check_scores", "check_scores_shape",
    "check_attention", "check_dot_variance", "check_scaled_attention",
    "check_probability_by_hand", "check_softmax", "check_stable_softmax", "check_temperature_for_ratio",
    "check_masked_attention", "check_multi_head", "check_output_row", "check_padding_mask",
    "check_decode_step", "check_kv_head", "check_mistral_cache_bytes",
    "nb07", "nb08", "nb09",
    "check_rope", "check_rotate_pair", "check_same_score_position",
    "check_block_params", "check_pre_norm_block",
    "check_causal_tiles", "check_online_update",
    "nb10", "check_softmax_backward", "check_dV", "check_train_step",
    "nb11", "check_window_step", "check_sink_attention", "check_quantize_per_token",
]
