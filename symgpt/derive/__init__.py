"""Derivations from the op graph: parameters, shapes (here), FLOPs and memory (their modules)."""
