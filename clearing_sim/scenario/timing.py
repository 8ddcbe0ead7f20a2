"""Judging a ``timing`` expectation: the interval from one fact to another, and its bounds.

Public names: ``judge_timing``.

The interval is ``of``'s time minus ``after``'s (the start when there is no ``after``). A
negative one, ``of`` before ``after``, fails whatever the bounds say, naming both instants (ISO
and virtual ms): the facts did not happen in the order the check assumes, most often because
a fact picked the wrong match (``nth: last`` before the last one happened) or the two were
written the wrong way round. A check that means "no later than" and accepts ``of`` before
``after`` says ``allow_negative: true``; its signed interval is held to ``at_most`` alone (the
reader refuses ``allow_negative`` beside ``at_least`` or ``equals``, which a negative interval
can never meet).
"""

from __future__ import annotations

from typing import Any

from clearing_sim.scenario.expectations import Timing
from clearing_sim.scenario.results import Verdict, duration_text
from clearing_sim.scenario.stage import Stage

__all__ = ["judge_timing"]


def _instant(stage: Stage, at_ms: int | None) -> dict[str, Any] | None:
    return None if at_ms is None else {"atMs": at_ms, "at": stage.world.iso(at_ms)}


def _instant_text(stage: Stage, at_ms: int) -> str:
    return f"{stage.world.iso(at_ms)} ({at_ms} ms since the start)"


def _bounds(timing: Timing) -> tuple[str, dict[str, Any]]:
    named = (("equals", "equalsMs", timing.equals_ms), ("at least", "atLeastMs",
                                                         timing.at_least_ms),
             ("at most", "atMostMs", timing.at_most_ms))
    text = " and ".join(f"{name} {duration_text(ms)}" for name, _, ms in named
                        if ms is not None)
    value: dict[str, Any] = {key: ms for _, key, ms in named if ms is not None}
    value["allowNegative"] = timing.allow_negative
    return text, value


def judge_timing(stage: Stage, timing: Timing, *, resolved: bool = False) -> Verdict:
    """The verdict on ``timing`` now; ``resolved``: its facts' references are resolved
    already (a check judged when the run ends resolves them at its step)."""
    end = stage.fact_ms(timing.of, resolved=resolved)
    start = 0 if timing.after is None else stage.fact_ms(timing.after, resolved=resolved)
    expected, expected_value = _bounds(timing)
    actual_value: dict[str, Any] = {"ms": None, "of": _instant(stage, end),
                                    "after": _instant(stage, start)}
    if end is None or start is None:
        missing = "of" if end is None else "after"
        return Verdict(False, expected, f"the {missing} fact has not happened",
                       expected_value, actual_value)
    took = actual_value["ms"] = end - start
    if took < 0 and not timing.allow_negative:
        return Verdict(False, f"{expected}, of no earlier than after",
                       f"{duration_text(took)}: of at {_instant_text(stage, end)} is before "
                       f"after at {_instant_text(stage, start)}; a check that accepts this says "
                       "allow_negative: true", expected_value, actual_value)
    passed = ((timing.equals_ms is None or took == timing.equals_ms)
              and (timing.at_least_ms is None or took >= timing.at_least_ms)
              and (timing.at_most_ms is None or took <= timing.at_most_ms))
    return Verdict(passed, expected, duration_text(took), expected_value, actual_value)
