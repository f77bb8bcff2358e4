"""Inline ``nonstrict_call`` regions: their traced subgraph joins the surrounding graph, so a
backend that fuses (numba) fuses across the call, as if it had been written inline."""

from __future__ import annotations

from ..graph import Graph, Node, map_nodes


def inline_nonstrict_calls(graph: Graph) -> Graph:
    """Replace every nonstrict_call region of ``graph`` (in place) by the nodes of its body."""
    for region in [n for n in graph.nodes if n.op == "region" and n.target == "nonstrict_call"]:
        body: Graph = region.info.subgraphs["body"]
        inline_nonstrict_calls(body)
        mapping: dict[Node, Node] = dict(zip(body.placeholders, region.args))
        position = graph.nodes.index(region)
        new_nodes: list[Node] = []
        outputs: tuple = ()
        for node in body.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                outputs = map_nodes(node.args[0], mapping.__getitem__)
                continue
            copy = Node(graph, graph._fresh_name(node.name), node.op, node.target,
                        map_nodes(node.args, mapping.__getitem__),
                        map_nodes(node.kwargs, mapping.__getitem__), node.meta,
                        node.origin or region.origin)
            copy.info = node.info
            mapping[node] = copy
            new_nodes.append(copy)
        graph.nodes[position:position + 1] = new_nodes
        for user in list(region.users):  # getitem(region, k) -> the k-th output
            if user.op == "call" and user.target == "getitem" and user.args[0] is region:
                replacement = outputs[user.args[1]]
                for consumer in list(user.users):
                    consumer.replace_input(user, replacement)
                graph.nodes.remove(user)
        for inp in region.all_input_nodes():
            inp.users = [u for u in inp.users if u is not region]
    return graph
