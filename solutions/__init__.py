"""Reference solutions, one module per notebook: `import solutions.nb03`.

Outside the helper package on purpose (a teacher can hand out the course
without this folder) and never imported by the notebooks; the exercise tests
and the nbgrader course generator read them.
"""
