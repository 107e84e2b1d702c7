"""The graph of symbolic operations: ``arch`` (Arch, Builder, Group), ``digraph`` (the directed
graph the derivations walk) and ``roles`` (what a node is, the contract with every consumer)."""
