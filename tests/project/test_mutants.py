"""Realistic mistakes the other tests let through, each pinned by a value stated by hand.

Every test here fails when the code it names makes the mistake in its docstring:
a secret echoed, restart priorities swapped, a threshold moved by one, a host
in maintenance mode taken for a restart target, a table column miscounted.
"""

from __future__ import annotations

import http.client
import io
import logging
from pathlib import Path
from typing import Any
from unittest.mock import patch
from urllib.parse import quote

import openpyxl
import pytest
from pyVmomi import vim

from gpuaudit.common import debuglog
from gpuaudit.inventory import CounterStats, GpuTelemetry, LunPath, StorageAdapter
from gpuaudit.report import render_xlsx
from gpuaudit.results import HostFailure
from gpuaudit.simulation.failures import simulate_cluster
from gpuaudit.vsphere import cassette, connect, credentials
from gpuaudit.vsphere.collect import collect
from gpuaudit.vsphere.collect.hosts import build_host
from gpuaudit.vsphere.collect.retrieve import ObjectProps
from gpuaudit.vsphere.connect import ConnectError, parse_server
from gpuaudit.vsphere.credentials import CredentialError, Credentials
from tests.conftest import SCENARIOS
from tests.lab.expected import comparable, expected_inventory
from tests.lab.scenario import load_scenario
from tests.rules.test_catalogue import verdicts
from tests.support.builders import Estate, healthy, passthrough_estate
from tests.support.report_fixtures import realistic_result

# -- vsphere/connect.py: the server string in a parse error ----------------------------------------


def test_unparsable_server_url_never_echoes_its_user_or_password() -> None:
    """urlsplit's own error quotes the whole netloc, password included: "℀" is not
    allowed in a host name under NFKC. The user information is cut off before the URL
    is parsed, so the host part is what must fail here, and it names no secret."""
    with pytest.raises(ConnectError) as caught:
        parse_server("https://audit:Se\u2100cret@vc\u210001")
    message = str(caught.value)
    assert "Se\u2100cret" not in message and "Sea/ccret" not in message
    assert "audit" not in message


# -- facts.py and simulate.py: restart priority ----------------------------------------


def _two_vms_one_free_gpu() -> Estate:
    """Two 24 GB vGPUs on "src" (one per L4), one empty L4 on "dst": one VM can restart.

    The names sort the wrong way on purpose: by name, "a-high" would go first.
    """
    e = Estate()
    e.cluster("prio")
    src, dst = e.host("src", "prio"), e.host("dst", "prio")
    first, second = e.gpu(src, "0000:3b:00.0"), e.gpu(src, "0000:5e:00.0")
    e.gpu(dst, "0000:3b:00.0")
    e.datastore("san", [src, dst])
    e.vm("a-high", src, ["san"], vgpu="grid_l4-24q", gpu=first, priority="high")
    e.vm("b-highest", src, ["san"], vgpu="grid_l4-24q", gpu=second, priority="highest")
    return e


def _failure_of(e: Estate, host: str) -> HostFailure:
    sim = simulate_cluster(e.inv, "prio")
    return next(f for f in sim.failures if f.host == host)


def test_highest_restart_priority_takes_the_only_free_gpu() -> None:
    failure = _failure_of(_two_vms_one_free_gpu(), "src")
    assert [(p.vm, p.to_host, p.restart_priority) for p in failure.placed] == [
        ("b-highest", "dst", "highest")
    ]
    assert [(p.vm, p.restart_priority) for p in failure.unplaced] == [("a-high", "high")]


def test_greedy_pass_alone_restarts_by_priority() -> None:
    """With the exact search skipped (too many VMs), the greedy pass must still honour
    the priority order."""
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        failure = _failure_of(_two_vms_one_free_gpu(), "src")
    assert [p.vm for p in failure.placed] == ["b-highest"]
    assert [p.vm for p in failure.unplaced] == ["a-high"]


def test_passthrough_active_gpu_takes_no_vgpu() -> None:
    """A GPU in active passthrough belongs to one VM whole, whatever graphicsInfo says."""
    e = Estate()
    e.cluster("prio")
    src, dst = e.host("src", "prio"), e.host("dst", "prio")
    e.gpu(src)
    target = e.gpu(dst)
    e.datastore("san", [src, dst])
    e.vm("v", src, ["san"], vgpu="grid_l4-8q")
    assert [p.vm for p in _failure_of(e, "src").placed] == ["v"]  # the control
    target.passthrough_enabled = target.passthrough_active = True
    failure = _failure_of(e, "src")
    assert failure.placed == [] and [p.vm for p in failure.unplaced] == ["v"]


