"""Measurements of real PyTorch / HuggingFace models (independent of symgpt).

Conventions (see each docstring):
- params: ``sum(p.numel() for p in model.parameters())``; tied weights counted
  once, buffers (e.g. HF GPT-2's causal-mask buffer) never counted.
- FLOPs: ``torch.utils.flop_counter.FlopCounterMode``, which counts ONLY matmul-
  like aten ops (mm, addmm, bmm, baddbmm, conv, fused SDPA kernels), 2 FLOPs per
  multiply-add; addmm's bias add, softmax, LayerNorm, GELU, embedding, loss and
  optimizer work are NOT counted. Attention is counted with no causal discount.
- Saved activations: every tensor autograd saves for backward during a real
  forward, de-duplicated by storage, parameters excluded.
"""
from __future__ import annotations

import copy
import os
from typing import Optional

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _device_of(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def _vocab_of(model: torch.nn.Module) -> int:
    return model.get_input_embeddings().num_embeddings if hasattr(model, "get_input_embeddings") \
        else model.transformer.wte.num_embeddings


def _logits(model, idx, targets=None):
    """Call a torch_gpt2.GPT or an HF causal LM; return (logits, loss|None)."""
    if hasattr(model, "get_input_embeddings"):  # HuggingFace
        # An explicit all-ones mask skips HF's packed-sequence check, which calls
        # .item() and so fails on meta when use_cache=False.
        out = model(input_ids=idx, attention_mask=torch.ones_like(idx), labels=targets,
                    use_cache=False)
        return out.logits, out.loss
    return model(idx, targets)


def param_count(model: torch.nn.Module) -> int:
    """Total parameters: ``sum(p.numel() for p in model.parameters())``.

    ``parameters()`` de-duplicates shared Parameter objects, so a tied
    lm_head/wte is counted once. Buffers are not counted."""
    return sum(p.numel() for p in model.parameters())


def param_count_by_module(model: torch.nn.Module) -> dict[str, int]:
    """``{parameter name: numel}`` from ``named_parameters()`` (tied weights
    appear once, under the first name registered, e.g. ``transformer.wte.weight``)."""
    return {n: p.numel() for n, p in model.named_parameters()}


def record_shapes(model, B: int, T: int) -> list[tuple[str, tuple[int, ...]]]:
    """Forward order list of ``(name, shape)``.

    Includes the output shape of every leaf module (forward hooks; names from
    ``named_modules``; a module called twice appears twice), plus attention
    intermediates reported through each attention module's ``recorder``
    attribute as ``<module>.q|k|v`` (B,h,T,hd), ``<module>.scores`` and
    ``.probs`` (B,h,T,T; eager only) and ``<module>.y`` (B,T,C, before c_proj).
    Runs on the model's own device (a meta model works: shapes only)."""
    out: list[tuple[str, tuple[int, ...]]] = []
    handles, recorders = [], []

    def hook_for(name):
        def hook(_mod, _inp, res):
            t = res[0] if isinstance(res, (tuple, list)) else res
            if isinstance(t, torch.Tensor):
                out.append((name, tuple(t.shape)))
        return hook

    for name, mod in model.named_modules():
        if hasattr(mod, "recorder"):
            mod.recorder = (lambda n: lambda key, t: out.append((f"{n}.{key}", tuple(t.shape))))(name)
            recorders.append(mod)
        if next(mod.children(), None) is None:
            handles.append(mod.register_forward_hook(hook_for(name)))
    try:
        idx = torch.randint(0, _vocab_of(model), (B, T), device=_device_of(model))
        with torch.no_grad():
            _logits(model, idx)
    finally:
        for h in handles:
            h.remove()
        for mod in recorders:
            mod.recorder = None
    return out


def _run_counted(model, B, T, backward, with_loss, device) -> FlopCounterMode:
    if device is not None and torch.device(device) != _device_of(model):
        model = copy.deepcopy(model)  # deepcopy keeps ties; don't mutate the caller's model
        model = model.to(device) if torch.device(device).type == "meta" else model.to_empty(device=device)
    dev = _device_of(model)
    V = _vocab_of(model)
    idx = torch.randint(0, V, (B, T), device=dev)
    tgt = torch.randint(0, V, (B, T), device=dev) if with_loss else None
    # MATH backend: the fused CPU SDPA kernel (_scaled_dot_product_flash_attention_for_cpu)
    # is not in FlopCounterMode's registry and would count 0; MATH lowers SDPA to
    # two bmm's (fwd) which are counted. On meta SDPA already falls back to MATH.
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as fcm:
        with torch.enable_grad() if backward else torch.no_grad():
            logits, loss = _logits(model, idx, tgt)
            if backward:
                (loss if with_loss else logits.sum()).backward()
    return fcm


def flop_count(model, B: int, T: int, backward: bool = False, device=None,
               with_loss: bool = False) -> int:
    """Total FLOPs counted by ``FlopCounterMode`` for one forward on a (B,T)
    batch of token ids (+ backward of ``logits.sum()``, or of the
    cross-entropy loss when ``with_loss``, if ``backward``).

    Only matmuls are counted (see module doc): forward = 2*M*N*K per
    mm/addmm/bmm, including the lm_head and both attention matmuls
    (q@k^T and att@v, full T*T, no causal halving); backward adds the
    grad-input and grad-weight matmuls (about 2x forward; layer 0's grad-input
    is computed because wte requires grad). ``device`` (None = the model's
    own) may be 'meta' (fast, any size) or 'cpu'; counts are identical. SDPA is
    forced onto the MATH backend so attention is counted on CPU too."""
    return _run_counted(model, B, T, backward, with_loss, device).get_total_flops()


def flop_count_by_op(model, B: int, T: int, backward: bool = False, device=None,
                     with_loss: bool = False) -> dict[str, int]:
    """Same measurement as ``flop_count`` split by aten op name (e.g. 'aten.mm')."""
    fcm = _run_counted(model, B, T, backward, with_loss, device)
    return {str(k): v for k, v in fcm.get_flop_counts()["Global"].items()}


def saved_tensors(model, B: int, T: int, dtype: Optional[torch.dtype] = None,
                  with_loss: bool = True, forward=None) -> list[dict]:
    """Every distinct non-parameter storage autograd saves for backward.

    Runs a real training-mode forward (CPU, real tensors: use small configs)
    under ``torch.autograd.graph.saved_tensors_hooks``; with ``with_loss`` the
    cross-entropy loss is included (its saved log-softmax counts). Entries are
    de-duplicated by ``untyped_storage().data_ptr()`` (views of one storage count
    once), storages shared with a parameter (weights, weight.t() views) are
    excluded. Each entry: ``{shape, dtype, nbytes, storage_ptr}`` where nbytes
    is the WHOLE storage (``untyped_storage().nbytes()``), in first-saved order.
    ``dtype`` (if given) must match the model's parameters: build bf16 models
    in bf16. Empty (0-byte) storages are skipped; 0-dim scalars saved by
    autograd (e.g. wrapped Python numbers) are included (a few bytes). ``forward`` (optional):
    a callable ``forward(model)`` that runs the model's forward instead of the causal-LM call
    (an encoder or encoder--decoder with its own inputs; B, T and with_loss are then unused)."""
    dev = _device_of(model)
    if dev.type == "meta":
        raise ValueError("saved_tensors needs real tensors; build the model on cpu")
    if dtype is not None and next(model.parameters()).dtype != dtype:
        raise ValueError("build the model in the requested dtype")
    param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, dict] = {}
    keep: list[torch.Tensor] = []  # hold refs so no storage is freed and reused mid-forward

    def pack(t: torch.Tensor):
        keep.append(t)
        st = t.untyped_storage()
        ptr = st.data_ptr()
        if st.nbytes() == 0 or ptr in param_ptrs or ptr in seen:
            return t
        seen[ptr] = dict(shape=tuple(t.shape), dtype=t.dtype, nbytes=st.nbytes(), storage_ptr=ptr)
        return t

    was_training = model.training
    model.train()
    if forward is None:
        V = _vocab_of(model)
        idx = torch.randint(0, V, (B, T), device=dev)
        tgt = torch.randint(0, V, (B, T), device=dev) if with_loss else None
    try:
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            result = _logits(model, idx, tgt) if forward is None else forward(model)
        del result
    finally:
        model.train(was_training)
        keep.clear()
    return list(seen.values())


