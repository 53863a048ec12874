"""verify's verdicts on the built-in solvers over ``svmref.testing.strategies``, judged by an extended-precision solve
(``benchmarks/verify_strategies.py``): no ``pass`` where the independent optimum of ``benchmarks/labels.py``
shows an error above ``T`` (plus its own uncertainty and the floating-point floor), and no ``fail`` that neither the
true error nor a failed KKT residual recomputed in extended precision confirms. The benchmark's default is 500
examples per formulation; this slow test draws :data:`EXAMPLES` of each.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "verify_strategies.py"
_spec = importlib.util.spec_from_file_location("svmref_bench_verify_strategies", _PATH)
vs = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = vs  # dataclasses resolve their module by name
_spec.loader.exec_module(vs)

#: Instances drawn per formulation (every built-in solver of the formulation runs on each).
EXAMPLES = 25


@pytest.mark.slow
@pytest.mark.parametrize("formulation", vs.FORMULATIONS)
def test_verify_verdicts_hold_against_extended_precision(formulation):
    from svmref import verify

    with threadpool_limits(1):
        outcomes, no_optimum = vs.run_formulation(formulation, EXAMPLES, verify.DEFAULT_TOL)
    assert outcomes, f"no instance of {formulation} was judged: {no_optimum}"
    broken = vs.bad(outcomes)
    assert not broken, (f"{len(broken)} of {len(outcomes)} verdicts at T = {verify.DEFAULT_TOL:g} not borne out by the "
                        "extended-precision solve:\n" + "\n".join(f"[{o.kind}] {o.line()}" for o in broken)
                        + (f"\n(instances without an optimum, not judged: {no_optimum})" if no_optimum else ""))