# -- collect/hosts.py: maintenance mode and the vMotion uplink ------------------------------


@pytest.mark.live
def test_host_in_maintenance_mode_is_collected_and_never_a_restart_target(
    lab_factory: Any,
) -> None:
    scenario = load_scenario(SCENARIOS / "scenario-b.yaml")
    (dc,) = scenario["datacenters"]
    cluster = dc["clusters"][0]
    resting = cluster["hosts"][-1]
    resting["maintenance"] = True
    lab = lab_factory(scenario)
    with connect.session(parse_server(lab.url), lab.user, lab.password) as si:
        inventory = collect(si, source=lab.url)
    hosts = {h.name: h for h in inventory.hosts}
    assert hosts[resting["name"]].in_maintenance is True
    assert [h.name for h in inventory.hosts if h.in_maintenance] == [resting["name"]]
    assert comparable(inventory) == comparable(expected_inventory(scenario))
    sim = simulate_cluster(inventory, cluster["name"])
    targets = {p.to_host for f in sim.failures for p in f.placed}
    assert targets and resting["name"] not in targets


def _host_with_vmotion_uplinks(speeds: list[int]) -> ObjectProps:
    pnics = [
        vim.host.PhysicalNic(
            key=f"key-pnic-{i}",
            device=f"vmnic{i}",
            linkSpeed=vim.host.PhysicalNic.LinkSpeedDuplex(speedMb=speed, duplex=True),
        )
        for i, speed in enumerate(speeds)
    ]
    switch = vim.host.VirtualSwitch(
        name="vSwitch-vmotion", key="key-vswitch", pnic=[p.key for p in pnics]
    )
    portgroup = vim.host.PortGroup(
        spec=vim.host.PortGroup.Specification(name="vMotion-vmk1", vswitchName="vSwitch-vmotion")
    )
    vnic = vim.host.VirtualNic(
        key="vmotion.key-vmk1",
        device="vmk1",
        portgroup="vMotion-vmk1",
        spec=vim.host.VirtualNic.Specification(ip=vim.host.IpConfig(ipAddress="192.0.2.7")),
    )
    net = vim.host.VirtualNicManager.NetConfig(
        nicType="vmotion", candidateVnic=[vnic], selectedVnic=[vnic.key]
    )
    return ObjectProps(
        moref="host-7",
        kind="HostSystem",
        props={
            "name": "esx07",
            "runtime.connectionState": "connected",
            "config.network.pnic": pnics,
            "config.network.vswitch": [switch],
            "config.network.portgroup": [portgroup],
            "config.virtualNicManagerInfo.netConfig": [net],
        },
    )


def test_vmotion_uplink_speed_is_the_slowest_uplink_of_the_switch() -> None:
    """A team of 25 GbE and 1 GbE runs at 1 GbE when the fast uplink fails over."""
    host = build_host(_host_with_vmotion_uplinks([25000, 1000, 10000]), {})
    assert [(n.device, n.ip, n.uplink_speed_mbps) for n in host.vmotion_nics] == [
        ("vmk1", "192.0.2.7", 1000)
    ]


# -- rules -----------------------------------------------------------------------------------


def test_vm07_a_10_gbe_vmotion_uplink_passes() -> None:
    """VMware recommends 10 GbE or faster: exactly 10000 Mb/s is enough."""
    e = healthy()
    e.inv.hosts[0].vmotion_nics[0].uplink_speed_mbps = 10000
    e.inv.hosts[1].vmotion_nics[0].uplink_speed_mbps = 9999
    assert verdicts(e.inv, "VM-07") == {"h1": "pass", "h2": "fail", "h3": "pass"}


def test_st01_an_unbound_fc_hba_is_not_online() -> None:
    e = healthy()
    for adapter in e.inv.hosts[2].adapters:
        if adapter.kind == "fc":
            adapter.status = "unbound"
    assert verdicts(e.inv, "ST-01") == {"h1": "pass", "h2": "pass", "h3": "fail"}


def test_st05_skips_hosts_that_are_not_connected() -> None:
    """A disconnected host reports no storage: its HBA's purpose cannot be judged."""
    e = passthrough_estate()
    for host in e.inv.hosts:
        host.adapters.append(StorageAdapter("vmhba2", "fc", status="online"))
    e.inv.hosts[1].connection_state = "notResponding"
    assert verdicts(e.inv, "ST-05") == {"p1": "fail"}


