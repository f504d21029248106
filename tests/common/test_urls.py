"""gpuaudit/common/urls.py on its own: every split RFC 3986 defines, every refusal, and no
secret in what is shown."""

from __future__ import annotations

import pytest

from gpuaudit.common import urls
from gpuaudit.common.urls import URL, URLError


def test_a_full_url_is_split_where_rfc_3986_splits_it() -> None:
    got = urls.parse("PostgreSQL://audit:p%40ss@db.example.com:5432/ga?sslmode=require#x")
    assert got.password == "p@ss"  # percent-decoded
    assert got == URL(
        "postgresql", "db.example.com", 5432, "/ga", "sslmode=require", "audit", "p@ss"
    )


def test_without_user_port_path_or_query_those_parts_are_empty() -> None:
    got = urls.parse("https://hooks.example.com")
    assert (got.user, got.password, got.port, got.path, got.query) == (None, None, None, "", "")
    assert urls.parse("smtp://mail@relay").user == "mail"
    assert urls.parse("smtp://mail@relay").password is None
    assert urls.parse("smtp://mail:@relay").password == ""


def test_a_query_ends_at_the_fragment_and_a_path_at_the_query() -> None:
    got = urls.parse("https://h/a/b?to=x@example.com&y=1#frag")
    assert (got.path, got.query) == ("/a/b", "to=x@example.com&y=1")
    assert urls.parse("https://h#only").path == ""
    assert urls.parse("https://h?q").path == ""


@pytest.mark.parametrize(
    ("url", "host", "port"),
    [
        ("https://[2001:db8::1]:8443/p", "2001:db8::1", 8443),
        ("https://[fe80::1%25eth0]", "fe80::1%25eth0", None),
        ("https://h:1", "h", 1),
        ("https://h:65535", "h", 65535),
    ],
)
def test_hosts_and_ports_at_their_bounds(url: str, host: str, port: int | None) -> None:
    got = urls.parse(url)
    assert (got.host, got.port) == (host, port)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("no scheme here", "scheme"),
        ("1http://h", "scheme"),
        ("https://h/a b", "space"),
        ("https://h/a\x07", "control"),
        ("https://h/\u202eabc", "control"),
        ("smtp://u:S3cr3t/Pw@mail.example.com/?to=a", "percent-encode"),
        ("smtp://u:a@b@mail.example.com", "percent-encode"),
        ("smtp://u:a#b@mail.example.com", "percent-encode"),
        ("https://h/x#frag@y", "percent-encode"),
        ("https://h/?a@b=c", "percent-encode"),
        ("https://[2001:db8::1", "closing ]"),
        ("https://[not:an:ipv6]", "not an IPv6"),
        ("https://[2001:db8::1]x", "only :PORT"),
        ("https://h]", "without ["),
        ("https://fd00:1::5/", "brackets"),
        ("https://h^st/", "no host name"),
        ("https://h:0", "1 to 65535"),
        ("https://h:65536", "1 to 65535"),
        ("https://h:x1", "1 to 65535"),
        ("https://h:\u0661", "1 to 65535"),  # an Arabic-Indic one: a digit, not ASCII
    ],
)
def test_each_refusal_names_the_problem_and_nothing_of_the_url(url: str, words: str) -> None:
    with pytest.raises(URLError) as refused:
        urls.parse(url)
    message = str(refused.value)
    assert words in message
    for secret in ("S3cr3t", "Pw", "mail.example", "frag", "fd00", "not:an"):
        if secret in url:
            assert secret not in message


def test_a_query_value_may_hold_an_at_sign() -> None:
    assert urls.parse("smtp://relay/?to=ops@example.com").query == "to=ops@example.com"


def test_shown_never_holds_the_password_or_the_query() -> None:
    url = "postgresql://audit:TopSecret@[2001:db8::1]:5432/ga?token=abc"
    assert urls.shown(url) == "postgresql://audit@[2001:db8::1]:5432"
    assert urls.shown(url, path=True) == "postgresql://audit@[2001:db8::1]:5432/ga"
    assert urls.shown(url, mark="***") == "postgresql://audit:***@[2001:db8::1]:5432"
    assert urls.shown("https://h/hook", mark="***") == "https://h"
    assert urls.shown("smtp://u@h", mark="***") == "smtp://u@h"


