"""The exercise checkers name the likely mistake and accept the right answer."""

import numpy as np
import pytest

import attention_helpers as ah
from attention_helpers.checks import check_attention, check_softmax, compare


def stable_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_compare_accepts_the_right_answer():
    check = compare([[1.0, 2.0]], np.array([[1.0, 2.0]]), name="Q")
    assert check and check.kind == "right" and check.mistake is None


@pytest.mark.parametrize("answer, kind, numbers", [
    (None, "empty", []),
    ("text", "not_numbers", []),
    ([[1.0], [2.0]], "transposed", ["(2, 1)", "(1, 2)"]),
    ([1.0, 2.0, 3.0], "wrong_shape", ["(3,)", "(1, 2)"]),
    ([[1.0, 2.5]], "wrong_value", ["(0, 1)", "2.5"]),   # where it differs, and what it got there
    ([[np.nan, 2.0]], "not_finite", []),
])
def test_compare_explains_what_is_wrong(answer, kind, numbers):
    check = compare(answer, np.array([[1.0, 2.0]]), name="Q")
    assert not check and check.kind == kind and check.mistake is None
    # a sentence a student can use: it names the answer and the shapes or entries at stake
    assert check.hint and ("Q" in check.hint or kind == "empty")
    assert all(n in check.hint for n in numbers), check.hint


def test_compare_names_a_known_mistake_by_its_key():
    check = compare([3.0, 4.0], [1.0, 2.0], mistakes={"added": ("you added instead", [3.0, 4.0])})
    assert not check
    assert (check.kind, check.mistake, check.hint) == ("mistake", "added", "you added instead")


def test_compare_takes_the_first_mistake_that_matches_and_never_the_answer_itself():
    check = compare([3.0, 4.0], [1.0, 2.0], mistakes={
        "same_as_answer": ("never reported", [1.0, 2.0]),   # equals the answer: ignored
        "first": ("first", [3.0, 4.0]), "second": ("second", [3.0, 4.0])})
    assert check.mistake == "first"
    assert compare([1.0, 2.0], [1.0, 2.0], mistakes={"same_as_answer": ("x", [1.0, 2.0])})


def test_a_mistake_of_none_stands_for_inf_or_nan():
    check = compare([np.inf, 1.0], [1.0, 2.0], mistakes={"overflow": ("exp overflowed", None)})
    assert (check.kind, check.mistake) == ("mistake", "overflow")


def test_compare_number_names_a_mistake_by_its_key():
    def number(answer):
        return ah.checks._base.compare_number(
            answer, 12, name="n", success="12", otherwise=lambda v: f"{v:g} is not it",
            mistakes={"doubled": ("you doubled it", 24), "halved": ("you halved it", 6)})
    assert number(12) and number(12.0)
    assert (number(24).kind, number(24).mistake) == ("mistake", "doubled")
    assert (number(6).kind, number(6).mistake) == ("mistake", "halved")
    assert (number(7).kind, number(7).mistake) == ("wrong_value", None)
    assert number("twelve").kind == "not_numbers"


def test_mistakes_in_another_form_are_a_checker_s_error_not_a_silent_miss():
    # the older {hint: wrong answer} form, which no checker uses any more
    with pytest.raises(TypeError, match=r"mistakes must map a key to \(hint, wrong answer\), got 'you"):
        compare([3.0, 4.0], [1.0, 2.0], mistakes={"you added instead": [3.0, 4.0]})


def test_a_named_mistake_needs_its_key():
    with pytest.raises(ValueError, match="needs its key"):
        ah.checks._base.wrong("a hint", kind="mistake")


def test_check_softmax_accepts_a_stable_softmax():
    assert check_softmax(stable_softmax)
    assert check_softmax(ah.softmax)


@pytest.mark.parametrize("fn, kind, mistake", [
    (lambda x: np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True), "mistake", "overflow"),
    (lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True), "mistake", "normalised_over_columns"),
    (lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum(), "mistake", "normalised_over_matrix"),
    (lambda x: np.exp(x), "mistake", "rows_not_normalised"),
    (lambda x: None, "empty", None),
    (lambda x: x.nope, "raised", None),
    ("not a function", "not_callable", None),
])
def test_check_softmax_names_each_mistake(fn, kind, mistake):
    check = check_softmax(fn)
    assert not check
    assert (check.kind, check.mistake) == (kind, mistake), check.text


def test_check_attention_accepts_the_reference_and_names_mistakes():
    assert check_attention(lambda Q, K, V: ah.scaled_dot_product_attention(Q, K, V))
    unscaled = check_attention(lambda Q, K, V: ah.softmax(Q @ K.T) @ V)
    by_dk = check_attention(lambda Q, K, V: ah.softmax(Q @ K.T / Q.shape[-1]) @ V)
    weights_only = check_attention(lambda Q, K, V: ah.softmax(Q @ K.T / np.sqrt(Q.shape[-1])))
    assert unscaled.mistake == "no_scale"
    assert by_dk.mistake == "divided_by_d_k"
    assert weights_only.mistake == "returned_weights"


# ---- the structured result -------------------------------------------------

