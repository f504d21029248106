"""The Kubernetes manifests and the container image definition in deploy/, checked
offline: each object as the Kubernetes client's models read an API server's answer,
the references between them, and the image's install steps against the README's."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from kubernetes import client

from gpuaudit.cli.main import main
from gpuaudit.jobs.fleet import load_targets
from gpuaudit.model.policy_file import load_policy
from gpuaudit.rules import catalogue
from tests.conftest import ROOT, unused_port

DEPLOY = ROOT / "deploy"
# The kinds the manifests may use, with the API version each is served at.
KINDS = {
    "Namespace": "v1",
    "ServiceAccount": "v1",
    "Secret": "v1",
    "ConfigMap": "v1",
    "PersistentVolumeClaim": "v1",
    "CronJob": "batch/v1",
}


def manifests() -> list[dict[str, Any]]:
    found = []
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        found += [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
    return found


def named(kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in manifests() if d["kind"] == kind}


def pod_specs() -> list[dict[str, Any]]:
    return [c["spec"]["jobTemplate"]["spec"]["template"]["spec"] for c in named("CronJob").values()]


@pytest.mark.parametrize("doc", manifests(), ids=lambda d: f"{d['kind']}-{d['metadata']['name']}")
def test_each_object_is_what_the_kubernetes_models_read_field_for_field(
    doc: dict[str, Any],
) -> None:
    assert doc["apiVersion"] == KINDS[doc["kind"]]
    model = getattr(client, f"V1{doc['kind']}")
    api = client.ApiClient()
    obj = api.deserialize(json.dumps(doc), model, "application/json")
    # Written back, the object is the file: no field misspelt, misplaced or of the wrong type.
    assert api.sanitize_for_serialization(obj) == doc
    assert obj.metadata.namespace in (None, "gpuaudit")


def test_the_service_account_may_do_nothing_in_kubernetes() -> None:
    (account,) = named("ServiceAccount")
    assert named("ServiceAccount")[account]["automountServiceAccountToken"] is False
    kinds = {d["kind"] for d in manifests()}
    assert not kinds & {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
    for spec in pod_specs():
        assert spec["serviceAccountName"] == account
        assert spec["automountServiceAccountToken"] is False
        assert spec["securityContext"]["runAsNonRoot"] is True
        for container in spec["containers"]:
            assert container["securityContext"]["readOnlyRootFilesystem"] is True


def test_every_secret_and_config_key_a_pod_reads_is_shipped() -> None:
    secrets, configs = named("Secret"), named("ConfigMap")
    claims = named("PersistentVolumeClaim")
    for spec in pod_specs():
        for container in spec["containers"]:
            for env in container.get("env", []):
                ref = env["valueFrom"]["secretKeyRef"]
                assert ref["key"] in secrets[ref["name"]]["stringData"]
            mounted = {m["name"] for m in container["volumeMounts"]}
            assert mounted == {v["name"] for v in spec["volumes"]}
        for volume in spec["volumes"]:
            if "configMap" in volume:
                data = configs[volume["configMap"]["name"]]["data"]
                assert {i["key"] for i in volume["configMap"]["items"]} <= set(data)
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims


def scan_job() -> dict[str, Any]:
    return named("CronJob")["gpuaudit-scan"]["spec"]["jobTemplate"]["spec"]


def test_one_pod_scans_each_target_of_the_config_map_with_its_policy(tmp_path: Path) -> None:
    (config,) = named("ConfigMap").values()
    for key, text in config["data"].items():
        (tmp_path / key).write_text(text)
    fleet = load_targets(tmp_path / "targets.yaml")
    job = scan_job()
    assert job["completionMode"] == "Indexed"
    assert job["completions"] == len(fleet.targets) == 3
    (container,) = job["template"]["spec"]["containers"]
    assert "--target-index=$(JOB_COMPLETION_INDEX)" in container["args"]
    env = {e["name"] for e in container["env"]}
    for target in fleet.targets:
        assert target.password_env in env
        assert target.policy is not None
        load_policy(target.policy, rule_ids=[r.id for r in catalogue()])  # raises on a bad policy
    # The history every pod writes to is the one the fleet report reads.
    report = named("CronJob")["gpuaudit-fleet-report"]["spec"]["jobTemplate"]["spec"]
    (reporter,) = report["template"]["spec"]["containers"]
    assert reporter["args"][:2] == ["fleet", "report"]
    history = [e for e in container["env"] if e["name"] == "GPUAUDIT_HISTORY"]
    assert history == [e for e in reporter["env"] if e["name"] == "GPUAUDIT_HISTORY"]
    assert "--history=$(GPUAUDIT_HISTORY)" in container["args"]


def readme_install_steps() -> list[list[str]]:
    """The README's install commands, each up to the scan it runs, as separate steps."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(python3 -m venv[^\n]*)\n```", text)
    assert blocks
    found = []
    for block in blocks:
        steps = [s.strip() for s in block.split("&&")]
        found.append([s for s in steps if "pip" in s or "venv" in s.split()[2:3]])
    return found


