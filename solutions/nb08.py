"""Reference solutions for the exercises of notebooks/08_the_decoder_block.ipynb.

Not imported by the notebook (it never shows the solution); the tests in
tests/test_exercises_08.py check these against the checkers in attention_helpers.checks.
"""

__all__ = ["my_block_params", "my_block"]


# Exercise 1: the weights of one block at GPT-2 small's width.
width, width_ff = 768, 3072
my_block_params = 4 * width * width + 2 * width * width_ff + 2 * width   # W_Q W_K W_V W_O, W_1 W_2, two gains


# Exercise 2: the pre-norm block with its two residuals.
def my_block(X, attention, ffn, norm):
    h = X + attention(norm(X))
    return h + ffn(norm(h))