@pytest.mark.parametrize(("peak_mb", "status"), [(4096.0, "fail"), (4097.0, "pass")])
def test_mon04_fails_at_exactly_the_ratio(peak_mb: float, status: str) -> None:
    """One grid_l4-8q (8192 MB) on h1's GPU; the default ratio is 2: a peak of 4096 MB
    is allocation = 2 x peak, which fails ("at least this many times")."""
    e = healthy()
    gpu = e.inv.hosts[0].gpus[0]
    gpu.telemetry = GpuTelemetry(
        instance="gpu0", matched_by="order", memory_used_mb=CounterStats(2048.0, peak_mb, 288)
    )
    assert verdicts(e.inv, "MON-04") == {"h1/0000:3b:00.0": status}


# -- debuglog.py, vsphere/connect.py and vsphere/cassette.py: secrets -------------------------


def test_redact_masks_the_login_password_element() -> None:
    text = '<login><userName>u</userName><password xsi:type="xsd:string">pw&amp;1</password>'
    assert debuglog.redact(text) == (
        '<login><userName>u</userName><password xsi:type="xsd:string">*****</password>'
    )


def test_redact_masks_session_cookies_and_authorization_headers() -> None:
    line = 'header: Cookie: vmware_soap_session="52a1f0c3-cafe"; Path=/\r\n'
    assert debuglog.redact(line) == 'header: Cookie: vmware_soap_session="*****"; Path=/\r\n'
    assert debuglog.redact("Authorization: Basic YXVkaXQ6cHc=\r\nHost: vc01") == (
        "Authorization: *****\r\nHost: vc01"
    )
    assert debuglog.redact("send: b'authorization: Bearer eyJhbGciOi'") == (
        "send: b'authorization: *****'"
    )


def test_add_secret_masks_every_form_of_the_value() -> None:
    secret = "Mole&Vole<93>'\"ü /x"
    debuglog.add_secret(secret)
    forms = {
        "as given": "Mole&Vole<93>'\"ü /x",
        "xml escaped": "Mole&amp;Vole&lt;93&gt;'\"ü /x",
        "xml escaped with quotes": "Mole&amp;Vole&lt;93&gt;&apos;&quot;ü /x",
        "bytes repr": "Mole&Vole<93>\\'\"\\xc3\\xbc /x",
        "url quoted": "Mole%26Vole%3C93%3E%27%22%C3%BC%20%2Fx",
    }
    assert forms["url quoted"] == quote(secret, safe="")  # the form a URL carries it in
    for name, form in forms.items():
        assert debuglog.redact(f"before {form} after") == "before ***** after", name


def test_login_registers_the_password_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    password = "Unlogged-Otter-5521%"

    def refuse(*_args: Any, **_kwargs: Any) -> str:
        raise ConnectError("refused before any request")

    monkeypatch.setattr(connect, "negotiate_version", refuse)
    with pytest.raises(ConnectError):
        connect.login(connect.Server("vc01", 443), "u", password)
    assert debuglog.redact(f"x {password} y {quote(password, safe='')}") == "x ***** y *****"


def test_cassette_scrubs_the_session_cookie_from_headers_and_bodies() -> None:
    scrubber = cassette._Scrubber()
    cookie = "52a1f0c3-0bad-cafe-beef-1234"
    response = {
        "headers": {"Set-Cookie": [f'vmware_soap_session="{cookie}"; Path=/; HttpOnly']},
        "body": {"string": f"<returnval><cookie>{cookie}</cookie></returnval>".encode()},
    }
    scrubbed = scrubber.response(response)
    assert scrubbed["headers"]["Set-Cookie"] == ['vmware_soap_session="*****"; Path=/; HttpOnly']
    assert scrubbed["body"]["string"] == b"<returnval><cookie>*****</cookie></returnval>"


def test_cassette_scrubs_the_login_session_key_from_later_bodies() -> None:
    scrubber = cassette._Scrubber()
    login = (
        b"<LoginResponse><returnval><key>5229a7f2-0c1e-4cd5</key>"
        b"<userName>u</userName></returnval></LoginResponse>"
    )
    out = scrubber.response({"headers": {}, "body": {"string": login}})
    assert out["body"]["string"] == (
        b"<LoginResponse><returnval><key>*****</key>"
        b"<userName>u</userName></returnval></LoginResponse>"
    )
    later = scrubber.response(
        {"headers": {}, "body": {"string": b"<sessionKey>5229a7f2-0c1e-4cd5</sessionKey>"}}
    )
    assert later["body"]["string"] == b"<sessionKey>*****</sessionKey>"


