"""The project's vars as Python reads them: the same values dbt renders from dbt_project.yml."""

from __future__ import annotations

import re

from profile_lake.identity.rules import RuleRow, check_rule_row
from profile_lake.project import identity_namespaces, project_var


def test_the_identity_pattern_is_built_from_the_namespaces() -> None:
    pattern = re.compile(str(project_var("identity_pattern")))
    for namespace in identity_namespaces():
        assert pattern.match(f"{namespace}:x")
        assert pattern.match(f"{namespace}:" + "x" * 256)
        assert not pattern.match(f"{namespace}:" + "x" * 257)
        assert not pattern.match(f"{namespace}:")
    assert not pattern.match("fax:1")
    assert not pattern.match("Email:a@x.test")


def test_the_identity_message_names_every_namespace() -> None:
    message = str(project_var("identity_rule_message"))
    assert "{" not in message
    for namespace in identity_namespaces():
        assert namespace in message


def test_the_rules_check_accepts_exactly_the_namespaces_of_the_var() -> None:
    for namespace in identity_namespaces():
        check_rule_row(RuleRow(2, "acme", "namespace_limit", namespace, "1"))
        check_rule_row(RuleRow(2, "acme", "blocked", "", f"{namespace}:x"))
