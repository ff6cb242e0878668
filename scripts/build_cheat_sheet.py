"""Build the printable one-page cheat sheet (A4 and Letter) from the helpers.

    python -m scripts.build_cheat_sheet OUT_DIR

Writes OUT_DIR/cheat_sheet.html (the page) and OUT_DIR/cheat_sheet_a4.pdf,
OUT_DIR/cheat_sheet_letter.pdf, printed by headless Chromium. Every number on
the page is computed here with attention_helpers, so the sheet cannot drift
from the notebooks; tests/test_cheat_sheet_pdf.py checks that each PDF is one
page and that the page's numbers agree with the helpers.

Chromium: $CHROMIUM_PATH, else chromium (or Chrome) on the PATH.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import numpy as np

import attention_helpers as ah  # run as `python -m scripts.build_cheat_sheet`: the clone's own helpers
from tools.jupyterlab_driver import find_chromium  # $CHROMIUM_PATH, else Chromium on the PATH

ROOT = Path(__file__).resolve().parents[1]

PAPER = {"a4": "A4", "letter": "letter"}

CHEAT_SHEET = ROOT / "notebooks" / "cheat_sheet.ipynb"

# Symbol, shape, meaning: used only while the cheat sheet notebook has no "Notation" table,
# which is the one source of the course's notation (see notation()).
NOTATION = [
    ("n", "", "number of tokens (rows of X)"),
    ("d_model", "", "width of a token's vector (columns of X)"),
    ("d_k", "", "width of a query and a key"),
    ("d_v", "", "width of a value (and of an output row)"),
    ("X", "[n, d_model]", "input: one row per token (embedding + position)"),
    ("PE", "[n, d_model]", "position code, added to the embeddings"),
    ("W_Q, W_K, W_V", "[d_model, d_k], [d_model, d_k], [d_model, d_v]", "learned weight matrices"),
    ("Q, K, V", "[n, d_k], [n, d_k], [n, d_v]", "queries, keys, values: computed from X"),
    ("S", "[n, n]", "raw scores Q·Kᵀ: query = row, key = column"),
    ("M", "[n, n]", "mask: True = may attend; hidden scores become −∞"),
    ("A", "[n, n]", "weights softmax(S/√d_k), row by row: each row sums to 1"),
    ("output", "[n, d_v]", "A·V: each row mixes the value rows"),
]


def plain(markdown: str) -> str:
    """A table cell of the notebook as plain text: $d_{model}$ -> d_model, `S` -> S."""
    return ah.alt_text.plain(re.sub(r"[`*]", "", markdown))


def notation(path: Path = CHEAT_SHEET) -> list[tuple[str, str, str]]:
    """(symbol, shape, meaning) rows of the cheat sheet notebook's notation table,
    so the printed page and the notebook cannot disagree (NOTATION until it has one)."""
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "markdown" or not re.search(r"(?im)^#+\s*notation", cell.source):
            continue
        rows = [[plain(c) for c in line.strip().strip("|").split("|")]
                for line in cell.source.splitlines() if line.lstrip().startswith("|")]
        header = [h.lower() for h in rows[0]]
        if not {"symbol", "what it is", "shape"} <= set(header):
            raise ValueError(f"the notation table of {path.name} needs the columns symbol, what it is "
                             f"and shape; it has {rows[0]}")
        columns = [header.index(name) for name in ("symbol", "shape", "what it is")]
        return [tuple(row[k] for k in columns) for row in rows[2:] if len(row) == len(header)]
    return NOTATION


def facts() -> dict:
    """Every number the sheet prints, computed with the helpers."""
    tokens, X, W_Q, W_K, W_V = ah.examples.cat_eats_fish()
    Q, K, V = ah.project_qkv(X, W_Q, W_K, W_V)
    d_k = Q.shape[-1]
    S = Q @ K.T / np.sqrt(d_k)
    output, A = ah.self_attention(X, W_Q, W_K, W_V)
    _, A_causal = ah.self_attention(X, W_Q, W_K, W_V, mask=ah.causal_mask(len(tokens)))
    llama = dict(n_layers=80, d_head=128, seq_len=4096, bytes_per_value=2)  # LLaMA-2-70B, fp16
    return {
        "tokens": tokens, "d_k": d_k, "sqrt_d_k": float(np.sqrt(d_k)),
        "matrices": {"X": X, "Q = X·W_Q": Q, "K = X·W_K": K, "V = X·W_V": V,
                     "S = Q·Kᵀ": Q @ K.T, "S/√d_k": S, "A = softmax(S/√d_k)": A,
                     "output = A·V": output, "A with a causal mask": A_causal},
        "weights": {"W_Q": W_Q, "W_K": W_K, "W_V": W_V},
        "kv": {**llama, "gib": {h: ah.kv_cache_bytes(n_kv_heads=h, **llama) / 2**30 for h in (64, 8, 1)}},
    }


def matrix_html(name: str, M, tokens=None) -> str:
    """A small matrix as a table; data-matrix names it for the test."""
    rows = []
    for i, row in enumerate(np.atleast_2d(M)):
        head = f"<th>{html.escape(tokens[i])}</th>" if tokens else ""
        rows.append("<tr>" + head + "".join(f"<td>{v:.3f}</td>" for v in row) + "</tr>")
    return (f'<table class="m" data-matrix="{html.escape(name)}"><caption>{html.escape(name)}</caption>'
            + "".join(rows) + "</table>")


def render_html(paper: str = "a4", notebook: Path = CHEAT_SHEET) -> str:
    if paper not in PAPER:
        raise ValueError(f"paper must be one of {sorted(PAPER)}, got {paper!r}")
    f = facts()
    tokens, kv = f["tokens"], f["kv"]
    table = "".join(f"<tr><td><b>{html.escape(s)}</b></td><td>{html.escape(shape)}</td>"
                    f"<td>{html.escape(meaning)}</td></tr>" for s, shape, meaning in notation(notebook))
    running = "".join(matrix_html(name, M, tokens) for name, M in f["matrices"].items())
    weights = "".join(matrix_html(name, M) for name, M in f["weights"].items())
    gib = kv["gib"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Attention on one page: cheat sheet</title>
<style>
@page {{ size: {PAPER[paper]}; margin: 9mm 10mm; }}
body {{ font: 8pt/1.25 "DejaVu Sans", Arial, sans-serif; margin: 0; color: #000; }}
h1 {{ font-size: 13pt; margin: 0 0 1.5mm; }}
h2 {{ font-size: 9.5pt; margin: 2mm 0 1mm; border-bottom: 0.3mm solid #3b528b; }}
p {{ margin: 0.8mm 0; }}
.formula {{ font-size: 12pt; text-align: center; margin: 1.5mm 0; }}
table {{ border-collapse: collapse; }}
.notation td {{ padding: 0.2mm 1.5mm; border-bottom: 0.1mm solid #bbb; vertical-align: top; }}
.notation td:first-child {{ white-space: nowrap; }}
.m {{ display: inline-table; margin: 0 2mm 1mm 0; font-family: "DejaVu Sans Mono", monospace; }}
.m caption {{ font-family: "DejaVu Sans", sans-serif; font-weight: bold; text-align: left; }}
.m td, .m th {{ padding: 0 1.2mm; text-align: right; border: 0.1mm solid #bbb; }}
.m th {{ text-align: left; font-weight: normal; font-style: italic; }}
footer {{ margin-top: 2mm; font-size: 7.5pt; color: #333; }}
</style></head>
<body>
<h1>Attention on one page</h1>
<p class="formula">output = softmax( Q·Kᵀ / √d<sub>k</sub> ) · V, &nbsp; with Q = X·W<sub>Q</sub>,
K = X·W<sub>K</sub>, V = X·W<sub>V</sub></p>
<p>The softmax runs on each row: one row per query, one column per key. With a mask M (True = may
attend), hidden scores are set to −∞ before the softmax: <code>np.where(M, S, -np.inf)</code>, so each
row still sums to 1. Causal mask: query i may attend to keys 0 … i. Masks combine with <code>&amp;</code>.</p>

<h2>Notation and shapes</h2>
<table class="notation">{table}</table>

<h2>"{" ".join(tokens)}", step by step</h2>
<p>n = 3 tokens, d_model = d_k = d_v = {f["d_k"]}, so √d_k = {f["sqrt_d_k"]:.3f}. W_Q and W_K are the
identity (so Q = K = X); W_V swaps the two columns. Rows are the tokens {", ".join(tokens)};
for S and A, row = query and column = key.</p>
<div>{weights}</div>
<div>{running}</div>
<p>"fish" puts {f["matrices"]["A = softmax(S/√d_k)"][2, 2]:.3f} of its weight on itself, so its output is
almost V(fish). With the causal mask, "cat" (the first token) can attend only to itself: weight 1.</p>

<h2>KV cache</h2>
<p>When generating token by token, the keys and values of earlier tokens are kept, never the queries:
<br><b>cache bytes = 2 (K and V) × n_layers × n_kv_heads × d_head × seq_len × batch × bytes_per_value</b></p>
<p>LLaMA-2-70B ({kv["n_layers"]} layers, 64 query heads, d_head = {kv["d_head"]},
fp16 = {kv["bytes_per_value"]} bytes) at {kv["seq_len"]} tokens, batch 1:
multi-head (64 KV heads) {gib[64]:.3f} GiB;
grouped-query (8 KV heads) {gib[8]:.3f} GiB; multi-query (1 KV head) {gib[1]:.3f} GiB.
In GQA, query head i reads KV head i // (h_q / h_kv).</p>
<p><b>Heads.</b> Multi-head attention with n_heads heads: usually d_head = d_model / n_heads; head h uses
columns h·d_head … (h+1)·d_head − 1 of Q, K and V; weights [n_heads, n, n];
output = concat(heads)·W_O with W_O [n_heads·d_head, d_model].
GQA: Q [h_q, n, d_head], K and V [h_kv, n, d_head], h_kv divides h_q; MQA is h_kv = 1.</p>

<footer>Generated from the course's helper package by scripts/build_cheat_sheet.py; every number
above is computed, not typed. The notebooks: 00 input matrix · 01 Q, K, V projections · 02 scores ·
03 scaling by √d_k · 04 softmax · 05 weighted sum and self-attention · 06 KV cache and GQA;
advanced: 07 positions and RoPE · 08 the decoder block · 09 tiled attention.</footer>
</body></html>
"""


def print_pdf(page: Path, pdf: Path, chromium: str | None = None) -> None:
    """Print an HTML file to PDF with headless Chromium (a fresh profile, no network chatter)."""
    chromium = chromium or find_chromium()
    if chromium is None:
        raise FileNotFoundError("printing the cheat sheet needs Chromium: install it, or set CHROMIUM_PATH")
    with tempfile.TemporaryDirectory(prefix="cheat-sheet-profile-") as profile:
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
             page.resolve().as_uri()],
            check=True, capture_output=True, timeout=120,
        )


def build(out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "cheat_sheet.html").write_text(render_html("a4"), encoding="utf-8")
    written = {"html": out_dir / "cheat_sheet.html"}
    for paper in PAPER:
        page = out_dir / f".cheat_sheet_{paper}.html"
        page.write_text(render_html(paper), encoding="utf-8")
        try:
            print_pdf(page, out_dir / f"cheat_sheet_{paper}.pdf")
        finally:
            page.unlink()
        written[paper] = out_dir / f"cheat_sheet_{paper}.pdf"
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m scripts.build_cheat_sheet OUT_DIR")
    for path in build(Path(sys.argv[1])).values():
        print(f"wrote {path}")