# -- report/tables.py: the counted columns, as the workbook holds them -----------------------


def _sheet_column(data: bytes, sheet: str, name: str) -> list[object]:
    ws = openpyxl.load_workbook(io.BytesIO(data))[sheet]
    head = [c.value for c in ws[1]]
    index = head.index(name) + 1
    return [ws.cell(row=r, column=index).value for r in range(2, ws.max_row + 1)]


@pytest.fixture(scope="module")
def realistic_workbook() -> bytes:
    result = realistic_result()
    hosts = {h.moref: h for h in result.inventory.hosts}
    # One iSCSI and one FCoE HBA on two edge nodes: both count as HBAs.
    hosts["host-e1"].adapters.append(StorageAdapter("vmhba64", "iscsi", iscsi_software=True))
    hosts["host-e2"].adapters.append(StorageAdapter("vmhba5", "fcoe", status="online"))
    # A standby path (an active/passive array's redundancy) is not a dead one.
    fc_gold = result.inventory.datastores[0]
    fc_gold.mounts[0].paths.append(LunPath("vmhba2", "fc", "standby"))
    return render_xlsx(result)


def test_gpus_sheet_free_slots(realistic_workbook: bytes) -> None:
    # tests/support/report_fixtures.py: six 4Q slots per L4 in gpu-vgpu-prod with 3, 1, 2, 1, 2, 1
    # VMs; one passthrough VM on each edge L4; eight 2B slots per A16 GPU with 1, 1, 1, 0.
    assert _sheet_column(realistic_workbook, "GPUs", "Free") == [
        3, 5, 4, 5, 4, 5, 0, 0, 0, 7, 7, 7, 8,
    ]  # fmt: skip


def test_hosts_sheet_counts_fc_fcoe_and_iscsi_hbas(realistic_workbook: bytes) -> None:
    # p1..p3 have two FC HBAs each (and a local controller, which is no HBA);
    # e1 gets an iSCSI and e2 an FCoE adapter above; eb, e3, v1 and v2 have none.
    assert _sheet_column(realistic_workbook, "Hosts", "# HBAs") == [2, 2, 2, 1, 1, 0, 0, 0, 0]


def test_datastores_sheet_dead_paths_and_inaccessible_mounts(realistic_workbook: bytes) -> None:
    # fc-gold-01: esx-p02's path through vmhba3 is dead (esx-p01's standby path is not);
    # nfs-vdi-01: esx-v02 cannot access it.
    assert _sheet_column(realistic_workbook, "Datastores", "Datastore") == [
        "fc-gold-01", "edge-01-local", "edge-02-local", "edge-03-local", "nfs-vdi-01",
    ]  # fmt: skip
    assert _sheet_column(realistic_workbook, "Datastores", "# Dead Paths") == [1, 0, 0, 0, 0]
    assert _sheet_column(realistic_workbook, "Datastores", "# Inaccessible") == [0, 0, 0, 0, 1]


# -- debuglog.py: the forms, the order and the records it redacts ----------------------------


def test_the_xml_escaped_password_in_a_bytes_repr_is_masked() -> None:
    secret = "Mole&Vole<93>'\"ü /x"
    debuglog.add_secret(secret)
    # repr(escape(secret).encode()) without b'...': how a logged request body shows it.
    form = "Mole&amp;Vole&lt;93&gt;\\'\"\\xc3\\xbc /x"
    assert debuglog.redact(f"body {form} end") == "body ***** end"


def test_a_one_character_password_is_still_masked() -> None:
    debuglog.add_secret("Q")
    assert debuglog.redact("user Q logged in") == "user ***** logged in"


def test_a_longer_secret_is_masked_before_a_shorter_one_inside_it() -> None:
    # "s3" sorts after "Xs3" by text but is shorter: each token holding either goes whole.
    debuglog.add_secret("s3")
    debuglog.add_secret("Xs3")
    assert debuglog.redact("[Xs3] [s3] Xs3") == "***** ***** *****"


