"""The published formulas symgpt checks (``symgpt check``), as data: see ``formula.Formula``.

Sources: the papers named in each entry, GPT-2 as transformers builds it, and Raschka's
book's parameter counts. Each entry maps its source's symbols onto
symgpt's canonical ones and says so.
"""

from __future__ import annotations

from ..graph import roles as R
from .formula import Formula

# --- the library -------------------------------------------------------------------------
# Sources: the papers named in each entry, GPT-2 as transformers builds it, and Raschka's book.
# Symbols mapped as stated per entry.

_RADFORD_2019 = "GPT-2 (Radford et al. 2019; transformers' GPT2LMHeadModel)"
_RASCHKA_2024 = "Raschka 2024 (Build a Large Language Model From Scratch, ch. 4)"
_GPT2 = "GPT-2: tied head, Q/K/V biases"
_STACK = (R.STACK,)   # the entries inside the stack of layers

PARAMS: tuple[Formula, ...] = (
    Formula("gpt2-exact", "L*(12*d^2 + 13*d) + V*d + T_max*d + 2*d", "params",
            _RADFORD_2019, _GPT2),
    Formula("gpt2-block", "12*d^2 + 13*d", "params", _RADFORD_2019, _GPT2,
            roles=_STACK, per_block=True),
    Formula("gpt2-total", "124439808", "params", _RADFORD_2019, _GPT2, model="gpt2-small"),
    Formula("gpt2-rule", "V*d + 12*L*d^2 + 2*d", "params", _RADFORD_2019, _GPT2,
            expect="-13*L*d - T_max*d",
            why="drops the per-block biases and LayerNorms and the position table"),
    Formula("gpt2-rule-leading", "V*d + 12*L*d^2", "params", _RADFORD_2019, _GPT2,
            regime="d,V",
            why="leading order as d and V grow together (V ∝ d), L and T_max fixed"),
    Formula("raschka-tied", "V*d + T_max*d + L*(12*d^2 + 10*d) + 2*d", "params",
            f"{_RASCHKA_2024} (N -> L, L -> T_max)", "GPT-2 without Q/K/V biases, tied head",
            settings={"qkv_bias": False}),
    Formula("raschka-untied", "2*V*d + T_max*d + L*(12*d^2 + 10*d) + 2*d", "params",
            f"{_RASCHKA_2024} (N -> L, L -> T_max)", "GPT-2 without Q/K/V biases, untied head",
            settings={"qkv_bias": False, "tied": False}),
    Formula("raschka-on-gpt2", "V*d + T_max*d + L*(12*d^2 + 10*d) + 2*d", "params",
            f"{_RASCHKA_2024} (N -> L, L -> T_max)", _GPT2, expect="-3*L*d",
            why="Raschka's count has no Q/K/V biases; GPT-2's add 3d per block"),
    Formula("raschka-163M", "163009536", "params", f"{_RASCHKA_2024} ('untied')",
            "GPT-2-small without Q/K/V biases, untied head", model="gpt2-small",
            settings={"qkv_bias": False, "tied": False}),
    Formula("raschka-124.4M", "124412160", "params", _RASCHKA_2024,
            "GPT-2-small without Q/K/V biases, tied head", model="gpt2-small",
            settings={"qkv_bias": False}),
    Formula("raschka-rule", "12*L*d^2", "params", f"{_RASCHKA_2024} ('for large d and N')", _GPT2,
            regime="d"),
    Formula("kaplan-N", "12*L*d^2", "params", "Kaplan et al. 2020 Sec. 2.1 (n_layer -> L)",
            "non-embedding: blocks without biases or norms", roles=_STACK,
            expect="-13*L*d", why="N excludes all biases and norms"),
    Formula("kaplan-N-no-bias", "12*L*d^2", "params", "Kaplan et al. 2020 Sec. 2.1",
            "blocks of GPT-2 with bias=false", roles=_STACK, settings={"bias": False},
            expect="-2*L*d", why="the two LayerNorm scales per block remain (2d)"),
    Formula("megatron-params", "12*L*d^2*(1 + 13/(12*d) + (V + T_max)/(12*L*d))", "params",
            "Narayanan et al. 2021 Eq. 2 (l, h, s -> L, d, T_max)", _GPT2, expect="-2*d",
            why="Megatron's P omits the final LayerNorm"),
    Formula("nanogpt-non-embedding", "12*L*d^2 + 13*L*d + V*d + 2*d", "params",
            "nanoGPT get_num_params(non_embedding=True)", "all but the position table",
            roles=(R.TOKEN_EMBEDDING, R.STACK, R.FINAL_NORM, R.HEAD)),
)

_P = "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d"   # GPT-2's exact parameter count (GPT-2 in transformers)
_SEQ = {"per": "sequence"}

