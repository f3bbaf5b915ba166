"""Identity resolution, pure Python: rename chains (`identity_map`) and profile components.

The Spark models call these per tenant; nothing here crosses or even knows about tenants.
"""

from profile_lake.identity.graph import components_large_small_star, components_union_find
from profile_lake.identity.renames import apply_renames, resolve_renames

__all__ = [
    "apply_renames",
    "components_large_small_star",
    "components_union_find",
    "resolve_renames",
]
