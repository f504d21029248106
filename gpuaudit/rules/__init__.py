"""The rule catalogue: one module per category, each rule registered by a decorator.

``catalogue()`` lists the rules (ordered by id); ``specs()`` pairs each with its
check function. docs/rules.md describes every rule.

The rules import the simulation, the model (facts and policy), the results, the
inventory and the knowledge below them; the plans, the verdict and everything above
import them.
"""

from __future__ import annotations

from gpuaudit.results import Rule

# Importing a category's module registers its rules.
from gpuaudit.rules import (  # noqa: F401
    data,
    design,
    devices,
    drift,
    drs,
    gpu,
    ha,
    ha_health,
    kubernetes,
    licensing,
    maintenance,
    monitoring,
    storage,
    stun,
    vgpu_manager,
    vgpu_options,
    vmotion,
)
from gpuaudit.rules.registry import Context, Outcome, RuleSpec, Scope, Verdict, registered, rule

__all__ = ["Context", "Outcome", "RuleSpec", "Scope", "Verdict", "catalogue", "rule", "specs"]


def specs() -> list[RuleSpec]:
    """Every rule with its check function, ordered by id."""
    return registered()


def catalogue() -> list[Rule]:
    """The rule catalogue, ordered by id."""
    return [spec.rule for spec in registered()]
