"""Fuzzing the loaders of every file a person hands gpuaudit: an inventory, a policy,
a targets file, a cassette, a Kubernetes cluster's kubectl JSON. Whatever the input,
the result is a clean load or the loader's own error (which the command line turns
into exit status 2), never another exception."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpuaudit.inventory import Inventory, InventoryError
from gpuaudit.jobs.fleet import TargetsError, load_targets
from gpuaudit.kubernetes.model import Cluster
from gpuaudit.kubernetes.read import KubernetesInputError, parse_cluster
from gpuaudit.model.policy_file import PolicyError, parse_policy
from gpuaudit.rules import catalogue
from gpuaudit.vsphere.obtain import check_cassette
from tests.k8s.generate import node_object, pod_object
from tests.support.report_fixtures import realistic_result

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(["", "0000:3b:00.0", "2027-02-30", "2027-01-31", "HA-01", "poweredOn"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)

RULE_IDS = [r.id for r in catalogue()]

BASE_INVENTORY = json.loads(realistic_result().inventory.to_json())


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with one value somewhere in it replaced, removed, or a key added."""
    data = copy.deepcopy(document)
    node = data
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        children = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
        if not children:
            break
        _, node = draw(st.sampled_from(children))
    if isinstance(node, dict) and node:
        key = draw(st.sampled_from(sorted(node)))
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if action == "replace":
            node[key] = draw(VALUES)
        elif action == "remove":
            del node[key]
        else:
            node[draw(st.text(max_size=12))] = draw(VALUES)
    elif isinstance(node, list) and node:
        node[draw(st.integers(min_value=0, max_value=len(node) - 1))] = draw(VALUES)
    return data


@st.composite
def damaged_text(draw: st.DrawFn, text: str) -> str:
    """``text`` cut short, or with a few characters deleted or inserted."""
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=max(len(text) - 1, 0)))
        action = draw(st.sampled_from(["cut", "delete", "insert"]))
        if action == "cut":
            text = text[:at]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(min_value=1, max_value=20)) :]
        else:
            text = text[:at] + draw(st.text(max_size=10)) + text[at:]
    return text


def load_inventory(text: str) -> None:
    try:
        inventory = Inventory.from_json(text)
    except InventoryError:
        return
    assert isinstance(inventory, Inventory)


@FUZZ
@given(st.text())
@example("[" * 100_000)
@example('{"schema_version": 1' + "0" * 5000 + "}")
@example('{"schema_version": NaN}')
@example('{"schema_version": 1, "hosts": [{"name": "\\ud800", "moref": "h"}]}')
def test_inventory_from_any_text(text: str) -> None:
    load_inventory(text)


@FUZZ
@given(mutated(BASE_INVENTORY))
def test_inventory_with_one_value_changed(data: Any) -> None:
    load_inventory(json.dumps(data))


@FUZZ
@given(damaged_text(json.dumps(BASE_INVENTORY, indent=1)))
def test_damaged_inventory_text(text: str) -> None:
    load_inventory(text)


POLICY = (Path(__file__).resolve().parents[2] / "docs" / "policy.md").read_text(encoding="utf-8")
POLICY_EXAMPLE = POLICY.split("```yaml\n", 1)[1].split("```", 1)[0]


def load_policy_text(text: str) -> None:
    try:
        parse_policy(text, "fuzz.yaml", rule_ids=RULE_IDS)
    except PolicyError as exc:
        assert str(exc).startswith("fuzz.yaml")


@FUZZ
@given(st.text())
@example("[" * 5000)
@example("waivers: [{rule: HA-01, object: x, reason: r, owner: o, expires: 2027-02-30}]")
@example("version: " + "9" * 5000)
@example("intent: !!python/object:os.system {}")
@example("a: &x [*x]")
def test_policy_from_any_text(text: str) -> None:
    load_policy_text(text)


@FUZZ
@given(mutated(yaml.safe_load(POLICY_EXAMPLE)))
def test_policy_with_one_value_changed(data: Any) -> None:
    load_policy_text(yaml.safe_dump(data))


@FUZZ
@given(damaged_text(POLICY_EXAMPLE))
def test_damaged_policy_text(text: str) -> None:
    load_policy_text(text)


TARGETS = """concurrency: 4
defaults:
  user: audit@vsphere.local
  password_env: VCENTER_PASSWORD
  ca_file: corp-ca.pem
targets:
  - server: vc-east.example.com
  - server: vc-west.example.com
    name: west
    policy: west-policy.yaml
  - {server: vc-lab.example.com, user: root, insecure: true, timeout: 30}
"""