FLOPS: tuple[Formula, ...] = (
    Formula("gpt2-block-flops", "24*T*d^2 + 4*T^2*d", "flops.forward", _RADFORD_2019,
            "default: matmuls only, 2 per multiply-add, full T×T; per sequence, one block",
            options=_SEQ, roles=_STACK, per_block=True),
    Formula("gpt2-lm-head-flops", "2*B*T*V*d", "flops.forward", _RADFORD_2019,
            "default: the LM head matmul, per batch", roles=(R.HEAD,)),
    Formula("gpt2-train-3x", "3*(L*(24*B*T*d^2 + 4*B*T^2*d) + 2*B*T*V*d)", "flops.train",
            _RADFORD_2019, "default: every matmul's backward is 2× it"),
    Formula("gpt2-6ND", "6*N*B*T", "flops.train", _RADFORD_2019,
            "default, per batch; N = 12Ld²", names={"N": "12*L*d^2"}, regime="d",
            why="6ND is the leading order as d grows (T fixed)"),
    Formula("raschka-2P", "2*P", "flops.forward", f"{_RASCHKA_2024} ('2 FLOPs per parameter per token')",
            "default, per token, GPT-2 without Q/K/V biases; attention products left out",
            options={"per": "token"}, settings={"qkv_bias": False},
            names={"P": "12*L*d^2 + 10*L*d + V*d + T_max*d + 2*d"},
            expect="20*L*d + 2*T_max*d + 4*d - 4*L*T*d",
            why="P also counts biases, norms and the position table, which enter no matmul; "
                "the book adds the attention products 4·T·d·N separately"),
    Formula("megatron-layer", "24*B*T*d^2 + 4*B*T^2*d", "flops.forward",
            "Narayanan et al. 2021 Appendix (s -> T, h -> d)", "default: one layer, per batch",
            roles=_STACK, per_block=True),
    Formula("kaplan-forward", "2*N + 2*L*T*d", "flops.forward",
            "Kaplan et al. 2020 Sec. 2.1 (n_ctx -> T, d_attn = d)", "kaplan: per token, Q·Kᵀ only",
            options={"convention": "kaplan"}, names={"N": "12*L*d^2"}),
    Formula("kaplan-6N", "6*N", "flops.train", "Kaplan et al. 2020 Sec. 2.1", "kaplan: per token",
            options={"convention": "kaplan"}, names={"N": "12*L*d^2"}, expect="-6*L*T*d",
            why="the context term is dropped 'since d_model ≫ n_ctx/12'"),
    Formula("kaplan-6N-rule", "6*N", "flops.train", "Kaplan et al. 2020 Sec. 2.1",
            "kaplan: per token", options={"convention": "kaplan"}, names={"N": "12*L*d^2"},
            regime="d", why="6N is the leading order as d grows (T fixed)"),
    Formula("chinchilla-forward",
            "2*T*V*d + L*(2*3*T*d*d + 2*T^2*d + 3*h*T^2 + 2*T^2*d + 2*T*d*d + 2*T*(2*d*4*d))"
            " + 2*T*d*V", "flops.forward", "Hoffmann et al. 2022 Appendix F (d_ff = 4d)",
            "chinchilla: per sequence, lookup as a matmul, 3 per softmax element",
            options={"convention": "chinchilla"}),
    Formula("megatron-F", "96*B*T*L*d^2*(1 + T/(6*d) + V/(16*L*d))", "flops.train",
            "Narayanan et al. 2021 Eq. 3 (s -> T, l -> L, h -> d)",
            "megatron: full recomputation counted, per iteration",
            options={"convention": "megatron"}),
    Formula("korthikanti-model-flops", "72*B*L*T*d^2*(1 + T/(6*d) + V/(12*d*L))", "flops.train",
            "Korthikanti et al. 2022 Eq. 7 (s -> T, h -> d, v -> V)",
            "korthikanti: model FLOPs, no recomputation", options={"convention": "korthikanti"}),
    Formula("korthikanti-hfu", "72*B*L*T*d^2*(1 + 2*T/(9*d) + V/(12*d*L))", "flops.train",
            "Korthikanti et al. 2022 App. A (as its text implies)",
            "korthikanti-hfu: selective recomputation, one pass",
            options={"convention": "korthikanti-hfu"}),
    Formula("korthikanti-eq8", "72*B*L*T*d^2*(1 + T/(3*d) + V/(12*d*L))", "flops.train",
            "Korthikanti et al. 2022 Eq. 8 (as printed)", "korthikanti-eq8: 3 recompute passes",
            options={"convention": "korthikanti-eq8"}),
    Formula("palm", "6*N + 12*L*h*(d/h)*T", "flops.train", "Chowdhery et al. 2022 App. B (Q = d/h)",
            "palm: per token; N = the matmul weights, 12Ld² + Vd for GPT-2",
            options={"convention": "palm"}, names={"N": "12*L*d^2 + V*d"}),
)

