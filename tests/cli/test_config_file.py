"""gpuaudit.toml and GPUAUDIT_* variables: where the file is found, what it may
hold, and the precedence command line > environment > file > default."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli import config_file as config
from gpuaudit.cli.main import main


def gpuaudit(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def shown(result: Result) -> dict[str, tuple[str, str]]:
    """config show's rows: option -> (value, origin)."""
    assert result.exit_code == 0, result.output
    rows = {}
    for line in result.stdout.splitlines()[1:]:
        name, value, origin = re.split(r"\s{2,}", line, maxsplit=2)
        rows[name] = (value, origin)
    return rows


def test_the_precedence_is_command_line_environment_file_default(tmp_path: Path) -> None:
    config = write(
        tmp_path / "job.toml",
        '[scan]\nserver = "file.example.com"\nuser = "file-user"\nkeep = 7\nfail-on = "medium"\n',
    )
    env = {"GPUAUDIT_SCAN_USER": "env-user", "GPUAUDIT_SCAN_KEEP": "8"}
    rows = shown(gpuaudit("--config", str(config), "config", "show", "--keep", "9", env=env))
    assert rows["--server"] == ("file.example.com", f"{config}:2")
    assert rows["--user"] == ("env-user", "environment GPUAUDIT_SCAN_USER")
    assert rows["--keep"] == ("9", "command line")
    assert rows["--fail-on"] == ("medium", f"{config}:5")
    assert rows["--output-dir"] == ("reports", "default")


def test_a_scan_takes_its_options_from_the_file_and_the_environment(tmp_path: Path) -> None:
    out_file, out_env, out_line = (tmp_path / n for n in ("from-file", "from-env", "from-line"))
    config = write(
        tmp_path / "job.toml",
        f'quiet = true\n\n[scan]\ndemo = true\nno-history = true\nformat = ["json"]\n'
        f'output-dir = "{out_file}"\nfail-on = "never"\n',
    )
    assert gpuaudit("--config", str(config), "scan").exit_code == 0
    assert [p.suffix for p in out_file.iterdir()] == [".json"]
    env = {"GPUAUDIT_SCAN_OUTPUT_DIR": str(out_env)}
    assert gpuaudit("--config", str(config), "scan", env=env).exit_code == 0
    assert len(list(out_env.iterdir())) == 1
    done = gpuaudit("--config", str(config), "scan", "-o", str(out_line), "-f", "sarif", env=env)
    assert done.exit_code == 0
    assert [p.suffix for p in out_line.iterdir()] == [".sarif"]
    assert len(list(out_env.iterdir())) == 1  # the command line won over the environment
    assert done.stdout == ""  # quiet = true at the top level is the global -q


def test_the_file_is_found_in_the_working_directory_then_the_user_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home_config = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home_config))
    user = write(home_config / "gpuaudit" / "gpuaudit.toml", '[scan]\nuser = "from-home"\n')
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    first = gpuaudit("config", "show")
    assert first.stdout.splitlines()[0] == f"configuration file: {user}"
    assert shown(first)["--user"] == ("from-home", f"{user}:2")
    write(work / "gpuaudit.toml", '[scan]\nuser = "from-here"\n')
    here = work.resolve() / "gpuaudit.toml"  # as the working directory names it
    assert shown(gpuaudit("config", "show"))["--user"] == ("from-here", f"{here}:2")
    named = gpuaudit("config", "show", env={"GPUAUDIT_CONFIG": str(user)})
    assert shown(named)["--user"] == ("from-home", f"{user}:2")


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        (
            '[scan]\nserver = "x"\nsever = "y"\n',
            3,
            "[scan] sever: unknown option (did you mean server?)",
        ),
        ("[scan]\n\nkeep = 0\n", 3, "[scan] keep: 0 is not in the range x>=1"),
        ('[scan]\nlatest = "yes"\n', 2, "[scan] latest: expected true or false"),
        ('[scan]\nnotify = "smtp://mail/?to=a@b"\n', 2, "[scan] notify: expected a list"),
        ('[scan]\nformat = ["html", "pdf"]\n', 2, "[scan] format: 'pdf' is not a report format"),
        ("no-colour = true\n", 1, "no-colour: unknown option (did you mean no-color?)"),
        ("[scna]\nkeep = 1\n", 1, "unknown table [scna]"),
        ('[scan]\npassword = "hunter2"\n', 2, "[scan] password: unknown option"),
        ("[scan]\nkeep = \n", 2, "not TOML"),
    ],
)
def test_an_unknown_key_or_a_wrong_type_is_exit_2_with_file_and_line(
    tmp_path: Path, text: str, line: int, says: str
) -> None:
    config = write(tmp_path / "job.toml", text)
    done = gpuaudit("--config", str(config), "scan", "--demo", "-o", str(tmp_path / "out"))
    assert done.exit_code == 2
    assert done.stderr.startswith(f"gpuaudit: error: {config}:{line}: ")
    assert says in done.stderr
    assert not (tmp_path / "out").exists()
    assert "hunter2" not in done.output