def load_targets_text(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "targets.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            load_targets(path)
        except TargetsError as exc:
            assert str(exc).startswith(str(path))


@FUZZ
@given(st.text())
@example("targets: " + "[" * 5000)
@example("concurrency: " + "9" * 5000 + "\ntargets: [{server: a, user: u}]")
def test_targets_from_any_text(text: str) -> None:
    load_targets_text(text)


@FUZZ
@given(mutated(yaml.safe_load(TARGETS)))
def test_targets_with_one_value_changed(data: Any) -> None:
    load_targets_text(yaml.safe_dump(data))


@FUZZ
@given(damaged_text(TARGETS))
def test_damaged_targets_text(text: str) -> None:
    load_targets_text(text)


@FUZZ
@given(st.text() | damaged_text("interactions:\n- request: {uri: x}\n  response: {}\n"))
def test_cassette_check_from_any_text(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        problem = check_cassette(path)
        assert problem is None or problem.startswith(str(path))


URL_TEXT = st.text(alphabet=st.sampled_from("aZ09:/?#@[]%. -_\t\u202e"), max_size=12)


@FUZZ
@given(
    st.sampled_from(["postgresql", "postgresql+psycopg2", "postgresql+asyncpg", "sqlite"]),
    URL_TEXT,
    URL_TEXT,
    URL_TEXT,
)
def test_a_history_url_with_any_password_is_checked_without_showing_it(
    scheme: str, password: str, host: str, rest: str
) -> None:
    from gpuaudit.jobs.history import HistoryError, check_location, shown

    secret = f"PwX9{password}Zq7K"
    url = f"{scheme}://audit:{secret}@{host}{rest}"
    try:
        check_location(url)
    except HistoryError as exc:
        assert "PwX9" not in str(exc) and "Zq7K" not in str(exc)
    assert "PwX9" not in shown(url) and "Zq7K" not in shown(url)


@FUZZ
@given(st.sampled_from(["smtp", "smtps", "https", "http"]), URL_TEXT, URL_TEXT, URL_TEXT)
@example("https", "[", "", "0")  # a lone [ in the password once escaped the check
def test_a_notify_url_with_any_password_is_checked_without_showing_it(
    scheme: str, password: str, host: str, rest: str
) -> None:
    from gpuaudit.jobs.notify import NotifyError, parse_target

    url = f"{scheme}://mailer:PwX9{password}Zq7K@{host}{rest}?to=a@b.c"
    try:
        target = parse_target(url)
    except NotifyError as exc:
        assert "PwX9" not in str(exc) and "Zq7K" not in str(exc)
    else:
        assert "PwX9" not in target.shown and "Zq7K" not in target.shown


KUBERNETES = {
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        node_object({"name": "gpu-01", "resources": {"nvidia.com/gpu": 2}}),
        pod_object({"name": "train-0", "node": "gpu-01", "resources": {"nvidia.com/gpu": 1}}),
    ],
}


def load_kubernetes_text(text: str) -> None:
    try:
        cluster = parse_cluster(text, name="fuzz")
    except KubernetesInputError as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(cluster, Cluster)


def with_quantity(quantity: str) -> str:
    data = copy.deepcopy(KUBERNETES)
    data["items"][0]["status"]["allocatable"]["nvidia.com/gpu"] = quantity
    return json.dumps(data)


@FUZZ
@given(st.text())
@example("[" * 100_000)
@example('{"apiVersion": "v1", "kind": "List", "items": [' + "[" * 100_000 + "]}")
@example(with_quantity("1e999999999"))
@example(with_quantity("1" * 5000))
@example(with_quantity("NaN"))
def test_kubernetes_from_any_text(text: str) -> None:
    load_kubernetes_text(text)


@FUZZ
@given(mutated(KUBERNETES))
def test_kubernetes_with_one_value_changed(data: Any) -> None:
    load_kubernetes_text(json.dumps(data))


@FUZZ
@given(damaged_text(json.dumps(KUBERNETES, indent=1)))
def test_damaged_kubernetes_text(text: str) -> None:
    load_kubernetes_text(text)


QUANTITY_TEXT = st.from_regex(
    r"[+-]?[0-9]{0,30}(\.[0-9]{0,30})?([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,12})?",
    fullmatch=True,
)


@FUZZ
@given(QUANTITY_TEXT | st.text(max_size=70))
@example("1e999999999")
@example("1e-999999999")
@example("9" * 19 + "Ei")
def test_kubernetes_quantity_of_any_size(quantity: str) -> None:
    load_kubernetes_text(with_quantity(quantity))
