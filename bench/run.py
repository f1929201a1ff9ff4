"""Run the startlab benchmark: ``python bench/run.py [--quick]``, the same as ``startlab bench``.

Needs startlab installed (``maturin develop --release`` in a source checkout).
"""

from startlab.bench import main

if __name__ == "__main__":
    main()