def test_a_config_file_that_does_not_exist_is_exit_2(tmp_path: Path) -> None:
    done = gpuaudit("--config", str(tmp_path / "none.toml"), "scan", "--demo")
    assert done.exit_code == 2 and "none.toml: no such configuration file" in done.stderr


def test_config_show_never_prints_a_password_nor_a_webhook_token(tmp_path: Path) -> None:
    config = write(
        tmp_path / "job.toml",
        "[scan]\nnotify = ['smtp://mailer:s3cret@mail.example.com/?to=ops@example.com', "
        "'https://hooks.example.com/services/T0K3N']\n"
        "history = 'postgresql://audit:pa55word@db.example.com/gpuaudit'\n",
    )
    done = gpuaudit("--config", str(config), "config", "show")
    rows = shown(done)
    for secret in ("s3cret", "T0K3N", "pa55word"):
        assert secret not in done.output
    assert rows["--notify"][0] == "smtp://mailer:***@mail.example.com, https://hooks.example.com"
    assert rows["--history"][0] == "postgresql://audit:***@db.example.com/gpuaudit"


def test_a_global_option_from_the_environment(tmp_path: Path) -> None:
    env = {"GPUAUDIT_LOG_FORMAT": "json"}
    rows = shown(gpuaudit("config", "show", env=env))
    assert rows["--log-format"] == ("json", "environment GPUAUDIT_LOG_FORMAT")
    done = subprocess.run(
        [sys.executable, "-m", "gpuaudit", "scan", "--demo", "--no-history", "-f", "json"],
        cwd=tmp_path, env={**os.environ, **env}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    logged = [line for line in done.stderr.splitlines() if line.strip()]
    assert logged and all(json.loads(line) for line in logged)


def test_policy_in_the_file_is_one_path(tmp_path: Path) -> None:
    policy = write(tmp_path / "policy.yaml", "version: 1\nseverity:\n  GPU-03: low\n")
    config = write(tmp_path / "job.toml", f'[scan]\npolicy = "{policy}"\n')
    rows = shown(gpuaudit("--config", str(config), "config", "show"))
    assert rows["--policy"] == (str(policy), f"{config}:2")
    done = gpuaudit("--config", str(config), "scan", "--demo", "--no-history", "-f", "json",
                    "-o", str(tmp_path / "out"))  # fmt: skip
    (report,) = (tmp_path / "out").glob("*.json")
    gpu03 = [f for f in json.loads(report.read_text())["findings"] if f["rule"] == "GPU-03"]
    assert done.exit_code in (0, 1) and gpu03 and {f["severity"] for f in gpu03} == {"low"}


def test_the_history_table_serves_history_and_prune(tmp_path: Path) -> None:
    store = tmp_path / "h.sqlite"
    config = write(tmp_path / "gpuaudit.toml", f"[history]\nhistory = '{store}'\n")
    scanned = gpuaudit("scan", "--demo", "-f", "json", "-o", str(tmp_path), "--history", str(store))
    assert scanned.exit_code == 1, scanned.output
    listed = gpuaudit("--config", str(config), "history", "-f", "csv")
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines()[1].startswith("demo,"), listed.stdout
    pruned = gpuaudit("--config", str(config), "history", "prune", "--older-than", "1")
    assert pruned.exit_code == 0, pruned.output
    assert pruned.stdout.startswith("nothing removed: no scan checked before"), pruned.stdout
    assert not (Path(os.environ["XDG_STATE_HOME"]) / "gpuaudit").exists()  # not the default


# The kinds of key a table may hold, as the command line's options give them.
TOP = {"quiet": config.Key("quiet", "flag"), "verbose": config.Key("verbose", "count")}
SCAN = {
    "output-dir": config.Key("output_dir", "value"),
    "format": config.Key("formats", "list", lambda v: v if v != "pdf" else int("pdf")),
    "keep": config.Key("keep", "value", int),
    "policy": config.Key("policy", "value", as_list=True),
}
TABLES = {"scan": SCAN, "history": {"history": config.Key("history", "value")}}


def refusal(path: Path) -> str:
    with pytest.raises(config.ConfigError) as refused:
        config.load(path, TOP, TABLES)
    return str(refused.value)


def test_the_file_read_gives_each_value_under_its_option_and_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "job.toml",
        '# a job\nverbose = 2\n\n[ scan ]\n"output-dir" = "out"\nformat = ["json", 3]\n'
        "policy = 'p.yaml'\nkeep = 7\n",
    )
    loaded = config.load(path, TOP, TABLES)
    assert loaded.path == path
    assert loaded.values == {
        "verbose": 2,
        "scan": {"output_dir": "out", "formats": ["json", 3], "policy": ["p.yaml"], "keep": 7},
    }
    assert loaded.lines == {
        ("", "verbose"): 2,
        ("scan", "output_dir"): 5,
        ("scan", "formats"): 6,
        ("scan", "policy"): 7,
        ("scan", "keep"): 8,
    }
    # A key written as a dotted name has no line of its own: its table's, else line 1.
    dotted = config.load(write(tmp_path / "d.toml", "quiet = false\nscan.keep = 1\n"), TOP, TABLES)
    assert dotted.lines == {("", "quiet"): 1, ("scan", "keep"): 1}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("quiet = 1\n", ":1: quiet: expected true or false"),
        ("# top level\nquiet = 1\n", ":2: quiet: expected true or false"),
        ("verbose = -1\n", ":1: verbose: expected a count, 0 or more"),
        ("verbose = true\n", ":1: verbose: expected a count, 0 or more"),
        ("verbose = 1.0\n", ":1: verbose: expected a count, 0 or more"),
        ('[scan]\nformat = "json"\n', ':2: [scan] format: expected a list, e.g. format = ["..."]'),
        ("[scan]\nformat = [[1]]\n", ":2: [scan] format: expected a list of strings or numbers"),
        (
            "[scan]\nformat = ['json', 'pdf']\n",
            ":2: [scan] format: invalid literal for int() with base 10: 'pdf'",
        ),
        (
            "[scan]\n\nkeep = 'seven'\n",
            ":3: [scan] keep: invalid literal for int() with base 10: 'seven'",
        ),
        ("[scan]\nkeep = true\n", ":2: [scan] keep: expected a string or a number"),
        ("[scan]\nkeep = [7]\n", ":2: [scan] keep: expected a string or a number"),
        ("[scan]\nkeep = {days = 7}\n", ":2: [scan] keep: expected a string or a number"),
        ("[scan]\nkep = 7\n", ":2: [scan] kep: unknown option (did you mean keep?)"),
        ("[scan]\nzzz = 7\n", ":2: [scan] zzz: unknown option"),
        ("\n[scna]\nkeep = 7\n", ":2: unknown table [scna]; known: [scan], [history]"),
        ("quiet = true\nquiet = false\n", ":2: not TOML: Cannot overwrite a value"),
        # A key no line gives as such: its table's line.
        ('\n[scan]\n"no such" = 1\n', ":2: [scan] no such: unknown option"),
        # tomllib names no line for the end of the document: it is the last line.
        ("[scan]\n\nkeep =", ":3: not TOML: Invalid value"),
    ],
)
def test_each_refusal_names_file_line_key_and_what_is_wrong(
    tmp_path: Path, text: str, says: str
) -> None:
    path = write(tmp_path / "job.toml", text)
    message = refusal(path)
    assert message == f"{path}{says}"