def saved_activation_bytes(model, B: int, T: int, dtype: Optional[torch.dtype] = None,
                           with_loss: bool = True) -> int:
    """Sum of ``nbytes`` over ``saved_tensors(model, B, T, dtype, with_loss)``."""
    return sum(d["nbytes"] for d in saved_tensors(model, B, T, dtype, with_loss))


class _Held:
    """What the pack hook below hands autograd: a detached alias of the saved tensor (an alias of
    an op's own output would hold that op's node and keep a dropped graph alive)."""

    __slots__ = ("t", "__weakref__")

    def __init__(self, t):
        self.t = t


def retained_activation_bytes(model, B: int, T: int, with_loss: bool = True, forward=None) -> int:
    """The bytes autograd still holds for backward once a real training-mode forward (CPU) has
    returned: every tensor saved under ``saved_tensors_hooks`` whose graph node is still alive
    (tracked by a weak reference to what the pack hook returned), de-duplicated by storage,
    parameters' storages excluded. Unlike ``saved_activation_bytes`` it leaves out what a graph
    the forward builds and drops keeps (DoRA's pass over an identity matrix, whose result peft
    detaches). No backward is run (the aliases are detached). ``forward`` (optional): a callable
    ``forward(model)`` run instead of the causal-LM call (B, T and with_loss are then unused)."""
    import weakref

    param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    refs = []

    def pack(t):
        h = _Held(t.detach())
        refs.append(weakref.ref(h))
        return h

    was_training = model.training
    model.train()
    if forward is None:
        V = _vocab_of(model)
        dev = _device_of(model)
        idx = torch.randint(0, V, (B, T), device=dev)
        tgt = torch.randint(0, V, (B, T), device=dev) if with_loss else None
    try:
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda h: h.t):
            result = _logits(model, idx, tgt) if forward is None else forward(model)
            seen = {}
            for r in refs:
                h = r()
                if h is None:
                    continue
                st = h.t.untyped_storage()
                if st.nbytes() and st.data_ptr() not in param_ptrs:
                    seen.setdefault(st.data_ptr(), st.nbytes())
            del result
    finally:
        model.train(was_training)
    return sum(seen.values())