def test_the_containerfile_installs_as_the_readme_says() -> None:
    lines = (DEPLOY / "Containerfile").read_text().splitlines()
    runs = [line.removeprefix("RUN ").strip() for line in lines if line.startswith("RUN ")]
    # The plain install first; then the one with every extra, the image's: its jobs
    # write to a PostgreSQL history (extra postgres) and may read --kubernetes files.
    assert readme_install_steps() == [
        ["python3 -m venv .venv", ".venv/bin/pip install ."],
        ["python3 -m venv .venv", ".venv/bin/pip install '.[all]'"],
    ]
    assert [s.strip() for r in runs for s in r.split("&&")] == readme_install_steps()[1]
    (workdir,) = [line.split()[1] for line in lines if line.startswith("WORKDIR ")]
    env = " ".join(line for line in lines if line.startswith("ENV ") or line.startswith("    "))
    assert f"PATH={workdir}/.venv/bin:" in env
    (entry,) = [line for line in lines if line.startswith("ENTRYPOINT ")]
    assert json.loads(entry.removeprefix("ENTRYPOINT "))[0] == "gpuaudit"
    assert any(re.fullmatch(r"USER [1-9]\d*(:\d+)?", line) for line in lines)  # not root


def test_target_index_scans_that_target_alone_and_writes_no_fleet_summary(
    tmp_path: Path,
) -> None:
    targets = tmp_path / "targets.yaml"
    servers = [f"http://127.0.0.1:{unused_port()}/sdk" for _ in range(3)]
    targets.write_text(
        "targets:\n"
        + "".join(f"  - {{name: t{i}, server: '{s}', user: u}}\n" for i, s in enumerate(servers))
    )
    out = tmp_path / "out"
    args = ["--no-color", "scan", "--targets", str(targets), "-o", str(out), "--no-history"]
    done = CliRunner().invoke(main, [*args, "--target-index", "1"], env={"GPUAUDIT_PASSWORD": "x"})
    assert done.exit_code == 3, done.output  # that target's: its vCenter is not there
    assert done.stdout.startswith("t1: ERROR (")
    assert "t0" not in done.output and "t2" not in done.output
    assert not out.exists() or not list(out.glob("gpuaudit-fleet-*"))
    beyond = CliRunner().invoke(main, [*args, "--target-index", "3"])
    assert beyond.exit_code == 2
    assert f"--target-index 3: {targets} has 3 targets (0 to 2)" in beyond.stderr
    alone = CliRunner().invoke(main, ["scan", "--demo", "--target-index", "0"])
    assert alone.exit_code == 2 and "--target-index needs --targets FILE" in alone.stderr


def test_the_pods_arguments_are_gpuaudit_s_own() -> None:
    """Every option a manifest passes is one the command takes (click would refuse it)."""
    for spec in pod_specs():
        (container,) = spec["containers"]
        words = [a.split("=", 1)[0] for a in container["args"] if a.startswith("--")]
        command = [a for a in container["args"] if not a.startswith("--")]
        usage = CliRunner().invoke(main, [*command, "--help"]).stdout
        for word in words:
            assert re.search(rf"(^|[ ,]){re.escape(word)}\b", usage, re.M), (
                shlex.join(command),
                word,
            )
