"""Incremental profile resolution: which components a run recomputes (SPEC §4, `profiles`).

A run knows the stored profiles (canonical identity -> profile_id, as of the last run) and what
changed since: records inserted, updated or deleted (their images before and after: the
versions `int_record_states` appended since, each with the live state it replaces, see
:mod:`profile_lake.identity.watermarks`) and identity_map rows whose canonical identity changed
(their images before and after, from the change feed of `identity_map`). Everything here is one
tenant.

* Touched identities T: the canonical identity (by the current map) of every raw identity of
  a changed record's image, and every identity and canonical identity of a changed
  identity_map row, before and after the change.
* Affected identities A: T, and every identity of a stored profile holding an identity of T.

Claim: no link of the current graph joins an identity of A to one outside A. So outside A the
components are the stored ones, and inside A they are the components of the links with an
endpoint in A (every such link has both). Proof, for a current link (x, y) from a live record
with raw identities (p, r), x = c(p), y = c(r), and c0 the map of the last run:

* the record changed since the last run: its after image is a version, so x, y are in T;
* else it was live then with the same raw identities and gave the link (c0(p), c0(r)), so
  c0(p) and c0(r) are in one stored profile. If c(p) != c0(p), p's identity_map row changed,
  so x = c(p) and c0(p) are in T (its after and before image; a row first inserted has no
  before image, but then c0(p) = p, its identity_id), hence the whole stored profile of c0(p)
  and c0(r) is in A; likewise for r. So when either end changed, x, y are in A (y = c0(r)
  if it did not change). When neither changed, the link is a stored one: inside one stored
  profile, which A holds entirely or not at all.

And the stored links outside A are all still there: a stored link (c0(p), c0(r)) whose record
changed has c0(p) in T (c0(p) = c(p), the before image's canonical identity, or else p's row
changed and c0(p) is its before image), and one whose record did not change but whose ends'
canonical identities did has c0(p) or c0(r) in T. Nodes (identities with at least one link,
self-links included) follow the same argument.

The before image of identity_map rows matters: under a late rename (one executed before renames
already applied, so the whole history is replayed) an identity's canonical identity can move
without the row of its old canonical identity changing; without that old identity in T, the
profile it held would keep a link that is gone (see the unit tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from profile_lake.identity.graph import components_union_find

Link = tuple[str, str]


def touched_identities(
    record_images: Iterable[Sequence[str]],
    canonical: Mapping[str, str],
    map_rows: Iterable[tuple[str, str]],
) -> set[str]:
    """T, the canonical identities whose components a run must recompute.

    `record_images`: the raw identities (primary_id and related_ids) of every image, before and
    after, of each record changed since the last run. `canonical`: the current identity map
    (identities missing from it are canonical). `map_rows`: (identity_id, canonical_id) of every
    image, before and after, of each identity_map row changed since the last run.
    """
    touched = {canonical.get(identity, identity) for image in record_images for identity in image}
    for identity, canonical_id in map_rows:
        touched.update((identity, canonical_id))
    return touched


def affected_identities(touched: Iterable[str], stored: Mapping[str, str]) -> set[str]:
    """A: `touched` and every identity of a stored profile (identity -> profile_id) holding one
    of them."""
    touched = set(touched)
    profiles = {stored[identity] for identity in touched if identity in stored}
    return touched | {identity for identity, profile in stored.items() if profile in profiles}


def links_within(links: Iterable[Link], affected: set[str]) -> list[Link]:
    """The links with an endpoint in `affected` (both, when `affected` is an A)."""
    return [(src, dst) for src, dst in links if src in affected or dst in affected]


def resolve_incrementally(
    stored: Mapping[str, str], links: Iterable[Link], touched: Iterable[str]
) -> tuple[dict[str, str], set[str]]:
    """The rows a run writes: identity -> profile_id for every identity of A still linked, and
    the stored identities of A no longer in any link (to delete). `links`: the current
    canonical links, (src, dst), src == dst for an identity without other links."""
    affected = affected_identities(touched, stored)
    within = links_within(links, affected)
    resolved = components_union_find(
        [(src, dst) for src, dst in within if src != dst], [src for src, _ in within]
    )
    return resolved, {identity for identity in affected & stored.keys() if identity not in resolved}