def test_a_count_of_zero_and_a_number_for_a_value_are_accepted(tmp_path: Path) -> None:
    path = write(tmp_path / "job.toml", "verbose = 0\n[scan]\nkeep = 3\n")
    assert config.load(path, TOP, TABLES).values == {"verbose": 0, "scan": {"keep": 3}}


def test_a_file_that_cannot_be_read_is_named_with_the_reason(tmp_path: Path) -> None:
    assert refusal(tmp_path) == f"{tmp_path}: cannot read: Is a directory"
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"user = 'J\xf6rg'\n")
    assert refusal(latin).startswith(f"{latin}: cannot read: 'utf-8' codec can't decode")


def test_locate_takes_the_given_file_then_the_working_directory_then_the_user_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    work = tmp_path / "work"
    work.mkdir()
    assert config.user_file() == tmp_path / "xdg" / "gpuaudit" / "gpuaudit.toml"
    assert config.locate(None, work) is None
    user = write(tmp_path / "xdg" / "gpuaudit" / "gpuaudit.toml", "")
    assert config.locate(None, work) == user
    here = write(work / "gpuaudit.toml", "")
    assert config.locate(None, work) == here
    given = write(tmp_path / "job.toml", "")
    assert config.locate(str(given), work) == given
    assert config.locate("", work) == here  # an empty --config is none given
    with pytest.raises(config.ConfigError, match=r"^nowhere\.toml: no such configuration file$"):
        config.locate("nowhere.toml", work)
    with pytest.raises(config.ConfigError, match="no such configuration file"):
        config.locate(str(tmp_path), work)  # a folder is no file


def test_an_options_environment_variable_is_its_upper_case_name_with_underscores() -> None:
    assert config.environment_name("GPUAUDIT_SCAN", "output-dir") == "GPUAUDIT_SCAN_OUTPUT_DIR"
    assert config.environment_name("GPUAUDIT", "log-format") == "GPUAUDIT_LOG_FORMAT"
