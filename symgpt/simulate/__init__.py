"""Serving a request mix with continuous batching: closed forms of the steady state
(``steady``) and a discrete-event simulation on SimPy (``engine``) of a vLLM-like scheduler,
priced step by step from the op graph (``stepcost``); ``command`` is the command-line edge.
SimPy is imported only when a simulation runs."""
