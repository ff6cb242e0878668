"""The slider sweep: code that runs inside a notebook's kernel after the notebook has run,
and moves every slider of every panel to both ends, as a class does.

The robustness test, the compat test and the kernel-memory benchmark send SWEEP to the
kernel (tools.notebooks.run_code) and read the JSON report it prints last: one row per
slider end, [panel, slider, attribute, end, finite, drawn, covered]:

- finite: every number the panel computes there is finite (but a heatmap's -inf and NaN,
  which it draws as masked cells);
- drawn: what the picture was sent is what the panel computes there (the browser view's
  numbers, as the page reads them), or, for a panel drawn in the kernel, a picture;
- covered: the colour scales and value axes cover those numbers.

What the browser makes of the numbers is the browser tests' (tests/test_browser.py).
"""

# Runs inside the notebook's kernel after the notebook: every Panel the notebook made,
# every slider to its minimum and maximum, warnings as errors.
SWEEP = r'''
import json as _json, warnings as _warnings
import numpy as _np
import attention_helpers as _ah

def _ends(s):
    if hasattr(s, "options"):                      # SelectionSlider: first and last option
        return [("index", 0), ("index", len(s.options) - 1)]
    if type(s).__name__ == "FloatLogSlider":       # min and max are exponents
        return [("value", s.base ** s.min), ("value", s.base ** s.max)]
    return [("value", s.min), ("value", s.max)]

def _drawn(panel, outs):
    """The picture shows `outs`: the browser view was sent exactly these numbers (NaN where
    they are NaN), or the kernel drew a picture."""
    if panel.view is None:
        return len(panel.image.value) > 0
    sent = _np.frombuffer(panel.view.values, dtype="<f8")
    charts = [_np.ravel(_np.asarray(o, dtype=float)) for a, o in zip(panel.artists, outs) if a is not None]
    want = _np.concatenate(charts) if charts else _np.zeros(0)
    return bool(sent.shape == want.shape and _np.array_equal(sent, want, equal_nan=True))

def _all_finite(artist, o):
    """Every number finite; in a heatmap -inf and NaN are cells drawn as masked (plots.Heatmap),
    never +inf."""
    o = _np.asarray(o, dtype=float)
    if isinstance(artist, _ah.Heatmap):
        return not _np.isposinf(o).any()
    return bool(_np.isfinite(o).all())

def _finite_inside(o):
    o = _np.asarray(o, dtype=float)
    return o[_np.isfinite(o)]

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
            _finite = all(_all_finite(a, o) for a, o in zip(_panel.artists, _outs) if a is not None)
            # the colour scales and value axes cover what this end shows
            _covered = all(a is None or _finite_inside(o).size == 0 or a.limits[0] <= _finite_inside(o).min()
                           and _finite_inside(o).max() <= a.limits[1]
                           for a, o in zip(_panel.artists, _outs) if not getattr(a, "categories", None))
            _report.append([_name, _key, _attr, float(_end), _finite, _drawn(_panel, _outs), _covered])
        setattr(_slider, "index" if hasattr(_slider, "options") else "value", _before)
print(_json.dumps(_report))
'''