MEMORY: tuple[Formula, ...] = (
    Formula("korthikanti-activations", "T*B*d*(34 + 5*h*T/d)", "memory.activations",
            "Korthikanti et al. 2022 Eq. 1 (s, b, h, a -> T, B, d, h)",
            "korthikanti: 16-bit, 1-byte dropout masks, one layer",
            options={"convention": "korthikanti"}, roles=_STACK, per_block=True),
    Formula("gpt2-activations", "2*(B*T*d + B*h*T^2 + 4*B*T*d)", "memory.activations",
            _RADFORD_2019, "fp16 activations, one block",
            options={"precision": "mixed-fp16"}, roles=_STACK, per_block=True, expect="",
            why="the estimate names three tensors; the exact list is larger"),
    Formula("zero-16psi", "16*P", "memory.total", "Rajbhandari et al. 2019 Sec. 3.1 (Ψ -> P)",
            "mixed-fp16 Adam: 2 + 2 + 12 bytes per parameter",
            options={"precision": "mixed-fp16", "optimizer": "adam"},
            part="weights,gradients,optimizer", names={"P": _P}),
    Formula("zero-stage2", "2*P + (2 + 12)*P/64", "memory.total",
            "Rajbhandari et al. 2019 Sec. 5 (P_os+g, N_d = 64)", "mixed-fp16 Adam, ZeRO-2, 64 ranks",
            options={"precision": "mixed-fp16", "optimizer": "adam", "zero": 2, "dp": 64},
            part="weights,gradients,optimizer", names={"P": _P}),
    Formula("zero-stage3", "(2 + 2 + 12)*P/64", "memory.total",
            "Rajbhandari et al. 2019 Sec. 5 (P_os+g+p, N_d = 64)", "mixed-fp16 Adam, ZeRO-3, 64 ranks",
            options={"precision": "mixed-fp16", "optimizer": "adam", "zero": 3, "dp": 64},
            part="weights,gradients,optimizer", names={"P": _P}),
    Formula("kv-cache", "2*L*h*(d/h)*2*B*T", "memory.kv_cache",
            "the KV cache: 2·L·h_kv·d_head·bytes per token (GPT-2: h_kv = h, d_head = d/h)",
            "bf16, B·T tokens", options={"precision": "bf16"}),
)

_MT = {"convention": "megatron-theoretical", "optimizer": "adam"}

