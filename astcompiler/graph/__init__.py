"""The graph IR (fx-like), its printer and clean-up passes."""

from .ir import Graph, Node, NonstrictCallInfo, RegionInfo, TensorMeta, dtype_abbrev, map_nodes
from .passes import eliminate_common_subexpressions, eliminate_dead_carried, eliminate_dead_code

__all__ = ["Graph", "Node", "NonstrictCallInfo", "RegionInfo", "TensorMeta", "dtype_abbrev",
           "map_nodes", "eliminate_common_subexpressions", "eliminate_dead_carried",
           "eliminate_dead_code"]
