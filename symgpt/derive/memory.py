"""Memory in bytes, derived from the graph: model states, saved activations, logits, KV cache.

Bytes are exact integers (SymPy). ``symgpt.derive.units`` prints them in GB (10⁹) or GiB (2³⁰).

Options shared by every ``memory.*`` quantity: ``convention`` (``symgpt.core.conventions``),
``precision`` (fp32 | bf16 | fp16 | mixed-bf16 | mixed-fp16), ``optimizer`` (sgd | momentum |
adam | adamw | adam8bit), ``attention`` (eager | flash), ``dropout`` (bool), ``recompute``
(none | selective | full), ``zero`` (0-3) with ``dp`` (data-parallel ranks), ``tp`` (tensor-
parallel ranks) and ``sp`` (sequence parallelism); ``pp``, ``vp``, ``microbatches``, ``schedule``,
``stage`` (first | last), ``cp``, ``ep`` (``symgpt.derive.layout``), ``distributed_optimizer``
(Megatron-LM's name for sharding the optimizer states over the data-parallel ranks: ZeRO-1) and
``offload`` (optimizer states and master copy in host memory, ZeRO-Offload). Values are per
device: under a pipeline, of the device holding the first (or last) stage.

* ``memory.weights``, ``memory.gradients``: parameters × bytes, by owner op path;
* ``memory.optimizer``: ``optimizer/master`` (fp32 copy under mixed precision), ``optimizer/m``,
  ``optimizer/v`` (or ``optimizer/momentum``);
* ``memory.activations``: every tensor each op saves for backward (``op.saved``), sized by
  dtype class, counted once when two ops save the same graph tensor, × the copies that run;
  keyed by the op that saves it (the first saver); ``checkpoints/<node>`` under full recompute;
* ``memory.logits``: the logits tensor; ``memory.kv_cache``: K and V of every layer for B·T
  tokens (inference); ``memory.total``: weights + gradients + optimizer + activations.

The derivations live in ``memory_setup`` (options, precision policies), ``memory_states``
(weights, gradients, optimizer, host), ``memory_activations`` (saved tensors, logits) and
``kvcache`` (the KV cache, shared with ``inference.kv_cache``); this module gathers them and sums
the training total.
"""

from __future__ import annotations

from .quantity import Quantity
from .kvcache import kv_cache
from .memory_activations import activations, logits, saved_list, stage_factor, three_term_estimate
from .memory_setup import OPTIMIZERS, PRECISIONS, ZERO_STAGES, Precision, Setup, memory_quantity, setup
from .memory_states import gradients, host, optimizer, param_bytes, weights

__all__ = ["OPTIMIZERS", "PRECISIONS", "ZERO_STAGES", "Precision", "Setup", "activations", "gradients",
           "host", "kv_cache", "logits", "optimizer", "param_bytes", "saved_list", "setup", "stage_factor",
           "three_term_estimate", "total", "weights"]


def total(model, **options) -> Quantity:
    s = setup(model, **options)
    # the parts as the model derives them (once per options: a report asks for them too)
    part = lambda name: model.quantity(f"memory.{name}", **options)  # noqa: E731
    parts = [("weights", part("weights").expr), ("gradients", part("gradients").expr)]
    parts += list(part("optimizer").breakdown)
    parts.append(("activations", part("activations").expr))
    return memory_quantity(s, "memory.total", parts, "training memory: weights + gradients + optimizer + activations "
              "(transient buffers such as the logits themselves not counted)")
