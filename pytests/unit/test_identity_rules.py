"""The identity_rules seed (SPEC §5): rows checked, naming the row; rules merged per tenant."""

from __future__ import annotations

from pathlib import Path

import pytest

from profile_lake.identity.rules import (
    IdentityRulesError,
    TenantRules,
    parse_rule_rows,
    read_rules_csv,
    rules_by_tenant,
    tenant_rules,
)


def rows(*found: tuple[str, str, str, str]) -> list[dict[str, str]]:
    return [
        dict(zip(("tenant_id", "rule", "namespace", "value"), row, strict=True)) for row in found
    ]


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (("acme", "blocks", "", "email:a@x.test"), "unknown rule 'blocks'"),
        (("acme", "namespace_limit", "fax", "1"), "unknown namespace 'fax'"),
        (("acme", "namespace_limit", "", "1"), "unknown namespace ''"),
        (("acme", "namespace_limit", "crm", "0"), "positive integer"),
        (("acme", "namespace_limit", "crm", "-2"), "positive integer"),
        (("acme", "max_identities", "", "1.5"), "positive integer"),
        (("acme", "max_identities", "", "many"), "positive integer"),
        (("acme", "max_identities", "email", "3"), "takes no namespace"),
        (("acme", "blocked", "email", "email:a@x.test"), "takes no namespace"),
        (("acme", "blocked", "", ""), "needs a value"),
        (("acme", "blocked", "", "fax:123"), "unknown namespace 'fax'"),
        (("acme", "blocked", "", "test@example.com"), "matches no identity"),
        (("acme", "blocked", "", "email:a\\b"), "must escape"),
        (("acme", "blocked", "", "email:a\\"), "lone"),
        (("Acme!", "blocked", "", "email:a@x.test"), "tenant_id"),
    ],
)
def test_a_bad_row_is_named_with_its_line(row, problem) -> None:
    good = ("*", "blocked", "", "email:test@example.com")
    with pytest.raises(IdentityRulesError) as raised:
        parse_rule_rows(rows(good, row))
    message = str(raised.value)
    assert problem in message
    assert f"identity_rules line 3 ({','.join(row)})" in message


def test_patterns_and_exact_identities_are_accepted() -> None:
    parsed = parse_rule_rows(
        rows(
            ("*", "blocked", "", "email:test@example.com"),
            ("*", "blocked", "", "%@mailinator.com"),
            ("acme", "blocked", "", "phone:+1555%"),
            ("acme", "blocked", "", "e%:x"),
            ("acme", "blocked", "", "email:100\\%@x.test"),
            ("acme", "namespace_limit", "crm", "1"),
            ("acme", "max_identities", "", "500"),
        )
    )
    assert [row.line for row in parsed] == [2, 3, 4, 5, 6, 7, 8]


def test_two_different_limits_for_one_thing_are_an_error() -> None:
    same = rows(("acme", "max_identities", "", "5"), ("acme", "max_identities", "", "5"))
    assert len(parse_rule_rows(same)) == 2
    with pytest.raises(IdentityRulesError, match=r"line 3 .* contradicts .*line 2"):
        parse_rule_rows(
            rows(("acme", "namespace_limit", "crm", "1"), ("acme", "namespace_limit", "crm", "2"))
        )


def test_a_tenants_own_limits_replace_the_defaults_and_blocked_rows_add_up() -> None:
    parsed = parse_rule_rows(
        rows(
            ("*", "blocked", "", "email:test@example.com"),
            ("*", "namespace_limit", "crm", "1"),
            ("*", "namespace_limit", "email", "3"),
            ("*", "max_identities", "", "100"),
            ("acme", "blocked", "", "device:kiosk%"),
            ("acme", "namespace_limit", "crm", "2"),
            ("acme", "max_identities", "", "50"),
            ("globex", "blocked", "", "device:kiosk%"),
        )
    )
    assert tenant_rules(parsed, "acme") == TenantRules(
        blocked=("device:kiosk%", "email:test@example.com"),
        namespace_limits={"crm": 2, "email": 3},
        max_identities=50,
    )
    assert tenant_rules(parsed, "initech") == TenantRules(
        blocked=("email:test@example.com",),
        namespace_limits={"crm": 1, "email": 3},
        max_identities=100,
    )
    found = rules_by_tenant(parsed, ["acme", "initech"])
    assert set(found) == {"acme", "initech"}
    assert found["acme"].fingerprint() != found["initech"].fingerprint()
    assert (
        rules_by_tenant(parse_rule_rows(rows(("acme", "max_identities", "", "5"))), ["globex"])
        == {}
    )


def test_the_fingerprint_follows_the_rules_not_their_order() -> None:
    one = TenantRules(("a:%", "b:%"), {"crm": 1, "email": 2}, 5)
    other = TenantRules(("b:%", "a:%"), {"email": 2, "crm": 1}, 5)
    assert (
        one.fingerprint()
        == other.fingerprint()
        != TenantRules(("a:%",), {"crm": 1}, 5).fingerprint()
    )
    assert TenantRules().fingerprint() == ""


def test_the_csv_is_read_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "identity_rules.csv"
    assert read_rules_csv(path) == []
    path.write_text(
        "tenant_id,rule,namespace,value\nacme,namespace_limit,crm,1\nacme,max_identities,,x\n"
    )
    with pytest.raises(IdentityRulesError, match=r"line 3 \(acme,max_identities,,x\)"):
        read_rules_csv(path)
    path.write_text("tenant_id,rule,value\n")
    with pytest.raises(IdentityRulesError, match="missing namespace"):
        read_rules_csv(path)
    shipped = Path(__file__).resolve().parents[2] / "seeds" / "identity_rules.csv"
    read_rules_csv(shipped)  # the shipped seed is valid