def test_a_short_password_is_masked_with_its_whole_token() -> None:
    # Masking "pass" alone in "password" would leave "*****word": the password told.
    debuglog.add_secret("pass")
    said = debuglog.redact("the password is not sent in clear (user=pass;x) pass")
    assert said == "the ***** is not sent in clear ***** *****"
    assert "word" not in said and "user" not in said


def test_the_session_key_is_masked_where_login_answers_it_and_everywhere_after() -> None:
    key = "8addf857-aa14-400a-b8f2-fb7883b3b52c"
    login = (  # vcrpy's log line while it records: the answer, before it is scrubbed
        "Appending request <Request (POST) http://vcenter.invalid/sdk> and response "
        "{'body': {'string': b'<?xml version=\"1.0\"?>\\n<soapenv:Envelope><soapenv:Body>"
        f'<LoginResponse xmlns="urn:vim25"><returnval><key>{key}</key><userName>u'
        "</userName></returnval></LoginResponse></soapenv:Body></soapenv:Envelope>'}}"
    )
    said = debuglog.redact(login)
    assert key not in said and "<returnval><key>*****</key><userName>u" in said
    view = f'<_this type="ContainerView">session[{key}]e6485038-fbea</_this>'
    assert (
        debuglog.redact(view) == '<_this type="ContainerView">session[*****]e6485038-fbea</_this>'
    )
    assert debuglog.redact(f"SessionIsActive {key} u") == "SessionIsActive ***** u"
    other = "52aa97c3-0000-4000-8000-000000000001"
    prop = f'<val xsi:type="UserSession"><key>{other}</key><userName>'
    assert debuglog.redact(prop) == '<val xsi:type="UserSession"><key>*****</key><userName>'
    assert debuglog.redact(f"later {other}") == "later *****"
    # An option's or a device's <key> is no session's.
    assert debuglog.redact("<returnval><key>config.hotmigrate</key>") == (
        "<returnval><key>config.hotmigrate</key>"
    )


def _record(msg: str, args: Any = None, stack_info: str | None = None) -> logging.LogRecord:
    return logging.LogRecord(
        "gpuaudit", logging.INFO, __file__, 1, msg, args, None, None, stack_info
    )


def test_a_record_whose_format_string_breaks_is_redacted_not_dropped() -> None:
    debuglog.add_secret("Hunter-77")
    record = _record("password Hunter-77 %s %s", ("one",))  # two %s, one argument
    assert debuglog.RedactingFilter().filter(record) is True
    assert record.getMessage() == "password ***** %s %s"


def test_a_records_stack_is_redacted() -> None:
    debuglog.add_secret("Hunter-77")
    record = _record("call", stack_info='Stack:\n  login("Hunter-77")')
    debuglog.RedactingFilter().filter(record)
    assert record.stack_info == "Stack:\n  *****"


def test_wire_logging_goes_to_the_log_redacted_and_is_undone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    debuglog.add_secret("Hunter-77")
    root = logging.getLogger()
    handler = logging.StreamHandler(io.StringIO())
    root.addHandler(handler)
    try:
        debuglog.install(wire=True)
        assert http.client.HTTPConnection.debuglevel == 1
        assert debuglog._FILTER in handler.filters
        with caplog.at_level(logging.DEBUG, logger="http.client"):
            http.client.print("send:", b"<password>Hunter-77</password>")  # type: ignore[attr-defined]
        lines = [r.getMessage() for r in caplog.records if r.name == "http.client"]
        # Every handler of the root logger redacts, pytest's own included.
        assert lines == ["send: b'<password>*****</password>'"]
        debuglog.uninstall()
        assert http.client.HTTPConnection.debuglevel == 0
        assert not hasattr(http.client, "print")
        assert debuglog._FILTER not in handler.filters
    finally:
        debuglog.uninstall()
        root.removeHandler(handler)


# -- vsphere/credentials.py: environment, standard input and password files ---------------------


def _resolve(env: dict[str, str], stdin: str = "", **kwargs: Any) -> Credentials:
    return credentials.resolve(None, None, env=env, stdin=io.StringIO(stdin), **kwargs)


GOVC = {"GOVC_URL": "vc01.example.com", "GOVC_USERNAME": "audit", "GOVC_PASSWORD": "pw-1"}


@pytest.mark.parametrize("value", ["1", "true", "TRUE", " Yes ", "on", "ON"])
def test_govc_insecure_is_on_for_every_spelling_govc_accepts(value: str) -> None:
    assert _resolve({**GOVC, "GOVC_INSECURE": value}).insecure is True