CLUSTER: tuple[Formula, ...] = (
    Formula("zero-dp-2psi", "2*P*2*63/64", "comm.dp", "Rajbhandari et al. 2019 Sec. 7.2.1 (Ψ -> P)",
            "bf16 gradients, ZeRO-0 over 64 ranks: a ring all-reduce sends 2(n-1)/n·Ψ elements",
            options={"precision": "bf16", "dp": 64}, names={"P": _P}),
    Formula("zero-os-g-2psi", "2*P*2*63/64", "comm.dp", "Rajbhandari et al. 2019 Sec. 7.2.2",
            "bf16, ZeRO-2 over 64 ranks: reduce-scatter + all-gather, 2Ψ as plain DP",
            options={"precision": "bf16", "dp": 64, "zero": 2}, names={"P": _P}),
    Formula("zero-p-3psi", "3*P*2*63/64", "comm.dp", "Rajbhandari et al. 2019 Sec. 7.2.3",
            "bf16, ZeRO-3 over 64 ranks, one micro-batch: 1.5 × plain DP",
            options={"precision": "bf16", "dp": 64, "zero": 3}, names={"P": _P}),
    Formula("korthikanti-stage", "34*T*B*d*L/4", "memory.activations",
            "Korthikanti et al. 2022 Table 2 and Sec. 4.2.3 (first stage holds p micro-batches of L/p layers)",
            "korthikanti, selective recomputation, tp = 4 with sequence parallelism, pp = 4, m = 8",
            options={"convention": "korthikanti", "recompute": "selective", "tp": 4, "sp": True, "pp": 4,
                     "microbatches": 8}, part="blocks"),
    Formula("bubble-1f1b", "(4 - 1)/8 * C", "time.bubble",
            "Narayanan et al. 2021 Sec. 2.2.1 (GPipe and 1F1B: (p - 1)/m of the compute)",
            "pp = 4, m = 8, first stage, peak 1 FLOP/s: C = its FLOPs, 8 × L/4 layers",
            options={"pp": 4, "microbatches": 8, "peak": 1, "link_bandwidth": 1, "node_bandwidth": 1},
            names={"C": "2*L*(72*B*T*d^2 + 12*B*T^2*d)"}),
    Formula("bubble-interleaved", "(4 - 1)/(2*8) * C", "time.bubble",
            "Narayanan et al. 2021 Sec. 2.2.2 (interleaved: (p - 1)/(v·m))",
            "pp = 4, vp = 2, m = 8, first stage, peak 1 FLOP/s",
            options={"pp": 4, "vp": 2, "microbatches": 8, "peak": 1, "link_bandwidth": 1, "node_bandwidth": 1},
            names={"C": "2*L*(72*B*T*d^2 + 12*B*T^2*d)"}),
    Formula("narayanan-8TP-nX", "8*D*P/(n*X)", "time.to_train",
            "Narayanan et al. 2021 Sec. 5.1 (end-to-end training time, full recomputation)",
            "megatron: hardware FLOPs with full recomputation; D = 3e11 tokens on n = 1024 devices "
            "at X = 1.4e14 FLOP/s each (dp = n, data-parallel traffic hidden); P = 12Ld²",
            options={"convention": "megatron", "tokens": 300 * 10**9, "dp": 1024, "peak": 140 * 10**12,
                     "link_bandwidth": 1, "node_bandwidth": 1, "overlap_dp": True},
            names={"D": "300000000000", "n": "1024", "X": "140000000000000", "P": "12*L*d^2"},
            regime="d", why="8TP/(nX) is the leading order as d grows (T, V fixed)"),
    Formula("megatron-theoretical-weights", "18*(12*L*d^2 + 4*L*d + 2*d + V*d)", "memory.total",
            "Megatron-LM theoretical_memory_usage.py (tp = pp = 1, unpadded V)",
            "megatron-theoretical: bf16 weights, fp32 gradients, master and Adam moments",
            options=_MT, part="weights,gradients,optimizer", expect="-162*L*d - 18*T_max*d",
            why="its parameter count has no biases (9d per GPT-2 layer) and no position table"),
    Formula("megatron-theoretical-activations", "T*B*d*(18 + 4*4)", "memory.activations",
            "Megatron-LM theoretical_memory_usage.py (Korthikanti Table 2, d_ff = 4d)",
            "megatron-theoretical: selective recomputation, one layer", options=_MT, part="blocks",
            per_block=True),
)


_BOOK = "Austin et al. 2025, How to Scale Your Model, Part 7 (All About Transformer Inference)"
_BOOK_CONV = {"convention": "scaling-book"}
_GPT2_N = "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d"

INFERENCE: tuple[Formula, ...] = (
    Formula("book-kv-cache", "2*2*(d/h)*h_kv*L*T*B", "inference.kv_cache",
            f"{_BOOK}: KV cache size = 2 · bytes per float · H · K · L · T (H -> d/h, K -> h_kv)",
            "bf16 cache, B sequences of T tokens, grouped-query attention", model="llama",
            settings={"gqa": True}),
    Formula("book-decode-2N", "2*B*N", "inference.decode.flops",
            f"{_BOOK}: 2 FLOPs per parameter per token (N -> every parameter)",
            "scaling-book: one decode step of B sequences", options=_BOOK_CONV, names={"N": _GPT2_N}),
    Formula("kaplan-decode", "2*B*N + 2*B*L*(T + 1)*d", "inference.decode.flops",
            "Kaplan et al. 2020 Table 1 (C_forward = 2N + 2·n_layer·n_ctx·d_attn per token; "
            "n_ctx -> T + 1, the cache and the new token)",
            "default: one decode step of B sequences, every matmul", names={"N": "12*L*d^2"},
            expect="-2*B*V*d - 2*B*L*(T + 1)*d",
            why="Kaplan's C_forward counts neither the LM head (2·V·d) nor the A·V matmul (the "
                "second 2·n_layer·n_ctx·d); FlopCounterMode counts both"),
    Formula("book-critical-batch", "F_peak/BW_mem * 2/2", "inference.critical_batch",
            f"{_BOOK}: B_crit = peak / bandwidth (bf16 weights; 'int8 parameters ... drops to 120')",
            "scaling-book: bytes per weight / 2 FLOPs per weight; F_peak, BW_mem the device's",
            model="llama", options=_BOOK_CONV),
    Formula("book-critical-batch-int8", "F_peak/BW_mem * 1/2", "inference.critical_batch",
            f"{_BOOK}: int8 parameters with bfloat16 FLOPs halve the critical batch",
            "scaling-book, 8-bit weights", model="llama", options={**_BOOK_CONV, "weight_bits": 8}),
)

COSTS: tuple[Formula, ...] = FLOPS + MEMORY + CLUSTER + INFERENCE

LIBRARY: tuple[Formula, ...] = PARAMS + COSTS
