"""RecurrentGemma (Botev et al. 2024, "RecurrentGemma: Moving Past Transformers for Efficient Open
Language Models"; the Griffin architecture of De et al. 2024), read from transformers'
RecurrentGemmaConfig and counted as ``RecurrentGemmaForCausalLM``: residual blocks of a temporal
block -- a recurrent block (linear_y with GeLU, linear_x, a depthwise causal conv1d, the RG-LRU,
their product, linear_out) or a local (sliding-window) multi-query attention block with half its
head dimensions rotated -- and a GeGLU MLP with biases, layers of each kind as ``block_types``
repeats over the layers; Gemma's RMSNorm (1 + w), embeddings times sqrt(d) and soft-capped
logits. ``blocks/recurrent_gemma.py`` builds it; the recurrence is ``symgpt.ops.rglru.RGLRU``.
At inference the recurrent layers keep a state of fixed size (``ops.rglru``: the RG-LRU state and
the conv1d's last kernel - 1 inputs), the local-attention layers a KV cache of Min(T, W) positions.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family, Preset
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, rotary_pct

ADDED = {"recurrent_layers": None}
ADDED_HELP = {"recurrent_layers": "how many layers are recurrent blocks (linear_y, linear_x, causal conv1d, RG-LRU, "
                                  "linear_out) instead of local attention"}
_BUILD = Ref("symgpt.families.blocks.recurrent_gemma", "build")

FAMILIES = (
    Family(name="recurrent_gemma",
           description="RecurrentGemma (Griffin): RG-LRU recurrent blocks among local-attention blocks, GeGLU MLPs "
                       "with biases, Gemma's RMSNorm, soft-capped logits",
           flags=Extended(FLAGS, {"tied": True, "gqa": True, "norm_offset": True, "embed_scale": True,
                                  "activation": "gelu_tanh", "mlp_bias": True, "proj_bias": True, "window": True,
                                  "rotary_pct": 50, "logit_softcap": 30}, ADDED),
           sizes=SIZES + ("d_inner", "d_conv"), optional=OPTIONAL, build=partial(_BUILD, name="recurrent_gemma"),
           flag_help=Extended(FLAG_HELP, added=ADDED_HELP), choices=Extended(CHOICES)),
)


def read(f: Fields):
    """transformers' RecurrentGemmaConfig (``sliding_window`` is an alias of attention_window_size):
    ``head_dim`` is hidden_size // num_attention_heads whatever the file says, the MLP's width is
    intermediate_size // 2, ``lru_width`` defaults to hidden_size."""
    f.rename({"sliding_window": "attention_window_size"})
    d, h = f.int("hidden_size", 2560), f.int("num_attention_heads", 10)
    L = f.int("num_hidden_layers", 26)
    kv = f.int("num_key_value_heads", None, optional=True)
    kv = h if kv is None else kv
    if h % kv:
        raise SymgptError(f"{f.where}: num_attention_heads {h} is not a multiple of num_key_value_heads {kv}")
    lru = f.int("lru_width", None, optional=True)
    lru = d if lru is None else lru
    if lru % h:
        raise SymgptError(f"{f.where}: lru_width {lru} is not a multiple of num_attention_heads {h} "
                          "(the RG-LRU's gate blocks)")
    sizes = {"V": f.int("vocab_size", 256000), "d": d, "L": L, "h": h, "h_kv": kv, "d_head": d // h,
             "d_ff": f.int("intermediate_size", 3 * 2560) // 2, "d_inner": lru, "d_conv": f.int("conv1d_width", 4),
             "W": f.int("attention_window_size", 2048)}
    types, _ = f.get("block_types", ["recurrent", "recurrent", "attention"])
    if not isinstance(types, list) or not types or not all(t in ("recurrent", "attention") for t in types):
        raise SymgptError(f"{f.where}: field 'block_types' must list 'recurrent' or 'attention' blocks")
    layers = (types * L)[:L]  # RecurrentGemmaConfig.layers_block_type: the pattern repeated
    act = f.activation("hidden_activation", "gelu_pytorch_tanh")
    cap = f.whole("logits_soft_cap", 30.0)
    if cap is None:
        raise SymgptError(f"{f.where}: logits_soft_cap must be set (RecurrentGemmaForCausalLM always soft-caps)")
    pct = rotary_pct(f, default=Fraction(1, 2))
    flags = {"tied": f.bool("tie_word_embeddings", True), "qkv_bias": f.bool("attention_bias", False),
             "activation": act, "logit_softcap": cap, "rotary_pct": pct,
             "recurrent_layers": layers.count("recurrent") or None}
    # initialisation scales and the head dimension transformers derives: no count
    f.silent("w_init_variance_scale", "final_w_init_variance_scale", "head_dim", "layers_block_type")
    return "recurrent_gemma", flags, sizes


READERS = {"recurrent_gemma": Reader(read, ("RecurrentGemmaForCausalLM",))}

PRESETS = (
    # RecurrentGemma (Botev et al. 2024), the released 2B checkpoint
    Preset("recurrentgemma-2b", "recurrent_gemma",
           {"V": 256000, "d": 2560, "L": 26, "h": 10, "h_kv": 1, "d_head": 256, "d_ff": 7680, "d_inner": 2560,
            "d_conv": 4, "W": 2048},
           flags={"recurrent_layers": 18},
           source="Botev et al. 2024 (RecurrentGemma, arXiv 2404.07839); google/recurrentgemma-2b its config.json "
                  "on the Hugging Face Hub",
           note="2,682,862,080 parameters, the checkpoint's safetensors total; published: 2B non-embedding "
                "(2,027,502,080 here). 26 blocks, two RG-LRU recurrent blocks (width 2,560, conv 4) then one local "
                "attention block (window 2,048, 10 heads of 256, one K/V head); an MLP of 7,680; tied output head"),
)