# ---------------------------------------------------------------- HuggingFace
def _hf_model(config: dict, device="meta", attn_implementation: Optional[str] = None):
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging
    hf_logging.set_verbosity_error()  # e.g. bos/eos id outside a tiny test vocab
    cfg = dict(config)
    model_type = cfg.pop("model_type")
    hf_cfg = AutoConfig.for_model(model_type, **cfg)
    kw = {"attn_implementation": attn_implementation} if attn_implementation else {}
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(hf_cfg, **kw)
    model.tie_weights()  # applies (only) what config.tie_word_embeddings says
    tied = model.get_output_embeddings().weight is model.get_input_embeddings().weight
    if tied != bool(getattr(hf_cfg, "tie_word_embeddings", True)):
        raise AssertionError(f"tying mismatch: tied={tied}, config={hf_cfg.tie_word_embeddings}")
    return model


def hf_param_count(config: dict) -> int:
    """``param_count`` of ``AutoModelForCausalLM.from_config(AutoConfig.for_model(**config))``
    built on meta (``config`` must contain ``model_type``), with tying exactly as
    ``config['tie_word_embeddings']`` (default True) says. Offline, no weights."""
    return param_count(_hf_model(config))


def hf_flop_count(config: dict, B: int, T: int, backward: bool = False,
                  device: Optional[str] = None) -> int:
    """``flop_count`` of the HF model for ``config`` with eager attention
    (``attn_implementation='eager'``), fed an all-ones attention_mask and
    use_cache=False. ``device`` 'meta' or 'cpu' (random init: small configs
    only); None tries meta, then CPU if the meta forward raises. GPT-2's Conv1D
    is ``addmm(bias, x, W)`` with W (in, out): same FLOPs as nn.Linear.
    Backward is of ``logits.sum()``."""
    if device is not None:
        return flop_count(_hf_model(config, device, "eager"), B, T, backward)
    try:
        return flop_count(_hf_model(config, "meta", "eager"), B, T, backward)
    except (RuntimeError, NotImplementedError):  # model code not meta-safe
        return flop_count(_hf_model(config, "cpu", "eager"), B, T, backward)


def saved_storages(fn, x) -> dict[int, int]:
    """The storages ``fn(x)`` saves for backward, each once: ``{data_ptr: nbytes}``."""
    seen = {}

    def pack(t):
        seen.setdefault(t.untyped_storage().data_ptr(), t.untyped_storage().nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(x)
    return seen


def meta_causal_lm(model_type: str, fields: dict):
    """transformers' causal-LM class of *model_type* (as MODEL_FOR_CAUSAL_LM_MAPPING_NAMES names
    it) at its config class's defaults overridden by *fields*, on the meta device, with eager
    attention and experts as batched matmuls (as the zoo table builds them)."""
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    cls = getattr(transformers, MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type])
    config = AutoConfig.for_model(model_type, **fields)
    with torch.device("meta"):
        return cls._from_config(config, attn_implementation="eager", experts_implementation="batched_mm")
