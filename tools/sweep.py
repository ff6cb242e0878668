"""The slider sweep: code that runs inside a notebook's kernel after the notebook has run,
and moves every slider of every panel to both ends, as a class does.

The robustness test and the kernel-memory benchmark send SWEEP to the kernel
(tools.notebooks.run_code) and read the JSON report it prints last. SWEEP_ENDS_ONLY
leaves out the comparison with a full draw (the report's last two columns),
which costs most of the sweep: the compat test, which checks only that
every end gives finite values and a picture, sends that one.
"""

# Runs inside the notebook's kernel after the notebook: every Panel the
# notebook made, every slider to its minimum and maximum, warnings as errors;
# at each end the panel's colour scales and value axes must cover the values,
# and, at the ends of each control and of the first entry of each weight matrix,
# its picture must be what a full draw of its figure gives (a row's last two columns).
SWEEP = r'''
from attention_helpers.same_picture import picture_differences, visible_texts
import json as _json, warnings as _warnings
import numpy as _np
import attention_helpers as _ah

def _ends(s):
    if hasattr(s, "options"):                      # SelectionSlider: first and last option
        return [("index", 0), ("index", len(s.options) - 1)]
    if type(s).__name__ == "FloatLogSlider":       # min and max are exponents
        return [("value", s.base ** s.min), ("value", s.base ** s.max)]
    return [("value", s.min), ("value", s.max)]

def _fast_equals_full_draw(panel):
    """Pixels where the panel's picture differs from a full draw of its figure, outside the
    numbers, and the worst mean difference of a number (each may sit one pixel off)."""
    import io as _io
    import PIL.Image as _Image
    def _pixels(png):
        return _np.asarray(_Image.open(_io.BytesIO(png)).convert("RGBA"))
    live, full = _pixels(panel.png), _pixels(panel.full_draw_png())
    return picture_differences(visible_texts(panel.figure), live, full, panel.figure.canvas.get_renderer())

_compare = __COMPARE__
_report = []
_seen = set()
for _name, _panel in list(globals().items()):
    # skip IPython's output history (_12, __) and panels already swept under another name
    if _name.startswith("_") or not isinstance(_panel, _ah.Panel) or id(_panel) in _seen:
        continue
    _seen.add(id(_panel))
    for _key, _slider in _panel.sliders.items():
        _before = (_slider.index if hasattr(_slider, "options") else _slider.value)
        for _attr, _end in _ends(_slider):
            with _warnings.catch_warnings():
                _warnings.simplefilter("error")
                setattr(_slider, _attr, _end)      # moving it redraws the panel
                _outs = _panel.outputs()
            _finite = all(bool(_np.all(_np.isfinite(_np.asarray(o, dtype=float))))
                          for o in _outs if not isinstance(o, str))
            # the colour scales and value axes cover what this end shows
            _covered = all(a is None or a.limits[0] <= _np.nanmin(_np.where(_np.isfinite(o), o, _np.nan))
                           and _np.nanmax(_np.where(_np.isfinite(o), o, _np.nan)) <= a.limits[1]
                           for a, o in zip(_panel.artists, _outs))
            # the picture against a full draw: for each control, and for the first entry of each
            # weight matrix (the other entries are the same widget wired the same way)
            _drawn = _compare and ("[" not in _key or _key.endswith("[0,0]"))
            _report.append([_name, _key, _attr, float(_end), _finite, len(_panel.png), _covered,
                            *(_fast_equals_full_draw(_panel) if _drawn else ())])
        setattr(_slider, "index" if hasattr(_slider, "options") else "value", _before)
print(_json.dumps(_report))
'''  # the same measure as the widget tests and the fast path's own check
SWEEP, SWEEP_ENDS_ONLY = (SWEEP.replace("__COMPARE__", str(compare)) for compare in (True, False))