def test_an_unparsable_url_is_shown_as_its_scheme_alone() -> None:
    assert urls.shown("smtp://u:S3cr3t/Pw@mail.example.com/") == "smtp://..."
    assert urls.shown("no scheme") == "a URL"
    assert urls.scheme_of("HTTPS://h") == "https"
    assert urls.scheme_of("https:/h") == ""


ENCODE = "percent-encode it (/ as %2F, ? as %3F, # as %23, @ as %40)"
EARLY = f"the user or password holds a character that ends it early: {ENCODE}"
SPACE = "holds a space or a control character: percent-encode it (a space as %20)"
BRACKETS = (
    "the user or password holds [ or ], which a URL keeps for an IPv6 address: "
    "percent-encode them ([ as %5B, ] as %5D)"
)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("no scheme here", "not a URL: it starts with a scheme and :// (such as https://)"),
        ("https://h/a b", SPACE),
        ("smtp://u:a@b@relay", EARLY),
        ("https://h/?to=x@y.com&a@b=c", EARLY),
        ("https://[2001:db8::1", "the host's IPv6 address has no closing ]"),
        ("https://[fd00::g]", "the host in [ ] is not an IPv6 address"),
        ("https://[2001:db8::1]8443", "after the IPv6 address's ] comes only :PORT"),
        ("https://h]:1", "the host has a ] without ["),
        ("https://fd00:1::5", "an IPv6 address is written in brackets: [2001:db8::1]:PORT"),
        ("https://h st", SPACE),
        ("https://h<st>", "the host name holds a character no host name holds"),
        ("https://h:99999", "the port is not a number from 1 to 65535"),
        ("https://[2001:db8::1]:80]", "the port is not a number from 1 to 65535"),
        ("https://fd00::5", "an IPv6 address is written in brackets: [2001:db8::1]:PORT"),
        ("https://h/?a=b#frag@x", EARLY),
        # Python's splitter refuses a URL whose user information holds [ or ].
        ("https://mailer:Pw[x@hooks.example.com/t", BRACKETS),
        ("postgresql://audit:p]w@db/ga", BRACKETS),
        ("smtp://[u@relay", BRACKETS),
    ],
)
def test_each_refusal_says_in_full_what_is_wrong_and_what_to_do(url: str, message: str) -> None:
    with pytest.raises(URLError) as refused:
        urls.parse(url)
    assert str(refused.value) == message


def test_a_url_without_a_host_keeps_its_whole_path() -> None:
    # SQLite's history URLs: three slashes, an empty host, an absolute path.
    got = urls.parse("sqlite:///var/lib/gpuaudit/history.sqlite")
    assert got == URL("sqlite", "", None, "/var/lib/gpuaudit/history.sqlite", "")
    assert urls.shown("sqlite:///var/lib/h.sqlite", path=True) == "sqlite:///var/lib/h.sqlite"


def test_the_user_ends_at_the_first_colon_and_both_are_percent_decoded() -> None:
    got = urls.parse("postgresql://ops%40corp:pa:ss%2Fword@db.example.com/ga")
    assert (got.user, got.password) == ("ops@corp", "pa:ss/word")
    assert got.shown(mark="***") == "postgresql://ops@corp:***@db.example.com"


def test_only_the_address_before_an_ipv6_zone_is_checked() -> None:
    # RFC 6874: the zone follows %25 and may itself be percent-encoded (en%31 is en1).
    got = urls.parse("https://[fe80::1%25en%31%32]:8443/")
    assert (got.host, got.port) == ("fe80::1%25en%31%32", 8443)


def test_a_query_value_may_hold_question_marks_equals_signs_and_another_url() -> None:
    got = urls.parse(
        "https://EXCHANGE.example.com/hook?next=https://x.example/?a=b@c=d&text=why?ask@ops"
    )
    assert got == URL(
        "https",
        "EXCHANGE.example.com",
        None,
        "/hook",
        "next=https://x.example/?a=b@c=d&text=why?ask@ops",
    )