@pytest.mark.parametrize("answer, kind", [
    ([[1.0, 2.0]], "right"),
    (None, "empty"),
    ("text", "not_numbers"),
    ([[np.inf, 2.0]], "not_finite"),
    ([[1.0], [2.0]], "transposed"),
    ([1.0, 2.0, 3.0], "wrong_shape"),
    ([[3.0, 4.0]], "mistake"),
    ([[1.0, 2.5]], "wrong_value"),
])
def test_compare_reports_what_kind_of_answer_it_got(answer, kind):
    check = compare(answer, np.array([[1.0, 2.0]]), name="Q", mistakes={"added": ("you added", [[3.0, 4.0]])})
    assert check.kind == kind
    assert bool(check) == (kind == "right") == check.ok
    assert check.mistake == ("added" if kind == "mistake" else None)
    # the text is built from the fields, never the other way round
    assert check.text == ("✅ Correct: " if check.ok else "❌ Not yet: ") + check.hint
    assert repr(check) == check.text
    assert not hasattr(check, "message")  # tests decide from kind and mistake, not from prose


def test_a_function_that_raises_keeps_its_error():
    check = check_softmax(lambda x: x.nope)
    assert check.kind == "raised" and isinstance(check.error, AttributeError)
    assert check_softmax("not a function").kind == "not_callable"


def test_shared_mistakes_read_the_same_in_every_notebook():
    unscaled = lambda Q, K, V: ah.softmax(Q @ K.T) @ V  # noqa: E731
    results = [check_attention(unscaled), ah.checks.check_scaled_attention(unscaled),
               ah.checks.check_masked_attention(lambda Q, K, V, mask=None: unscaled(Q, K, V))]
    assert {r.mistake for r in results} == {"no_scale"}
    assert len({r.hint for r in results}) == 1  # and the student reads the same sentence


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        ah.checks.Check(False, "wrong", "no such kind")


# ---- grading mode -----------------------------------------------------------

@pytest.fixture
def no_grading(monkeypatch):
    monkeypatch.delenv("ATTENTION_GRADING", raising=False)
    with ah.checks.grading(False):
        yield


def test_grading_mode_raises_the_hint_and_passes_the_right_answer(no_grading):
    assert not check_softmax(lambda x: np.exp(x))  # off: a result, no exception
    with ah.checks.grading(True):
        assert check_softmax(stable_softmax)
        with pytest.raises(AssertionError, match="do not sum to 1"):
            check_softmax(lambda x: np.exp(x))
    assert not ah.checks.grading_on()  # the with block restored the previous state


def test_grading_mode_from_the_environment(no_grading, monkeypatch):
    monkeypatch.setenv("ATTENTION_GRADING", "1")
    assert ah.checks.grading_on()
    with pytest.raises(AssertionError, match="still empty"):
        ah.checks.check_x_shape(None)


def test_grading_mode_raises_once_with_the_outer_checkers_hint(no_grading):
    # check_stable_softmax calls check_softmax; only the outer result may raise
    def no_keepdims(x):
        e = np.exp(x - x.max(axis=-1))
        return e / e.sum(axis=-1)
    with ah.checks.grading(True), pytest.raises(AssertionError, match="keepdims=True") as info:
        ah.checks.check_stable_softmax(no_keepdims)
    assert str(info.value).count("❌") == 1


def test_grading_takes_a_bool(no_grading):
    with pytest.raises(TypeError, match="True or False"):
        ah.checks.grading("yes")


def test_every_public_checker_can_grade():
    names = [n for n in ah.checks.__all__ if n.startswith("check_")]
    assert len(names) >= 20
    for name in names:
        assert hasattr(getattr(ah.checks, name), "__wrapped__"), f"{name} lacks @checker"


def test_turning_grading_on_says_so():
    with ah.checks.grading(True) as state:
        assert "grading mode on" in repr(state)
    assert "grading mode off" in repr(ah.checks.grading(False))


# ---- every named mistake is a short key, and some test feeds it ------------------

def _mistake_keys():
    """{key: checker module} for the literal keys the checker modules name: entries
    `"key": (hint, wrong answer)` of a mistakes dict, and `wrong(..., mistake="key")`."""
    import ast
    from pathlib import Path

    keys = {}
    for path in sorted(Path(ah.checks.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                found = [k.value for k, v in zip(node.keys, node.values)
                         if isinstance(k, ast.Constant) and isinstance(k.value, str)
                         and isinstance(v, ast.Tuple) and len(v.elts) == 2]
            elif isinstance(node, ast.keyword) and node.arg == "mistake" \
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                found = [node.value.value]
            else:
                continue
            keys.update(dict.fromkeys(found, path.stem))
    return keys


def test_every_named_mistake_has_a_short_key_that_a_test_feeds():
    from pathlib import Path

    keys = _mistake_keys()
    assert len(keys) > 100  # the scan finds the checkers' keys
    tests = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    for key, module in keys.items():
        assert key.isidentifier() and len(key) <= 30, f"{module}: {key!r} is not a short key"
        assert f'"{key}"' in tests, f"{module}'s mistake {key!r} is fed by no test"
