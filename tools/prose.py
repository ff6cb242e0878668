"""The numbers a notebook's prose states, and the text its outputs show: so a test can
check that every number a sentence states is one a cell computed."""

from __future__ import annotations

import re

from tools.notebooks import compared, text_outputs

NUMBER = re.compile(r"(?<![\w.\-^_])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)(?![\w])")
MODEL_NAME = re.compile(r"\b(?:GPT|LLaMA|Llama|Gemma|Mistral|T5|BERT)[\w.\-]*", re.I)


def stated_numbers(markdown: str):
    """The numbers in a markdown text that a reader takes as figures (see tests/test_prose_numbers.py)."""
    text = re.sub(r"\]\([^)]*\)", "]", markdown)  # link targets
    text = re.sub(r"\b\d\d\w*_\w+", "", text)  # notebook names like 03_scaling_by_sqrt_dk, 05b_multi_head
    text = MODEL_NAME.sub("", text)
    text = re.sub(r"\^(\{[^}]*\}|[-\d.]+)", "", text)  # exponents in LaTeX: e^{1.8}, 10^{-3}
    text = re.sub(r"(?<![\d.])0\d(?![\d.%])", "", text)  # notebook numbers: "notebook 03", "[← 01 …]"
    # and the advanced track's: "# 11 · …", "[← 10 …]", "notebook 10", "notebooks 10 and 11"
    text = re.sub(r"(?m)^(#+\s*)1\d\b", r"\1", text)
    text = re.sub(r"\[(←\s*)?1\d\b", "[", text)
    text = re.sub(r"\b([Nn]otebooks?)\s+1\d\b((?:\s*(?:–|-|,|and|or|to)\s*1\d\b)*)", r"\1", text)
    for m in NUMBER.finditer(text):
        whole, frac, pct = m.group(1), m.group(2) or "", m.group(3)
        if frac or pct or len(whole.replace(",", "")) >= 2:
            yield whole.replace(",", "") + frac


def output_text(nb) -> str:
    """The text of every compared output of a notebook, thousands separators dropped."""
    text = "\n".join(t for c in nb.cells if compared(c) for t in text_outputs(c))
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 3,555.56 -> 3555.56
