"""One-way layers: the policy loader is given the rule ids; import contracts hold and can fail."""

from __future__ import annotations

import pytest

from gpuaudit.policy_file import PolicyError, parse_policy


def test_policy_loader_knows_only_the_rule_ids_it_is_given() -> None:
    policy = parse_policy("severity: {XX-01: low}\n", rule_ids=["XX-01"])
    assert policy.severity == {"XX-01": "low"}
    with pytest.raises(PolicyError, match="<policy>:1: severity: unknown rule id 'HA-01'"):
        parse_policy("severity: {HA-01: low}\n", rule_ids=["XX-01"])
