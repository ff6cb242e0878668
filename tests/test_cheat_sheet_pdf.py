"""The printable cheat sheet (scripts/build_cheat_sheet.py): one page on A4 and on
Letter, and every number on it agrees with the helpers.

The numbers are checked against values worked out here independently (the
running example's X and closed forms for its weights; the KV-cache sizes by
the formula), not against the script's own output. The PDF is printed by
headless Chromium; without Chromium the PDF tests skip, saying so.
"""

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from scripts import build_cheat_sheet

ROOT = Path(__file__).resolve().parents[1]

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
    assert set(m) >= {"X", "S = Q·Kᵀ", "S/√d_k", "A = softmax(S/√d_k)", "output = A·V",
                      "A with a causal mask"}
    X = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 4.0]])  # cat, eats, fish, as typed in the notebooks
    V = X[:, ::-1]  # W_V swaps the two dimensions
    scaled = X @ X.T / np.sqrt(2)  # W_Q = W_K = identity, d_k = 2
    weights = np.exp(scaled) / np.exp(scaled).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(m["X"], X)
    np.testing.assert_allclose(m["S = Q·Kᵀ"], X @ X.T)
    np.testing.assert_allclose(m["S/√d_k"], scaled, atol=5e-4)
    np.testing.assert_allclose(m["A = softmax(S/√d_k)"], weights, atol=5e-4)
    np.testing.assert_allclose(m["output = A·V"], weights @ V, atol=5e-4)
    # fish's scaled scores are (√2·5, √2·5, √2·10): its weight on itself in closed form
    assert m["A = softmax(S/√d_k)"][2, 2] == pytest.approx(1 / (1 + 2 * np.exp(-5 * np.sqrt(2))), abs=5e-4)
    assert np.allclose(np.triu(m["A with a causal mask"], 1), 0) and m["A with a causal mask"][0, 0] == 1
    assert "0.998 of its weight on itself" in page


def test_the_kv_cache_sizes_follow_the_formula(page):
    for kv_heads in (64, 8, 1):
        gib = 2 * 80 * kv_heads * 128 * 4096 * 2 / 2**30  # K and V, layers, heads, d_head, tokens, fp16
        assert f"{gib:.3f} GiB" in page
    assert "2 (K and V) × n_layers × n_kv_heads × d_head × seq_len × batch × bytes_per_value" in page


def test_the_sheet_prints_the_notation_table_of_the_cheat_sheet_notebook(page):
    rows = build_cheat_sheet.notation()  # the notebook's table, or the built-in one until it has one
    assert len(rows) >= 8
    for symbol, shape, meaning in rows:
        assert (f"<tr><td><b>{html.escape(symbol)}</b></td><td>{html.escape(shape)}</td>"
                f"<td>{html.escape(meaning)}</td></tr>") in page
    symbols = {part.strip() for symbol, _, _ in rows for part in re.split(r"[,;]", symbol)}
    assert {"X", "Q", "K", "V", "S", "A", "M"} <= symbols, symbols
    assert "True = " in page and "may attend" in page and "row = query and column = key" in page


def test_the_notation_is_read_from_the_notebooks_table(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(
        "## Notation\n\n| symbol | name in code | what it is | shape |\n| --- | --- | --- | --- |\n"
        "| $S/\\sqrt{d_k}$ | `S_scaled` | scaled scores $QK^\\top$ | [n, n] |\n"
        "| $d_{model}$ | `d_model` | width of one embedding | |\n")]
    path = tmp_path / "cheat_sheet.ipynb"
    nbformat.write(nb, path)
    assert build_cheat_sheet.notation(path) == [("S/√d_k", "[n, n]", "scaled scores QKᵀ"),
                                                ("d_model", "", "width of one embedding")]
    nb.cells[0].source = "## Notation\n\n| symbol | shape |\n| --- | --- |\n| X | [n, d] |\n"
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match="needs the columns symbol, what it is and shape"):
        build_cheat_sheet.notation(path)
    nb.cells[0].source = "# No table here"
    nbformat.write(nb, path)
    assert build_cheat_sheet.notation(path) == build_cheat_sheet.NOTATION


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
