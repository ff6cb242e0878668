"""The printable cheat sheet (scripts/build_cheat_sheet.py): one page on A4 and on
Letter, and every number on it agrees with the helpers.

The numbers are checked against values worked out here independently (the
running example's X and closed forms for its weights; the KV-cache sizes by
the formula), not against the script's own output. The PDF is printed by
headless Chromium; without Chromium the PDF tests skip, saying so.
"""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import build_cheat_sheet  # noqa: E402

pytestmark = pytest.mark.static


def pdf_pages(pdf: bytes) -> tuple[int, list[list[float]]]:
    """(number of page objects, their media boxes) of a PDF whose objects are not compressed."""
    pages = len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))
    boxes = [[float(v) for v in box.split()] for box in re.findall(rb"/MediaBox\s*\[([^\]]*)\]", pdf)]
    assert pages or b"/ObjStm" not in pdf, "the PDF hides its page objects in object streams"
    return pages, boxes


class Matrices(HTMLParser):
    """The tables marked data-matrix: {name: the numbers in its cells, as floats}."""

    def __init__(self, text):
        super().__init__()
        self.found, self._name, self._row, self._in_cell = {}, None, None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and "data-matrix" in attrs:
            self._name = attrs["data-matrix"]
            self.found[self._name] = []
        elif tag == "tr" and self._name:
            self._row = []
            self.found[self._name].append(self._row)
        self._in_cell = tag == "td" and self._name is not None

    def handle_endtag(self, tag):
        if tag == "table":
            self._name = None
        self._in_cell = False

    def handle_data(self, data):
        if self._in_cell:
            self._row.append(float(data))


@pytest.fixture(scope="module")
def page():
    return build_cheat_sheet.render_html("a4")


def test_the_running_example_on_the_sheet_agrees_with_the_helpers(page):
    m = {name: np.array(rows) for name, rows in Matrices(page).found.items()}
    X = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 4.0]])  # cat, eats, fish, as typed in the notebooks
    V = X[:, ::-1]  # W_V swaps the two dimensions
    scaled = X @ X.T / np.sqrt(2)  # W_Q = W_K = identity, d_k = 2
    weights = np.exp(scaled) / np.exp(scaled).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(m["X"], X)
    np.testing.assert_allclose(m["Q·Kᵀ"], X @ X.T)
    np.testing.assert_allclose(m["S = Q·Kᵀ/√d_k"], scaled, atol=5e-4)
    np.testing.assert_allclose(m["A = softmax(S)"], weights, atol=5e-4)
    np.testing.assert_allclose(m["output = A·V"], weights @ V, atol=5e-4)
    # fish's scaled scores are (√2·5, √2·5, √2·10): its weight on itself in closed form
    assert m["A = softmax(S)"][2, 2] == pytest.approx(1 / (1 + 2 * np.exp(-5 * np.sqrt(2))), abs=5e-4)
    assert np.allclose(np.triu(m["A with a causal mask"], 1), 0) and m["A with a causal mask"][0, 0] == 1
    assert "0.998 of its weight on itself" in page


def test_the_kv_cache_sizes_follow_the_formula(page):
    for kv_heads in (64, 8, 1):
        gib = 2 * 80 * kv_heads * 128 * 4096 * 2 / 2**30  # K and V, layers, heads, d_head, tokens, fp16
        assert f"{gib:.3f} GiB" in page
    assert "2 (K and V) × n_layers × n_kv_heads × d_head × seq_len × batch × bytes_per_value" in page


def test_the_sheet_uses_the_course_notation(page):
    for symbol in ["X", "Q", "K", "V", "S", "A", "M", "P", "d_model", "d_k", "d_v", "n"]:
        assert re.search(rf"<b>[^<]*\b{re.escape(symbol)}\b[^<]*</b>", page), f"{symbol} is not in the table"
    assert "True = may attend" in page and "query = row, key = column" in page


def test_the_notation_matches_the_cheat_sheet_notebook():
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "cheat_sheet.ipynb", as_version=4)
    tables = [c.source for c in nb.cells
              if c.cell_type == "markdown" and re.search(r"(?im)^#+ .*notation", c.source)]
    if not tables:
        pytest.skip("the cheat sheet notebook has no notation table yet")
    rows = re.findall(r"(?m)^\|\s*([^|]+?)\s*\|", tables[0])
    notebook_symbols = {s.strip("`$* ") for s in rows if set(s) - set("-: ")} - {"symbol"}
    sheet_symbols = {part.strip() for symbol, _, _ in build_cheat_sheet.NOTATION
                     for part in symbol.split(",")}
    assert notebook_symbols & sheet_symbols, (notebook_symbols, sheet_symbols)
    missing = sorted(sheet_symbols - notebook_symbols - {"W_Q", "W_K", "W_V", "output"})
    assert not missing, f"symbols on the printed sheet but not in the notebook's notation table: {missing}"


def test_an_unknown_paper_size_is_named():
    with pytest.raises(ValueError, match="paper must be one of"):
        build_cheat_sheet.render_html("a5")


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    if build_cheat_sheet.find_chromium() is None:
        pytest.skip("printing the cheat sheet needs Chromium (set CHROMIUM_PATH or install chromium)")
    return build_cheat_sheet.build(tmp_path_factory.mktemp("cheat_sheet"))


@pytest.mark.parametrize("paper, size", [("a4", (595.3, 841.9)), ("letter", (612.0, 792.0))])
def test_the_pdf_is_exactly_one_page_of_the_right_paper(pdfs, paper, size):
    pages, boxes = pdf_pages(pdfs[paper].read_bytes())
    assert pages == 1, f"the {paper} cheat sheet has {pages} pages"
    assert boxes and np.allclose(boxes[0][2:], size, atol=1.0), f"{paper}: media box {boxes[0]}"


def test_the_page_counter_counts_pages():
    two = b"<< /Type /Pages /Count 2 >> << /Type /Page /MediaBox [0 0 612 792] >> << /Type /Page >>"
    assert pdf_pages(two) == (2, [[0.0, 0.0, 612.0, 792.0]])
