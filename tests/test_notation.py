"""One notation across the course (the cheat sheet's table), checked by searching the notebooks.

Each rule is a use that the notation retired, found by a pattern: a mask added to
the scores (a boolean mask means "may attend", so adding it is wrong), P as a
name (the position code is PE, the weights are A), x for anything but a row of X,
h for anything but a head (not a step size, a head count or a residual stream), k as a
loop counter or a sum's index (k is a key; a second key is r), m as a coordinate (m is a pair of
coordinates in a position code, or a row's maximum; a coordinate is c), i for anything but a query
row (not a dimension), m and n as a query's and a key's position (n is the token count; positions
are i and j), and a decoding step t counted from 0 (t is the number of tokens so far, the new one
included).
"""

import re

import pytest

from tools.notebooks import ROOT, read

COURSE = sorted((ROOT / "notebooks").glob("*.ipynb"))
# The teacher's guide, wherever it lives while it moves from notebooks/README.md into teachers/.
GUIDE = [p for p in [ROOT / "notebooks" / "README.md", *sorted((ROOT / "teachers").rglob("*.md"))]
         if p.exists()]

MASK_ADDED = re.compile(r"\+\s*(?:\\(?:text|mathrm|texttt|mathbf)\{\s*)?(?:mask|M)\b")
CODE_RULES = {
    "P is not a name: the position code is PE, the weights are A":
        re.compile(r"^\s*(?:\w+\s*,\s*)*P(?:_\w+)?\s*(?:,\s*\w+\s*)*=(?!=)", re.M),
    "x is a row of X (one token's embedding)":
        re.compile(r"^\s*x\s*=(?!=)(?!\s*(?:X\[|x\b))", re.M),
    "h is a head index, not a step size or a head count":
        re.compile(r"^\s*h\s*=\s*[\d.]", re.M),
    "h is a head index from a loop over the heads, never assigned (not a residual stream)":
        re.compile(r"^\s*h\s*=(?!=)", re.M),
    "k is a key, not a loop counter": re.compile(r"\bfor\s+k\s*(?:,|in\b)"),
    "i is a query row, not a dimension":
        re.compile(r"\bfor\s+i\s+in\s+range\(\s*(?:d|d_k|d_v|d_model|d_head)\b"),
    "m is a pair of coordinates or a maximum, not a coordinate (that is c)":
        re.compile(r"\bfor\s+m\s+in\s+range\(\s*(?:d|d_k|d_v|d_model|d_head)\s*\)"),
    "m, n are not a query's and a key's position (positions are i and j; n counts tokens)":
        re.compile(r"\b(?:for\s+m\s*,\s*n\b|def\s+\w+\(\s*m\s*,\s*n\s*\)|m\s*,\s*n\s*=)"),
    "t is the number of tokens so far, the new one included: steps count from 1":
        re.compile(r"\bfor\s+t\s+in\s+range\((?!\s*1\s*,)"),
}
MARKDOWN_RULES = {
    "h is a head index, not a residual stream": re.compile(r"\bh\s*=\s*x\s*\+"),
    "i is a query row, not a dimension": re.compile(r"\\sum_\{i=1\}\^\{d_k\}|\bq_i\s*k_i\b"),
    "a sum runs over r (a second key) or c (a coordinate), not over k (a key) or m":
        re.compile(r"\\sum_\{?[km](?![\w])"),
    "positions are i (query) and j (key), not m and n": re.compile(r"\bm\s*[−-]\s*n\b|position n\b"),
    "steps count tokens so far: no key range 0 … t−1": re.compile(r"0\s*…\s*t\s*[−-]\s*1"),
}


def cells(path):
    return [(k, c.cell_type, c.source) for k, c in enumerate(read(path).cells)]


@pytest.mark.parametrize("path", COURSE, ids=[p.stem for p in COURSE])
def test_no_mask_is_written_as_added_to_the_scores(path):
    found = [f"cell {k}: {m.group(0)!r}" for k, _, src in cells(path) for m in MASK_ADDED.finditer(src)]
    assert not found, f"{path.name} writes a mask as added to scores (write np.where(M, S, -inf)): {found}"


