"""``python -m clearing_sim``: the ``clearing-sim`` command line."""

from clearing_sim.cli import main

if __name__ == "__main__":
    main()
