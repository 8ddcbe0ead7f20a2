"""Profile: where a redeem's cost goes, by layer (the table in README, "Performance").

Run:  python benchmarks/profile_layers.py [--transactions N] [--seed S] [--rows K]

Runs ``bench_sagas``'s workload (N redeems, mixed modes, Poisson arrivals) under cProfile and
groups every function's self time by the layer its code belongs to: the SimPy kernel, the
saga's logic, the issuer gateway and its signed webhooks, ledgers and RTGS, the transaction
book and its frozen values, log records (and JSON), ids and random draws, money
arithmetic, and the standard library and builtins the rest calls. A deterministic profiler
adds a fixed cost per call, so layers made of many small calls look a little heavier than
they are; the shares are for comparing layers, the callgrind counts for comparing runs.
Then the K functions with the most self time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

from clearing_sim.sim.examples import example_world
from clearing_sim.sim.workload import poisson_redeems

#: (layer, path fragments of its code), first match wins; builtins are matched by name.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SimPy kernel (events, heap, resumes) and the light waits",
     ("simpy/", "sim/kernel.py", "sim/timers.py", "_heapq", "method 'send' of 'generator'")),
    ("saga logic", ("sim/saga.py", "sim/legs.py", "domain/saga.py", "domain/lifecycle.py")),
    ("transaction book and its frozen values",
     ("sim/book.py", "domain/transaction.py", "clearing_sim.domain.transaction",
      "clearing_sim.domain.saga")),
    ("log records, listeners, JSON", ("sim/eventlog.py", "json/", "domain/jsontext.py",
                                      "sim/webhook_channel.py", "sim/subscriptions.py")),
    ("issuer gateway, status webhooks (HMAC), inbox",
     ("sim/issuer.py", "sim/inbox.py", "domain/signing.py", "hmac", "clearing_sim.sim.issuer",
      "domain/instruction.py")),
    ("ledgers and RTGS (receipts, base58 hashes)",
     ("sim/ledger.py", "sim/rtgs.py", "sim/chain_formats.py", "clearing_sim.sim.ledger")),
    ("ids and random draws (latencies)", ("sim/streams.py", "domain/ids.py", "random.py",
                                          "domain/latency.py", "uuid.py", "getrandbits",
                                          "randbytes", "method 'random'", "math.")),
    ("money and fee arithmetic", ("domain/money.py", "domain/fees.py", "decimal",
                                  "clearing_sim.domain.money", "quantize")),
    ("world: initiation, lookups, clock, workload",
     ("sim/world.py", "sim/participants.py", "domain/initiation.py", "sim/workload.py",
      "sim/examples.py", "clearing_sim.domain", "clearing_sim.sim")),
)
OTHER = "builtins and the standard library (enum values, dicts, lists)"


def layer_of(where: str) -> str:
    for layer, fragments in LAYERS:
        if any(fragment in where for fragment in fragments):
            return layer
    return OTHER


def profile(transactions: int, seed: int) -> pstats.Stats:
    cast = example_world(seed)
    cast.world.env.process(poisson_redeems(cast, transactions, mean_gap_ms=2_000))
    profiler = cProfile.Profile()
    profiler.runcall(cast.world.run_all)
    return pstats.Stats(profiler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=int, default=15)
    args = parser.parse_args()
    stats = profile(args.transactions, args.seed)
    shares: dict[str, float] = {}
    functions: list[tuple[float, str]] = []
    for (path, line, name), row in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{path}:{line}({name})"
        self_s = row[2]
        shares[layer_of(where)] = shares.get(layer_of(where), 0.0) + self_s
        functions.append((self_s, where))
    total = sum(shares.values())
    print("| layer | share of self time |\n|---|---:|")
    for layer, seconds in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"| {layer} | {seconds / total:.0%} |")
    print(f"\n{args.transactions} redeems, {total:.2f} s of self time under the profiler; "
          f"top {args.rows} functions:")
    for seconds, where in sorted(functions, reverse=True)[:args.rows]:
        print(f"{seconds / total:6.1%}  {where.replace('/work/', '')}")


if __name__ == "__main__":
    main()
