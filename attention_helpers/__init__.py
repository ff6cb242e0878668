"""Helpers for the attention-math notebooks.

    import attention_helpers as ah
    ah.softmax(...), ah.self_attention(...), ah.heatmap(...), ah.Panel(...)
    ah.examples.cat_eats_fish(), ah.checks.check_softmax(my_softmax)

Modules, left to right in the direction data flows:
examples -> core -> plots -> widgets; checks sits beside core.
"""

from . import backward, checks, core, examples, kv_designs, plots, tiny_model, widgets
from .backward import attention_backward
from .core import (
    KVCache,
    apply_rope,
    causal_mask,
    grouped_query_attention,
    kv_cache_bytes,
    multi_head_attention,
    padding_mask,
    positional_encoding,
    project_qkv,
    scaled_dot_product_attention,
    self_attention,
    softmax,
    tiled_attention,
)
from .kv_designs import attention_with_sinks, sliding_window_mask
from .plots import Bars, GroupedBars, Heatmap, bar_chart, grouped_bar_chart, heatmap, shared_scale, vectors_2d
from .widgets import Panel, matrix_sliders

__all__ = [
    "checks", "core", "examples", "plots", "widgets",
    "KVCache", "causal_mask", "grouped_query_attention", "kv_cache_bytes",
    "multi_head_attention", "padding_mask",
    "positional_encoding", "project_qkv", "scaled_dot_product_attention",
    "self_attention", "softmax", "apply_rope", "tiled_attention",
    "Bars", "GroupedBars", "Heatmap", "bar_chart", "grouped_bar_chart", "heatmap", "shared_scale",
    "vectors_2d",
    "Panel", "matrix_sliders",
    "kv_designs", "attention_with_sinks", "sliding_window_mask",
    "backward", "tiny_model", "attention_backward",
]