def test_the_guide_writes_no_mask_as_added_either():
    assert GUIDE, "no teacher's guide found (notebooks/README.md or teachers/)"
    for path in GUIDE:
        assert not MASK_ADDED.findall(path.read_text(encoding="utf-8")), path.name


@pytest.mark.parametrize("path", COURSE, ids=[p.stem for p in COURSE])
def test_code_uses_each_symbol_with_its_one_meaning(path):
    found = [f"cell {k}: {rule}: {m.group(0).strip()!r}"
             for k, kind, src in cells(path) if kind == "code"
             for rule, pattern in CODE_RULES.items() for m in pattern.finditer(src)]
    assert not found, f"{path.name}: {found}"


@pytest.mark.parametrize("path", COURSE, ids=[p.stem for p in COURSE])
def test_prose_uses_each_symbol_with_its_one_meaning(path):
    found = [f"cell {k}: {rule}: {m.group(0).strip()!r}"
             for k, kind, src in cells(path) if kind == "markdown"
             for rule, pattern in MARKDOWN_RULES.items() for m in pattern.finditer(src)]
    assert not found, f"{path.name}: {found}"


def test_the_cheat_sheet_states_the_notation():
    sheet = ROOT / "notebooks" / "cheat_sheet.ipynb"
    text = "\n".join(src for _, kind, src in cells(sheet) if kind == "markdown")
    table = text[text.index("## Notation"):]
    for symbol in ("$PE$", "$S$", "$A$", "$M$", "$W_O$", "$h$, $d_{head}$"):
        assert f"| {symbol}" in table, f"the notation table has no row for {symbol}"
    assert "True = query $i$ may attend to key $j$" in table


@pytest.mark.parametrize("text, rule", [
    ("A = softmax(S + mask)", None), (r"\frac{QK^\top}{\sqrt{d_k}} + \text{mask}", None), ("S + M", None),
    ("P = ah.softmax(S)", "P is"), ("P_loop = np.zeros(3)", "P is"), ("x = np.array([3.2, 4.0])", "x is"),
    ("h = 1e-6", "h is"), ("for k, step in enumerate(steps):", "k is"), ("    h = X + attn", "h is"),
    ("for i in range(d_k):", "i is"), ("for m, n in ((3, 1), (13, 11)):", "m, n"),
    ("def added_score(m, n):", "m, n"), ("for m in range(d_k):", "m is"),
    ("for t in range(n):", "t is"), ("for t in range(6):", "t is"),
])
def test_the_patterns_catch_what_they_are_for(text, rule):
    if rule is None:
        assert MASK_ADDED.search(text)
    else:
        assert any(p.search(text) for name, p in CODE_RULES.items() if name.startswith(rule))


@pytest.mark.parametrize("text", ["x = X[1]", "PE = ah.positional_encoding(3, 4)", "for h in range(n_heads):",
                                  "masked = np.where(mask, scaled, -np.inf)", "hm_P2 == 3", "kv_of_head = k",
                                  "for h, cache in enumerate(caches):", "for i in range(n):",
                                  "for c in range(d_k):", "for i, j in ((3, 1), (13, 11)):",
                                  "for m in range(d_model // 2):",
                                  "for t in range(1, n + 1):", "hm = ah.heatmap(S)"])
def test_the_patterns_pass_the_notation_itself(text):
    assert not MASK_ADDED.search(text)
    assert not any(p.search(text) for p in CODE_RULES.values())


@pytest.mark.parametrize("text, caught", [
    ("    h   = x + MultiHeadAttention(norm(x))", True), (r"$q\cdot k = \sum_{i=1}^{d_k} q_i k_i$", True),
    ("depends only on m − n", True), ("keys of tokens 0 … t−1", True),
    (r"$p_j = e^{s_j} / \sum_{k} e^{s_k}$", True), (r"$\sum_{m=1}^{d_k} q_m k_m$", True),
    ("depends only on i − j", False), (r"$\sum_{c=1}^{d_k} q_c k_c$", False), (r"$\sum_r e^{s_r}$", False),
    ("head h of n_heads", False),
])
def test_the_prose_patterns_catch_what_they_are_for(text, caught):
    assert any(p.search(text) for p in MARKDOWN_RULES.values()) == caught
