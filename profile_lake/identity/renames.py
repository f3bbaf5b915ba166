"""Rename chains for `identity_map` (SPEC §4): every identity seen -> its canonical identity.

The rule, literally: renames are applied in ``(executed_ts, seq)`` order, and a rename
``a -> b`` sends every identity *currently* canonicalized to ``a`` to ``b``. An identity never
moved is canonicalized to itself, which is how ``a`` itself is included. Consequences, all
decided by the order of execution and never by arrival:

* Chains executed forwards (``a->b``, ``b->c``, ``c->d``) resolve ``a, b, c, d`` to ``d``.
* The same chain executed backwards (``c->d``, then ``b->c``, then ``a->b``) resolves
  ``a->b``, ``b->c``, ``c->d``: when ``b->c`` runs, ``c`` has already left, so ``b`` goes to the
  identity ``c`` (now a new holder of that value), not to ``d``. So the target of a mapping is
  not always a fixed point of the map; it is the identity the history last sent it to.
* A cycle (``a->b`` then ``b->a``) is just two renames: everything ends on ``a``. No special
  case and no fixed-point iteration, so it always terminates.
* ``a->a`` moves nothing (SPEC: "a no-op"), even when ``a`` was renamed away before.
* A rename of an identity already renamed away (``a->z`` then ``a->b``) moves only the
  identities currently canonicalized to ``a`` (those that arrived through some ``x->a`` in
  between); ``a`` itself stays on ``z``. This is the reading under which ``a->a`` is a no-op.
* Renames with an equal version (undefined by SPEC §2) are ordered by ``(from_id, to_id)`` so
  the result is still deterministic; exact duplicates are applied once.

Classes of identities sharing a canonical identity are kept in a union-find whose roots carry
the canonical identity as a label, so a rename is a relabel or one union: near O(1), whatever
the class sizes. Nothing here knows about tenants: callers group renames by tenant.

A version is whatever orders renames: the project uses ``(executed_ts as epoch microseconds
UTC, seq)``, as in :mod:`profile_lake.jsonmerge`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias

Version: TypeAlias = tuple[int, int]
Rename: TypeAlias = tuple[Version, str, str]


class _Classes:
    """Union-find over identities; each root is labelled with the class's canonical identity."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.size: dict[str, int] = {}
        self.label: dict[str, str] = {}  # root -> canonical identity
        self.root_of: dict[str, str] = {}  # canonical identity -> root

    @classmethod
    def from_map(cls, current: Mapping[str, str]) -> _Classes:
        """Classes as ``current`` (identity -> canonical) describes them."""
        classes = cls()
        for identity, canonical in current.items():
            classes._join(identity, canonical)
        return classes

    def _join(self, identity: str, canonical: str) -> None:
        root = self.root_of.get(canonical)
        if root is None:
            self.parent[identity] = identity
            self.size[identity] = 1
            self.label[identity] = canonical
            self.root_of[canonical] = identity
        else:
            self.parent[identity] = root
            self.size[root] += 1

    def _find(self, identity: str) -> str:
        parent = self.parent
        while parent[identity] != identity:
            parent[identity] = parent[parent[identity]]  # path halving
            identity = parent[identity]
        return identity

    def ensure(self, identity: str) -> None:
        """Track ``identity``; one never moved is canonicalized to itself."""
        if identity not in self.parent:
            self._join(identity, identity)

    def rename(self, from_id: str, to_id: str) -> None:
        """Send every identity currently canonicalized to ``from_id`` to ``to_id``."""
        self.ensure(from_id)
        self.ensure(to_id)
        if from_id == to_id:
            return
        moving = self.root_of.pop(from_id, None)
        if moving is None:  # nobody is canonicalized to from_id any more
            return
        staying = self.root_of.get(to_id)
        if staying is None:
            self.label[moving] = to_id
            self.root_of[to_id] = moving
            return
        if self.size[moving] > self.size[staying]:
            moving, staying = staying, moving
        self.parent[moving] = staying
        self.size[staying] += self.size.pop(moving)
        del self.label[moving]
        self.label[staying] = to_id
        self.root_of[to_id] = staying

    def mapping(self, extra_ids: Iterable[str] = ()) -> dict[str, str]:
        """identity -> canonical for every tracked identity and every id in ``extra_ids``."""
        result = {identity: self.label[self._find(identity)] for identity in self.parent}
        for identity in extra_ids:
            result.setdefault(identity, identity)
        return result


def _normalized(renames: Iterable[tuple[Sequence[int], str, str]]) -> set[Rename]:
    """Hashable renames (versions as tuples), exact duplicates collapsed."""
    return {(tuple(version), from_id, to_id) for version, from_id, to_id in renames}


def _replay(classes: _Classes, renames: Iterable[Rename]) -> None:
    """Apply renames in execution order; ``(from_id, to_id)`` settles undefined version ties."""
    for _, from_id, to_id in sorted(renames):
        classes.rename(from_id, to_id)


def resolve_renames(
    renames: Iterable[tuple[Sequence[int], str, str]], seen_ids: Iterable[str] = ()
) -> dict[str, str]:
    """identity -> canonical identity, from the full rename history of one tenant.

    Covers every rename endpoint and every id in ``seen_ids`` (identities never renamed map to
    themselves). ``renames`` may be in any order and hold duplicates.
    """
    classes = _Classes()
    _replay(classes, _normalized(renames))
    return classes.mapping(seen_ids)


def apply_renames(
    current_map: Mapping[str, str],
    renames: Iterable[tuple[Sequence[int], str, str]],
    *,
    applied: Iterable[tuple[Sequence[int], str, str]] = (),
    seen_ids: Iterable[str] = (),
) -> dict[str, str]:
    """Bring ``current_map`` up to date with this run's ``renames``; exact in every case.

    ``current_map`` must be what :func:`resolve_renames` / :func:`apply_renames` returned for
    the renames in ``applied`` (the history already folded in; it covers their endpoints).
    Renames already in ``applied`` are skipped. The map alone is enough state while every new
    rename is newer than everything applied: the new ones are folded onto it. A late rename
    (version not newer than the newest applied one) changes what every later rename saw, so
    the map is then recomputed from the whole ordered history ``applied + renames``; that is
    why the history is an argument. The result always equals
    ``resolve_renames(applied + renames, current_map.keys() + seen_ids)``.
    """
    history = _normalized(applied)
    new = _normalized(renames) - history
    if not history and any(identity != canonical for identity, canonical in current_map.items()):
        raise ValueError(
            "current_map has renames folded in: pass the renames it was built from as `applied`"
        )
    ids = [*current_map, *seen_ids]
    if history and new and min(version for version, _, _ in new) <= max(history)[0]:
        return resolve_renames(history | new, ids)
    classes = _Classes.from_map(current_map)
    _replay(classes, new)
    return classes.mapping(seen_ids)