@pytest.mark.parametrize("value", ["0", "false", "no", "off", ""])
def test_govc_insecure_is_off_otherwise_and_by_default(value: str) -> None:
    assert _resolve({**GOVC, "GOVC_INSECURE": value}).insecure is False
    assert _resolve(GOVC).insecure is False


def test_govc_username_and_password_are_read_from_the_environment() -> None:
    creds = _resolve(GOVC)
    assert (creds.server, creds.user, creds.password) == ("vc01.example.com", "audit", "pw-1")


def test_missing_server_and_user_are_told_by_name() -> None:
    with pytest.raises(CredentialError) as no_server:
        _resolve({})
    assert str(no_server.value) == "no server: pass --server (or set GOVC_URL)"
    with pytest.raises(CredentialError) as no_user:
        _resolve({"GOVC_URL": "vc01"})
    assert str(no_user.value) == "no user: pass --user (or set GOVC_USERNAME)"


@pytest.mark.parametrize("url", ["https://audit:@vc01", "https://audit@vc01"])
def test_a_govc_url_without_a_password_gives_none(url: str) -> None:
    with pytest.raises(CredentialError, match=r"^no password for audit: "):
        _resolve({"GOVC_URL": url})


def _stdin_password(text: str) -> str:
    return _resolve({"GOVC_URL": "vc01", "GOVC_USERNAME": "u"}, text, password_stdin=True).password


def test_standard_input_keeps_the_passwords_own_spaces_and_letters() -> None:
    assert _stdin_password("Se cret X \r\n") == "Se cret X "
    assert _stdin_password("no-newline-at-end") == "no-newline-at-end"


def test_standard_input_takes_a_line_of_the_maximum_length_and_refuses_a_longer_one() -> None:
    most = credentials.MAX_PASSWORD_FILE
    assert _stdin_password("a" * most) == "a" * most
    assert _stdin_password("a" * most + "\n") == "a" * most
    with pytest.raises(CredentialError, match="longer than 4096 characters"):
        _stdin_password("a" * (most + 1) + "\n")
    with pytest.raises(CredentialError) as empty:
        _stdin_password("\n")
    assert str(empty.value) == "standard input gave no password (an empty first line)"


def test_a_password_file_keeps_trailing_spaces_and_drops_only_the_line_end(
    tmp_path: Path,
) -> None:
    path = tmp_path / "pw"
    path.write_bytes(b"Se cret \r\nsecond line\n")
    path.chmod(0o600)
    assert credentials.read_password_file(str(path)) == "Se cret "
    path.write_bytes(b"\rleading-cr\n")
    assert credentials.read_password_file(str(path)) == "\rleading-cr"


def test_a_password_file_of_the_maximum_length_is_read_and_a_longer_one_refused(
    tmp_path: Path,
) -> None:
    most = credentials.MAX_PASSWORD_FILE
    path = tmp_path / "pw"
    path.write_bytes(b"b" * most)
    path.chmod(0o600)
    assert credentials.read_password_file(str(path)) == "b" * most
    path.write_bytes(b"b" * (most + 1))
    with pytest.raises(CredentialError) as long:
        credentials.read_password_file(str(path))
    assert str(long.value) == (
        f"password file {path}: its first line is longer than {most} bytes; is it the right file?"
    )


def test_an_unreadable_password_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "absent"
    with pytest.raises(CredentialError) as error:
        credentials.read_password_file(str(missing))
    assert str(error.value).startswith(f"cannot read password file {missing}: ")
    assert "No such file" in str(error.value)


def test_a_password_ending_in_a_letter_x_keeps_it(tmp_path: Path) -> None:
    assert _stdin_password("passX\r\n") == "passX"
    path = tmp_path / "pw"
    path.write_bytes(b"passX\r\n")
    path.chmod(0o600)
    assert credentials.read_password_file(str(path)) == "passX"


def test_a_password_file_whose_first_line_ends_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    path.write_bytes(b"b" * (credentials.MAX_PASSWORD_FILE + 1) + b"\n")
    path.chmod(0o600)
    with pytest.raises(CredentialError, match="is it the right file"):
        credentials.read_password_file(str(path))


def test_a_password_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    path.write_bytes(b"\xff\xfe-not-utf-8\n")
    path.chmod(0o600)
    with pytest.raises(CredentialError) as error:
        credentials.read_password_file(str(path))
    assert str(error.value).startswith(f"cannot read password file {path}: ")
    assert "utf-8" in str(error.value)
