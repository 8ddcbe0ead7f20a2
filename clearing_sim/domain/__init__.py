"""Values and pure rules: money, parties, profiles, the transaction and its lifecycle.

No SimPy, no I/O, no clock: everything here is a frozen value or a pure function.
"""
